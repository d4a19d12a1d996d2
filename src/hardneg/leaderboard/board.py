"""The board: one table per benchmark, every score with its interval, ties with the leader marked.

Rows are the newest visible version of each submitted model, the computed baselines,
and the papers' reported numbers (no interval, never ranked against recomputed rows).
A row is "tied" with the leader of the sort column when their intervals overlap; where
both rows have per-example values on the same items, the paired test's p-value
(`hardneg.ranking.paired_test`, resampling videos) is shown next to it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from hardneg.leaderboard.recompute import FIRE_METRICS
from hardneg.ranking import paired_test
from hardneg.schema import PARTS_OF_SPEECH

BENCHMARK_TITLES = {
    "feint6k": "Feint6K (RCAD)",
    "contrast_sets": "Contrast sets",
    "posrank": "PoSRank",
    "fire": "FIRE",
}
KINDS = ("submitted", "baseline", "reported")
REPORTED_STATUS = "reported, not recomputed"


@dataclass(frozen=True)
class Column:
    """One score column: which part (config, split) and which metric, how to show it."""

    name: str
    config: str
    split: str  # "*" for a summary over the splits of a config (PoSRank mean)
    metric: str
    percent: bool = True
    higher_better: bool = True


@dataclass
class Cell:
    estimate: float
    low: float | None = None
    high: float | None = None
    std_error: float | None = None


@dataclass
class BoardRow:
    model: str
    kind: str  # submitted | baseline | reported
    cells: dict[str, Cell]
    version: str = ""
    submitter: str = ""
    source: str = ""
    note: str = ""
    per_example: dict[str, np.ndarray] = field(default_factory=dict)  # column name -> per-item values
    clusters: dict[str, np.ndarray] = field(default_factory=dict)


def _part_label(config: str, split: str) -> str:
    return config if split == "test" else f"{config}/{split}"


def board_columns(benchmark: str, item_sets: dict) -> list[Column]:
    """The score columns of one benchmark, from the parts the board scores."""
    parts = sorted((c, s) for b, c, s in item_sets if b == benchmark)
    cols: list[Column] = []
    if benchmark == "feint6k":
        for c, s in parts:
            p = _part_label(c, s)
            cols += [Column(f"R@1 · {p}", c, s, "R@1"), Column(f"R@2 · {p}", c, s, "R@2"),
                     Column(f"MeanR · {p}", c, s, "MeanR", percent=False, higher_better=False)]
    elif benchmark == "contrast_sets":
        cols += [Column(f"acc · {_part_label(c, s)}", c, s, "R@1") for c, s in parts]
    elif benchmark == "posrank":
        for config in sorted({c for c, _ in parts}):
            splits = [s for c, s in parts if c == config]
            ordered = [p for p in PARTS_OF_SPEECH if p in splits] + sorted(s for s in splits if s not in PARTS_OF_SPEECH)
            cols.append(Column(f"mean · {config}", config, "*", "mean", percent=False))
            cols += [Column(f"{s} · {config}", config, s, "MRR", percent=False) for s in ordered]
    elif benchmark == "fire":
        for c, s in parts:
            for metric in FIRE_METRICS:
                for variant in ("FIRE", "orig", "delta"):
                    cols.append(Column(f"{metric} {variant} · {_part_label(c, s)}", c, s, f"{metric} {variant}"))
    return cols


def cells_from_results(columns: list[Column], results_by_part: dict[tuple[str, str], dict]) -> dict[str, Cell]:
    """Cells of one row from {(config, split): results['metrics']}, with PoSRank means."""
    cells: dict[str, Cell] = {}
    for col in columns:
        if col.split == "*":
            continue
        m = results_by_part.get((col.config, col.split), {}).get(col.metric)
        if m is not None:
            cells[col.name] = Cell(m["estimate"], m["low"], m["high"], m.get("std_error"))
    for col in columns:
        if col.split != "*":
            continue
        members = [c for c in columns if c.config == col.config and c.split != "*" and c.metric == "MRR"]
        got = [cells.get(c.name) for c in members]
        if members and all(g is not None for g in got):
            est = float(np.mean([g.estimate for g in got]))
            # independent item sets per part of speech: normal interval from the parts' bootstrap SEs
            se = math.sqrt(sum((g.std_error or 0.0) ** 2 for g in got)) / len(got)
            cells[col.name] = Cell(est, est - 1.96 * se, est + 1.96 * se, se)
    return cells


def _fmt(cell: Cell | None, col: Column) -> str:
    if cell is None:
        return ""
    scale, digits = (100.0, 1) if col.percent else (1.0, 3 if col.metric in ("MRR", "mean") else 2)
    est = f"{cell.estimate * scale:.{digits}f}"
    if cell.low is None:
        return est
    return f"{est} [{cell.low * scale:.{digits}f}, {cell.high * scale:.{digits}f}]"


def _sort_value(row: BoardRow, col: Column) -> float:
    cell = row.cells.get(col.name)
    if cell is None:
        return -math.inf
    return cell.estimate if col.higher_better else -cell.estimate


def mark_ties(rows: list[BoardRow], col: Column, n_resamples: int = 2000) -> tuple[dict[int, str], dict[int, float]]:
    """Status and paired p-value (vs the leader) per row index, for one column."""
    status: dict[int, str] = {}
    pvals: dict[int, float] = {}
    ranked = [i for i, r in enumerate(rows) if r.kind != "reported" and r.cells.get(col.name) is not None
              and r.cells[col.name].low is not None]
    for i, r in enumerate(rows):
        if r.kind == "reported":
            status[i] = REPORTED_STATUS
    if not ranked:
        return status, pvals
    leader = max(ranked, key=lambda i: _sort_value(rows[i], col))
    lc = rows[leader].cells[col.name]
    status[leader] = "leader"
    for i in ranked:
        if i == leader:
            continue
        c = rows[i].cells[col.name]
        tied = c.low <= lc.high and lc.low <= c.high
        status[i] = "tied with leader (intervals overlap)" if tied else ""
        a, b = rows[leader].per_example.get(col.name), rows[i].per_example.get(col.name)
        if a is not None and b is not None and a.shape == b.shape:
            pvals[i] = paired_test(a, b, rows[leader].clusters[col.name], n_resamples=n_resamples).p_value
    return status, pvals


def render(rows: list[BoardRow], columns: list[Column], sort_by: str | None = None, descending: bool | None = None,
           search: str = "", kinds=KINDS, shown: list[str] | None = None) -> pd.DataFrame:
    """The table a person sees: filtered, sorted, statuses marked, scores as 'estimate [low, high]'."""
    by_name = {c.name: c for c in columns}
    sort_col = by_name.get(sort_by) if sort_by else (columns[0] if columns else None)
    needle = (search or "").strip().lower()
    keep = [r for r in rows if r.kind in set(kinds or KINDS) and (not needle or needle in r.model.lower())]
    status, pvals = mark_ties(keep, sort_col) if sort_col else ({}, {})
    order = list(range(len(keep)))
    if sort_col is not None:
        order.sort(key=lambda i: _sort_value(keep[i], sort_col), reverse=True)
        if descending is False:
            order.reverse()
    show = [c for c in columns if shown is None or c.name in shown]
    records = []
    for rank, i in enumerate(order, 1):
        r = keep[i]
        rec = {"#": rank, "Model": r.model, "Kind": r.kind, "Status": status.get(i, ""),
               "p vs leader": f"{pvals[i]:.3f}" if i in pvals else ""}
        rec.update({c.name: _fmt(r.cells.get(c.name), c) for c in show})
        rec.update({"Version": r.version, "Submitter": r.submitter, "Source": r.source or r.note})
        records.append(rec)
    head = ["#", "Model", "Kind", "Status", "p vs leader"] + [c.name for c in show] + ["Version", "Submitter", "Source"]
    return pd.DataFrame.from_records(records, columns=head)


def bar_chart(rows: list[BoardRow], col: Column, title: str):
    """Horizontal bars of one column with interval whiskers; reported numbers hatched, no whiskers."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = [(r, r.cells[col.name]) for r in rows if col.name in r.cells]
    data.sort(key=lambda rc: rc[1].estimate, reverse=not col.higher_better)
    scale = 100.0 if col.percent else 1.0
    fig, ax = plt.subplots(figsize=(7, max(2.0, 0.35 * len(data) + 1)))
    colors = {"submitted": "#1f77b4", "baseline": "#7f7f7f", "reported": "#ffffff"}
    for y, (r, c) in enumerate(data):
        err = None
        if c.low is not None:
            err = [[max(0.0, c.estimate - c.low) * scale], [max(0.0, c.high - c.estimate) * scale]]
        ax.barh(y, c.estimate * scale, xerr=err, color=colors[r.kind], edgecolor="#333333",
                hatch="//" if r.kind == "reported" else None, capsize=3)
    ax.set_yticks(range(len(data)))
    ax.set_yticklabels([f"{r.model} ({r.kind})" for r, _ in data], fontsize=8)
    ax.set_xlabel(col.name + (" (%)" if col.percent else ""))
    ax.set_title(f"{title}: {col.name}\nwhiskers: 95% bootstrap interval; hatched: reported, not recomputed", fontsize=8)
    fig.tight_layout()
    return fig
