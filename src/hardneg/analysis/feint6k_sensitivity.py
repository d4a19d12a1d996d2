"""Feint6K Figure 5: is a model more sensitive to swapped objects than to swapped actions?

For every negative caption of every item, Δs = s(v, negative) - s(v, positive)
with the model's own scores. An ideal model gives Δs < 0 always; a model that
only sees objects has strongly negative Δs for object swaps and Δs near zero
(sometimes positive) for action swaps. Negatives are grouped into kinds by
their negative type (noun -> object, verb/counterfactual -> action by default).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from hardneg.analysis.base import AnalysisResult
from hardneg.analysis.inputs import MCItems

#: negative type -> kind of swap (anything else keeps its own type as kind)
DEFAULT_KINDS = {
    "noun": "object",
    "id": "object",
    "gender": "object",
    "verb": "action",
    "verb_lm": "action",
    "verb_human": "action",
    "counterfactual": "action",
}


def negative_kinds(items: MCItems, kinds: Mapping[str, str] | None = None) -> list[list[str | None]]:
    """Per item, per candidate: the kind of swap (None for the positive; random captions are kept as 'random')."""
    kinds = DEFAULT_KINDS if kinds is None else kinds
    out = []
    for i in range(len(items)):
        types = items.negative_types[i] or ["unknown"] * len(items.captions[i])
        out.append([None if j == items.label[i] else kinds.get(t, t) for j, t in enumerate(types)])
    return out


def delta_scores(scores: np.ndarray, mask: np.ndarray, label: np.ndarray, kinds: list[list[str | None]]) -> dict[str, np.ndarray]:
    """kind -> all Δs = s(v, negative) - s(v, positive) values of that kind."""
    n = scores.shape[0]
    pos = scores[np.arange(n), label]
    delta = scores - pos[:, None]
    out: dict[str, list[float]] = {}
    for i in range(n):
        for j, k in enumerate(kinds[i]):
            if k is None or not mask[i, j]:
                continue
            out.setdefault(k, []).append(float(delta[i, j]))
    return {k: np.asarray(v) for k, v in out.items()}


@dataclass
class SensitivityResult(AnalysisResult):
    deltas: dict[str, dict[str, np.ndarray]] = field(default_factory=dict, repr=False)  # model -> kind -> Δs

    def extra(self) -> dict[str, Any]:
        q = {}
        for m, per in self.deltas.items():
            q[m] = {k: {f"q{p}": float(np.percentile(v, p)) for p in (5, 25, 50, 75, 95)} for k, v in per.items()}
        return {"quantiles": q}

    def figure_size(self):
        return (max(7.0, (1.2 + 0.9 * len(self.params["kinds_shown"])) * len(self.deltas) + 2), 5.0)

    def _draw(self, fig) -> None:
        ax = fig.add_subplot(1, 1, 1)
        models = list(self.deltas)
        kinds = self.params["kinds_shown"]
        width = 0.8 / max(1, len(kinds))
        colours = {k: f"C{i}" for i, k in enumerate(kinds)}
        for i, m in enumerate(models):
            for j, k in enumerate(kinds):
                v = self.deltas[m].get(k)
                if v is None or v.size == 0:
                    continue
                pos = i - 0.4 + width * (j + 0.5)
                if v.size > 1 and np.ptp(v) > 0:
                    parts = ax.violinplot([v], positions=[pos], widths=width * 0.95, showmedians=True)
                    for body in parts["bodies"]:
                        body.set_facecolor(colours[k])
                        body.set_alpha(0.5)
                    for key in ("cmedians", "cmins", "cmaxes", "cbars"):
                        if key in parts:
                            parts[key].set_color(colours[k])
                else:
                    ax.plot([pos], [float(v.mean())], "o", color=colours[k])
        for k in kinds:
            ax.plot([], [], "s", color=colours[k], alpha=0.6, label=f"{k} swaps")
        ax.axhline(0, color="black", linewidth=0.8, linestyle=":")
        ax.set_xticks(range(len(models)), models)
        ax.set_xlabel("model")
        ax.set_ylabel("Δs = s(v, negative) − s(v, positive)")
        ax.set_title("Sensitivity to object vs action swaps (Δs < 0 is correct)")
        ax.legend(fontsize=8)
        ax.grid(axis="y", alpha=0.3)


def sensitivity(
    items: MCItems,
    scores: Mapping[str, tuple[np.ndarray, np.ndarray]],
    kinds: Mapping[str, str] | None = None,
    show: tuple[str, ...] | None = None,
) -> SensitivityResult:
    """Δs distribution per model and kind of swap. scores: model -> ((N, C) scores, (N, C) mask)."""
    if not scores:
        raise ValueError("sensitivity needs at least one model's predictions")
    per_kind = negative_kinds(items, kinds)
    deltas = {m: delta_scores(s, mask, items.label, per_kind) for m, (s, mask) in scores.items()}
    present = sorted({k for d in deltas.values() for k in d})
    first = [k for k in (show or ("object", "action")) if k in present]
    shown = first + ([k for k in present if k not in first] if show is None else [])
    rows = []
    for m, per in deltas.items():
        for k in present:
            v = per.get(k, np.asarray([]))
            if v.size == 0:
                continue
            rows.append({"model": m, "kind": k, "n": int(v.size), "mean_Δs": float(v.mean()), "median_Δs": float(np.median(v)),
                         "share_Δs<0": float((v < 0).mean()), "share_Δs>0": float((v > 0).mean()),
                         "mean_|Δs|": float(np.abs(v).mean())})
    notes = []
    if not {"object", "action"} <= set(present):
        notes.append(f"negatives present are of kinds {present}; object-vs-action needs both object (noun) and action "
                     "(verb/counterfactual) negatives, e.g. a PoSRank noun+verb set or Feint6K next to an object-swap set")
    return SensitivityResult(
        analysis="sensitivity",
        title="Feint6K sensitivity: Δs = s(v, negative) - s(v, positive) by kind of swap",
        columns=["model", "kind", "n", "mean_Δs", "median_Δs", "share_Δs<0", "share_Δs>0", "mean_|Δs|"],
        rows=rows,
        params={"kinds": dict(DEFAULT_KINDS if kinds is None else kinds), "kinds_present": present, "kinds_shown": shown,
                "items": len(items)},
        notes=notes,
        deltas=deltas,
    )
