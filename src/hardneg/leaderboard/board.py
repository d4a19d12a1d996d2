"""The board: one table per benchmark, every score with its interval, ties with the leader marked.

Rows are the newest visible version of each submitted model, the computed baselines,
and the papers' reported numbers (no interval, never ranked against recomputed rows).
A row is "tied" with the leader of the sort column when their intervals overlap; where
both rows have per-example values on the same items, the paired test's p-value
(`hardneg.ranking.paired_test`, resampling videos) is shown next to it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from hardneg import benchmarks, vocabulary
from hardneg.benchmarks import Metric
from hardneg.leaderboard.drawing import UNDRAWN, drawn_per_row, shown_name
from hardneg.ranking import paired_test

KINDS = ("submitted", "baseline", "reported")
#: the Overall column's header: the mean over every benchmark of each one's number (`Benchmark.overall`), in
#: percent, taken only for models that cover every benchmark (`hardneg.leaderboard.overall`)
AVERAGE = "Average over benchmarks (%), full coverage only"
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
    #: the declared metric this column shows (its `format` is how every display writes the value)
    spec: Metric | None = field(default=None, compare=False, repr=False)
    #: the benchmark's one number (`Benchmark.overall`, computed by `hardneg.results.benchmark_value`): what
    #: Overall shows and the tab sorts by; `parts` are the parts ("config/split") it is computed from
    overall: bool = False
    parts: tuple[str, ...] = ()


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
    model_meta: dict = field(default_factory=dict)  # params, model_type, license, link, revision (at submission)
    ids: tuple[str, ...] = ()  # stored submission ids behind the row (cache keys: submissions never change)
    cuts: int = 0  # captions the model's tokenizer cut in this row's parts (`hardneg.truncation`; CUT_MARK)


def kind_label(row) -> str:
    """The Kind every table shows: "local" for a model submitted to a board in local mode, else the row's kind."""
    return "local" if row.kind == "submitted" and getattr(row, "source", "") == "local" else row.kind


def _part_label(config: str, split: str) -> str:
    return config if split == "test" else f"{config}/{split}"


def board_columns(benchmark: str, item_sets: dict) -> list[Column]:
    """The score columns of one benchmark, from its declaration and the parts the board scores.

    Per part: each headline metric (shown by default), then the per-group values of a metric
    averaged over groups (PoSRank per part of speech) and the original-label variants (FIRE).
    """
    decl = benchmarks.get(benchmark)
    cols: list[Column] = []
    number = number_parts(benchmark, item_sets)
    metric = decl.overall_metric
    for (b, config, split), items in sorted(item_sets.items()):
        if b != benchmark:
            continue
        part = _part_label(config, split)
        metrics = decl.metrics_for(config)
        for m in metrics:
            # the number is one part's value (rule "config", or a mean over the one config a board has): that column
            flag = metric is not None and m.key == metric.key and len(number) == 1 and number[0] == (config, split)
            cols.append(Column(f"{m.key} · {part}", config, split, m.key, m.percent, m.higher_better, spec=m,
                               overall=flag, parts=(f"{config}/{split}",) if flag else ()))
        for m in metrics:
            if m.over and m.over in items.groups:
                for g in sorted(set(items.groups[m.over].tolist())):
                    cols.append(Column(f"{m.key}_{g} · {part}", config, split, f"{m.key}_{g}", m.percent,
                                       m.higher_better, headline=False, spec=m))
            if m.baseline is not None:
                cols.append(Column(f"{m.baseline.key} · {part}", config, split, m.baseline.key, m.baseline.percent,
                                   m.baseline.higher_better, headline=False, spec=m.baseline))
    return _with_number(cols, decl, number)


#: a tab shows every config's headline metrics by default up to this many columns; beyond it only the configs the
#: benchmark's number is computed from (ViLMA's 33: the rest are one click away, in the column picker)
MAX_DEFAULT_COLUMNS = 12
#: the name of a benchmark's number column where it is not one config's column ("R@1 · overall")
OVERALL_LABEL = "overall"


def number_parts(benchmark: str, item_sets) -> list[tuple[str, str]]:
    """The (config, split) parts a benchmark's one number is computed from, on a board with these item sets
    (`Benchmark.overall`; the `test` split of each config, else its only one)."""
    decl = benchmarks.get(benchmark)
    splits: dict[str, list[str]] = {}
    for b, c, s in sorted(item_sets):
        if b == benchmark:
            splits.setdefault(c, []).append(s)
    configs = decl.overall_rule(list(splits)).parts(decl.scoreable(list(splits)))
    # a config's `test` split; a config split otherwise (PoSRank's parts of speech as splits): each split a part
    return [(c, s) for c in configs for s in (["test"] if "test" in splits.get(c, ["test"]) else splits[c])]


def _with_number(cols: list[Column], decl, number: list[tuple[str, str]]) -> list[Column]:
    """The benchmark's number column first (one config's own column, or a computed "· overall" one); the columns
    shown by default: all headline ones when few, else those of the number's configs."""
    metric = decl.overall_metric
    if metric is None or not number:
        return cols
    labels = tuple(f"{c}/{s}" for c, s in number)  # as rows' coverage names them
    flagged = [c for c in cols if c.overall]
    if flagged:
        first = flagged[0]
    else:
        first = Column(f"{metric.key} · {OVERALL_LABEL}", "", "", metric.key, metric.percent, metric.higher_better,
                       spec=metric, overall=True, parts=labels)
    rest = [c for c in cols if c is not first]
    if sum(c.headline for c in rest) > MAX_DEFAULT_COLUMNS:
        wanted = {(c, s) for c, s in number}
        rest = [c if (c.config, c.split) in wanted else _hidden(c) for c in rest]
    return [first] + rest


def _hidden(col: Column) -> Column:
    return replace(col, headline=False) if col.headline else col


def number_cell(benchmark: str, results_by_part: dict[tuple[str, str], dict], parts: list[tuple[str, str]]) -> Cell | None:
    """A row's cell of the benchmark's one number, from its parts' stored metrics ({(config, split): metrics},
    entries with "estimate", "low", "high", "n"): the results engine's `benchmark_value`, nothing recomputed here."""
    from hardneg.results import benchmark_value

    decl = benchmarks.get(benchmark)
    configs = [c for c, _ in parts]
    one_each = len(set(configs)) == len(configs)
    # keyed by config; by "config/split" where a config has several splits (each one part of a mean)
    label = (lambda c, s: c) if one_each else (lambda c, s: f"{c}/{s}")  # noqa: E731
    metrics = {label(c, s): results_by_part.get((c, s)) or {} for c, s in parts}
    n = {k: next((e.get("n") for e in m.values() if isinstance(e, dict) and e.get("n") is not None), 0)
         for k, m in metrics.items()}
    got = benchmark_value(decl, metrics, n, list(metrics))
    return None if got is None else Cell(got["value"], got["low"], got["high"])


def number_values(benchmark: str, item_sets, parts_values: list) -> tuple[np.ndarray, np.ndarray] | None:
    """Per-item values whose plain mean is the benchmark's one number over several parts, and their clusters: for
    the paired test against the leader on that number (issue 33: "p vs #1" stayed empty on a tab sorted by
    "R@1 · overall", which has no per-item values of its own).

    parts_values: the per-item values of each of `number_parts` (None where missing: then None). A part's values
    are scaled by weight x N / n (the rule's weights, `hardneg.results.number_weights`): their mean over all N items
    is the weighted mean of the parts' means, the number itself. Clusters are the items' videos (a video in two
    parts is one cluster: its items move together)."""
    from hardneg.results import number_weights

    parts = number_parts(benchmark, item_sets)
    if len(parts) < 2 or len(parts_values) != len(parts) or any(v is None for v in parts_values):
        return None
    decl = benchmarks.get(benchmark)
    configs = sorted({c for b, c, _ in item_sets if b == benchmark})
    values = [np.asarray(v, dtype=np.float64) for v in parts_values]
    ns = [len(v) for v in values]
    if any(n != len(item_sets[(benchmark, c, s)]) for n, (c, s) in zip(ns, parts)):
        return None  # a part scored on a subset of its items: not the same items as a full row's
    total = sum(ns)
    rule = decl.overall_rule(configs).rule
    if rule not in ("mean", "pooled"):
        return None
    weights = number_weights(rule, ns)
    scaled = np.concatenate([v * (w * total / n) for v, w, n in zip(values, weights, ns)])
    clusters = np.concatenate([np.asarray(item_sets[(benchmark, c, s)].clusters) for c, s in parts])
    return scaled, clusters


def cells_from_results(columns: list[Column], results_by_part: dict[tuple[str, str], dict]) -> dict[str, Cell]:
    """Cells of one row from {(config, split): results['metrics']} (the engine's numbers, nothing recomputed)."""
    cells: dict[str, Cell] = {}
    for col in columns:
        m = results_by_part.get((col.config, col.split), {}).get(col.metric)
        if m is not None and m.get("estimate") is not None:
            cells[col.name] = Cell(m["estimate"], m.get("low"), m.get("high"))
    return cells


def fmt_cell(cell: Cell | None, metric: Metric) -> str:
    """'estimate [low, high]' written by the declared metric's own `format` (one vocabulary on every display)."""
    if cell is None:
        return ""
    return vocabulary.display(metric.key, cell.estimate, cell.low, cell.high)  # one vocabulary on every display


def _spec(col: Column) -> Metric:
    return col.spec or Metric(col.metric, col.metric, "")


def _fmt(cell: Cell | None, col: Column) -> str:
    if cell is None:
        return ""
    return vocabulary.display(col.metric, cell.estimate, cell.low, cell.high)  # per-group keys resolve too


def shown_header(col: Column) -> str:
    """A column's header on the page: its name and its unit ('R@1 · msrvtt (%)', 'MeanR · msrvtt (rank)')."""
    return vocabulary.header(col.metric, col.name)


def unit_suffix(metric: Metric) -> str:
    """What a header adds to say the unit: ' (%)' for a fraction, ' (rank)' for a rank."""
    return vocabulary.header(metric.key, "")


def md_escape(text: str) -> str:
    """Text placed inside Markdown cells: characters that would start markup or HTML are escaped."""
    return "".join("\\" + ch if ch in "\\`*_{}[]()<>#+!|~" else ch for ch in str(text))


def drawn_name(model) -> str:
    """A row's model name in a page table: a name as the Hub spells it is drawn as is; anything else (a placeholder,
    a row written straight into the store) is escaped, so no stored text draws markup (issue 49, N29)."""
    from hardneg.guards import GuardError, model_id

    try:
        return model_id(model, namespace=False)
    except GuardError:
        return md_escape(str(model))


def md_link(text: str, url: str) -> str:
    """A Markdown link for a table cell; only http(s) URLs become links (anything else stays plain text)."""
    if not url or not str(url).lower().startswith(("https://", "http://")):
        return md_escape(text)
    safe = "".join(f"%{ord(ch):02X}" if ch in '<>"\' \\`' or ord(ch) < 32 else ch for ch in str(url))
    return f"[{md_escape(text)}](<{safe}>)"


def _sort_value(row: BoardRow, col: Column) -> float:
    cell = row.cells.get(col.name)
    if cell is None:
        return -math.inf
    return cell.estimate if col.higher_better else -cell.estimate


#: rows (after the leader) that get a paired p-value: the test resamples items, so a board of 1,000 models
#: computes it for the top of the ranking only (each result is cached: stored submissions never change)
MAX_PAIRED = 50


def _p_value(leader: BoardRow, row: BoardRow, column: str, n_resamples: int) -> float | None:
    """The paired p-value of `row` against `leader` on one column (None when they hold different items)."""
    a, b = leader.per_example.get(column), row.per_example.get(column)
    if a is None or b is None or a.shape != b.shape:
        return None
    return paired_test(a, b, leader.clusters[column], n_resamples=n_resamples).p_value


#: what the "p vs #1" cell says where it holds no p-value (the page's legend explains them)
P_PENDING = "computing…"
P_NO_VALUES = "n/a: no per-item values"
P_OTHER_ITEMS = "n/a: other items"
P_NOT_TOP = f"n/a: below the top {MAX_PAIRED}"
P_LEADER = "—"


def mark_ties(rows: list[BoardRow], col: Column, n_resamples: int = 2000,
              cache: dict | None = None, notes: dict | None = None) -> tuple[dict[int, str], dict[int, float]]:
    """Status and paired p-value (vs the leader) per row index, for one column.

    p-values go to the `MAX_PAIRED` best rows after the leader; `cache` (a dict the caller keeps) holds them by
    (column, leader's submissions, row's submissions). `notes` (a dict the caller passes) gets, per ranked row
    without a p-value, why: the leader itself, still computing in the background, no per-item values, other
    items than the leader's, or below the top `MAX_PAIRED` (issue 33: an empty cell said nothing)."""
    status: dict[int, str] = {}
    pvals: dict[int, float] = {}
    notes = {} if notes is None else notes
    ranked = [i for i, r in enumerate(rows) if r.kind != "reported" and r.cells.get(col.name) is not None
              and r.cells[col.name].low is not None]
    for i, r in enumerate(rows):
        if r.kind == "reported":
            status[i] = REPORTED_STATUS
    if not ranked:
        return status, pvals
    ranked.sort(key=lambda i: _sort_value(rows[i], col), reverse=True)
    leader = ranked[0]
    lc = rows[leader].cells[col.name]
    status[leader] = "leader"
    notes[leader] = P_LEADER
    for n, i in enumerate(ranked[1:]):
        c = rows[i].cells[col.name]
        tied = c.low <= lc.high and lc.low <= c.high
        status[i] = "tied with leader (intervals overlap)" if tied else ""
        if n >= MAX_PAIRED:
            notes[i] = P_NOT_TOP
            continue
        key = (col.name, rows[leader].kind, rows[leader].model, rows[leader].ids, rows[i].kind, rows[i].model,
               rows[i].ids, n_resamples)
        if hasattr(cache, "schedule"):  # a running board: computed in the background (leaderboard.pvalues), and
            # the per-item values are read there too, not during a page load
            if key in cache:
                pvals[i] = cache[key]
            elif key in getattr(cache, "unavailable", ()):
                notes[i] = P_OTHER_ITEMS  # the worker found the two rows on different items
            elif col.name in rows[leader].per_example and col.name in rows[i].per_example:
                cache.schedule(key, _p_value, rows[leader], rows[i], col.name, n_resamples)
                notes[i] = P_PENDING
            else:
                notes[i] = P_NO_VALUES
            continue
        a, b = rows[leader].per_example.get(col.name), rows[i].per_example.get(col.name)
        if a is None or b is None:
            notes[i] = P_NO_VALUES
        elif a.shape != b.shape:
            notes[i] = P_OTHER_ITEMS
        elif cache is not None and key in cache:
            pvals[i] = cache[key]
        else:
            pvals[i] = paired_test(a, b, rows[leader].clusters[col.name], n_resamples=n_resamples).p_value
            if cache is not None:
                cache[key] = pvals[i]
    return status, pvals


#: the model types a submission may declare (the shared `model_meta` contract); anything else shows as "other"
MODEL_TYPES = ("contrastive", "generative", "text-only", "other")


def model_type(meta: dict) -> str:
    """The declared type, "unknown" when none was given, "other" for a value outside the contract."""
    value = meta.get("model_type") if isinstance(meta, dict) else None
    if value in (None, ""):
        return "unknown"
    return value if value in MODEL_TYPES else "other"


#: the mark beside a generative model's name on every page table (Overall and each benchmark's tab; the legend
#: under each table says what it means): a video LLM scores captions otherwise than a dual encoder (issue 33)
GENERATIVE_MARK = "◆"


def marked_name(text: str, meta: dict, cuts: int = 0) -> str:
    """A model's name as a page table shows it (`text`: plain or already a Markdown link): with `GENERATIVE_MARK`
    when the type stored with the submission is "generative" (never guessed from the name), and with
    `hardneg.truncation.CUT_MARK` when its tokenizer cut `cuts` captions of the benchmark (issue 41)."""
    from hardneg.truncation import CUT_MARK

    text = f"{text} {GENERATIVE_MARK}" if model_type(meta) == "generative" else text
    return f"{text} {CUT_MARK}" if cuts else text


def meta_text(meta: dict) -> tuple[str, str, str]:
    """(type, parameters, license) of a row's model metadata, as the tables show them: submitted text is
    escaped (the tables render Markdown) and cut."""
    lic = meta.get("license")
    lic = md_escape(str(lic)[:40]) if isinstance(lic, str) and lic else ""
    mtype = model_type(meta)
    return ("" if mtype == "unknown" and not meta else mtype, format_params(meta.get("params")), lic)


def format_params(params) -> str:
    """1.5e8 -> '150M', 7e9 -> '7.0B' (the size filter's unit); '' when unknown, never raises (a stored value
    outside the checked range, such as a 401-digit integer or Infinity, shows as '?')."""
    if not isinstance(params, (int, float)) or isinstance(params, bool) or params <= 0:
        return ""
    if not (params < 1e16) or params != params:  # ints of any size compare exactly; NaN and Infinity fail here
        return "?"
    for scale, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if params >= scale:
            v = params / scale
            return f"{v:.1f}{unit}" if v < 10 else f"{v:.0f}{unit}"
    return str(int(params))


def render(rows: list[BoardRow], columns: list[Column], *args, **kwargs) -> pd.DataFrame:
    """`render_rows`, never failing on a stored row: a row that cannot be drawn shows as a placeholder."""
    return drawn_per_row(render_rows, rows, undrawn_row, columns, *args, **kwargs)


def undrawn_row(r: BoardRow) -> BoardRow:
    """The placeholder of a row that cannot be drawn: its name and kind, no values, a note saying so."""
    return BoardRow(shown_name(getattr(r, "model", "?")), r.kind if getattr(r, "kind", None) in KINDS else "submitted",
                    {}, note=UNDRAWN)


def render_rows(rows: list[BoardRow], columns: list[Column], sort_by: str | None = None, descending: bool | None = None,
           search: str = "", kinds=KINDS, shown: list[str] | None = None, pvalue_cache: dict | None = None) -> pd.DataFrame:
    """The table a person sees: recomputed rows ranked among themselves, then the papers' reported rows
    (apart, never ranked or labelled leader); scores as 'estimate [low, high]'; coverage per part; the
    Hub page as a Markdown link (the Space's table renders Markdown)."""
    by_name = {c.name: c for c in columns}
    sort_col = by_name.get(sort_by) if sort_by else next((c for c in columns if c.headline), None)
    needle = (search or "").strip().lower()
    keep = [r for r in rows if r.kind in set(kinds or KINDS) and (not needle or needle in r.model.lower())]
    notes: dict[int, str] = {}
    status, pvals = mark_ties(keep, sort_col, cache=pvalue_cache, notes=notes) if sort_col else ({}, {})
    ranked = [i for i, r in enumerate(keep) if r.kind != "reported"]
    reported = [i for i, r in enumerate(keep) if r.kind == "reported"]
    rank_of: dict[int, int] = {}
    for group in (ranked, reported):
        if sort_col is not None:
            group.sort(key=lambda i: _sort_value(keep[i], sort_col), reverse=True)
            if group is ranked:  # "#" is the rank in the sort column (best = 1), whichever way the rows are shown
                rank_of = {i: k for k, i in enumerate(group, 1) if _sort_value(keep[i], sort_col) != -math.inf}
            if descending is False:
                group.reverse()
    show = [c for c in columns if (c.name in shown if shown is not None else c.headline)]
    records = []
    for i in ranked + reported:
        r = keep[i]
        mtype, params, lic = meta_text(r.model_meta)
        rec = {"#": rank_of.get(i, "") if sort_col is not None else "",
               "Model": marked_name(drawn_name(r.model) if r.kind == "submitted" else r.model, r.model_meta, r.cuts),
               "Kind": kind_label(r),
               "Status": status.get(i, ""),
               "p vs #1": f"{pvals[i]:.3f}" if i in pvals else notes.get(i, "")}
        rec.update({shown_header(c): _fmt(r.cells.get(c.name), c) for c in show})
        rec.update({"n / items": "; ".join(f"{k} {v}" for k, v in r.coverage.items()),
                    "Type": mtype, "Params": params, "License": lic,
                    "Hub page": md_link(r.model, r.link) if r.link else "", "Submitted": r.submitted,
                    "Version": md_escape(r.version), "Submitter": md_escape(r.submitter),
                    # stored text is escaped; a baseline's note and a paper's citation are the board's own Markdown
                    "Source": md_escape(r.source or r.note) if r.kind == "submitted" else r.source or r.note})
        records.append(rec)
    info = ["n / items", "Type", "Params", "License", "Hub page", "Submitted", "Version", "Submitter", "Source"]
    # an information column no shown row fills is left out (an empty column only squeezes the others)
    info = [h for h in info if any(rec.get(h) for rec in records)] or ["Source"]
    head = ["#", "Model", "Kind", "Status", "p vs #1"] + [shown_header(c) for c in show] + info
    return pd.DataFrame.from_records(records, columns=head)


def machine_table(rows: list[BoardRow], columns: list[Column], *args, **kwargs) -> pd.DataFrame:
    """`machine_rows`, never failing on a stored row (see `render`)."""
    return drawn_per_row(machine_rows, rows, undrawn_row, columns, *args, **kwargs)


def machine_rows(rows: list[BoardRow], columns: list[Column], search: str = "", kinds=KINDS) -> pd.DataFrame:
    """The board's download (CSV): one row per model, every column's estimate, low and high as fractions
    (machine outputs hold fractions; the page shows percent), and the row's facts."""
    needle = (search or "").strip().lower()
    records = []
    for r in rows:
        if r.kind not in set(kinds or KINDS) or (needle and needle not in r.model.lower()):
            continue
        rec = {"model": r.model, "kind": kind_label(r)}
        for c in columns:
            cell = r.cells.get(c.name)
            rec[c.name] = None if cell is None else cell.estimate
            rec[f"{c.name} low"] = None if cell is None else cell.low
            rec[f"{c.name} high"] = None if cell is None else cell.high
        rec.update({"coverage": "; ".join(f"{k} {v}" for k, v in r.coverage.items()),
                    "model_type": r.model_meta.get("model_type"), "params": r.model_meta.get("params"),
                    "license": r.model_meta.get("license"), "link": r.link or r.model_meta.get("link") or "",
                    "submitted": r.submitted, "version": r.version, "submitter": r.submitter,
                    "source": r.source or r.note})
        records.append(rec)
    return pd.DataFrame.from_records(records)


def bar_chart(rows: list[BoardRow], col: Column, title: str, chance: float | None = None):
    """Horizontal bars of one column with interval whiskers, chance as a dashed line; reported numbers
    hatched, no whiskers. Bars start at zero (a negative value extends to the left)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    spec = _spec(col)
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
    if chance is not None:
        ax.axvline(chance * scale, color="#d62728", linestyle="--", linewidth=1.2,
                   label=f"chance {spec.format(chance)}{'%' if vocabulary.is_percent(col.metric) else ''}")
        ax.legend(loc="lower right", fontsize=7)
    ax.axvline(0, color="#333333", linewidth=0.6)
    ax.set_yticks(range(len(data)))
    ax.set_yticklabels([f"{r.model} ({r.kind})" for r, _ in data], fontsize=8)
    ax.set_xlabel(vocabulary.header(col.metric, col.name))
    ax.set_title(f"{title}: {col.name}\nwhiskers: 95% interval · dashed: chance · hatched: reported", fontsize=8)
    fig.tight_layout()
    return fig


def negative_type_chart(per_model: dict[str, dict[str, dict]], title: str, metric: Metric):
    """Grouped bars: per negative type, each model's accuracy against that type alone, with intervals, and
    chance per type as a dashed tick. per_model: model -> {type: {"estimate", "low", "high", "chance"}}."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    types = sorted({t for d in per_model.values() for t in d})
    models = list(per_model)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(types) + 3), 4))
    if not types or not models:
        ax.text(0.5, 0.5, "no per-negative-type values (no multiple-choice submissions with typed negatives)",
                ha="center", va="center", fontsize=9)
        ax.set_axis_off()
        return fig
    width = 0.8 / len(models)
    x = np.arange(len(types))
    for k, m in enumerate(models):
        vals = [per_model[m].get(t) for t in types]
        est = [100 * v["estimate"] if v else np.nan for v in vals]
        err = [[100 * max(0.0, v["estimate"] - v["low"]) if v and v.get("low") is not None else 0 for v in vals],
               [100 * max(0.0, v["high"] - v["estimate"]) if v and v.get("high") is not None else 0 for v in vals]]
        ax.bar(x - 0.4 + width * (k + 0.5), est, width, yerr=err, capsize=2, label=m)
    for j, t in enumerate(types):
        ch = next((d[t]["chance"] for d in per_model.values() if t in d and d[t].get("chance") is not None), None)
        if ch is not None:
            ax.hlines(100 * ch, j - 0.45, j + 0.45, colors="#d62728", linestyles="--", linewidth=1.2,
                      label="chance" if j == 0 else None)
    ax.set_xticks(x, types, fontsize=8, rotation=20)
    ax.set_ylabel(f"{metric.key} against one negative type{unit_suffix(metric)}")
    ax.set_title(f"{title}: the positive against each negative type alone; whiskers: 95% bootstrap interval",
                 fontsize=8)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    return fig
