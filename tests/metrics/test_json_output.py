"""Every module's output goes through `json.dumps` as it is, per-example values included."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hardneg.metric_modules import METRIC_NAMES

MC = {"predictions": [[0.9, 0.1, 0.2], [0.2, 0.7, 0.7], [0.5, 0.5, 0.5], [0.1, 0.3, 0.2]],
      "references": [0, 2, 1, 1], "video_ids": ["a", "a", "b", "c"]}
RETRIEVAL = {"predictions": np.asarray([[0.9, 0.8, 0.1], [0.1, 0.2, 0.9], [0.3, 0.3, 0.3]], np.float32),
             "references": [[1, 2], [0], [2]], "original": [1, 0, 2], "video_ids": ["a", "b", "b"]}
INPUTS = {"rcad_accuracy": MC, "mean_rank": MC, "accuracy": {**MC, "groups": ["a", "b", "a", "b"]}, "posrank": {**MC, "pos": ["noun", "verb", "noun", "adv"]},
          "correct_at_k": RETRIEVAL, "mean_average_precision": RETRIEVAL}


@pytest.mark.parametrize("per_example", [False, True])
@pytest.mark.parametrize("name", METRIC_NAMES)
def test_output_is_json(load, name, per_example):
    out = load(name).compute(**INPUTS[name], return_per_example=per_example, n_resamples=50)
    back = json.loads(json.dumps(out))
    assert back == out  # nothing was a NumPy value that json turned into something else
    if per_example:
        n = len(INPUTS[name]["references"])
        assert out["per_example"] and all(isinstance(v, list) and len(v) == n for v in out["per_example"].values())
        assert all(type(x) in (int, float) for v in out["per_example"].values() for x in v)


def test_per_example_lists_hold_the_core_values(load):
    from hardneg.ranking import multiple_choice

    out = load("mean_rank").compute(**MC, return_per_example=True, n_resamples=0)
    core = multiple_choice(np.asarray(MC["predictions"]), MC["references"])
    assert out["per_example"]["rank"] == core.per_example["rank"].tolist()
