"""Rank-biased overlap against hand-computed values and an independent implementation."""

from __future__ import annotations

import numpy as np
import pytest

from hardneg.analysis.rbo import prefix_overlaps, rbo_ext, rbo_ext_topk, topk_overlap


def test_swapped_tail_by_hand():
    # X = 1, 1, 3 at depths 1..3: (1-p)/p * (0.9 + 0.405 + 0.729) + 1 * 0.729 = 0.955
    assert rbo_ext(list("abc"), list("acb"), p=0.9) == pytest.approx(0.955)


def test_rotated_prefix_by_hand():
    # S = 1 2 3 4 5, T = 2 3 4 1 5: X = 0, 1, 2, 4, 5 -> (0.405 + 0.486 + 0.6561 + 0.59049) / 9 + 0.59049 = 0.828
    assert rbo_ext([1, 2, 3, 4, 5], [2, 3, 4, 1, 5], p=0.9) == pytest.approx(0.82800, abs=5e-6)


def test_webber_figure_lists_by_hand():
    # S = abcdefg, T = zcavwxy (the two lists of Webber et al.'s illustration): overlap 2 from depth 3 on.
    p = 0.9
    x = [0, 0, 2, 2, 2, 2, 2]
    expected = (1 - p) / p * sum(x[d - 1] / d * p**d for d in range(1, 8)) + 2 / 7 * p**7
    assert rbo_ext(list("abcdefg"), list("zcavwxy"), p) == pytest.approx(expected)
    assert expected == pytest.approx(0.288217, abs=1e-6)


def test_uneven_lengths_by_hand():
    # S = a b (s = 2), L = b a c (l = 3), p = 0.5. X_1 = 0, X_2 = 2, X_3 = 2 (c is not in S).
    # (1-p)/p * [X1/1 p + X2/2 p^2 + X3/3 p^3 + X_s (3-2)/(2*3) p^3] + ((X_3 - X_s)/3 + X_s/2) p^3
    p = 0.5
    expected = 1.0 * (0 + 1 * 0.25 + 2 / 3 * 0.125 + 2 * 1 / 6 * 0.125) + (0 + 1) * 0.125
    assert rbo_ext(list("ab"), list("bac"), p) == pytest.approx(expected)
    assert rbo_ext(list("bac"), list("ab"), p) == pytest.approx(expected)


def test_extremes_and_errors():
    assert rbo_ext(list("abcd"), list("abcd"), 0.8) == pytest.approx(1.0)
    assert rbo_ext(list("abcd"), list("efgh"), 0.8) == 0.0
    with pytest.raises(ValueError, match="persistence"):
        rbo_ext([1], [1], p=1.0)
    with pytest.raises(ValueError, match="repeats"):
        rbo_ext([1, 1], [1, 2])


def test_vectorized_matches_scalar():
    rng = np.random.default_rng(0)
    a = np.stack([rng.permutation(15)[:10] for _ in range(40)])
    b = np.stack([rng.permutation(15)[:10] for _ in range(40)])
    got = rbo_ext_topk(a, b, 0.9)
    want = [rbo_ext(list(x), list(y), 0.9) for x, y in zip(a, b)]
    assert np.allclose(got, want)
    x = prefix_overlaps(a, b)
    assert all(x[i, d] == len(set(a[i, : d + 1]) & set(b[i, : d + 1])) for i in range(40) for d in range(10))
    assert np.allclose(topk_overlap(a, b), [len(set(x) & set(y)) / 10 for x, y in zip(a, b)])


def test_matches_independent_rbo_package():
    rbo = pytest.importorskip("rbo")
    rng = np.random.default_rng(1)
    for _ in range(100):
        s = rng.choice(30, rng.integers(1, 12), replace=False).tolist()
        t = rng.choice(30, rng.integers(1, 12), replace=False).tolist()
        p = float(rng.uniform(0.5, 0.98))
        assert rbo_ext(s, t, p) == pytest.approx(rbo.RankingSimilarity(s, t).rbo_ext(p=p), abs=1e-9)
