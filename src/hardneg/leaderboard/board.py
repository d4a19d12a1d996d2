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

from hardneg import benchmarks, vocabulary
from hardneg.ranking import paired_test

KINDS = ("submitted", "baseline", "reported")
#: the Overall column: the mean over benchmarks of each one's first headline metric (all fractions), in percent
AVERAGE = "Average over benchmarks (%)"
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
    headline: bool = True  # shown by default; the others are one click away


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
    coverage: dict[str, str] = field(default_factory=dict)  # part label -> "n/N"
    submitted: str = ""  # date
    link: str = ""  # the model's Hub page


def _part_label(config: str, split: str) -> str:
    return config if split == "test" else f"{config}/{split}"


def board_columns(benchmark: str, item_sets: dict) -> list[Column]:
    """The score columns of one benchmark, from its declaration and the parts the board scores.

    Per part: each headline metric (shown by default), then the per-group values of a metric
    averaged over groups (PoSRank per part of speech) and the original-label variants (FIRE).
    """
    decl = benchmarks.get(benchmark)
    cols: list[Column] = []
    for (b, config, split), items in sorted(item_sets.items()):
        if b != benchmark:
            continue
        part = _part_label(config, split)
        for m in decl.metrics:
            cols.append(Column(f"{m.key} · {part}", config, split, m.key, m.percent, m.higher_better))
        for m in decl.metrics:
            if m.over and m.over in items.groups:
                for g in sorted(set(items.groups[m.over].tolist())):
                    cols.append(Column(f"{m.key}_{g} · {part}", config, split, f"{m.key}_{g}", m.percent,
                                       m.higher_better, headline=False))
            if m.baseline is not None:
                cols.append(Column(f"{m.baseline.key} · {part}", config, split, m.baseline.key, m.baseline.percent,
                                   m.baseline.higher_better, headline=False))
    return cols


def cells_from_results(columns: list[Column], results_by_part: dict[tuple[str, str], dict]) -> dict[str, Cell]:
    """Cells of one row from {(config, split): results['metrics']} (the engine's numbers, nothing recomputed)."""
    cells: dict[str, Cell] = {}
    for col in columns:
        m = results_by_part.get((col.config, col.split), {}).get(col.metric)
        if m is not None and m.get("estimate") is not None:
            cells[col.name] = Cell(m["estimate"], m.get("low"), m.get("high"))
    return cells


def _fmt(cell: Cell | None, col: Column) -> str:
    if cell is None:
        return ""
    return vocabulary.display(col.metric, cell.estimate, cell.low, cell.high)  # one vocabulary on every display


def shown_header(col: Column) -> str:
    """A score column's header on the page: its name and its unit ('R@1 · msrvtt (%)', 'MeanR · msrvtt (rank)')."""
    return vocabulary.header(col.metric, col.name)


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
    """The table a person sees: recomputed rows ranked among themselves, then the papers' reported rows
    (apart, never ranked or labelled leader); scores as 'estimate [low, high]'; coverage per part."""
    by_name = {c.name: c for c in columns}
    sort_col = by_name.get(sort_by) if sort_by else next((c for c in columns if c.headline), None)
    needle = (search or "").strip().lower()
    keep = [r for r in rows if r.kind in set(kinds or KINDS) and (not needle or needle in r.model.lower())]
    status, pvals = mark_ties(keep, sort_col) if sort_col else ({}, {})
    ranked = [i for i, r in enumerate(keep) if r.kind != "reported"]
    reported = [i for i, r in enumerate(keep) if r.kind == "reported"]
    for group in (ranked, reported):
        if sort_col is not None:
            group.sort(key=lambda i: _sort_value(keep[i], sort_col), reverse=True)
            if descending is False:
                group.reverse()
    show = [c for c in columns if (c.name in shown if shown is not None else c.headline)]
    records = []
    for rank, i in enumerate(ranked + reported, 1):
        r = keep[i]
        rec = {"#": rank if r.kind != "reported" else "", "Model": r.model, "Kind": r.kind, "Status": status.get(i, ""),
               "p vs #1": f"{pvals[i]:.3f}" if i in pvals else ""}
        rec.update({shown_header(c): _fmt(r.cells.get(c.name), c) for c in show})
        rec.update({"n / items": "; ".join(f"{k} {v}" for k, v in r.coverage.items()),
                    "Hub page": f"[{r.model}]({r.link})" if r.link else "", "Submitted": r.submitted, "Version": r.version, "Submitter": r.submitter,
                    "Source": r.source or r.note})
        records.append(rec)
    info = ["n / items", "Hub page", "Submitted", "Version", "Submitter", "Source"]
    # an information column no shown row fills is left out (an empty column only squeezes the others)
    info = [h for h in info if any(rec.get(h) for rec in records)] or ["Source"]
    head = ["#", "Model", "Kind", "Status", "p vs #1"] + [shown_header(c) for c in show] + info
    return pd.DataFrame.from_records(records, columns=head)


def average_table(rows_by_benchmark: dict[str, list[BoardRow]], columns_by_benchmark: dict[str, list[Column]]) -> pd.DataFrame:
    """Overall view: per submitted model that has every benchmark, each benchmark's first headline metric
    (averaged over its parts) and their mean; only models with every benchmark are averaged."""
    firsts: dict[str, list[Column]] = {}
    for b, cols in columns_by_benchmark.items():
        key = benchmarks.get(b).metrics[0].key
        firsts[b] = [c for c in cols if c.metric == key]
    per_model: dict[str, dict[str, float]] = {}
    for b, rows in rows_by_benchmark.items():
        for r in rows:
            if r.kind == "reported":
                continue
            vals = [r.cells[c.name].estimate for c in firsts[b] if c.name in r.cells]
            if firsts[b] and len(vals) == len(firsts[b]):
                per_model.setdefault(r.model, {})[b] = float(np.mean(vals))
    names = list(rows_by_benchmark)
    records = []
    for model, vals in per_model.items():
        if all(b in vals for b in names):
            rec = {"Model": model}
            for b in names:
                m = benchmarks.get(b).metrics[0]
                rec[f"{benchmarks.get(b).title} {vocabulary.header(m.key)}"] = round(vocabulary.scale(m.key) * vals[b], 1)
            # an average over values in one unit only: every benchmark's first headline metric is a fraction
            units = {vocabulary.unit(benchmarks.get(b).metrics[0].key) for b in names}
            rec[AVERAGE] = round(100 * float(np.mean([vals[b] for b in names])), 1) if units == {"fraction"} else None
            records.append(rec)
    records.sort(key=lambda r: r[AVERAGE] if r[AVERAGE] is not None else -1, reverse=True)
    head = ["Model"] + [f"{benchmarks.get(b).title} {vocabulary.header(benchmarks.get(b).metrics[0].key)}"
                        for b in names] + [AVERAGE]
    return pd.DataFrame.from_records(records, columns=head)


def bar_chart(rows: list[BoardRow], col: Column, title: str):
    """Horizontal bars of one column with interval whiskers; reported numbers hatched, no whiskers."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = [(r, r.cells[col.name]) for r in rows if col.name in r.cells]
    data.sort(key=lambda rc: rc[1].estimate, reverse=not col.higher_better)
    scale = vocabulary.scale(col.metric)
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
    ax.set_xlabel(vocabulary.header(col.metric, col.name))
    ax.set_title(f"{title}: {col.name}\nwhiskers: 95% bootstrap interval; hatched: reported, not recomputed", fontsize=8)
    fig.tight_layout()
    return fig
