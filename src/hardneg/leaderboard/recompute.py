"""Recompute a submission's metrics with the one results engine (`hardneg.results`).

The board's numbers are the ones `hardneg evaluate` and the `evaluate` modules give: the engine
calls the ranking core for per-item values and its one cluster bootstrap for intervals. Ties
follow the core's default exact rule (`ties="expected"`), under which a constant scorer gets
exactly chance.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hardneg.items import ItemSet
from hardneg.results import constant_scores, evaluate_scores, per_row_values, standard_specs
from hardneg.settings import EvalSettings

#: the tie rule every board number uses
TIES = "expected"


@dataclass
class PartResult:
    """Aggregates with intervals, and the per-item values behind the mean metrics (for paired tests)."""

    metrics: dict[str, dict]
    per_example: dict[str, np.ndarray] = field(default_factory=dict)
    ties: str = TIES
    n_resamples: int = 1000
    confidence: float = 0.95

    def to_dict(self) -> dict:
        return {"metrics": self.metrics, "ties": self.ties, "n_resamples": self.n_resamples, "confidence": self.confidence}


def recompute(items: ItemSet, scores: np.ndarray, mask: np.ndarray | None = None,
              n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0) -> PartResult:
    """All metrics of one (benchmark, config, split), as the board stores them.

    Only a whole split is scored (one row per item, in item order): the board never publishes a number
    computed on part of a split, so a partial or padded matrix is an error here, not a smaller task."""
    if np.shape(scores)[0] != len(items) or (mask is not None and np.shape(mask) != np.shape(scores)):
        raise ValueError(f"recompute needs one row per item of {items.config}/{items.split} ({len(items)}); "
                         f"got scores of shape {np.shape(scores)}")
    settings = EvalSettings(ties=TIES, n_resamples=n_resamples, confidence=confidence, seed=seed)
    result = evaluate_scores(items, scores, mask, settings=settings, keep_per_example=True)
    n_clusters = len(set(items.clusters.tolist()))
    metrics = {key: {"estimate": e["value"], "low": e.get("low"), "high": e.get("high"), "n": result.n,
                     "n_clusters": n_clusters} for key, e in result.metrics.items()}
    per: dict[str, np.ndarray] = {}
    for spec in standard_specs(items.declaration, items.config):
        if spec.kind in ("mean", "mean_of_group_means"):
            # weights that make the plain mean equal the metric (group means, `where`, `all_of`; for the paired test)
            per[spec.key] = per_row_values(spec, result.per_example, items.groups)
    return PartResult(metrics, per, TIES, n_resamples, confidence)


__all__ = ["PartResult", "TIES", "constant_scores", "recompute"]
