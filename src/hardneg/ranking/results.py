"""The result object every ranking function returns: per-example arrays, aggregates, breakdowns."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Aggregation:
    """One aggregate: ``name`` is the mean (or median) of ``per_example[source]``."""

    name: str
    source: str
    how: str = "mean"  # "mean" | "median"


def aggregate(per_example: dict[str, np.ndarray], spec: list[Aggregation], rows=None) -> dict[str, float]:
    """Aggregates over all rows, or over the boolean/int selection ``rows``."""
    out: dict[str, float] = {}
    n = None
    for agg in spec:
        values = per_example[agg.source]
        if rows is not None:
            values = values[rows]
        n = values.shape[0]
        if agg.how == "mean":
            out[agg.name] = float(np.mean(values, dtype=np.float64))
        elif agg.how == "median":
            out[agg.name] = median_of_ranks(values)
        else:  # pragma: no cover - spec is internal
            raise ValueError(agg.how)
    out["n"] = int(n if n is not None else 0)
    return out


def median_of_ranks(values: np.ndarray) -> float:
    """Median; ranks (and expected ranks) are multiples of 1/2, so a bincount finds it fast."""
    doubled = values * 2.0
    if values.size and doubled.min() >= 0 and doubled.max() < 1 << 20:
        as_int = doubled.astype(np.int64)
        if np.array_equal(as_int, doubled):
            cum = np.cumsum(np.bincount(as_int))
            n = values.size
            lo = int(np.searchsorted(cum, (n - 1) // 2, side="right"))
            hi = int(np.searchsorted(cum, n // 2, side="right"))
            return (lo + hi) / 4.0
    return float(np.median(values))


def breakdown(per_example: dict[str, np.ndarray], spec: list[Aggregation], groups: dict[str, np.ndarray]):
    """{group column: {group value: aggregates over the rows with that value}}."""
    out: dict[str, dict] = {}
    for name, values in groups.items():
        uniq, inverse = np.unique(values, return_inverse=True)
        order = np.argsort(inverse, kind="stable")
        bounds = np.searchsorted(inverse[order], np.arange(uniq.size + 1))
        out[name] = {
            _plain(value): aggregate(per_example, spec, order[bounds[i] : bounds[i + 1]])
            for i, value in enumerate(uniq)
        }
    return out


def _plain(value):
    """Numpy scalars as plain Python values so results serialise to JSON."""
    return value.item() if isinstance(value, np.generic) else value


@dataclass
class RankingResult:
    """Per-example arrays, their aggregates, and breakdowns by group column.

    ``ties`` is the tie rule used; ``aggregate["tie_rate"]`` is the share of examples in
    which a relevant item shares its score with another candidate.
    """

    per_example: dict[str, np.ndarray]
    aggregate: dict[str, float]
    by_group: dict[str, dict] = field(default_factory=dict)
    ties: str = "expected"
    task: str = "multiple_choice"
    ks: tuple[int, ...] = ()

    def __getitem__(self, key: str) -> float:
        return self.aggregate[key]

    def to_dict(self, per_example: bool = False) -> dict:
        """Plain-Python dict (JSON-ready); per-example lists only on request."""
        out = {
            "task": self.task,
            "ties": self.ties,
            "ks": list(self.ks),
            "aggregate": dict(self.aggregate),
            "by_group": self.by_group,
        }
        if per_example:
            out["per_example"] = {k: v.tolist() for k, v in self.per_example.items()}
        return out

    def to_frame(self, groups: bool = False):
        """A pandas DataFrame: one row per example, or (groups=True) one row per group value."""
        import pandas as pd

        if not groups:
            return pd.DataFrame(dict(self.per_example))
        rows = [
            {"group": name, "value": value, **aggs}
            for name, table in self.by_group.items()
            for value, aggs in table.items()
        ]
        rows.append({"group": "all", "value": "all", **self.aggregate})
        return pd.DataFrame(rows)


def weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    """Median of a sample given as distinct ``values`` with integer ``weights`` (= np.median)."""
    keep = weights > 0
    values, weights = values[keep], weights[keep]
    order = np.argsort(values, kind="stable")
    values, cum = values[order], np.cumsum(weights[order])
    n = int(cum[-1])
    lo = values[np.searchsorted(cum, (n - 1) // 2, side="right")]
    hi = values[np.searchsorted(cum, n // 2, side="right")]
    return float((lo + hi) / 2.0)


def aggregate_counts(counts: np.ndarray, tables: dict[str, np.ndarray], spec: list[Aggregation]) -> dict[str, float]:
    """Aggregates from how many examples fall on each table entry (exact, no per-example pass)."""
    n = int(counts.sum())
    out: dict[str, float] = {}
    w = counts.astype(np.float64)
    for agg in spec:
        if n == 0:
            out[agg.name] = float("nan")
        elif agg.how == "mean":
            out[agg.name] = float(w @ tables[agg.source] / n)
        else:
            out[agg.name] = weighted_median(tables[agg.source], counts)
    out["n"] = n
    return out
