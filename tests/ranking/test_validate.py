"""Bad input gets a clear error naming the argument and the fix."""

import numpy as np
import pytest

from hardneg.ranking import Qrels, multiple_choice, parse_measure, retrieval, R, CorrectAt


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
