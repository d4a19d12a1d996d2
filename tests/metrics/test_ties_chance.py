"""Under the default tie rule a constant scorer lands exactly at chance; the original rules do not."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest
from metric_reference import expected_retrieval_measures


@pytest.mark.parametrize("c", [2, 5, 6, 21])
def test_constant_scorer_multiple_choice_is_chance(load, c):
    n = 12
    scores = np.full((n, c), 0.25)
    positive = np.arange(n) % c
    r = load("rcad_accuracy").compute(predictions=scores, references=positive, ks=[1, 2], n_resamples=0)
    m = load("mean_rank").compute(predictions=scores, references=positive, n_resamples=0)
    p = load("posrank").compute(predictions=scores, references=positive, pos=["verb"] * n, n_resamples=0)
    exact = pytest.approx  # chance up to float summation of N equal values
    assert r["R@1"] == exact(1 / c, rel=1e-14)
    assert r["R@2"] == exact(min(2 / c, 1.0), rel=1e-14)
    assert r["tie_rate"] == 1.0
    assert m["MeanR"] == exact((c + 1) / 2, rel=1e-14)
    assert m["MedianR"] == (c + 1) / 2
    harmonic = sum(1 / i for i in range(1, c + 1))
    assert p["PoSRank_verb"] == pytest.approx(harmonic / c, rel=1e-14)


def test_constant_scorer_under_original_rules(load):
    scores = np.zeros((4, 6))
    positive = [0, 1, 2, 3]
    rcad = load("rcad_accuracy")
    assert rcad.compute(predictions=scores, references=positive, ties="feint6k", n_resamples=0)["R@1"] == 1.0
    assert rcad.compute(predictions=scores, references=positive, ties="posrank", n_resamples=0)["R@1"] == 0.0
    mean_rank = load("mean_rank")
    assert mean_rank.compute(predictions=scores, references=positive, ties="feint6k", n_resamples=0)["MeanR"] == 1.0
    assert mean_rank.compute(predictions=scores, references=positive, ties="pessimistic", n_resamples=0)["MeanR"] == 6.0
    posrank = load("posrank")
    out = posrank.compute(predictions=scores, references=positive, pos=["noun"] * 4, ties="posrank", n_resamples=0)
    assert out["PoSRank_noun"] == pytest.approx(1 / 6)


@pytest.mark.parametrize("n_relevant", [1, 2, 4])
def test_constant_scorer_retrieval_is_chance(load, n_relevant):
    v, ks = 7, [1, 3, 5]
    scores = np.ones((3, v))
    relevant = [list(range(n_relevant))] * 3
    c = load("correct_at_k").compute(predictions=scores, references=relevant, ks=ks, n_resamples=0)
    for k in ks:  # 1 - P(no relevant item among k drawn without replacement)
        assert c[f"C@{k}"] == pytest.approx(1 - comb(v - n_relevant, k) / comb(v, k), abs=1e-12)
    a = load("mean_average_precision").compute(predictions=scores, references=relevant, n_resamples=0)
    brute = expected_retrieval_measures([1.0] * v, relevant[0], ())["AP"]
    assert a["mAP"] == pytest.approx(brute, abs=1e-12)


def test_one_candidate_and_all_positives(load):
    """Degenerate cases: a single candidate ranks first; if every item is relevant, C@1 = mAP = 1."""
    r = load("rcad_accuracy").compute(predictions=[[0.3], [0.9]], references=[0, 0], ks=[1], n_resamples=0)
    assert r["R@1"] == 1.0
    a = load("mean_average_precision").compute(predictions=[[0.1, 0.5, 0.5]], references=[[0, 1, 2]],
                                               n_resamples=0)
    assert a["mAP"] == pytest.approx(1.0)
    c = load("correct_at_k").compute(predictions=[[0.9, 0.5, 0.1]], references=[[2]], ks=[1, 2], n_resamples=0)
    assert c["C@1"] == 0.0 and c["C@2"] == 0.0  # no positive in the top K
