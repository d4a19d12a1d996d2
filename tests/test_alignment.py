"""Duplicates and unknown ids are errors; partial coverage is measured and marked; datasets named only by a
file's metadata are not loaded without being asked."""

from __future__ import annotations

import numpy as np
import pytest

from hardneg.alignment import Coverage, PredictionIdError, check_prediction_ids, resolve_dataset


def test_full_coverage_in_any_order():
    cov = check_prediction_ids(["q2", "q0", "q1"], ["q0", "q1", "q2"])
    assert cov.complete and cov.comparable and cov.fraction == 1.0 and cov.missing == ()
    np.testing.assert_array_equal(cov.rows, [2, 0, 1])
    assert cov.summary() == "scored 3 of 3 items (100.0%)"


def test_every_query_twice_is_refused():
    """The issue's FIRE file: each query twice would double-count (C@1 37.5, chance 27.5 instead of 50.0/35.0)."""
    queries = ["q0", "q1", "q2", "q3"]
    with pytest.raises(PredictionIdError, match=r"4 ids appear more than once \(4 extra rows\): 'q0', 'q1'"):
        check_prediction_ids(queries + queries, queries)


def test_unknown_and_empty_ids_are_refused_and_all_problems_named():
    with pytest.raises(PredictionIdError) as err:
        check_prediction_ids(["a", "a", "zz", "yy"], ["a", "b"])
    assert "1 ids appear more than once" in str(err.value) and "2 ids are not among the 2 items: 'zz', 'yy'" in str(err.value)
    with pytest.raises(PredictionIdError, match="empty id"):
        check_prediction_ids(["a", None], ["a", "b"])
    with pytest.raises(PredictionIdError, match="empty id"):
        check_prediction_ids(["a", ""], ["a", "b"])


def test_partial_coverage_is_counted_not_hidden():
    """The issue's retrieval file ranked 4 of 5 videos and printed 'scored 4/4 (100%)'."""
    cov = check_prediction_ids(["v0", "v1", "v2", "v3"], ["v0", "v1", "v2", "v3", "v4"], what="videos")
    assert not cov.complete and not cov.comparable and cov.missing == ("v4",)
    assert cov.summary() == "scored 4 of 5 videos (80.0%): not comparable with full-coverage results; missing: 'v4'"
    d = cov.to_dict()
    assert d["n_scored"] == 4 and d["n_items"] == 5 and d["comparable"] is False and d["missing_examples"] == ["v4"]
    many = check_prediction_ids([], [f"i{k}" for k in range(1000)])
    assert many.fraction == 0.0 and "... (1,000 in all)" in many.summary()
    assert isinstance(many, Coverage) and many.rows.shape == (0,)


def test_ids_compare_as_text_and_long_ids_are_cut_in_messages():
    assert check_prediction_ids([1, 2], ["1", "2"]).complete
    with pytest.raises(PredictionIdError) as err:
        check_prediction_ids(["x" * 10_000], ["a"])
    assert len(str(err.value)) < 400


def test_dataset_named_by_a_file_is_loaded_only_on_request(tmp_path):
    meta = {"benchmark": "feint6k", "hub_id": "attacker/feint6k-lookalike"}
    ds, why = resolve_dataset(meta)
    assert ds != "attacker/feint6k-lookalike" and "declaration" in why and "attacker/feint6k-lookalike" in why
    assert resolve_dataset(meta, trust_metadata_dataset=True)[0] == "attacker/feint6k-lookalike"
    assert resolve_dataset(meta, dataset="built/feint6k") == ("built/feint6k", "--dataset")
    with pytest.raises(ValueError, match="--trust-metadata-dataset"):
        resolve_dataset({"benchmark": "not-a-benchmark", "hub_id": "someone/data"})
    local = tmp_path / "built"
    local.mkdir()
    assert resolve_dataset({"benchmark": "feint6k", "dataset_path": str(local)})[0] == str(local)
    declared = resolve_dataset({"benchmark": "feint6k"})
    assert declared[1] == "the feint6k declaration"
    with pytest.raises(ValueError, match="pass --dataset"):
        resolve_dataset({})
