"""FIRE Table 4 / §4.2: how much pooled judgments under-rate a system that was not in the pool.

"All" scores a system with every judgment; "New" keeps only the judgments that
the *other* pooled systems surfaced (their top k), as if the system were new and
its own top-k predictions had never been annotated. Unjudged pairs count as not
relevant, as they would for a new model. The difference All - New is the bias.

Which system surfaced which pair comes from the qrels' `pooled_by`/`models`
column (the FIRE release's `models` field) when present, else from each
system's own top-k in the predictions given (``pools_from_topk``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from hardneg.analysis.base import AnalysisResult
from hardneg.analysis.inputs import Judgments


def topk_indices(scores: np.ndarray, k: int) -> np.ndarray:
    """(Q, k) indices of the k best-scored items per row, best first; ties keep collection order.

    A partial sort per row (argpartition), with a full stable sort only for rows whose k-th
    score is tied with an item outside the top k.
    """
    scores = np.asarray(scores)
    n_q, n_v = scores.shape
    k = min(k, n_v)
    if k == n_v:
        return np.argsort(-scores, axis=1, kind="stable")
    part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    vals = np.take_along_axis(scores, part, axis=1)
    kth = vals.min(axis=1)
    ambiguous = (scores >= kth[:, None]).sum(axis=1) > k
    order = np.lexsort((part, -vals), axis=1)  # by score descending, then collection index
    top = np.take_along_axis(part, order, axis=1)
    if ambiguous.any():
        top[ambiguous] = np.argsort(-scores[ambiguous], axis=1, kind="stable")[:, :k]
    return top


def pools_from_topk(systems: Mapping[str, np.ndarray], judgments: Judgments, k: int = 10) -> dict[str, np.ndarray]:
    """For each system, a (J,) bool: is each judged pair in that system's top k?"""
    out = {}
    n_v = judgments.shape[1]
    keys = judgments.judged_query * n_v + judgments.judged_video
    for name, scores in systems.items():
        top = topk_indices(scores, k)
        top_keys = (np.arange(top.shape[0])[:, None] * n_v + top).ravel()
        out[name] = np.isin(keys, top_keys)
    return out


def pools_from_column(judgments: Judgments, names: list[str] | None = None) -> dict[str, np.ndarray]:
    """For each pooled system named in the qrels' `pooled_by` column (or only `names`), a (J,) bool."""
    if judgments.pooled_by is None:
        raise ValueError("the qrels have no 'pooled_by' (or 'models') column; pass pools computed from top-k instead")
    known = sorted({m for ms in judgments.pooled_by for m in ms})
    unknown = [n for n in names or [] if n not in known]
    if unknown:
        raise ValueError(
            f"systems {unknown} are not named in the qrels' pooled_by column (it names {known}); "
            "name the predictions NAME=PATH with those names, or use --pool-from topk"
        )
    return {n: np.fromiter((n in ms for ms in judgments.pooled_by), dtype=bool, count=len(judgments.pooled_by))
            for n in (names or known)}


@dataclass
class PoolingBiasResult(AnalysisResult):
    values: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)  # system -> All/New -> metric

    def extra(self) -> dict[str, Any]:
        return {"values": self.values}

    def _draw(self, fig) -> None:
        ax = fig.add_subplot(1, 1, 1)
        systems = list(self.values)
        metrics = [c for c in self.params["metrics"]]
        x = np.arange(len(metrics))
        width = 0.8 / max(1, 2 * len(systems))
        for i, s in enumerate(systems):
            for j, data in enumerate(("All", "New")):
                pos = x - 0.4 + width * (2 * i + j + 0.5)
                vals = [100 * self.values[s][data][m] for m in metrics]
                kw = {"alpha": 1.0 if data == "All" else 0.45, "hatch": None if data == "All" else "//"}
                bars = ax.bar(pos, vals, width, label=f"{s}: {data}", **kw)
                if data == "All":
                    colour = bars[0].get_facecolor()
                else:
                    for b in bars:
                        b.set_facecolor(colour)
        ax.set_xticks(x, metrics)
        ax.set_xlabel("metric")
        ax.set_ylabel("score (%)")
        ax.set_ylim(0, 105)
        ax.set_title("Pooling bias: all judgments vs only other systems' pooled judgments")
        ax.legend(fontsize=8, ncols=2, loc="upper left")
        ax.grid(axis="y", alpha=0.3)


def pooling_bias(
    systems: Mapping[str, np.ndarray],
    judgments: Judgments,
    pools: Mapping[str, np.ndarray],
    ks: tuple[int, ...] = (1, 5, 10),
    ties: str = "expected",
) -> PoolingBiasResult:
    """Score each system with all judgments and with only the other pooled systems' judgments.

    pools: pooled system name -> (J,) bool over the judged pairs (which pairs that system surfaced).
    A scored system that is not itself in `pools` keeps all pools' judgments ("New" = a truly new system).
    """
    from hardneg.ranking import retrieval

    n_j = judgments.judged_query.size
    for name, sel in pools.items():
        if np.asarray(sel).shape != (n_j,):
            raise ValueError(f"pool of {name!r} must be a bool per judged pair ({n_j}); got shape {np.asarray(sel).shape}")
    metrics = [f"C@{k}" for k in ks] + ["mAP"]
    values: dict[str, dict[str, dict[str, float]]] = {}
    rows = []
    for name, scores in systems.items():
        others = [p for p in pools if p != name]
        keep = np.zeros(n_j, dtype=bool)
        for p in others:
            keep |= np.asarray(pools[p], dtype=bool)
        values[name] = {}
        for data, sel in (("All", None), ("New", keep)):
            r = retrieval(scores, relevant=judgments.relevant(sel), original=judgments.original, ks=ks, ties=ties)
            values[name][data] = {m: float(r.aggregate[m]) for m in metrics}
            rows.append({"system": name, "judgments": data, **values[name][data]})
        rows.append({"system": name, "judgments": "bias (All-New)",
                     **{m: values[name]["All"][m] - values[name]["New"][m] for m in metrics}})
        values[name]["pooled_from"] = others  # type: ignore[assignment]
    notes = [f"{name} is not a pooled system: its New score uses every pool's judgments, as for a new model"
             for name in systems if name not in pools]
    return PoolingBiasResult(
        analysis="pooling-bias",
        notes=notes,
        title="FIRE pooling bias: all judgments vs only other systems' top-k judgments",
        columns=["system", "judgments"] + metrics,
        rows=rows,
        params={"ks": list(ks), "ties": ties, "metrics": metrics, "pooled_systems": list(pools)},
        values=values,
    )
