"""The one results engine: aligned scores + a benchmark declaration -> one `Result`.

`hardneg evaluate`, `hardneg run`, quickstart, the leaderboard's recompute, the demo and the
metric modules' intervals all get their numbers here. Per-item values come from the ranking
core (`hardneg.ranking.multiple_choice` / `retrieval`), intervals from its one cluster
bootstrap (`hardneg.ranking.bootstrap.joint_intervals`: whole videos resampled, one set of
draws for every statistic, percentile interval clamped to contain the value), and chance from
the same core applied to a constant scorer under the default tie rule (each metric's declared
chance rule, `CHANCE_CONSTANT_SCORER`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hardneg import benchmarks, vocabulary
from hardneg.benchmarks import Benchmark, Metric
from hardneg.items import Aligned, ItemSet
from hardneg.ranking import Qrels, multiple_choice, retrieval
from hardneg.ranking.bootstrap import Stat, joint_intervals
from hardneg.settings import EvalSettings, from_keywords, refuse_unknown
from hardneg.ranking.grouped import all_right, first_of_group

#: ties under which chance is defined (a constant scorer gets exactly chance)
CHANCE_TIES = "expected"


@dataclass(frozen=True)
class StatSpec:
    """One statistic the engine reports: its key, per-item source, how it aggregates."""

    key: str
    source: str
    kind: str = "mean"  # mean | median | mean_of_group_means
    over: str | None = None
    percent: bool = True
    where: tuple[str, str] | None = None  # only rows whose column holds this value (`Metric.where`)
    all_of: str | None = None  # rows with one value of this column count once, as the product (`Metric.all_of`)

    @property
    def columns(self) -> list[str]:
        """The item columns this statistic reads."""
        return [c for c in (self.over, self.all_of, self.where[0] if self.where else None) if c]


def standard_specs(decl: Benchmark, config: str | None = None) -> list[StatSpec]:
    """Headline metrics first (those computed on `config`), then the standard ones of the task kind, each once.

    A standard statistic is left out when a headline metric already reports the same per-item values
    under its own name: contrast sets' `Accuracy` is the core's per-item R@1, so no `R@1` beside it;
    FIRE's `C@k_original` is the core's retrieval R@k, so no `R@k` beside it (one name per computation,
    `hardneg.vocabulary`).
    """
    specs: list[StatSpec] = []

    def add(m: Metric) -> None:
        specs.append(StatSpec(m.key, m.source, "mean_of_group_means" if m.over else "mean", m.over,
                              vocabulary.is_percent(m.key), m.where, m.all_of))
        if m.baseline is not None:
            add(m.baseline)

    for m in decl.metrics_for(config):
        add(m)
    if decl.is_retrieval:
        extra = [StatSpec(f"C@{k}", f"C@{k}") for k in decl.ks] + [StatSpec("mAP", "AP")]
        if decl.original_positive:  # measures of the one original video (not for SSv2-Temporal's equal positives)
            extra += [StatSpec(f"R@{k}", f"R@{k}") for k in decl.ks]
            extra += [StatSpec("MeanR", "rank_original", percent=False), StatSpec("MRR", "RR_original")]
    else:
        extra = [StatSpec(f"R@{k}", f"R@{k}") for k in decl.ks]
        extra += [StatSpec("MeanR", "rank", percent=False), StatSpec("MedianR", "rank", "median", percent=False),
                  StatSpec("MRR", "RR")]
    have = {s.key for s in specs}
    sources = {s.source for s in specs if s.kind == "mean" or s.source.startswith("R@")}
    return specs + [s for s in extra if s.key not in have and not (s.key.startswith("R@") and s.source in sources)]


def _per_item(items: ItemSet, scores: np.ndarray, mask, ks, ties: str, seed: int | None) -> tuple[dict, float]:
    """Per-item values of the core and the tie rate."""
    if items.task == "retrieval":
        r = retrieval(scores, relevant=Qrels.from_lists(items.relevant), original=items.original, ks=ks, ties=ties,
                      seed=seed)
    else:
        filled = np.where(mask, scores, 0.0) if mask is not None else scores
        r = multiple_choice(filled, items.label, mask=mask, ks=ks, ties=ties, seed=seed)
    per = {k: np.asarray(v, dtype=np.float64) for k, v in r.per_example.items()}
    return per, float(r.aggregate.get("tie_rate", 0.0))


def constant_scores(items: ItemSet) -> tuple[np.ndarray, np.ndarray | None]:
    """A scorer that cannot tell candidates apart: the chance baseline (and the board's)."""
    width = items.max_candidates
    mask = None if (items.n_candidates == width).all() else (np.arange(width)[None, :] < items.n_candidates[:, None])
    return np.zeros((len(items), width)), mask


def _rows(spec: StatSpec, per: dict, groups: dict[str, np.ndarray],
          select: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """The per-row values a statistic averages and the rows it counts (None: every row).

    `where` keeps the rows holding its value; `all_of` replaces each row's value by its group's
    product and counts each group once (its first counted row), so the mean over counted rows is
    the share of groups where every row is right.
    """
    v = per[spec.source]
    keep = select
    if spec.where is not None:
        column, wanted = spec.where
        hit = groups[column] == wanted
        keep = hit if keep is None else keep & hit
    if spec.all_of is not None:
        v = all_right(v, groups[spec.all_of])
        keep = first_of_group(groups[spec.all_of], keep)
    return v, keep


def per_row_values(spec: StatSpec, per: dict, groups: dict[str, np.ndarray]) -> np.ndarray:
    """(N,) values whose plain mean is the statistic (a mean kind): for paired tests over every row."""
    v, keep = _rows(spec, per, groups)
    if spec.kind == "mean_of_group_means":
        g = groups[spec.over]
        keep = np.ones(v.size, dtype=bool) if keep is None else keep
        labels, inverse = np.unique(g[keep], return_inverse=True)
        counts = np.bincount(inverse, minlength=labels.size)
        out = np.zeros(v.size)
        out[keep] = v[keep] * v.size / (labels.size * counts[inverse])
        return out
    if keep is None:
        return v
    return np.where(keep, v, 0.0) * (v.size / max(int(keep.sum()), 1))


def _value(spec: StatSpec, per: dict, groups: dict[str, np.ndarray], select: np.ndarray | None = None) -> float:
    v, keep = _rows(spec, per, groups, select)
    if keep is not None:
        v = v[keep]
    if v.size == 0:
        return float("nan")
    if spec.kind == "median":
        return float(np.median(v))
    if spec.kind == "mean_of_group_means":
        g = groups[spec.over] if keep is None else groups[spec.over][keep]
        return float(np.mean([v[g == x].mean() for x in np.unique(g)]))
    return float(v.mean())


def _stat(spec: StatSpec, per: dict, groups: dict[str, np.ndarray], select: np.ndarray | None = None) -> Stat:
    v, keep = _rows(spec, per, groups, select)
    if spec.kind == "mean_of_group_means":
        return Stat("mean_of_group_means", v, select=keep, groups=groups[spec.over])
    return Stat(spec.kind, v, select=keep)


@dataclass
class Result:
    """Everything one evaluation produced; `to_dict()` is JSON-safe."""

    benchmark: str
    config: str
    split: str
    task: str
    metrics: dict[str, dict[str, float]]  # key -> {"value", "low", "high"} (no interval when resamples = 0)
    chance: dict[str, float]
    headline: list[str]
    n: int
    n_items: int
    tie_rate: float
    ties: str
    n_resamples: int
    confidence: float
    seed: int
    breakdowns: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    per_example: dict[str, np.ndarray] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def coverage(self) -> float:
        return self.n / max(self.n_items, 1)

    @property
    def comparable(self) -> bool:
        """Only a result on every item of the split can be compared with others."""
        return self.n == self.n_items

    def value(self, key: str) -> float:
        return self.metrics[key]["value"]

    def to_dict(self) -> dict[str, Any]:
        out = {
            "benchmark": self.benchmark, "config": self.config, "split": self.split, "task": self.task,
            "headline": list(self.headline), "metrics": _plain(self.metrics), "chance": _plain(self.chance),
            "n": self.n, "n_items": self.n_items, "coverage": self.coverage, "comparable": self.comparable,
            "tie_rate": self.tie_rate, "ties": self.ties, "n_resamples": self.n_resamples,
            "confidence": self.confidence, "seed": self.seed, "breakdowns": _plain(self.breakdowns),
        }
        if self.notes:
            out["notes"] = list(self.notes)
        return out


def _plain(obj):
    """NumPy scalars and arrays to Python values; NaN to None (JSON has no NaN)."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _plain(obj.tolist())
    if isinstance(obj, (np.floating, float)):
        f = float(obj)
        return None if math.isnan(f) else f
    if isinstance(obj, np.integer):
        return int(obj)
    return obj


def _entries(specs, per, groups, codes, n_resamples, confidence, seed, select=None) -> dict[str, dict[str, float]]:
    values = {s.key: _value(s, per, groups, select) for s in specs}
    out = {k: {"value": v} for k, v in values.items()}
    if n_resamples and (select is None or select.any()):
        # a statistic with no row to count (a `where` kind absent from a subset) has no value and no interval
        stats = {s.key: _stat(s, per, groups, select) for s in specs if not math.isnan(values[s.key])}
        for key, (lo, hi) in (joint_intervals(stats, codes, n_resamples, confidence, seed) if stats else {}).items():
            out[key].update(low=lo, high=hi)
    return out


def evaluate_scores(items: ItemSet, scores, mask=None, *, declaration: Benchmark | None = None,
                    n_items: int | None = None, notes: list[str] | None = None,
                    keep_per_example: bool = False, settings: EvalSettings | None = None,
                    **evaluation: Any) -> Result:
    """Every metric of `scores` (rows aligned with `items`) with intervals, chance and breakdowns.

    `n_items`: items in the full split when `items` is a scored subset (coverage = len(items) / n_items).
    How: `settings` (`hardneg.settings.EvalSettings`), or its fields by name over it: ties="expected",
    n_resamples=1000, confidence=0.95, seed=0.
    """
    ev = from_keywords(EvalSettings, "evaluate_scores", settings, evaluation)
    refuse_unknown("evaluate_scores", evaluation, (EvalSettings,))
    ties, n_resamples, confidence, seed = ev.ties, ev.n_resamples, ev.confidence, ev.seed
    decl = declaration or benchmarks.get(items.benchmark)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence!r}")
    if int(n_resamples) < 0:
        raise ValueError(f"n_resamples must be >= 0 (0 turns intervals off), got {n_resamples!r}")
    scores = np.asarray(scores)
    specs = standard_specs(decl, items.config)
    groups = dict(items.groups)
    for s in specs:
        missing = [c for c in s.columns if c not in groups]
        if missing:
            raise ValueError(f"metric {s.key} reads column(s) {missing}, which the items of "
                             f"{items.benchmark}/{items.config} do not have; rebuild the dataset with this version")
    per, tie_rate = _per_item(items, scores, mask, decl.ks, ties, seed if ties == "random" else None)
    _, codes = np.unique(items.clusters.astype(str), return_inverse=True)
    metrics = _entries(specs, per, groups, codes, n_resamples, confidence, seed)
    # per-group values of a metric averaged over groups (PoSRank_noun, ...): keys `<key>_<group>`
    for s in specs:
        if s.over:
            for g in sorted(set(groups[s.over].tolist())):
                sel = groups[s.over] == g
                sub = StatSpec(f"{s.key}_{g}", s.source, "mean", None, s.percent, s.where, s.all_of)
                metrics.update(_entries([sub], per, groups, codes, n_resamples, confidence, seed, sel))
    const, const_mask = constant_scores(items)
    cper, _ = _per_item(items, const, const_mask, decl.ks, CHANCE_TIES, None)
    chance = {s.key: _value(s, cper, groups) for s in specs}
    for s in specs:
        if s.over:
            for g in sorted(set(groups[s.over].tolist())):
                chance[f"{s.key}_{g}"] = _value(StatSpec("", s.source, where=s.where, all_of=s.all_of), cper, groups,
                                                groups[s.over] == g)
    breakdowns: dict[str, dict[str, dict[str, Any]]] = {}
    flat = [s for s in specs if s.kind != "mean_of_group_means"]
    for column in decl.breakdowns:
        if column not in groups or len(set(groups[column].tolist())) < 2:
            continue
        breakdowns[column] = {}
        for g in sorted(set(groups[column].tolist())):
            sel = groups[column] == g
            entry: dict[str, Any] = _entries(flat, per, groups, codes, n_resamples, confidence, seed, sel)
            entry["n"] = int(sel.sum())
            breakdowns[column][g or "(none)"] = entry
    return Result(
        benchmark=decl.name, config=items.config, split=items.split, task=decl.task, metrics=metrics,
        chance=chance, headline=decl.headline_for(items.config), n=len(items), n_items=len(items) if n_items is None else int(n_items),
        tie_rate=tie_rate, ties=ties, n_resamples=int(n_resamples), confidence=float(confidence), seed=int(seed),
        breakdowns=breakdowns, per_example=per if keep_per_example else {}, notes=list(notes or []),
    )


def evaluate_aligned(aligned: Aligned, **kwargs) -> Result:
    """`evaluate_scores` on the output of `hardneg.items.align_predictions` (coverage included)."""
    return evaluate_scores(aligned.items, aligned.scores, aligned.mask, n_items=aligned.n_items,
                           notes=aligned.notes, **kwargs)


def chance_result(items: ItemSet, **kwargs) -> Result:
    """The result of a constant scorer (what the board shows as its `random` baseline)."""
    scores, mask = constant_scores(items)
    return evaluate_scores(items, scores, mask, **kwargs)




# ----------------------------------------------------------------------------- a benchmark's one number

#: the z of 95% intervals (a mean's interval from its parts' 95% intervals)
Z95 = 1.959963984540054


def _entry_value(entry: dict | None) -> float | None:
    if not entry:
        return None
    v = entry.get("value", entry.get("estimate"))
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def number_weights(rule: str, ns: list[int]) -> list[float]:
    """Each part's weight in a benchmark's one number over several parts (`Benchmark.overall`): "pooled" weighs a
    part by its items, "mean" weighs every part alike. `benchmark_value` and the board's paired test of that
    number (`hardneg.leaderboard.board.number_values`) both read it, so the two never weigh apart."""
    if rule == "pooled":
        total = sum(ns)
        return [n / total for n in ns]
    return [1 / len(ns)] * len(ns)


def benchmark_value(decl: Benchmark, metrics_by_config: dict[str, dict], n_by_config: dict[str, int],
                    available=None) -> dict[str, Any] | None:
    """A benchmark's one number from its configs' results, by the rule its declaration names (`Benchmark.overall`).

    metrics_by_config: config -> that config's metrics ({key: {"value" or "estimate", "low", "high"}}: results.json
    or the board's store). n_by_config: config -> items scored. available: the configs the built data (or board)
    has (default: those given). Returns {"benchmark", "metric", "rule", "configs", "value", "low", "high", "n"}
    (fractions; `low`/`high` None without intervals), or None when a config the rule needs has no value.

    "config": that config's entry as it is. "mean": the unweighted mean; "pooled": the item-weighted mean (exactly
    the mean over the pooled items of disjoint configs). Their interval is the normal approximation from the parts'
    95% intervals (independent items: standard errors = half-width / 1.96, combined in quadrature), kept inside
    the metric's range.
    """
    available = list(metrics_by_config) if available is None else list(available)
    rule = decl.overall_rule(available)
    metric = decl.overall_metric
    if metric is None:
        return None
    parts = rule.parts(decl.scoreable(available))
    entries = [(metrics_by_config.get(c) or {}).get(metric.key) for c in parts]
    values = [_entry_value(e) for e in entries]
    if not parts or any(v is None for v in values):
        return None
    ns = [int(n_by_config.get(c, 0)) for c in parts]
    if rule.rule == "config" or len(parts) == 1:
        e = entries[0]
        value, low, high = values[0], e.get("low"), e.get("high")
    else:
        total = sum(ns)
        if rule.rule == "pooled" and total <= 0:
            return None
        weights = number_weights(rule.rule, ns)
        value = sum(w * v for w, v in zip(weights, values))
        low = high = None
        if all(e.get("low") is not None and e.get("high") is not None for e in entries):
            se = math.sqrt(sum((w * (e["high"] - e["low"]) / (2 * Z95)) ** 2 for w, e in zip(weights, entries)))
            lo_bound, hi_bound = vocabulary.entry(metric.key).range
            low, high = value - Z95 * se, value + Z95 * se
            low = low if lo_bound is None else max(lo_bound, low)
            high = high if hi_bound is None else min(hi_bound, high)
    return {"benchmark": decl.name, "metric": metric.key, "rule": rule.rule, "configs": parts,
            "value": value, "low": low, "high": high, "n": sum(ns)}
