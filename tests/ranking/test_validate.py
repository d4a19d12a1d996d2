"""Bad input gets a clear error naming the argument and the fix."""

import numpy as np
import pytest

from hardneg.ranking import Qrels, multiple_choice, pad_ragged, parse_measure, retrieval, R, CorrectAt


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(scores=np.zeros((3, 4)), positive=[0, 1]), r"positive must have one entry per row of scores \(3\)"),
        (dict(scores=np.array([[0.1, np.nan]]), positive=[0]), "NaN/inf .* row 0, column 1"),
        (dict(scores=np.array([[0.1, np.inf]]), positive=[0]), "NaN/inf"),
        (dict(scores=np.zeros((2, 4)), positive=[0, 4]), r"positive\[1\] = 4 is out of range .* 0..3"),
        (dict(scores=np.zeros((2, 4)), positive=[0, -1]), "out of range"),
        (dict(scores=np.zeros((0, 4)), positive=[]), "empty"),
        (dict(scores=np.zeros(4), positive=[0]), "2-D"),
        (dict(scores=np.zeros((1, 3)), positive=[2], mask=[[True, True, False]]), "masked-out"),
        (dict(scores=np.zeros((1, 3)), positive=[0], mask=[[True, True]]), "mask has shape"),
        (dict(scores=np.zeros((2, 3)), positive=[0, 0], ids=["a", "a"]), "duplicate id"),
        (dict(scores=np.zeros((2, 3)), positive=[0, 0], ties="coin"), "not a tie rule"),
        (dict(scores=np.zeros((2, 3)), positive=[0, 0], ties="random"), "needs seed"),
        (dict(scores=np.zeros((2, 3)), positive=[0, 0], groups={"pos": ["n"]}), r"groups\['pos'\]"),
        (dict(scores=np.zeros((2, 3)), positive=[0, 0], ks=(0,)), "positive integers"),
        (dict(scores=np.zeros((2, 3)), positive=[0.5, 0]), "integer"),
    ],
)
def test_multiple_choice_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        multiple_choice(**kwargs)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(relevant=Qrels([0, 0], [1, 1])), "more than once"),
        (dict(relevant=Qrels([0], [1])), "query 1 has no relevant item"),
        (dict(relevant=Qrels([0, 1], [1, 9])), "item has index 9 out of range"),
        (dict(relevant=Qrels([0, 5], [1, 1])), "query has index 5"),
        (dict(relevant=np.ones((3, 3), bool)), "relevant has shape"),
        (dict(), "needs relevant="),
        (dict(original=[0, 4]), "out of range"),
        (dict(relevant=np.eye(2, 4, dtype=bool), mask=np.eye(2, 4) == 0), "masked out"),
    ],
)
def test_retrieval_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        retrieval(np.zeros((2, 4), np.float32), **kwargs)


def test_measures_are_declarative():
    m = parse_measure("R@5")
    assert m == R(k=5) == R @ 5 and m.key == "R@5" and "Ma et al." in m.citation
    assert parse_measure("Correct@10") == CorrectAt @ 10
    assert parse_measure("mAP").key == "mAP"
    res = multiple_choice(np.eye(3), [0, 1, 2], ks=(1, 5))
    assert m.value(res) == 1.0
    with pytest.raises(KeyError, match="ks="):
        parse_measure("R@7").value(res)
    with pytest.raises(ValueError, match="unknown measure"):
        parse_measure("nDCG@10")


# --- NumPy's own errors and silent roundings, caught at the door ------------------------------------


@pytest.mark.parametrize("call", [
    lambda s: multiple_choice(s, [0, 0]),
    lambda s: retrieval(s, original=[0, 0]),
])
def test_ragged_lists_get_the_projects_message(call):
    """NumPy says "inhomogeneous shape after 1 dimensions"; the core names the rows and the fix."""
    with pytest.raises(ValueError, match=r"row 0 has 2 values, row 1 has 3.*pad_ragged.*mask="):
        call([[0.1, 0.2], [0.3, 0.2, 0.1]])
    with pytest.raises(ValueError, match="some value is itself a list"):
        call([[0.1, [0.2]], [0.3, 0.2]])


def test_padded_ragged_rows_rank_as_intended():
    scores, mask = pad_ragged([[0.1, 0.2], [0.3, 0.2, 0.1]])
    assert multiple_choice(scores, [1, 0], mask=mask).aggregate["R@1"] == 1.0


BIG = 2**53 + 1  # the first integer float64 cannot hold: it rounds to 2**53, a tie with its neighbour


@pytest.mark.parametrize("scores", [
    [[BIG, 2**53]],                                   # Python ints -> int64
    np.array([[BIG, 2**53]], dtype=np.int64),
    np.array([[BIG, 2**53]], dtype=np.uint64),
    [[BIG, 0.5]],                                     # NumPy rounds a mixed list into float64 silently
    [[2**64 + 1, 2**64]],                             # beyond int64: NumPy falls back to object
    np.array([[-BIG, 0]], dtype=np.int64),
])
def test_integers_float64_cannot_hold_are_refused(scores):
    """Before: [[2**53 + 1, 2**53]] gave R@1 = 0.5, a tie that is not in the data."""
    with pytest.raises(ValueError, match=r"scores holds the integer -?\d+ \(row 0, column 0\).*2\*\*53.*offset"):
        multiple_choice(scores, [0])
    with pytest.raises(ValueError, match=r"2\*\*53"):
        retrieval(scores, original=[0])


def test_integers_float64_holds_are_ranked_exactly():
    assert multiple_choice([[2**53, 2**53 - 1]], [0]).aggregate["R@1"] == 1.0
    assert multiple_choice(np.array([[2**60, 2**60 - 2**10]]), [1]).aggregate["R@1"] == 0.0  # exact multiples of 2**10
    assert multiple_choice([[2**64, 1]], [0]).aggregate["R@1"] == 1.0  # object array of exact ints
    assert multiple_choice(np.array([[3, 1, 2]], dtype=np.uint8), [0]).aggregate["R@1"] == 1.0
    assert retrieval(np.array([[5, 9, 7]]), original=[1]).aggregate["R@1"] == 1.0


def test_non_numbers_in_a_rectangular_list_are_named():
    with pytest.raises(ValueError, match=r"None at row 0, column 1"):
        multiple_choice([[0.5, None]], [0])


@pytest.mark.parametrize("kwargs, message", [
    (dict(mask=[[True, True], [True]]), r"mask holds nested lists of different lengths.*shape of scores \(2, 2\)"),
    (dict(positive=[[0], [0, 1]]), "positive holds nested lists of different lengths; give one column index per row"),
    (dict(groups={"pos": [["n"], ["n", "v"]]}), r"groups\['pos'\] holds nested lists"),
    (dict(ids=[["a"], ["b", "c"]]), "ids holds nested lists"),
])
def test_other_ragged_inputs_get_the_projects_message(kwargs, message):
    with pytest.raises(ValueError, match=message):
        multiple_choice(**{"scores": [[0.1, 0.2], [0.3, 0.2]], "positive": [0, 0], **kwargs})
