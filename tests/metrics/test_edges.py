"""Edges of the metric modules: options checked before streamed data is consumed, NumPy's own errors
reworded, integers float64 would round refused, intervals that always contain their score, and the
documentation of what the numbers mean."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from hardneg.metric_modules import METRIC_NAMES, metric_path

from metric_test_data import MC_MODULES, kwargs_for

REPO = Path(__file__).resolve().parents[2]
BIG = 2**53 + 1  # rounds to 2**53 in float64


def _split(inputs: dict, at: int) -> tuple[dict, dict]:
    return {k: v[:at] for k, v in inputs.items()}, {k: v[at:] for k, v in inputs.items()}


# --- a failed compute() must not lose what add_batch stored -----------------------------------------


@pytest.mark.parametrize("name", METRIC_NAMES)
@pytest.mark.parametrize("bad", [
    {"ties": "expeted"},                # a typo in a value
    {"tie": "expected"},                # a typo in a name
    {"n_resamples": -1},
    {"confidence_level": 95},
    {"seed": -1},
    {"ties": "random", "seed": None},
    {"return_per_example": "yes"},
])
def test_bad_option_fails_before_the_streamed_batches_are_consumed(load, name, bad):
    """Before: evaluate emptied its cache first, so `compute(ties="expeted")` after `add_batch`
    raised and a corrected `compute()` found nothing ("call add or add_batch at least once")."""
    inputs = kwargs_for(name, np.random.default_rng(3), n=40)
    expected = load(name).compute(**inputs, n_resamples=50, seed=1)
    m = load(name)
    first, rest = _split(inputs, 25)
    m.add_batch(**first)
    m.add_batch(**rest)
    with pytest.raises(ValueError):
        m.compute(**bad)
    got = m.compute(n_resamples=50, seed=1)  # the corrected call sees every batch
    assert got == expected


def test_unknown_option_names_the_options(load):
    m = load("rcad_accuracy")
    m.add_batch(predictions=[[0.9, 0.1]], references=[0])
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['tie'\].*'ties'.*nothing added so far was used or lost"):
        m.compute(tie="expected")
    with pytest.raises(ValueError, match="unknown option"):
        load("posrank").compute(predictions=[[0.9, 0.1]], references=[0], pos=["noun"], ks=[1])
    assert m.compute(n_resamples=0)["R@1"] == 1.0


def test_ks_typo_fails_before_consuming(load):
    m = load("correct_at_k")
    m.add_batch(predictions=[[0.9, 0.1], [0.2, 0.8]], references=[[0], [1]])
    with pytest.raises(ValueError, match="ks must be"):
        m.compute(ks=[0, 5])
    assert m.compute(ks=[1], n_resamples=0)["C@1"] == 1.0


# --- NumPy's raw errors become the project's ----------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "inputs", "match"),
    [
        ("rcad_accuracy", {"predictions": [[0.1, [0.2, 0.3]], [0.3, 0.2]], "references": [0, 1]},
         r"predictions\[0\]: expected a flat list of numbers"),
        ("rcad_accuracy", {"predictions": [[0.1, 0.2], [0.3, 0.2]], "references": [[0], [0, 1]]},
         "references: expected one positive index .* per example, got nested lists"),
        ("correct_at_k", {"predictions": [[0.1, 0.2], [0.3, 0.2]], "references": [[0], [1]], "original": [[0], [0, 1]]},
         "original: expected one item index .* per query, got nested lists"),
        ("rcad_accuracy", {"predictions": [[0.1, 0.2]], "references": [0], "video_ids": [["a", "b"]]},
         r"video_ids\[0\]: expected one id or label per example"),
        ("posrank", {"predictions": [[0.1, 0.2]], "references": [0], "pos": [["noun", "verb"]]},
         r"pos\[0\]: expected one id or label per example"),
        ("rcad_accuracy", {"predictions": [[0.1, 0.2]], "references": [0], "video_ids": np.array([["a", "b"]])},
         r"video_ids: expected one value per example \(1-D\)"),
    ],
)
def test_malformed_inputs_name_the_input(load, name, inputs, match):
    with pytest.raises(ValueError, match=match):
        load(name).compute(**inputs, n_resamples=0)


# --- integers float64 cannot hold ----------------------------------------------------------------------


@pytest.mark.parametrize("name", MC_MODULES)
@pytest.mark.parametrize("predictions", [
    [[BIG, 2**53]],
    [[BIG, 0.5]],
    [[BIG, 2**53], [1]],                      # ragged rows take the per-row path
    [[2**64 + 1, 2**64]],                     # beyond int64
    np.array([[BIG, 2**53]]),
    np.array([[BIG, 2**53]], dtype=np.uint64),
    pa.array([[BIG, 2**53]], pa.list_(pa.int64())),
])
def test_module_refuses_integers_float64_would_round(load, name, predictions):
    """Before: [[2**53 + 1, 2**53]] scored R@1 = 0.5 with tie_rate 1.0, a tie that is not in the data."""
    n = len(predictions)
    extra = {"pos": ["noun"] * n} if name == "posrank" else {}
    with pytest.raises(ValueError, match=r"predictions.*2\*\*53"):
        load(name).compute(predictions=predictions, references=[0] * n, n_resamples=0, **extra)


def test_module_accepts_integers_float64_holds(load):
    m = load("rcad_accuracy")
    assert m.compute(predictions=[[2**53, 2**53 - 1], [1, 2]], references=[0, 1], n_resamples=0, ks=[1])["R@1"] == 1.0
    assert m.compute(predictions=[[2**64, 1]], references=[0], n_resamples=0, ks=[1])["tie_rate"] == 0.0
    assert load("correct_at_k").compute(predictions=np.array([[3, 9, 7]]), references=[[1]], ks=[1],
                                        n_resamples=0)["C@1"] == 1.0


# --- intervals ---------------------------------------------------------------------------------------


def test_intervals_contain_the_reported_score_to_the_last_bit(load):
    """A constant scorer: every resample gives the same score, but the core's aggregate (from counts)
    and the bootstrap's mean differ in the last bit (0.40833333333333327 vs 0.4083333333333333).
    Before, the interval was widened to the bootstrap's own estimate and missed the reported score.
    Then the same guarantee on random tied data, every module, three tie rules."""
    n, c = 45, 6
    out = load("posrank").compute(predictions=np.zeros((n, c)), references=np.zeros(n, int), pos=["noun"] * n,
                                  n_resamples=50)
    for key in ("PoSRank_noun", "PoSRank"):
        lo, hi = out[f"{key}_ci"]
        assert lo <= out[key] <= hi, (key, lo, out[key], hi)
    for seed in range(4):
        rng = np.random.default_rng(100 + seed)
        for name in METRIC_NAMES:
            inputs = kwargs_for(name, rng, n=int(rng.integers(3, 40)), levels=int(rng.integers(1, 5)))
            for ties in ("expected", "pessimistic", "fire"):
                out = load(name).compute(**inputs, ties=ties, n_resamples=40, seed=seed)
                for key, value in out.items():
                    if key.endswith("_ci"):
                        assert value[0] <= out[key[:-3]] <= value[1], (name, ties, key, value, out[key[:-3]])


# --- what the numbers mean is written down -----------------------------------------------------------------


def test_docs_state_the_relations_the_numbers_rest_on():
    text = (REPO / "docs" / "metrics.md").read_text(encoding="utf-8")
    for needle in ("mAP_original", "truncated at rank 20", "R@1, R@3, meanR and medianR", "R@1 and R@2",
                   "ks=[1, 3]", "ks=[1, 2]", "percentile interval of a cluster bootstrap over videos",
                   "clamped to contain the reported score", "median of the expected ranks, not the expected median",
                   "2**53"):
        assert needle in text, needle
    for rule in ("expected", "pessimistic", "optimistic", "random", "feint6k", "posrank", "fire"):
        assert f'`"{rule}"`' in text, rule
    # and what they state is what the core does: mAP_original is the MRR except under ties="fire",
    # where it is the MRR truncated at rank 20 (tied scores, originals ranked beyond 20)
    from hardneg.ranking import TIE_RULES, retrieval

    rng = np.random.default_rng(0)
    scores = rng.integers(0, 6, size=(300, 40)).astype(float)
    original = rng.integers(0, 40, size=300)
    for ties in TIE_RULES:
        r = retrieval(scores, original=original, ties=ties, seed=1)
        ap, rr, rank = (np.asarray(r.per_example[k]) for k in ("AP_original", "RR_original", "rank_original"))
        if ties == "fire":
            np.testing.assert_allclose(ap, np.where(rank <= 20, rr, 0.0))
            assert r.aggregate["mAP_original"] < r.aggregate["MRR"]
        else:
            np.testing.assert_allclose(ap, rr, rtol=1e-12)


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_cards_say_how_intervals_are_formed(name):
    card = (Path(metric_path(name)) / "README.md").read_text(encoding="utf-8")
    assert "### Intervals" in card and "cluster bootstrap over videos" in card and "clamped to contain" in card


def test_no_card_claims_map_original_always_equals_mrr():
    """It does not under ties="fire", where FIRE's top-20 cut applies."""
    for name in METRIC_NAMES:
        folder = Path(metric_path(name))
        for path in (folder / "README.md", folder / f"{name}.py"):
            text = " ".join(path.read_text(encoding="utf-8").split())
            assert not re.search(r"equal to its (MRR|mean reciprocal rank)", text), path
    card = " ".join((Path(metric_path("mean_average_precision")) / "README.md").read_text().split())
    assert 'except under `ties="fire"`' in card
