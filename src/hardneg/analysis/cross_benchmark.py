"""Cross-benchmark view: does a model that fails one kind of negative fail the others on the same videos?

Input: predictions files of one model on several benchmarks (`hardneg score` output). Each is
read with the one reader and aligned by id (`hardneg.items`), and its per-item R@1 comes from
the one results engine (`hardneg.results.evaluate_scores`, `keep_per_example=True`) under the
chosen tie rule. Items are joined on their video (`ItemSet.clusters`: the item's video, or a
retrieval query's own video), so nothing here depends on which benchmark a file is.

Reported: per input, R@1 on all its items and on the videos every input shares (with the
engine's video-bootstrap interval); per pair of inputs, on the videos the two share, how many
videos both get right, only one, or neither. A video counts as right on an input when the
model gets every item of that video right (`rule="all"`; a tie is not a success), or more
than half of them (`rule="majority"`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from hardneg.analysis.base import AnalysisResult, format_table

RULES = ("all", "majority")


@dataclass
class Part:
    """One predictions file on its benchmark: per-item correctness and the video of each item."""

    name: str
    benchmark: str
    config: str
    split: str
    model_id: str
    video_ids: np.ndarray  # (n,) str, the scored items' videos
    correct: np.ndarray  # (n,) float, per-item R@1 from the engine (0.5 for a 2-way tie under "expected")
    items: Any = None  # the aligned ItemSet (for intervals on subsets)
    scores: Any = None
    mask: Any = None
    n_items: int = 0

    def per_video(self) -> dict[str, float]:
        """Mean per-item R@1 of each video."""
        out: dict[str, list[float]] = {}
        for v, c in zip(self.video_ids.tolist(), self.correct.tolist()):
            out.setdefault(v, []).append(c)
        return {v: float(np.mean(c)) for v, c in out.items()}


def _dataset_for(meta: dict, data_root: str | Path | None) -> str | None:
    """`data_root/<benchmark>` when given (the leaderboard's layout), else what the file itself records."""
    if data_root is not None:
        folder = Path(data_root) / str(meta.get("benchmark"))
        if not folder.is_dir():
            raise FileNotFoundError(f"--data {data_root} has no folder {folder.name}/ for benchmark "
                                    f"{meta.get('benchmark')!r}; build it there with `hardneg build`")
        return str(folder)
    return None


def load_part(path: str | Path, name: str | None = None, data_root: str | Path | None = None,
              ties: str = "expected") -> Part:
    """Read one predictions file, align it to its items and get per-item R@1 from the results engine."""
    from hardneg.alignment import resolve_dataset
    from hardneg.items import align_predictions, item_set, load_benchmark
    from hardneg.results import evaluate_scores
    from hardneg.scoring import read_predictions

    table, meta = read_predictions(path)
    dataset = resolve_dataset(meta, _dataset_for(meta, data_root))[0]
    splits = [s for s in str(meta.get("split", "")).split(",") if s] or None
    items = item_set(load_benchmark(dataset, meta["config"], splits, benchmark=meta.get("benchmark")))
    aligned = align_predictions(items, table["id"].to_pylist(), table["scores"].to_pylist(), meta.get("video_ids"))
    result = evaluate_scores(aligned.items, aligned.scores, aligned.mask, ties=ties, n_resamples=0,
                             keep_per_example=True)
    if "R@1" not in result.per_example:
        raise ValueError(f"{path}: the results engine gives no per-item R@1 for {items.benchmark} "
                         f"(it gives {sorted(result.per_example)}); declare K = 1 in the benchmark's `ks`")
    return Part(name or f"{items.benchmark}/{items.config}", items.benchmark, items.config, items.split,
                str(meta.get("model_id") or ""), aligned.items.clusters.astype(str), result.per_example["R@1"],
                aligned.items, aligned.scores, aligned.mask, aligned.n_items)


def _right(fraction: float, rule: str) -> bool:
    return fraction >= 1.0 - 1e-12 if rule == "all" else fraction > 0.5


def _accuracy(part: Part, videos: set[str] | None, ties: str, n_resamples: int, seed: int) -> dict[str, Any]:
    """Share of items right (the engine's per-item R@1, `part.correct`) on the items of `videos` (all items when
    None), with the one cluster bootstrap's interval. Computed from the per-item values because a benchmark's own
    headline may weigh items otherwise (VITATECS: a mean over aspects) and names it `Accuracy`."""
    from hardneg.ranking import bootstrap_ci

    sel = np.arange(len(part.correct)) if videos is None else np.nonzero(np.isin(part.video_ids, list(videos)))[0]
    if sel.size == 0:
        return {"n_items": 0, "n_videos": 0, "value": None, "low": None, "high": None}
    value = float(np.mean(part.correct[sel]))
    low = high = None
    if n_resamples:
        ci = bootstrap_ci(part.correct[sel], clusters=part.video_ids[sel], n_resamples=n_resamples, seed=seed)
        low, high = min(ci.low, value), max(ci.high, value)
    return {"n_items": int(sel.size), "n_videos": int(len(set(part.video_ids[sel].tolist()))),
            "value": value, "low": low, "high": high}


def agreement(a: Part, b: Part, rule: str = "all") -> dict[str, Any]:
    """On the videos `a` and `b` share: counts of both right / only a / only b / both wrong."""
    va, vb = a.per_video(), b.per_video()
    shared = sorted(set(va) & set(vb))
    ra = np.asarray([_right(va[v], rule) for v in shared], dtype=bool)
    rb = np.asarray([_right(vb[v], rule) for v in shared], dtype=bool)
    counts = {"both_right": int((ra & rb).sum()), "only_a": int((ra & ~rb).sum()),
              "only_b": int((~ra & rb).sum()), "both_wrong": int((~ra & ~rb).sum())}
    n = len(shared)
    return {"a": a.name, "b": b.name, "shared_videos": n, **counts,
            "same_outcome": (counts["both_right"] + counts["both_wrong"]) / n if n else None,
            "videos": {v: [bool(x), bool(y)] for v, x, y in zip(shared, ra, rb)}}


@dataclass
class CrossBenchmarkResult(AnalysisResult):
    pairs: list[dict[str, Any]] = field(default_factory=list)
    shared_videos: list[str] = field(default_factory=list)

    PAIR_COLUMNS = ("a", "b", "shared_videos", "both_right", "only_a", "only_b", "both_wrong", "same_outcome")

    def extra(self) -> dict[str, Any]:
        return {"agreement": self.pairs, "shared_videos": self.shared_videos}

    def format_table(self, digits: int = 4) -> str:
        """Per-input accuracy, then the agreement of every pair of inputs on the videos they share."""
        pairs = [{k: p[k] for k in self.PAIR_COLUMNS} for p in self.pairs]
        return (format_table(self.columns, self.rows, digits) + "\n\nagreement per video (rule: "
                f"{self.params['rule']}):\n" + format_table(list(self.PAIR_COLUMNS), pairs, digits))

    def figure_size(self):
        return (10.0, 2.5 + 0.45 * (len(self.rows) + len(self.pairs)))

    def _draw(self, fig) -> None:
        left, right = fig.subplots(2, 1, height_ratios=[max(len(self.rows), 1), max(len(self.pairs), 1)])
        names = [r["input"] for r in self.rows]
        y = np.arange(len(names))
        for off, key, label in ((-0.2, "all", "all items"), (0.2, "shared", "videos every input shares")):
            val = np.asarray([np.nan if r[f"R@1_{key}"] is None else 100 * r[f"R@1_{key}"] for r in self.rows])
            lo = np.asarray([np.nan if r[f"low_{key}"] is None else 100 * r[f"low_{key}"] for r in self.rows])
            hi = np.asarray([np.nan if r[f"high_{key}"] is None else 100 * r[f"high_{key}"] for r in self.rows])
            err = np.vstack([np.nan_to_num(val - lo), np.nan_to_num(hi - val)])
            left.barh(y + off, np.nan_to_num(val), height=0.4, xerr=err, capsize=3, label=label)
            for yi, v in zip(y + off, val):
                left.text(1, yi, "no items" if np.isnan(v) else f"{v:.1f}", va="center", fontsize="x-small")
        left.set_yticks(y, names)
        left.invert_yaxis()
        left.set_xlabel("R@1 (%) with 95% CI")
        left.set_xlim(0, 100)
        left.set_title("R@1 per input: all items and the videos every input shares")
        left.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize="small")
        labels = [f"{p['a']} vs {p['b']} (n={p['shared_videos']})" for p in self.pairs]
        yp = np.arange(len(self.pairs))
        start = np.zeros(len(self.pairs))
        for key, colour, text in (("both_right", "C2", "both right"), ("only_a", "C0", "only first right"),
                                  ("only_b", "C1", "only second right"), ("both_wrong", "C3", "both wrong")):
            n = np.asarray([p[key] for p in self.pairs], dtype=float)
            total = np.asarray([max(p["shared_videos"], 1) for p in self.pairs], dtype=float)
            share = 100 * n / total
            right.barh(yp, share, left=start, color=colour, label=text)
            start += share
        right.set_yticks(yp, labels)
        right.invert_yaxis()
        right.set_xlim(0, 100)
        right.set_xlabel("share of the videos the pair shares (%)")
        right.set_title(f"agreement per pair of inputs (a video is right when rule '{self.params['rule']}' holds)")
        right.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize="small")


def cross_benchmark_view(parts: list[Part], rule: str = "all", ties: str = "expected", n_resamples: int = 1000,
                    seed: int = 0) -> CrossBenchmarkResult:
    """Per-input accuracy on all items and on the videos every input shares, and pairwise agreement."""
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    if len(parts) < 2:
        raise ValueError("the cross-benchmark view needs predictions on at least 2 benchmarks or configs")
    names = [p.name for p in parts]
    if len(set(names)) != len(names):
        raise ValueError(f"two inputs share the name {names}; name them with NAME=PATH")
    shared = set.intersection(*(set(p.video_ids.tolist()) for p in parts))
    rows = []
    for p in parts:
        full = _accuracy(p, None, ties, n_resamples, seed)
        on_shared = _accuracy(p, shared, ties, n_resamples, seed)
        rows.append({"input": p.name, "benchmark": p.benchmark, "config": p.config, "model": p.model_id,
                     "items": full["n_items"], "videos": full["n_videos"], "R@1_all": full["value"],
                     "low_all": full["low"], "high_all": full["high"], "shared_items": on_shared["n_items"],
                     "shared_videos": on_shared["n_videos"], "R@1_shared": on_shared["value"],
                     "low_shared": on_shared["low"], "high_shared": on_shared["high"]})
    pairs = [agreement(a, b, rule) for a, b in combinations(parts, 2)]
    notes = []
    if not shared:
        notes.append("no video is shared by every input: accuracy on shared videos is empty; the pairwise "
                     "agreement uses the videos each pair shares")
    models = sorted({p.model_id for p in parts})
    if len(models) > 1:
        notes.append(f"the inputs come from different models ({', '.join(models)}): the agreement compares models "
                     "as well as negatives")
    partial = [p.name for p in parts if len(p.correct) < p.n_items]
    if partial:
        notes.append(f"not every item was scored in {partial}: only the scored items count")
    return CrossBenchmarkResult(
        analysis="cross-benchmark",
        title=f"Cross-benchmark view: {len(parts)} inputs, {len(shared)} videos shared by all",
        columns=["input", "model", "items", "R@1_all", "shared_items", "shared_videos", "R@1_shared"],
        rows=rows, params={"rule": rule, "ties": ties, "n_resamples": n_resamples, "seed": seed},
        notes=notes, pairs=pairs, shared_videos=sorted(shared),
    )


# ----------------------------------------------------------------------------- `hardneg analyze cross-benchmark`


def add_arguments(p) -> None:
    """The options of `hardneg analyze cross-benchmark` (registered in `hardneg.cli.analyze`)."""
    p.add_argument("--predictions", nargs="+", required=True, metavar="[NAME=]PATH",
                   help="predictions files of one model on 2+ benchmarks or configs (name defaults to benchmark/config)")
    p.add_argument("--data", default=None, metavar="ROOT",
                   help="folder of `hardneg build` outputs, ROOT/<benchmark> (default: the dataset each file records)")
    p.add_argument("--rule", choices=RULES, default="all",
                   help="when a video counts as right: every item of it right (all, default) or more than half")
    p.add_argument("--ties", default="expected", help="tie rule of the ranking core (default expected)")
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap re-samples for the intervals (0: none)")
    p.add_argument("--seed", type=int, default=0)


def from_args(args) -> CrossBenchmarkResult:
    from hardneg.analysis.inputs import parse_named_paths

    parts = [load_part(path, name, args.data, args.ties) for name, path in parse_named_paths(args.predictions)]
    return cross_benchmark_view(parts, rule=args.rule, ties=args.ties, n_resamples=args.resamples, seed=args.seed)
