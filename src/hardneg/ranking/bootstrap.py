"""Cluster bootstrap intervals and a paired test, resampling whole videos.

An item's positive and its negatives (or all captions of one video) are not
independent, so the unit of resampling is the cluster (video), not the row. Each
resample draws clusters with replacement as multinomial counts and weights the
per-cluster sums, so one matrix product does a whole block of resamples.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from typing import Mapping

import numpy as np

_BLOCK_ELEMENTS = 1 << 24  # resamples x clusters per block


@dataclass(frozen=True)
class BootstrapCI:
    """Point estimate (the plain mean) with a percentile interval from a cluster bootstrap."""

    estimate: float
    low: float
    high: float
    std_error: float
    confidence: float
    n_resamples: int
    n_clusters: int
    n: int

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class PairedTest:
    """System A minus system B on the same items: difference, its interval, a p-value."""

    mean_a: float
    mean_b: float
    difference: float
    low: float
    high: float
    p_value: float
    confidence: float
    n_resamples: int
    n_clusters: int
    n: int
    method: str = "cluster bootstrap interval; cluster sign-flip randomization p-value (two-sided)"

    def to_dict(self) -> dict:
        return asdict(self)


def _values(x, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of per-example values; got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty; pass at least one per-example value")
    if not np.isfinite(arr).all():
        i = int(np.argmax(~np.isfinite(arr)))
        raise ValueError(f"{name}[{i}] is {arr[i]}; per-example values must be finite")
    return arr


def _clusters(clusters, n: int) -> tuple[np.ndarray, int]:
    """Cluster labels (any hashable values) as integer codes 0..K-1; None = every row its own."""
    if clusters is None:
        return np.arange(n), n
    arr = np.asarray(clusters)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"clusters must have one label (e.g. video id) per example ({n}); got shape {arr.shape}")
    _, codes = np.unique(arr, return_inverse=True)
    return codes.ravel(), int(codes.max()) + 1


def _check(n_resamples: int, confidence: float) -> None:
    if int(n_resamples) < 1:
        raise ValueError(f"n_resamples must be >= 1; got {n_resamples}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1 (e.g. 0.95); got {confidence}")


def resampled_means(sums: np.ndarray, counts: np.ndarray, n_resamples: int, rng) -> np.ndarray:
    """Means of ``n_resamples`` cluster bootstrap samples, given per-cluster sums and sizes.

    ``sums`` may be (K,) or (K, M) for M statistics resampled with the same draws.
    """
    k = counts.shape[0]
    block = max(1, _BLOCK_ELEMENTS // max(k, 1))
    uniform = np.full(k, 1.0 / k)
    out = []
    for start in range(0, n_resamples, block):
        size = min(block, n_resamples - start)
        weights = rng.multinomial(k, uniform, size=size).astype(np.float64)
        out.append((weights @ sums) / (weights @ counts)[:, None] if sums.ndim == 2 else (weights @ sums) / (weights @ counts))
    return np.concatenate(out, axis=0)


def bootstrap_ci(values, clusters=None, n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0) -> BootstrapCI:
    """Percentile interval for the mean of ``values``, resampling whole clusters (videos).

    values: (N,) per-example scores (e.g. ``result.per_example["R@1"]``). clusters: (N,)
    video ids (None: each example its own cluster). Same seed, same interval.
    """
    _check(n_resamples, confidence)
    v = _values(values, "values")
    codes, k = _clusters(clusters, v.size)
    sums = np.bincount(codes, weights=v, minlength=k)
    counts = np.bincount(codes, minlength=k).astype(np.float64)
    means = resampled_means(sums, counts, int(n_resamples), np.random.default_rng(seed))
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    estimate = float(v.mean())
    return BootstrapCI(
        estimate=estimate,
        low=float(low),
        high=float(high),
        std_error=float(means.std(ddof=1)) if means.size > 1 else 0.0,
        confidence=float(confidence),
        n_resamples=int(n_resamples),
        n_clusters=k,
        n=int(v.size),
    )


def paired_test(
    values_a, values_b, clusters=None, n_resamples: int = 10000, confidence: float = 0.95, seed: int = 0
) -> PairedTest:
    """Compare two systems scored on the same examples (same order).

    The interval is a cluster bootstrap of mean(a - b). The two-sided p-value is a
    randomization test: under "no difference" swapping a and b within a cluster changes
    nothing, so each cluster's summed difference gets a random sign.
    """
    _check(n_resamples, confidence)
    a = _values(values_a, "values_a")
    b = _values(values_b, "values_b")
    if a.shape != b.shape:
        raise ValueError(
            f"values_a and values_b must score the same examples; got {a.size} and {b.size} values"
        )
    codes, k = _clusters(clusters, a.size)
    diff = a - b
    sums = np.bincount(codes, weights=diff, minlength=k)
    counts = np.bincount(codes, minlength=k).astype(np.float64)
    rng = np.random.default_rng(seed)
    means = resampled_means(sums, counts, int(n_resamples), rng)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    observed = float(diff.mean())
    block = max(1, _BLOCK_ELEMENTS // k)
    extreme = 0
    tol = 1e-12 * max(1.0, abs(observed))
    for start in range(0, int(n_resamples), block):
        size = min(block, int(n_resamples) - start)
        signs = rng.integers(0, 2, size=(size, k), dtype=np.int8) * 2 - 1
        flipped = (signs @ sums) / a.size
        extreme += int(np.count_nonzero(np.abs(flipped) >= abs(observed) - tol))
    return PairedTest(
        mean_a=float(a.mean()),
        mean_b=float(b.mean()),
        difference=observed,
        low=float(low),
        high=float(high),
        p_value=(extreme + 1) / (int(n_resamples) + 1),
        confidence=float(confidence),
        n_resamples=int(n_resamples),
        n_clusters=k,
        n=int(a.size),
    )


class Stat:
    """One bootstrapped statistic of per-example values.

    kind `"mean"`: mean of `values` (optionally only rows where `select` is True);
    `"median"`: median of `values` (NumPy's rule: mean of the two middle values when even);
    `"mean_of_group_means"`: mean over the groups in `groups` of each group's mean.
    `select` (any kind): only the rows where it is True count.
    """

    __slots__ = ("kind", "values", "select", "groups")

    def __init__(self, kind: str, values: np.ndarray, select: np.ndarray | None = None,
                 groups: np.ndarray | None = None):
        if kind not in ("mean", "median", "mean_of_group_means"):  # pragma: no cover - programming error
            raise ValueError(kind)
        self.kind = kind
        self.values = np.asarray(values, dtype=np.float64)
        self.select = select
        self.groups = groups


def joint_intervals(stats: Mapping[str, Stat], clusters: np.ndarray, n_resamples: int, confidence_level: float,
                    seed: int) -> dict[str, list[float]]:
    """Cluster-bootstrap percentile intervals for several statistics from ONE set of resamples.

    Uses the ranking core's resampling (`hardneg.ranking.bootstrap.resampled_means`: whole clusters
    drawn with replacement, seeded), so a single mean gets the same interval as
    `hardneg.ranking.bootstrap_ci(values, clusters, seed=seed)`; drawing once for all scores keeps
    the module as fast as one core call. Medians and per-group means, which `bootstrap_ci` does
    not cover, are computed from the same resamples via per-cluster sums.
    """
    codes = np.asarray(clusters)
    k = int(codes.max()) + 1 if codes.size else 0
    if k == 0:
        return {}
    columns: list[np.ndarray] = []

    def add(weights: np.ndarray) -> int:
        columns.append(np.bincount(codes, weights=weights, minlength=k))
        return len(columns) - 1

    plan: dict[str, tuple] = {}
    estimates: dict[str, float] = {}
    for name, st in stats.items():
        v = st.values
        sel = np.ones(v.shape[0], dtype=bool) if st.select is None else np.asarray(st.select, dtype=bool)
        if st.kind == "mean":
            plan[name] = ("ratio", add(np.where(sel, v, 0.0)), add(sel.astype(np.float64)))
            estimates[name] = float(v[sel].mean()) if sel.any() else float("nan")
        elif st.kind == "mean_of_group_means":
            labels, g = np.unique(np.asarray(st.groups)[sel], return_inverse=True)
            full = np.full(v.shape[0], -1)
            full[sel] = g
            parts = [(add(np.where(full == i, v, 0.0)), add((full == i).astype(np.float64))) for i in range(labels.size)]
            plan[name] = ("group_means", parts)
            estimates[name] = float(np.mean([v[full == i].mean() for i in range(labels.size)]))
        else:  # median: per-cluster histogram over the distinct values
            uniq, inv = np.unique(v[sel], return_inverse=True)
            full = np.full(v.shape[0], -1)
            full[sel] = inv
            plan[name] = ("median", uniq, [add((full == i).astype(np.float64)) for i in range(uniq.size)])
            estimates[name] = float(np.median(v[sel]))
    sums = np.stack(columns, axis=1)
    # counts = 1 per cluster: the divisor is the (constant) number of clusters drawn, so scaling back
    # by k recovers the exact resampled sums.
    draws = resampled_means(sums, np.ones(k), int(n_resamples), np.random.default_rng(seed)) * k
    alpha = (1.0 - confidence_level) / 2.0
    out: dict[str, list[float]] = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        for name, step in plan.items():
            if step[0] == "ratio":
                stat = draws[:, step[1]] / draws[:, step[2]]
            elif step[0] == "group_means":
                stat = np.mean([draws[:, a] / draws[:, b] for a, b in step[1]], axis=0)
            else:
                uniq, cols = step[1], step[2]
                counts = np.rint(draws[:, cols])  # (B, U) exact integers
                cum = np.cumsum(counts, axis=1)
                total = cum[:, -1:]
                lower = (cum >= np.floor((total + 1) / 2)).argmax(axis=1)  # position ceil(n/2)
                upper = (cum >= np.floor(total / 2) + 1).argmax(axis=1)  # position n/2 + 1
                stat = (uniq[lower] + uniq[upper]) / 2.0
            lo, hi = np.nanquantile(stat, [alpha, 1.0 - alpha])
            est = estimates[name]
            out[name] = [float(min(lo, est)), float(max(hi, est))]
    return out
