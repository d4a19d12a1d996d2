"""FIRE Table 3: how much two systems' top-k predictions overlap, ignoring and respecting order.

Systems that put the same videos in their top 10 share the FIRE boost (those
pairs were judged once, for both). Per query we take each system's top k
(ties keep collection order), then average over queries the plain overlap
|A ∩ B| / k and the extrapolated rank-biased overlap (Webber et al., 2010).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Mapping

import numpy as np

from hardneg.analysis.base import AnalysisResult
from hardneg.analysis.fire_pooling_bias import topk_indices
from hardneg.analysis.rbo import rbo_ext_topk, topk_overlap


@dataclass
class OverlapResult(AnalysisResult):
    systems: list[str] = field(default_factory=list)
    overlap_matrix: np.ndarray | None = None
    rbo_matrix: np.ndarray | None = None

    def extra(self) -> dict[str, Any]:
        return {"systems": self.systems, "overlap_matrix": self.overlap_matrix, "rbo_matrix": self.rbo_matrix}

    def figure_size(self):
        n = len(self.systems)
        return (max(8.0, 2.2 * n + 3), max(4.0, 0.9 * n + 2.5))

    def _draw(self, fig) -> None:
        axes = fig.subplots(1, 2)
        k, p = self.params["k"], self.params["p"]
        for ax, mat, name in ((axes[0], self.overlap_matrix, f"top-{k} overlap"), (axes[1], self.rbo_matrix, f"RBO (p={p})")):
            im = ax.imshow(mat, vmin=0, vmax=1, cmap="viridis")
            n = len(self.systems)
            ax.set_xticks(range(n), self.systems, rotation=30, ha="right")
            ax.set_yticks(range(n), self.systems)
            ax.set_xlabel("system")
            ax.set_ylabel("system")
            ax.set_title(name)
            for i in range(n):
                for j in range(n):
                    ax.text(j, i, f"{mat[i, j]:.3f}", ha="center", va="center",
                            color="white" if mat[i, j] < 0.6 else "black", fontsize=9)
            fig.colorbar(im, ax=ax, shrink=0.8, label=name)
        fig.suptitle(f"Agreement between systems' top-{k} predictions (mean over {self.params['queries']} queries)")


def system_overlap(systems: Mapping[str, np.ndarray], k: int = 10, p: float = 0.9) -> OverlapResult:
    """Mean top-k overlap and extrapolated RBO for every pair of systems' (Q, V) scores."""
    names = list(systems)
    if len(names) < 2:
        raise ValueError("overlap needs the predictions of at least two systems")
    shapes = {n: np.asarray(s).shape for n, s in systems.items()}
    if len(set(shapes.values())) != 1:
        raise ValueError(f"all systems must score the same queries and videos; got shapes {shapes}")
    tops = {n: topk_indices(systems[n], k) for n in names}
    n = len(names)
    ov, rb = np.eye(n), np.eye(n)
    rows = []
    for i, j in combinations(range(n), 2):
        a, b = tops[names[i]], tops[names[j]]
        o, r = float(topk_overlap(a, b).mean()), float(rbo_ext_topk(a, b, p).mean())
        ov[i, j] = ov[j, i] = o
        rb[i, j] = rb[j, i] = r
        rows.append({"systems": f"{names[i]} & {names[j]}", "overlap": o, "RBO": r})
    q = next(iter(shapes.values()))[0]
    return OverlapResult(
        analysis="overlap",
        title=f"FIRE system overlap: mean top-{k} overlap and RBO (p={p})",
        columns=["systems", "overlap", "RBO"],
        rows=rows,
        params={"k": k, "p": p, "queries": q},
        systems=names,
        overlap_matrix=ov,
        rbo_matrix=rb,
    )
