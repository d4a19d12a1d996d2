"""Bad input raises a ValueError that names the input, the row and the fix."""

from __future__ import annotations

import numpy as np
import pytest

MC = {"predictions": [[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]], "references": [0, 1]}
RET = {"predictions": [[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]], "references": [[0], [1, 2]]}


@pytest.mark.parametrize(
    ("name", "inputs", "match"),
    [
        ("rcad_accuracy", {"predictions": [[0.1, float("nan"), 0.3], [0.3, 0.2, 0.1]], "references": [0, 1]},
         r"predictions\[0\] contains nan"),
        ("mean_rank", {"predictions": np.array([[0.1, 0.2], [np.inf, 0.1]]), "references": [0, 1]},
         r"predictions\[1\] contains inf"),
        ("rcad_accuracy", {"predictions": MC["predictions"], "references": [0, 1, 2]},
         "predictions has 2 rows but references has 3"),
        ("rcad_accuracy", {"predictions": MC["predictions"], "references": [0, 3]},
         r"references\[1\] = 3 is out of range: example 1 has 3 candidates"),
        ("mean_rank", {"predictions": [[0.1, 0.2], [0.3]], "references": [0, 1]},
         r"references\[1\] = 1 is out of range"),
        ("rcad_accuracy", {"predictions": MC["predictions"], "references": [-1, 0]}, r"references\[0\] = -1"),
        ("rcad_accuracy", {"predictions": [[0.1, 0.2], []], "references": [0, 0]}, r"predictions\[1\] has no scores"),
        ("rcad_accuracy", {"predictions": [0.1, 0.2, 0.3], "references": [0, 1, 2]}, "wrap each example"),
        ("rcad_accuracy", {"predictions": [["a", "b"], ["c", "d"]], "references": [0, 1]}, "expected numbers"),
        ("rcad_accuracy", {"predictions": MC["predictions"], "references": [0.5, 1]}, "integer"),
        ("posrank", {**MC, "pos": ["noun"]}, "predictions has 2 rows but pos has 1"),
        ("correct_at_k", {"predictions": RET["predictions"], "references": [[0], []]},
         r"references\[1\] is empty"),
        ("correct_at_k", {"predictions": RET["predictions"], "references": [[0], [1, 7]]},
         r"references\[1\] contains 7, out of range"),
        ("mean_average_precision", {"predictions": RET["predictions"], "references": [[0, 0], [1]]},
         r"references\[0\] lists item 0 twice"),
        ("mean_average_precision", {**RET, "original": [0, 5]}, r"original\[1\] = 5 is out of range"),
        ("correct_at_k", {"predictions": [[0.1, 0.2, 0.3], [0.3, 0.2]], "references": [[0], [1]]},
         "every query must score the same"),
        ("rcad_accuracy", {**MC, "video_ids": ["a"]}, "predictions has 2 rows but video_ids has 1"),
    ],
)
def test_bad_inputs_name_the_problem(load, name, inputs, match):
    with pytest.raises(ValueError, match=match):
        load(name).compute(**inputs, n_resamples=0)


def test_missing_inputs(load):
    with pytest.raises(ValueError, match="pos"):
        load("posrank").compute(**MC, n_resamples=0)
    with pytest.raises(ValueError, match="references is missing"):
        load("rcad_accuracy").add_batch(predictions=MC["predictions"])
    with pytest.raises(ValueError, match="Bad inputs"):
        load("rcad_accuracy").add_batch(**MC, groups=["a", "b"])


def test_optional_column_given_for_some_batches_only(load):
    m = load("rcad_accuracy")
    m.add_batch(**MC, video_ids=["a", "b"])
    m.add_batch(**MC)
    with pytest.raises(ValueError, match="video_ids was given for some batches but not for others"):
        m.compute(n_resamples=0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"ties": "first"}, "ties='first' is not a tie rule"),
        ({"n_resamples": -1}, "n_resamples must be a non-negative integer"),
        ({"confidence_level": 95}, "confidence_level must be between 0 and 1"),
        ({"ks": [0]}, "ks must be"),
    ],
)
def test_bad_options(load, kwargs, match):
    with pytest.raises(ValueError, match=match):
        load("rcad_accuracy").compute(**MC, **{"n_resamples": 0, **kwargs})


def test_error_in_a_later_batch_names_it(load):
    m = load("rcad_accuracy")
    m.add_batch(**MC)
    with pytest.raises(ValueError, match=r"predictions\[0\] contains nan"):
        m.add_batch(predictions=[[np.nan, 1.0, 2.0]], references=[0])


def test_empty_input(load):
    with pytest.raises(ValueError, match="call `add` or `add_batch` at least once"):
        load("rcad_accuracy").compute()
    with pytest.raises(ValueError, match="empty"):
        load("rcad_accuracy").compute(predictions=[], references=[], n_resamples=0)
