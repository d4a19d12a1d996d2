"""The authors' tie rules `argmax` and `argsort` against references written from their procedures.

`argmax`: ViLMA `bin/eval.py` and VideoCon `src/eval_atphard.py` pick `np.argmax(scores)`, so the
first (lowest-index) candidate wins a tie. `argsort`: VideoCon `src/calc_ssv2.py` (`main`) ranks
each query's videos with `ranks = np.argsort(-pred)` and walks that list: AP is the mean of
hits/(i+1) over the relevant videos, "R@k" is 1 when any relevant video is among the first k.
The references below loop over rows one at a time, as the authors' scripts do.
"""

from __future__ import annotations

import numpy as np
import pytest

from hardneg.ranking import TIE_RULES, multiple_choice, retrieval


def _tied_scores(rng, shape, levels=4):
    return rng.integers(0, levels, size=shape).astype(np.float64) / levels


def test_rules_are_declared():
    assert "argmax" in TIE_RULES and "argsort" in TIE_RULES


@pytest.mark.parametrize("seed", range(5))
def test_argmax_is_np_argmax(seed):
    rng = np.random.default_rng(seed)
    scores = _tied_scores(rng, (300, 5))
    label = rng.integers(0, 5, size=300)
    got = multiple_choice(scores, label, ks=(1, 2), ties="argmax").per_example
    want_r1 = np.array([float(np.argmax(row) == y) for row, y in zip(scores, label)])
    assert np.array_equal(got["R@1"], want_r1)
    # the rank the same rule implies: position in a stable descending sort (first index first)
    want_rank = np.array([1 + int(np.nonzero(np.argsort(-row, kind="stable") == y)[0][0]) for row, y in zip(scores, label)])
    assert np.array_equal(got["rank"], want_rank.astype(float))
    assert want_r1.mean() != multiple_choice(scores, label, ks=(1,), ties="pessimistic").aggregate["R@1"]


def test_argmax_first_index_wins_a_tie():
    r = multiple_choice([[0.5, 0.5, 0.1], [0.5, 0.5, 0.1]], [0, 1], ks=(1,), ties="argmax")
    assert r.per_example["R@1"].tolist() == [1.0, 0.0]


def test_argmax_with_a_mask_ignores_padding():
    scores = np.array([[0.2, 0.9, 0.9], [0.9, 0.9, 0.0]])
    mask = np.array([[True, True, False], [True, True, True]])
    r = multiple_choice(scores, [1, 0], mask=mask, ks=(1,), ties="argmax")
    assert r.per_example["R@1"].tolist() == [1.0, 1.0]


def _calc_ssv2(pred: np.ndarray, labels: np.ndarray, kind: str | None = None):
    """VideoCon src/calc_ssv2.py main(), per query: AP and 'R@1/5/10' (any relevant video in the top k)."""
    ap, hit = [], {1: [], 5: [], 10: []}
    for p, lab in zip(pred, labels):
        ranks = np.argsort(-p) if kind is None else np.argsort(-p, kind=kind)
        hits, precisions = 0, []
        for i in range(len(ranks)):
            if lab[ranks[i]] == 1:
                hits += 1
                precisions.append(hits / (i + 1))
        ap.append(sum(precisions) / len(precisions))
        count = 0
        for i in range(10):
            if lab[ranks[i]] == 1:
                count = 1
            if i + 1 in hit:
                hit[i + 1].append(count)
    return np.array(ap), {k: np.array(v, dtype=float) for k, v in hit.items()}


@pytest.mark.parametrize("n_videos", [40, 216])
def test_argsort_is_calc_ssv2(n_videos):
    rng = np.random.default_rng(n_videos)
    pred = _tied_scores(rng, (18, n_videos), levels=8)  # few distinct values: ties everywhere, as in the release
    labels = np.zeros((18, n_videos), dtype=int)
    for q in range(18):
        labels[q, rng.choice(n_videos, size=6, replace=False)] = 1
    ap, hit = _calc_ssv2(pred, labels)
    r = retrieval(pred, relevant=labels.astype(bool), ks=(1, 5, 10), ties="argsort")
    assert np.allclose(r.per_example["AP"], ap)
    for k in (1, 5, 10):
        assert np.array_equal(r.per_example[f"C@{k}"], hit[k])
    # the same ranking core with a stable sort is the `argmax` (index-order) rule
    ap_s, hit_s = _calc_ssv2(pred, labels, kind="stable")
    s = retrieval(pred, relevant=labels.astype(bool), ks=(1, 5, 10), ties="argmax")
    assert np.allclose(s.per_example["AP"], ap_s)
    assert np.array_equal(s.per_example["C@1"], hit_s[1])


def test_argsort_differs_from_fire_and_from_a_stable_sort():
    """`fire` keeps index order and cuts AP at the top 20; calc_ssv2's sort is neither."""
    rng = np.random.default_rng(3)
    pred = _tied_scores(rng, (18, 216), levels=8)
    labels = np.zeros((18, 216), dtype=bool)
    for q in range(18):
        labels[q, rng.choice(216, size=12, replace=False)] = True
    a = retrieval(pred, relevant=labels, ties="argsort").per_example["AP"]
    f = retrieval(pred, relevant=labels, ties="fire").per_example["AP"]
    m = retrieval(pred, relevant=labels, ties="argmax").per_example["AP"]
    assert not np.allclose(a, f)
    assert not np.allclose(a, m)


def test_argsort_multiple_choice_follows_the_sort():
    rng = np.random.default_rng(7)
    scores = _tied_scores(rng, (200, 40), levels=3)
    label = rng.integers(0, 40, size=200)
    got = multiple_choice(scores, label, ks=(1,), ties="argsort").per_example["rank"]
    want = [1 + int(np.nonzero(np.argsort(-row) == y)[0][0]) for row, y in zip(scores, label)]
    assert got.tolist() == want


def test_without_ties_every_rule_agrees():
    rng = np.random.default_rng(11)
    scores = rng.random((50, 5))
    label = rng.integers(0, 5, size=50)
    base = multiple_choice(scores, label, ks=(1,), ties="expected").aggregate["R@1"]
    for rule in ("argmax", "argsort"):
        assert multiple_choice(scores, label, ks=(1,), ties=rule).aggregate["R@1"] == base
