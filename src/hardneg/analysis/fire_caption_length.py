"""FIRE Figures 2-3: short captions are general, have more positives, and are where gains come from.

Per caption-length bin (words by default, or characters): how many queries, how
many known positives (original + FIRE) they have, and which systems get them
right (C@K with FIRE positives, from the ranking core). With two or more
systems, the first two are also split into both / only one / neither correct.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from hardneg.analysis.base import AnalysisResult


def caption_lengths(texts: Sequence[str], unit: str = "words") -> np.ndarray:
    if unit == "words":
        return np.asarray([len(t.split()) for t in texts], dtype=np.int64)
    if unit == "chars":
        return np.asarray([len(t) for t in texts], dtype=np.int64)
    raise ValueError(f"caption length unit {unit!r} must be 'words' or 'chars'")


def bin_edges(lengths: np.ndarray, width: int, max_bins: int = 12) -> np.ndarray:
    """Left edges of equal-width bins; the last bin collects the long tail."""
    if width < 1:
        raise ValueError("bin width must be at least 1")
    lo = int(lengths.min()) // width * width
    hi = int(np.quantile(lengths, 0.99, method="higher"))
    edges = np.arange(lo, hi + 1, width)
    return edges[:max_bins] if edges.size else np.asarray([lo])


@dataclass
class CaptionLengthResult(AnalysisResult):
    lengths: np.ndarray | None = field(default=None, repr=False)
    n_positives: np.ndarray | None = field(default=None, repr=False)
    breakdown: list[dict[str, Any]] = field(default_factory=list)

    def extra(self) -> dict[str, Any]:
        return {"pair_breakdown": self.breakdown}

    def figure_size(self):
        return (13.0, 4.8)

    def _draw(self, fig) -> None:
        ax1, ax2 = fig.subplots(1, 2)
        labels = [r["length_bin"] for r in self.rows]
        x = np.arange(len(labels))
        unit = self.params["unit"]
        counts = [r["queries"] for r in self.rows]
        ax1.bar(x, counts, color="lightgray", label="queries in bin")
        ax1.set_xlabel(f"caption length ({unit})")
        ax1.set_ylabel("queries")
        ax1.set_xticks(x, labels, rotation=30, ha="right")
        tw = ax1.twinx()
        tw.plot(x, [r["mean_positives"] for r in self.rows], "o-", color="C3", label="mean known positives")
        tw.plot(x, [r["max_positives"] for r in self.rows], "s--", color="C1", label="max known positives")
        tw.set_ylabel("positives per query")
        h1, l1 = ax1.get_legend_handles_labels()
        h2, l2 = tw.get_legend_handles_labels()
        ax1.legend(h1 + h2, l1 + l2, fontsize=8, loc="upper left", bbox_to_anchor=(0.0, -0.22), ncols=3)
        ax1.set_title("Known positives by caption length")
        metric = self.params["metric"]
        if self.breakdown:
            a, b = self.params["pair"]
            parts = [("both", "C2"), (f"only {a}", "C0"), (f"only {b}", "C1"), ("neither", "C7")]
            bottom = np.zeros(len(x))
            for key, colour in parts:
                v = np.asarray([r[key] for r in self.breakdown])
                ax2.bar(x, v, bottom=bottom, color=colour, label=key)
                bottom += v
            ax2.set_ylabel(f"share of queries ({metric}, FIRE positives)")
            ax2.set_title(f"Who is correct ({metric}) by caption length")
        else:
            for s in self.params["systems"]:
                ax2.plot(x, [r[f"{s} {metric}"] for r in self.rows], "o-", label=s)
            ax2.set_ylabel(f"{metric} (FIRE positives)")
            ax2.set_title(f"{metric} by caption length")
        ax2.set_ylim(0, 1)
        ax2.set_xticks(x, labels, rotation=30, ha="right")
        ax2.set_xlabel(f"caption length ({unit})")
        ax2.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        fig.suptitle("Caption length and generality")


def caption_length_analysis(
    texts: Sequence[str],
    n_positives: np.ndarray,
    correct: Mapping[str, np.ndarray],
    unit: str = "words",
    bin_width: int = 2,
    metric: str = "C@1",
) -> CaptionLengthResult:
    """Positives and per-system correctness by caption-length bin.

    correct: system -> (Q,) per-query values of `metric` (1 correct, 0 not; expected values under ties allowed).
    """
    lengths = caption_lengths(texts, unit)
    n_pos = np.asarray(n_positives, dtype=np.int64)
    if lengths.size == 0:
        raise ValueError("caption length analysis needs at least one query")
    if n_pos.shape != lengths.shape:
        raise ValueError(f"n_positives has {n_pos.size} values for {lengths.size} captions")
    for s, c in correct.items():
        if np.asarray(c).shape != lengths.shape:
            raise ValueError(f"correctness of {s!r} has shape {np.asarray(c).shape}, expected ({lengths.size},)")
    edges = bin_edges(lengths, bin_width)
    which = np.clip(np.searchsorted(edges, lengths, side="right") - 1, 0, edges.size - 1)
    names = list(correct)
    rows, breakdown = [], []
    for b, left in enumerate(edges):
        sel = which == b
        last = b == edges.size - 1
        label = f"{left}+" if last else (f"{left}" if bin_width == 1 else f"{left}-{left + bin_width - 1}")
        n = int(sel.sum())
        if not n:  # empty bins carry no information; the table lists only lengths that occur
            continue
        row: dict[str, Any] = {"length_bin": label, "queries": n}
        row.update({"mean_positives": float(n_pos[sel].mean()), "median_positives": float(np.median(n_pos[sel])),
                    "max_positives": int(n_pos[sel].max())})
        for s in names:
            row[f"{s} {metric}"] = float(np.asarray(correct[s])[sel].mean())
        rows.append(row)
        if len(names) >= 2:
            a, c = (np.asarray(correct[names[0]], dtype=float)[sel], np.asarray(correct[names[1]], dtype=float)[sel])
            # expected shares treat the two systems' correctness as independent within a query (exact for 0/1 values)
            breakdown.append({"length_bin": label, "both": float((a * c).mean()),
                              f"only {names[0]}": float((a * (1 - c)).mean()),
                              f"only {names[1]}": float(((1 - a) * c).mean()),
                              "neither": float(((1 - a) * (1 - c)).mean())})
    corr = float(np.corrcoef(lengths, n_pos)[0, 1]) if lengths.size > 1 and lengths.std() > 0 and n_pos.std() > 0 else float("nan")
    return CaptionLengthResult(
        analysis="caption-length",
        title=f"FIRE caption length ({unit}) vs known positives and {metric}",
        columns=["length_bin", "queries", "mean_positives", "median_positives", "max_positives"] + [f"{s} {metric}" for s in names],
        rows=rows,
        params={"unit": unit, "bin_width": bin_width, "metric": metric, "systems": names,
                "pair": names[:2] if len(names) >= 2 else [], "pearson_length_vs_positives": corr},
        lengths=lengths,
        n_positives=n_pos,
        breakdown=breakdown,
    )
