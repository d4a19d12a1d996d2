"""The modules against independent references: scikit-learn and plain Python from the papers' definitions."""

from __future__ import annotations

import statistics

import numpy as np
import pytest
from metric_reference import (
    average_precision,
    expected_rank_measures,
    expected_retrieval_measures,
    fire_code_measures,
    rank_with_rule,
)

sklearn_metrics = pytest.importorskip("sklearn.metrics")


def tie_free_mc(seed, n=50, c=6):
    rng = np.random.default_rng(seed)
    return rng.permutation(n * c).reshape(n, c) / (n * c), rng.integers(0, c, n)  # distinct scores


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_rcad_accuracy_equals_sklearn_top_k_accuracy(load, k):
    scores, positive = tie_free_mc(k)
    out = load("rcad_accuracy").compute(predictions=scores, references=positive, ks=[k], n_resamples=0)
    ref = sklearn_metrics.top_k_accuracy_score(positive, scores, k=k, labels=np.arange(6))
    assert out[f"R@{k}"] == pytest.approx(ref, abs=1e-12)


def test_mean_average_precision_equals_sklearn_lrap_without_ties(load):
    """Without ties, FIRE's AP of a full ranking is scikit-learn's label ranking average precision."""
    rng = np.random.default_rng(0)
    q, v = 40, 15
    scores = rng.permutation(q * v).reshape(q, v).astype(float)
    relevant = [sorted(rng.choice(v, size=int(rng.integers(1, 6)), replace=False).tolist()) for _ in range(q)]
    truth = np.zeros((q, v), dtype=int)
    for i, items in enumerate(relevant):
        truth[i, items] = 1
    out = load("mean_average_precision").compute(predictions=scores, references=relevant, n_resamples=0)
    assert out["mAP"] == pytest.approx(sklearn_metrics.label_ranking_average_precision_score(truth, scores), abs=1e-12)


def quantized_mc(seed, n=25, c=5):
    rng = np.random.default_rng(seed)
    return np.floor(rng.random((n, c)) * 3) / 3, rng.integers(0, c, n)  # 3 levels: many ties


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_multiple_choice_expected_ties_equal_brute_force(load, seed):
    scores, positive = quantized_mc(seed)
    refs = [expected_rank_measures(list(row), int(p), (1, 2)) for row, p in zip(scores, positive)]
    r = load("rcad_accuracy").compute(predictions=scores, references=positive, n_resamples=0)
    m = load("mean_rank").compute(predictions=scores, references=positive, n_resamples=0)
    assert r["R@1"] == pytest.approx(statistics.fmean(x["R@1"] for x in refs), abs=1e-12)
    assert r["R@2"] == pytest.approx(statistics.fmean(x["R@2"] for x in refs), abs=1e-12)
    assert m["MeanR"] == pytest.approx(statistics.fmean(x["rank"] for x in refs), abs=1e-12)
    assert m["MedianR"] == pytest.approx(statistics.median(x["rank"] for x in refs), abs=1e-12)
    assert r["tie_rate"] == pytest.approx(
        np.mean([(row == row[p]).sum() > 1 for row, p in zip(scores, positive)]), abs=1e-12
    )


def test_posrank_expected_ties_equal_brute_force(load):
    scores, positive = quantized_mc(3, n=30)
    pos = np.array(["noun", "verb", "adverb"] * 10)
    rr = np.array([expected_rank_measures(list(row), int(p), ())["RR"] for row, p in zip(scores, positive)])
    out = load("posrank").compute(predictions=scores, references=positive, pos=pos, n_resamples=0)
    per = {p: rr[pos == p].mean() for p in ("noun", "verb", "adverb")}
    for p, value in per.items():
        assert out[f"PoSRank_{p}"] == pytest.approx(value, abs=1e-12)
    assert out["PoSRank"] == pytest.approx(np.mean(list(per.values())), abs=1e-12)
    assert out["n_per_pos"] == {"noun": 10, "verb": 10, "adverb": 10}


@pytest.mark.parametrize("seed", [0, 1])
def test_retrieval_expected_ties_equal_brute_force(load, seed):
    rng = np.random.default_rng(seed)
    q, v = 10, 6
    scores = np.floor(rng.random((q, v)) * 3) / 3
    relevant = [sorted(rng.choice(v, size=int(rng.integers(1, 4)), replace=False).tolist()) for _ in range(q)]
    refs = [expected_retrieval_measures(list(row), rel, (1, 2, 3)) for row, rel in zip(scores, relevant)]
    c = load("correct_at_k").compute(predictions=scores, references=relevant, ks=[1, 2, 3], n_resamples=0)
    a = load("mean_average_precision").compute(predictions=scores, references=relevant, n_resamples=0)
    for k in (1, 2, 3):
        assert c[f"C@{k}"] == pytest.approx(statistics.fmean(x[f"C@{k}"] for x in refs), abs=1e-12)
    assert a["mAP"] == pytest.approx(statistics.fmean(x["AP"] for x in refs), abs=1e-12)


def test_original_only_scores(load):
    """C@K_original and mAP_original count only each query's own video (plain Python, tie-free)."""
    rng = np.random.default_rng(4)
    q, v = 30, 10
    scores = rng.permutation(q * v).reshape(q, v).astype(float)
    relevant = [sorted(rng.choice(v, size=3, replace=False).tolist()) for _ in range(q)]
    original = np.array([r[0] for r in relevant])
    c = load("correct_at_k").compute(predictions=scores, references=relevant, original=original, ks=[1, 5],
                                     n_resamples=0)
    a = load("mean_average_precision").compute(predictions=scores, references=relevant, original=original,
                                               n_resamples=0)
    orders = [sorted(range(v), key=lambda i: -row[i]) for row in scores]
    for k in (1, 5):
        assert c[f"C@{k}_original"] == pytest.approx(np.mean([o.index(p) < k for o, p in zip(orders, original)]))
        assert c[f"C@{k}"] == pytest.approx(np.mean([any(i in r for i in o[:k]) for o, r in zip(orders, relevant)]))
    assert a["mAP_original"] == pytest.approx(np.mean([average_precision(o, {p}) for o, p in zip(orders, original)]))
    assert a["mAP"] == pytest.approx(np.mean([average_precision(o, set(r)) for o, r in zip(orders, relevant)]))


def test_fire_rule_matches_fire_code(load):
    rng = np.random.default_rng(5)
    q, v = 20, 30  # V > 20 so the top-20 cut-off matters
    scores = np.floor(rng.random((q, v)) * 4) / 4
    relevant = [sorted(rng.choice(v, size=int(rng.integers(1, 12)), replace=False).tolist()) for _ in range(q)]
    refs = [fire_code_measures(list(row), rel, (1, 5)) for row, rel in zip(scores, relevant)]
    c = load("correct_at_k").compute(predictions=scores, references=relevant, ks=[1, 5], ties="fire", n_resamples=0)
    a = load("mean_average_precision").compute(predictions=scores, references=relevant, ties="fire", n_resamples=0)
    for k in (1, 5):
        assert c[f"C@{k}"] == pytest.approx(statistics.fmean(x[f"C@{k}"] for x in refs), abs=1e-12)
    assert a["mAP"] == pytest.approx(statistics.fmean(x["AP"] for x in refs), abs=1e-12)


@pytest.mark.parametrize("rule", ["feint6k", "posrank"])
def test_benchmark_rules_for_single_positive(load, rule):
    scores, positive = quantized_mc(6, n=40, c=6)
    ranks = np.array([rank_with_rule(list(row), int(p), rule) for row, p in zip(scores, positive)])
    r = load("rcad_accuracy").compute(predictions=scores, references=positive, ties=rule, n_resamples=0)
    m = load("mean_rank").compute(predictions=scores, references=positive, ties=rule, n_resamples=0)
    p = load("posrank").compute(predictions=scores, references=positive, pos=["noun"] * 40, ties=rule,
                                n_resamples=0)
    assert r["R@1"] == pytest.approx(np.mean(ranks <= 1))
    assert r["R@2"] == pytest.approx(np.mean(ranks <= 2))
    assert m["MeanR"] == pytest.approx(ranks.mean())
    assert m["MedianR"] == pytest.approx(np.median(ranks))
    assert p["PoSRank_noun"] == pytest.approx(np.mean(1 / ranks))
