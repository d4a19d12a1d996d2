"""The Overall view, as MTEB's: every model with its coverage, one score per benchmark, ranked, sorted, searched.

Per benchmark the view shows its one number, as its declaration defines it (`Benchmark.overall`: one
named config, a mean over disjoint configs, or item-pooled; the metric a fraction, so every value
averaged is in one unit) and the results engine computes it (`hardneg.results.benchmark_value`, read
through the tab's number column): the value `hardneg run` prints and results.json holds under the
benchmark's name, never a set averaged with its own subsets. A model is listed whatever it covers; the
"Coverage" column says how many benchmarks ("4/5"), and the average is taken only for models that cover
every benchmark (the column's header says so): a mean over a different set of benchmarks would not
compare. The papers' reported numbers are not
recomputed and are left out.

Intervals: a benchmark's parts hold different items, and benchmarks hold different items, so their
bootstrap errors are independent; a mean's interval is the normal approximation from the parts' 95%
bootstrap intervals (standard error = half-width / 1.96, combined in quadrature). The About tab says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from hardneg import benchmarks, vocabulary
from hardneg.benchmarks import Metric
from hardneg.leaderboard.board import AVERAGE as BOARD_AVERAGE
from hardneg.leaderboard.board import (KINDS, BoardRow, Cell, Column, drawn_name, fmt_cell, format_params, marked_name, md_escape,
                                      md_link, model_type)
from hardneg.leaderboard.drawing import UNDRAWN_NAME, drawn_per_row, shown_name

#: the z of the 95% intervals every board cell carries
Z95 = 1.959963984540054
MODEL_TYPES = ("contrastive", "generative", "text-only", "other", "unknown")  # the filter's choices
#: size filter buckets: label -> [low, high) in parameters; "unknown" for models that did not say
SIZE_BUCKETS: dict[str, tuple[float, float] | None] = {
    "< 100M": (0, 1e8), "100M–1B": (1e8, 1e9), "1B–10B": (1e9, 1e10), "≥ 10B": (1e10, math.inf), "unknown": None,
}
#: the types the computed baselines have (they carry no submitted metadata)
BASELINE_TYPES = {"text-only": "text-only", "random": "other"}
AVERAGE = "Average"
COVERAGE = "Coverage"


def overall_metric(benchmark: str) -> Metric | None:
    """The metric of a benchmark's one number (`Benchmark.overall_metric`: declared, else its first fraction one)."""
    return benchmarks.get(benchmark).overall_metric


def combine(cells: list[Cell], bounds: tuple[float, float] = (0.0, 1.0)) -> Cell:
    """The mean of independent estimates, with the normal-approximation 95% interval from theirs (kept inside
    the metric's range: fractions stay in [0, 1])."""
    if len(cells) == 1:
        return cells[0]
    est = sum(c.estimate for c in cells) / len(cells)
    if any(c.low is None or c.high is None for c in cells):
        return Cell(est)
    se = math.sqrt(sum(((c.high - c.low) / (2 * Z95)) ** 2 for c in cells)) / len(cells)
    return Cell(est, max(bounds[0], est - Z95 * se), min(bounds[1], est + Z95 * se), se)


@dataclass
class OverallRow:
    model: str
    kind: str
    cells: dict[str, Cell]  # benchmark -> cell
    covered: int
    total: int
    average: Cell | None
    model_meta: dict = field(default_factory=dict)
    link: str = ""
    submitted: str = ""
    parts_covered: int = 0
    parts_total: int = 0
    local: bool = False  # submitted in a board's local mode: its Kind reads "local"
    rank: int | None = None  # rank in the sort column (best = 1), set by `select`; None without a value there

    @property
    def model_type(self) -> str:
        return model_type(self.model_meta)

    @property
    def params(self):
        p = self.model_meta.get("params")
        return p if isinstance(p, (int, float)) and not isinstance(p, bool) and 0 < p < 1e16 else None

    def size_bucket(self) -> str:
        p = self.params
        if p is None:
            return "unknown"
        try:  # never raises: a value no bucket holds (NaN, or a stored oddity) is "unknown"
            return next(label for label, rng in SIZE_BUCKETS.items() if rng and rng[0] <= p < rng[1])
        except (StopIteration, TypeError, OverflowError):
            return "unknown"


def header(benchmark: str) -> str:
    m = overall_metric(benchmark)
    return f"{benchmarks.get(benchmark).title} · {vocabulary.header(m.key)}"


def average_header(names: list[str]) -> str:
    """The average column's header: says its unit and that only fully covered models get one."""
    return BOARD_AVERAGE


def overall_rows(rows_by_benchmark: dict[str, list[BoardRow]], columns_by_benchmark: dict[str, list[Column]]) -> list[OverallRow]:
    """One row per submitted model or baseline, whatever it covers; the average only over full coverage."""
    names = [b for b in rows_by_benchmark if overall_metric(b) is not None]
    firsts: dict[str, list[Column]] = {}
    for b in names:  # the benchmark's one number: one column, computed by the results engine (board.number_cell)
        firsts[b] = [c for c in columns_by_benchmark[b] if c.overall][:1]
    found: dict[tuple[str, str], OverallRow] = {}
    for b in names:
        for r in rows_by_benchmark[b]:
            if r.kind == "reported":
                continue
            row = found.get((r.kind, r.model))
            if row is None:
                meta = dict(r.model_meta)
                if r.kind == "baseline" and not meta.get("model_type"):
                    meta["model_type"] = next((t for k, t in BASELINE_TYPES.items() if r.model.startswith(k)), "other")
                row = found[(r.kind, r.model)] = OverallRow(r.model, r.kind, {}, 0, len(names), None, meta, r.link,
                                                             r.submitted)
                row.local = r.source == "local"
            row.submitted = max(row.submitted, r.submitted)
            cells = [r.cells[c.name] for c in firsts[b] if c.name in r.cells]
            row.parts_covered += sum(1 for c in firsts[b] for part in c.parts if part in r.coverage)
            if cells:  # every part the benchmark's number needs
                row.cells[b] = cells[0]
    total_parts = sum(len(c.parts) for b in names for c in firsts[b])
    for row in found.values():
        row.parts_total = total_parts
        row.covered = len(row.cells)
        if names and row.covered == len(names):
            row.average = combine([row.cells[b] for b in names])
    return list(found.values())


def _sort_key(row: OverallRow, column: str, names: list[str]) -> float:
    if column == COVERAGE:
        return row.covered + row.parts_covered / (row.parts_total + 1)
    if column in names:
        c = row.cells.get(column)
        m = overall_metric(column)
        return -math.inf if c is None else (c.estimate if m.higher_better else -c.estimate)
    return -math.inf if row.average is None else row.average.estimate


def select(rows: list[OverallRow], *args, **kwargs) -> list[OverallRow]:
    """`select_rows`, never failing on a stored row (a row that cannot be sorted or filtered is a placeholder)."""
    return drawn_per_row(select_rows, rows, undrawn_overall_row, *args, **kwargs)


def render_overall(rows: list[OverallRow], *args, **kwargs) -> pd.DataFrame:
    """`render_overall_rows`, never failing on a stored row: a row that cannot be drawn shows as a placeholder."""
    return drawn_per_row(render_overall_rows, rows, undrawn_overall_row, *args, **kwargs)


def machine_overall(rows: list[OverallRow], *args, **kwargs) -> pd.DataFrame:
    """`machine_overall_rows`, never failing on a stored row."""
    return drawn_per_row(machine_overall_rows, rows, undrawn_overall_row, *args, **kwargs)


def undrawn_overall_row(r: OverallRow) -> OverallRow:
    """The placeholder of a row that cannot be drawn: its name and kind, no values."""
    total = r.total if isinstance(getattr(r, "total", None), int) else 0
    return OverallRow(UNDRAWN_NAME.format(shown_name(getattr(r, "model", "?"))),
                      r.kind if getattr(r, "kind", None) in KINDS else "submitted", {}, 0, total, None)


def select_rows(rows: list[OverallRow], names: list[str], sort_by: str = AVERAGE, descending: bool = True, search: str = "",
           types=None, sizes=None, kinds=("submitted", "baseline")) -> list[OverallRow]:
    """Filter (search, model type, size bucket, kind) and sort; rows without the sort value go last."""
    needle = (search or "").strip().lower()
    keep = [r for r in rows if r.kind in set(kinds or ()) and (not needle or needle in r.model.lower())
            and (not types or r.model_type in set(types)) and (not sizes or r.size_bucket() in set(sizes))]
    column = sort_by if sort_by in names or sort_by == COVERAGE else AVERAGE
    has = [r for r in keep if _sort_key(r, column, names) != -math.inf]
    missing = [r for r in keep if _sort_key(r, column, names) == -math.inf]
    has.sort(key=lambda r: (_sort_key(r, column, names), r.covered), reverse=True)
    for k, r in enumerate(has, 1):  # the rank is best = 1 whichever way the rows are shown
        r.rank = k
    for r in missing:
        r.rank = None
    if not descending:
        has.reverse()
    missing.sort(key=lambda r: (-r.covered, r.model))
    return has + missing


def render_overall_rows(rows: list[OverallRow], names: list[str], links: bool = True) -> pd.DataFrame:
    """The table a person sees (rows already selected): rank, model (with `links`, the page's: a Markdown link and
    the generative mark; plain text for a terminal, whose Type column says it), coverage, average, per benchmark: percent with one decimal, each with its interval."""
    records = []
    for r in rows:
        rec = {"#": r.rank if r.rank is not None else "",
               "Model": (marked_name(md_link(r.model, r.link) if r.link else
                                     drawn_name(r.model) if r.kind == "submitted" else r.model, r.model_meta) if links
                         else r.model),
               "Kind": "local" if r.local else r.kind,
               "Type": r.model_type, "Params": format_params(r.params), COVERAGE: f"{r.covered}/{r.total}", "Parts": f"{r.parts_covered}/{r.parts_total}",
               average_header(names): fmt_cell(r.average, overall_metric(names[0])) if r.average else ""}
        for b in names:
            rec[header(b)] = fmt_cell(r.cells.get(b), overall_metric(b))
        lic = r.model_meta.get("license")
        rec["License"] = md_escape(lic[:40]) if isinstance(lic, str) else ""
        rec["Submitted"] = r.submitted
        records.append(rec)
    # what a 1280 px screen shows first: rank, model, its type, coverage, average, the benchmarks; the model's other
    # facts after them (Type beside the model: never the cell cut at the right edge of a wide screen, issue 33)
    head = ["#", "Model", "Type", COVERAGE, average_header(names)] + [header(b) for b in names] + \
        ["Kind", "Params", "Parts", "License", "Submitted"]
    if not any(rec["License"] for rec in records):  # a column empty in every row only squeezes the others (issue 41)
        head.remove("License")
    return pd.DataFrame.from_records(records, columns=head)


def machine_overall_rows(rows: list[OverallRow], names: list[str]) -> pd.DataFrame:
    """The Overall download: fractions, each with its interval, the metric named in the column."""
    records = []
    for r in rows:
        rec = {"rank": r.rank, "model": r.model, "kind": "local" if r.local else r.kind,
               "model_type": r.model_meta.get("model_type"), "params": r.params,
               "license": r.model_meta.get("license"), "link": r.link or r.model_meta.get("link") or "",
               "coverage": f"{r.covered}/{r.total}", "benchmarks_covered": r.covered, "benchmarks_total": r.total,
               "parts_covered": r.parts_covered, "parts_total": r.parts_total}
        for label, cell in [("average", r.average)] + [(f"{b}:{overall_metric(b).key}", r.cells.get(b)) for b in names]:
            rec[label] = None if cell is None else cell.estimate
            rec[f"{label} low"] = None if cell is None else cell.low
            rec[f"{label} high"] = None if cell is None else cell.high
        records.append(rec)
    return pd.DataFrame.from_records(records)


__all__ = ["AVERAGE", "COVERAGE", "MODEL_TYPES", "SIZE_BUCKETS", "OverallRow", "average_header", "combine", "header",
           "machine_overall", "overall_metric", "overall_rows", "render_overall", "select"]
