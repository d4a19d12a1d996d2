"""FIRE Table 1: how much a retrieval score changes once false negatives are corrected.

For each system: C@K and mAP with the original single positive (B), with the
original plus FIRE positives (A), and the gain C = A - B, printed "A (B + C)".
The printed numbers are decimals rounded once (A and B), and C is their exact
decimal difference, so A = B + C holds exactly in the table and the JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any, Mapping

import numpy as np

from hardneg.analysis.base import AnalysisResult
from hardneg.analysis.inputs import Judgments


def _dec(x: float, places: int) -> Decimal:
    return Decimal(repr(float(x))).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN)


@dataclass
class LabelCorrectionResult(AnalysisResult):
    values: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)  # system -> metric -> A/B/C

    def extra(self) -> dict[str, Any]:
        return {"values": self.values}

    def figure_size(self):
        return (max(7.0, 2.2 * len(self.values) + 3), 5.0)

    def _draw(self, fig) -> None:
        ax = fig.add_subplot(1, 1, 1)
        systems = list(self.values)
        metrics = list(next(iter(self.values.values()))) if systems else []
        width = 0.8 / max(1, len(systems))
        x = np.arange(len(metrics))
        for i, s in enumerate(systems):
            b = [100 * self.values[s][m]["B"] for m in metrics]
            c = [100 * self.values[s][m]["C"] for m in metrics]
            pos = x - 0.4 + width * (i + 0.5)
            bars = ax.bar(pos, b, width, label=f"{s}: original positives (B)")
            ax.bar(pos, c, width, bottom=b, color=bars[0].get_facecolor(), alpha=0.4, hatch="//",
                   label=f"{s}: gain with FIRE positives (C)")
        ax.set_xticks(x, metrics)
        ax.set_xlabel("metric")
        ax.set_ylabel("score (%)")
        ax.set_ylim(0, 105)
        ax.set_title("Label correction: score with FIRE positives A = B + C")
        ax.legend(fontsize=8, loc="upper left")
        ax.grid(axis="y", alpha=0.3)


def label_correction(
    systems: Mapping[str, np.ndarray],
    judgments: Judgments,
    ks: tuple[int, ...] = (1, 5, 10),
    ties: str = "expected",
    places: int = 4,
) -> LabelCorrectionResult:
    """C@K/mAP of each system's (Q, V) scores with original (B) and FIRE (A) positives, and C = A - B."""
    from hardneg.ranking import retrieval

    if not systems:
        raise ValueError("label correction needs at least one system's predictions")
    metrics = [f"C@{k}" for k in ks] + ["mAP"]
    values: dict[str, dict[str, dict[str, float]]] = {}
    rows = []
    for name, scores in systems.items():
        r = retrieval(scores, relevant=judgments.relevant(), original=judgments.original, ks=ks, ties=ties)
        agg = r.aggregate
        values[name] = {}
        row: dict[str, Any] = {"system": name}
        for m in metrics:
            b_key = "mAP_original" if m == "mAP" else f"R@{m[2:]}"
            a, b = _dec(agg[m], places), _dec(agg[b_key], places)
            c = a - b
            values[name][m] = {"A": float(a), "B": float(b), "C": float(c), "A_exact": float(agg[m]), "B_exact": float(agg[b_key])}
            pa_, pb, pc = (v.scaleb(2) for v in (a, b, c))
            sign = "-" if pc < 0 else "+"  # an extra positive ranked low can lower AP: C < 0
            row[m] = f"{pa_:.{places - 2}f} ({pb:.{places - 2}f} {sign} {abs(pc):.{places - 2}f})"
        rows.append(row)
    return LabelCorrectionResult(
        analysis="label-correction",
        title="FIRE label correction: A (B + C) in %, A with FIRE positives, B original positives only",
        columns=["system"] + metrics,
        rows=rows,
        params={"ks": list(ks), "ties": ties, "queries": judgments.shape[0], "videos": judgments.shape[1]},
        values=values,
        notes=["A and B are rounded once to 4 decimals; C = A - B exactly."],
    )
