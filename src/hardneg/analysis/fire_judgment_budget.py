"""FIRE §4.3 / Figure 4: how many annotated queries are enough to trust a score.

For each sample size N, draw N queries with replacement from the evaluation set
(``n_resamples`` times, seeded), score each re-sample (the mean of the
per-query values from the ranking core), and take the absolute deviation from
the full-set score. The 95th percentile of that deviation is the smallest
difference one can call real at 95% confidence with N annotated queries; it
shrinks roughly as 1/sqrt(N).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from hardneg.analysis.base import AnalysisResult

#: Cap on indices drawn at once (memory: 8 bytes each).
_CHUNK_ELEMENTS = 4_000_000


def resample_deviations(values: np.ndarray, size: int, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """|mean of a size-N re-sample - full mean| for each of `n_resamples` re-samples (vectorized, chunked)."""
    values = np.asarray(values, dtype=np.float64)
    full = values.mean()
    per_chunk = max(1, _CHUNK_ELEMENTS // size)
    out = np.empty(n_resamples)
    for start in range(0, n_resamples, per_chunk):
        stop = min(n_resamples, start + per_chunk)
        idx = rng.integers(0, values.size, size=(stop - start, size))
        out[start:stop] = np.abs(values[idx].mean(axis=1) - full)
    return out


@dataclass
class JudgmentBudgetResult(AnalysisResult):
    deviations: dict[str, dict[int, np.ndarray]] = field(default_factory=dict, repr=False)

    def extra(self) -> dict[str, Any]:
        summary = {}
        for m, per in self.deviations.items():
            summary[m] = {str(n): {q: float(np.quantile(d, q / 100)) for q in (50, 90, 95, 99)} for n, d in per.items()}
        return {"deviation_quantiles": summary}

    def _grid(self) -> tuple[int, int]:
        n = max(1, len(self.deviations))
        cols = 1 if n == 1 else 2
        return (n + cols - 1) // cols, cols

    def figure_size(self):
        rows, cols = self._grid()
        return (max(6.5, 5.5 * cols), 4.0 * rows + 0.8)

    def _draw(self, fig) -> None:
        metrics = list(self.deviations)
        rows, cols = self._grid()
        grid = fig.subplots(rows, cols, squeeze=False).ravel()
        for ax in grid[len(metrics):]:
            ax.set_visible(False)
        axes = grid[: len(metrics)]
        q = self.params["quantile"]
        for ax, m in zip(axes, metrics):
            per = self.deviations[m]
            top = max(float(np.quantile(d, 0.999)) for d in per.values()) or 1e-3
            bins = np.linspace(0, top, 40)
            for n, d in per.items():
                line = ax.hist(d, bins=bins, histtype="step", linewidth=1.5, density=True, label=f"N={n}")[2][0]
                p = float(np.quantile(d, q))
                ax.axvline(p, color=line.get_edgecolor(), linestyle="--", linewidth=1)
            ax.set_xlabel(f"|re-sample {m} - full-set {m}|")
            ax.set_ylabel("density")
            ax.set_title(f"{m}: dashed = {int(q * 100)}th percentile")
            ax.legend(fontsize=8)
        fig.suptitle(f"How many judged queries are enough?\n{self.params['system']}, "
                     f"{self.params['n_resamples']} re-samples")


def judgment_budget(
    per_query: Mapping[str, np.ndarray],
    sizes: tuple[int, ...] = (500, 1000, 3000),
    n_resamples: int = 10_000,
    seed: int = 0,
    quantile: float = 0.95,
    system: str = "system",
) -> JudgmentBudgetResult:
    """Deviation quantiles of re-sampled scores per metric and sample size.

    per_query: metric name -> (Q,) per-query values from the ranking core (e.g. C@1, AP).
    """
    if not per_query:
        raise ValueError("judgment budget needs at least one metric's per-query values")
    if any(int(n) < 1 for n in sizes):
        raise ValueError(f"sample sizes must be positive integers, got {list(sizes)}")
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")
    if not 0 < quantile < 1:
        raise ValueError(f"quantile {quantile} must be in (0, 1), e.g. 0.95")
    rng = np.random.default_rng(seed)
    deviations: dict[str, dict[int, np.ndarray]] = {}
    rows = []
    n_total = None
    for metric, vals in per_query.items():
        vals = np.asarray(vals, dtype=np.float64)
        if vals.ndim != 1 or vals.size == 0 or not np.isfinite(vals).all():
            raise ValueError(f"per-query values of {metric!r} must be a non-empty 1-D array of finite numbers")
        n_total = vals.size
        deviations[metric] = {}
        for n in sizes:
            d = resample_deviations(vals, int(n), n_resamples, rng)
            deviations[metric][int(n)] = d
            rows.append({"metric": metric, "N": int(n), "full_score": float(vals.mean()),
                         f"p{int(round(quantile * 100))}_abs_dev": float(np.quantile(d, quantile)),
                         "mean_abs_dev": float(d.mean())})
    notes = []
    if n_total is not None and max(sizes) > n_total:
        notes.append(f"some sizes exceed the {n_total} queries available: re-samples draw with replacement, so "
                     "deviations there mostly reflect the re-sampling, not new information")
    return JudgmentBudgetResult(
        analysis="judgment-budget",
        title=f"FIRE judgment budget: {int(round(quantile * 100))}th percentile of |deviation| by sample size",
        columns=["metric", "N", "full_score", f"p{int(round(quantile * 100))}_abs_dev", "mean_abs_dev"],
        rows=rows,
        params={"sizes": [int(n) for n in sizes], "n_resamples": n_resamples, "seed": seed, "quantile": quantile,
                "system": system, "queries": n_total},
        notes=notes,
        deviations=deviations,
    )
