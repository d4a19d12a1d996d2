"""Recompute a benchmark's metrics from submitted scores with the project's ranking core.

Nothing here re-implements a metric: per-example values come from
`hardneg.ranking.multiple_choice` / `retrieval`, intervals from `bootstrap_ci`
(resampling whole videos), so the board's numbers are the ones `hardneg evaluate`
and the `evaluate` modules give. Ties follow the core's default exact rule
(`ties="expected"`), under which a constant scorer gets exactly chance.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hardneg.leaderboard.items import ItemSet
from hardneg.ranking import Qrels, bootstrap_ci, multiple_choice, retrieval

#: the tie rule every board number uses
TIES = "expected"

#: per-example sources of the multiple-choice metrics the board shows
MC_METRICS = {"R@1": "R@1", "R@2": "R@2", "MeanR": "rank", "MRR": "RR"}

#: FIRE metrics: name -> (per-example key with FIRE labels, key with the original labels only)
FIRE_METRICS = {"C@1": ("C@1", "R@1"), "C@5": ("C@5", "R@5"), "C@10": ("C@10", "R@10"), "mAP": ("AP", "AP_original")}


@dataclass
class PartResult:
    """Aggregates with intervals, and the per-example values behind them (for paired tests)."""

    metrics: dict[str, dict]
    per_example: dict[str, np.ndarray] = field(default_factory=dict)
    ties: str = TIES
    n_resamples: int = 1000
    confidence: float = 0.95

    def to_dict(self) -> dict:
        return {"metrics": self.metrics, "ties": self.ties, "n_resamples": self.n_resamples, "confidence": self.confidence}


def per_example_values(items: ItemSet, scores: np.ndarray, mask: np.ndarray | None) -> dict[str, np.ndarray]:
    """The per-item values of every board metric of this item set (core functions only)."""
    if items.task == "multiple_choice":
        filled = np.where(mask, scores, 0.0) if mask is not None else scores
        r = multiple_choice(filled, items.label, mask=mask, ks=(1, 2), ties=TIES)
        return {name: np.asarray(r.per_example[src], dtype=np.float64) for name, src in MC_METRICS.items()}
    qrels = Qrels.from_lists(items.fire_relevant)
    r = retrieval(scores, relevant=qrels, original=items.original, ks=(1, 5, 10), ties=TIES)
    out: dict[str, np.ndarray] = {}
    for name, (fire_key, orig_key) in FIRE_METRICS.items():
        fire = np.asarray(r.per_example[fire_key], dtype=np.float64)
        orig = np.asarray(r.per_example[orig_key], dtype=np.float64)
        out[f"{name} FIRE"] = fire
        out[f"{name} orig"] = orig
        out[f"{name} delta"] = fire - orig
    return out


def recompute(items: ItemSet, scores: np.ndarray, mask: np.ndarray | None = None,
              n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0) -> PartResult:
    """All metrics of one (benchmark, config, split) with cluster-bootstrap intervals."""
    per = per_example_values(items, scores, mask)
    metrics = {}
    for name, values in per.items():
        ci = bootstrap_ci(values, items.clusters, n_resamples=n_resamples, confidence=confidence, seed=seed)
        metrics[name] = {
            "estimate": ci.estimate, "low": ci.low, "high": ci.high, "std_error": ci.std_error,
            "n": ci.n, "n_clusters": ci.n_clusters,
        }
    return PartResult(metrics, per, TIES, n_resamples, confidence)


def constant_scores(items: ItemSet) -> tuple[np.ndarray, np.ndarray | None]:
    """The scores of a scorer that cannot tell candidates apart (the exact-chance baseline)."""
    width = int(items.n_candidates.max())
    mask = None if (items.n_candidates == width).all() else (np.arange(width)[None, :] < items.n_candidates[:, None])
    return np.zeros((len(items), width)), mask
