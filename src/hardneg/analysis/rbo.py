"""Rank-biased overlap (Webber, Moffat and Zobel, 2010), extrapolated form.

RBO compares two rankings with weights that decay geometrically with depth
(persistence ``p``), so agreement at the top counts most. We use the
extrapolated point estimate RBO_ext (their Eq. 32), which assumes the agreement
seen at the evaluation depth continues below it: identical lists score 1 and
disjoint lists 0. ``rbo_ext`` handles lists of different lengths;
``rbo_ext_topk`` is the vectorized form for many equal-length top-k lists.
"""

from __future__ import annotations

from typing import Hashable, Sequence

import numpy as np


def _check_p(p: float) -> None:
    if not 0.0 < p < 1.0:
        raise ValueError(f"RBO persistence p={p} must be strictly between 0 and 1 (e.g. 0.9)")


def rbo_ext(s: Sequence[Hashable], t: Sequence[Hashable], p: float = 0.9) -> float:
    """Extrapolated RBO of two rankings without repeated items (lengths may differ)."""
    _check_p(p)
    for name, lst in (("first", s), ("second", t)):
        if len(set(lst)) != len(lst):
            raise ValueError(f"RBO: the {name} ranking repeats an item; rankings must list each item once")
    if not s and not t:
        return 1.0
    if not s or not t:
        return 0.0
    short, long_ = (s, t) if len(s) <= len(t) else (t, s)
    n_s, n_l = len(short), len(long_)
    seen_s: set = set()
    seen_l: set = set()
    overlap = 0
    x = [0] * (n_l + 1)  # x[d]: overlap of the two prefixes of depth d (short list stops at n_s)
    for d in range(1, n_l + 1):
        a = long_[d - 1]
        if d <= n_s:
            b = short[d - 1]
            if a == b:
                overlap += 1
            else:
                overlap += (a in seen_s) + (b in seen_l)
            seen_s.add(b)
        else:
            overlap += a in seen_s
        seen_l.add(a)
        x[d] = overlap
    x_s, x_l = x[n_s], x[n_l]
    total = sum(x[d] / d * p**d for d in range(1, n_l + 1))
    total += sum(x_s * (d - n_s) / (n_s * d) * p**d for d in range(n_s + 1, n_l + 1))
    return float((1 - p) / p * total + ((x_l - x_s) / n_l + x_s / n_s) * p**n_l)


def prefix_overlaps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """X[:, d-1] = |a[:, :d] ∩ b[:, :d]| for rows of two (n, k) rankings without repeats."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.ndim != 2:
        raise ValueError(f"rankings must be two (n, k) arrays of the same shape, got {a.shape} and {b.shape}")
    eq = (a[:, :, None] == b[:, None, :]).astype(np.int32)  # (n, k, k): a rank i matches b rank j
    cum = eq.cumsum(axis=1).cumsum(axis=2)
    idx = np.arange(a.shape[1])
    return cum[:, idx, idx]


def rbo_ext_topk(a: np.ndarray, b: np.ndarray, p: float = 0.9) -> np.ndarray:
    """Extrapolated RBO per row of two equal-depth (n, k) rankings (Webber et al. Eq. 30)."""
    _check_p(p)
    x = prefix_overlaps(a, b).astype(np.float64)
    k = x.shape[1]
    depth = np.arange(1, k + 1, dtype=np.float64)
    weights = p**depth
    return (1 - p) / p * (x / depth * weights).sum(axis=1) + x[:, -1] / k * p**k


def topk_overlap(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|top-k(a) ∩ top-k(b)| / k per row (order ignored)."""
    x = prefix_overlaps(a, b)
    return x[:, -1] / a.shape[1]
