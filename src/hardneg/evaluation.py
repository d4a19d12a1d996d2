"""`hardneg evaluate`: a predictions file -> its benchmark's result, with provenance, a report and a chart.

Reads a predictions file (`hardneg score` output), loads its items with the one reader
(`hardneg.items`), aligns rows by id (coverage reported, duplicates refused) and asks the one
results engine (`hardneg.results.evaluate_scores`) for every number. Added here only what a
predictions file alone allows: the per-negative-type view and Feint6K's Δs (object vs action
swap), both computed with the same engine and core.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any

import numpy as np

from hardneg import __version__, benchmarks, vocabulary
from hardneg.items import align_predictions, item_set, load_benchmark
from hardneg.results import evaluate_scores
from hardneg.scoring import read_predictions
from hardneg.versions import number_versions

#: Negative types that swap an object vs an action (Feint6K's Δs analysis, Fig. 5).
OBJECT_TYPES = ("noun", "id", "gender")
ACTION_TYPES = ("verb", "verb_lm", "verb_human", "counterfactual")


def _type_matrix(types: list[list[str]], shape) -> np.ndarray:
    out = np.full(shape, "", dtype=object)
    for i, t in enumerate(types):
        out[i, : len(t)] = t
    return out


def delta_s(scores: np.ndarray, mask: np.ndarray, labels: np.ndarray, types: np.ndarray) -> dict[str, Any]:
    """Feint6K Δs = s(v, negative) − s(v, positive), split by object vs action swaps."""
    pos = scores[np.arange(len(scores)), labels][:, None]
    delta = scores - pos
    out: dict[str, Any] = {}
    for kind, kinds in (("object", OBJECT_TYPES), ("action", ACTION_TYPES)):
        sel = mask & np.isin(types, kinds)
        if sel.any():
            d = delta[sel]
            out[kind] = {"mean": float(d.mean()), "share_negative": float((d < 0).mean()), "n": int(d.size)}
    return out


def top1_key(benchmark: str) -> str:
    """The key a benchmark's results use for "positive ranked first": its declared metric drawn from the core's
    per-item R@1 (contrast sets, VITATECS: `Accuracy`), else `R@1`."""
    return next((m.key for m in benchmarks.get(benchmark).metrics if m.source == "R@1"), "R@1")


def by_negative_type(aligned, ties: str, n_resamples: int, seed: int, confidence: float) -> tuple[dict, dict]:
    """Top-1 (the benchmark's own name for it: R@1 or Accuracy) and MRR of the positive against one negative
    type at a time, and Δs."""
    from hardneg.items import subset_items

    items = aligned.items
    if items.negative_types is None:
        return {}, {}
    mat = aligned.scores
    mask = aligned.mask if aligned.mask is not None else np.ones(mat.shape, bool)
    types = _type_matrix(items.negative_types, mat.shape)
    positive = np.zeros_like(mask)
    positive[np.arange(len(items)), items.label] = True
    out: dict[str, Any] = {}
    for t in sorted({x for x in types[mask] if x and x != "positive"}):
        sub_mask = mask & ((types == t) | positive)
        sel = np.nonzero((sub_mask & ~positive).any(1))[0]
        if sel.size == 0:
            continue
        r = evaluate_scores(subset_items(items, sel), mat[sel], sub_mask[sel], ties=ties, n_resamples=n_resamples,
                            confidence=confidence, seed=seed)
        entry: dict[str, Any] = {k: r.to_dict()["metrics"][k] for k in (top1_key(r.benchmark), "MRR")}
        entry["n"] = int(sel.size)
        out[t] = entry
    return out, delta_s(mat, mask, items.label, types)


def provenance(meta: dict, data, ties: str) -> dict[str, Any]:
    """What makes a result reproducible: versions (hardneg's and the packages that change numbers, at
    evaluation and at scoring), data revision, date, tie rule, frame settings."""
    decl = benchmarks.get(data.benchmark)
    return {
        "hardneg_version": __version__, "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "data_revision": data.data_revision, "hub_id": decl.hub_id, "scored_data_revision": meta.get("data_revision"),
        "ties": ties, "original_ties": decl.original_ties, "frames": meta.get("frames"),
        # the frames each video gave and how they were decoded (`hardneg.frames_used`; absent in older files and
        # for models that take no video)
        **({"frames_used": meta["frames_used"], "decoding": meta.get("decoding")} if meta.get("frames_used") else {}),
        "model_id": meta.get("model_id"), "model_revision": meta.get("model_revision"),
        "scored_with": meta.get("hardneg_version"),
        # the packages that change numbers (hardneg.versions): here, and where the scores were computed
        "versions": number_versions(), "scored_versions": meta.get("versions"),
    }


#: `ties=` value that means "the benchmark's own rule" (its declaration's `original_ties`)
ORIGINAL = "original"
#: the rule the original one is compared with
TIE_AWARE = "expected"


def beside_tie_aware(aligned, result: dict[str, Any], rule: str, seed: int) -> dict[str, Any]:
    """The same metrics under the tie-aware rule, to print beside the authors' rule with their difference."""
    decl = benchmarks.get(result["benchmark"])
    other = evaluate_scores(aligned.items, aligned.scores, aligned.mask, ties=TIE_AWARE, n_resamples=0,
                            seed=seed, n_items=aligned.n_items).to_dict()
    return {"rule": rule, "note": decl.original_ties_note, "tie_aware_rule": TIE_AWARE,
            "tie_aware": {k: v["value"] for k, v in other["metrics"].items()},
            "tie_aware_breakdowns": {c: {g: {k: v["value"] for k, v in e.items() if isinstance(v, dict)}
                                         for g, e in groups.items()} for c, groups in other["breakdowns"].items()}}


def reproduction_lines(result: dict[str, Any]) -> list[str]:
    """The authors' rule beside the tie-aware one, to two decimals (percent for rates), with the difference."""
    orig = result.get("original_rule")
    if not orig:
        return []
    b = result["benchmark"]
    ties_exist = (result.get("tie_rate") or 0) > 0

    def two(key: str, x: float | None) -> str:
        if x is None:
            return "n/a"
        return f"{100 * x:.2f}" if _is_pct(key, b) else f"{x:.3f}"

    lines = [f"original rule {orig['rule']!r} ({orig['note']}) beside tie-aware {orig['tie_aware_rule']!r}, "
             f"two decimals, rates in %" + ("" if ties_exist else "; no ties, so the rules agree"),
             f"   {'metric':<36} {'original':>9} {'tie-aware':>10} {'difference':>11}  pessimistic–optimistic"]
    moved = result.get("tie_range") or {}

    def row(label: str, key: str, a: float | None, e: float | None, bounds=None) -> str:
        diff = "" if a is None or e is None or not ties_exist else (
            f"{100 * (e - a):+.2f}" if _is_pct(key, b) else f"{e - a:+.3f}")
        rng = f"  {two(key, bounds['pessimistic'])}–{two(key, bounds['optimistic'])}" if bounds else ""
        return f"   {label:<36} {two(key, a):>9} {two(key, e):>10} {diff:>11}{rng}"

    for key, entry in result["metrics"].items():
        lines.append(row(key, key, entry["value"], orig["tie_aware"].get(key), moved.get(key)))
    main = result["headline"][0]
    for column, groups in result.get("breakdowns", {}).items():
        for g, entry in groups.items():
            if main in entry:
                e = orig["tie_aware_breakdowns"].get(column, {}).get(g, {}).get(main)
                lines.append(row(f"{main} {column}={g}", main, entry[main]["value"], e))
    return lines


def undecided_rule(meta: dict[str, Any]) -> dict[str, Any] | None:
    """{"rule", "count", "by_judge", "note"} of a generate-match predictions file (`AnswerRules.undecided`: what its
    protocol set scores an undecided answer), or None for a file with no generated answers."""
    gen = meta.get("generation")
    if not isinstance(gen, dict):
        return None
    rule = gen.get("undecided_rule", "tie")
    return {"rule": rule if rule in ("tie", "wrong") else "tie", "count": int(gen.get("undecided", 0) or 0),
            "by_judge": int(gen.get("by_judge", 0) or 0), "note": str(gen.get("note", ""))}


def evaluate_predictions(predictions: str | Path, dataset: str | None = None, ties: str = "expected",
                         n_resamples: int = 1000, seed: int = 0, confidence: float = 0.95,
                         trust_metadata_dataset: bool = False, items: str | None = None) -> dict[str, Any]:
    """All metrics of a predictions file as a JSON-ready dict (the results engine's `Result.to_dict()` + extras).

    items: a declared item set of the benchmark (`Benchmark.item_choices`, e.g. ATP-Hard's "authors"); None: every
    item. The result says which set was used (`item_set`) and, where scores tie, each moved metric's
    pessimistic-to-optimistic range (`tie_range`, `hardneg.reproduce`)."""
    from hardneg.reproduce import choose_items, tie_range

    if items is not None:  # named on purpose: '' is refused, never read as "every item" (issue 36 N8)
        from hardneg import guards

        items = guards.text(items, "--items", max_len=64,
                            fix="name one of the benchmark's item sets (e.g. authors), or leave --items out for "
                                "every item")
    item_set_name = items  # `items` names the items below

    table, meta = read_predictions(predictions)
    from hardneg.alignment import resolve_dataset
    from hardneg.hub_access import ensure_dataset_loadable

    requested = ties
    if ties == ORIGINAL:  # the authors' rule of the file's benchmark, as its declaration names it
        ties = benchmarks.get(meta["benchmark"]).original_ties
    undecided = undecided_rule(meta)
    if undecided is not None and undecided["rule"] == "wrong":
        # generate-match ties only where an answer was undecided; the protocol set's source scores those 0 (the
        # pessimistic tie rule), whatever tie rule was asked for
        ties = "pessimistic"

    # only an explicit --dataset, the file's own local folder, or the declared Hub repo is loaded
    ds, _why = resolve_dataset(meta, dataset, trust_metadata_dataset)
    ensure_dataset_loadable(ds)  # offline: a clear error with the fix, not huggingface_hub's traceback
    splits = [s for s in str(meta.get("split", "")).split(",") if s] or None
    data = load_benchmark(ds, meta["config"], splits, benchmark=meta.get("benchmark"))
    items = item_set(data)
    aligned = align_predictions(items, table["id"].to_pylist(), table["scores"].to_pylist(), meta.get("video_ids"))
    aligned, item_choice = choose_items(aligned, data, item_set_name)
    result = evaluate_scores(aligned.items, aligned.scores, aligned.mask, ties=ties, n_resamples=n_resamples,
                             confidence=confidence, seed=seed, n_items=aligned.n_items, notes=aligned.notes).to_dict()
    if data.task == "multiple_choice":
        types, ds_ = by_negative_type(aligned, ties, n_resamples, seed, confidence)
        result["by_negative_type"] = types
        if ds_:
            result["delta_s"] = ds_
    if requested == ORIGINAL:
        result["original_rule"] = beside_tie_aware(aligned, result, ties, seed)
    result["item_set"] = item_choice
    moved = tie_range(aligned, result, seed)
    if moved:
        result["tie_range"] = moved
    result["provenance"] = provenance(meta, data, ties)
    if undecided is not None:
        result["undecided"] = undecided
        if undecided["count"]:
            result.setdefault("notes", []).append(f"{undecided['count']} generated answer(s) undecided: {undecided['note']}")
    result["model_id"] = meta.get("model_id")
    result["videos"] = meta.get("videos")
    cuts = meta.get("text_cuts")  # hardneg.truncation: captions the tokenizer cut (None: the model does not say)
    result["text_cuts"] = cuts
    if isinstance(cuts, dict) and cuts.get("captions_cut"):
        from hardneg.truncation import CutReport

        result.setdefault("notes", []).append(CutReport.from_dict(cuts).message())
    if data.data_revision != meta.get("data_revision"):
        result.setdefault("notes", []).append(
            f"dataset revision {data.data_revision} differs from the one scored ({meta.get('data_revision')}); "
            "ids are matched, but rescore if the items changed")
    if not result["comparable"]:
        result.setdefault("notes", []).append(
            f"only {result['n']} of {result['n_items']} items were scored: not comparable with full-coverage results")
    return result


def _is_pct(key: str, benchmark: str | None = None) -> bool:
    """Fractions are shown in percent, ranks as ranks (`hardneg.vocabulary`); other labels as fractions."""
    return vocabulary.is_percent(key) if vocabulary.is_metric(key) else True


def format_result(result: dict[str, Any]) -> str:
    """A plain-text report: headline and other metrics with chance, then each breakdown.

    Names and units from `hardneg.vocabulary`: each metric's label says its unit ("R@1 (%)", "MeanR (rank)").
    """
    lines = [f"{result['benchmark']} / {result['config']} ({result['split']}) — model {result.get('model_id')}",
             f"scored {result['n']}/{result['n_items']} ({100 * result['coverage']:.0f}%), ties={result['ties']}, "
             f"tie rate {100 * (result.get('tie_rate') or 0):.1f}%, "
             + (f"{int(100 * result['confidence'])}% cluster-bootstrap CIs over videos" if result.get("n_resamples")
                else "no intervals (--resamples 0)") + "; fractions in %, ranks as ranks"]
    chosen = result.get("item_set") or {}
    if chosen.get("name") not in (None, "all"):
        lines.append(f"item set: {chosen['name']} ({chosen['n_items']:,} of {chosen['n_items_release']:,} items): "
                     f"{chosen['description']}")
    elif chosen:
        lines.append(f"item set: all ({chosen['n_items']:,} items of the release)")
    from hardneg.reproduce import range_text

    show = lambda k, v: f"{vocabulary.header(k)} {vocabulary.display_entry(k, v)}"  # noqa: E731
    moved = result.get("tie_range") or {}
    for key, entry in result["metrics"].items():
        star = "*" if key in result["headline"] else " "
        chance = result["chance"].get(key)
        ch = "" if chance is None else f"   (chance {vocabulary.display(key, chance)})"
        ties = f"   {range_text(key, moved[key], two_decimals=True)}" if key in moved else ""
        lines.append(f" {star}{vocabulary.header(key):<22} {vocabulary.display_entry(key, entry)}{ch}{ties}")
    for column, groups in result.get("breakdowns", {}).items():
        for g, entry in groups.items():
            shown = "  ".join(show(k, v) for k, v in entry.items() if isinstance(v, dict))
            lines.append(f"  {column}={g} (n={entry['n']}): {shown}")
    for t, entry in result.get("by_negative_type", {}).items():
        shown = "  ".join(show(k, v) for k, v in entry.items() if isinstance(v, dict))
        lines.append(f"  vs {t} negatives only (n={entry['n']}): {shown}")
    for kind, d in result.get("delta_s", {}).items():
        lines.append(f"  Δs {kind} swap: mean {d['mean']:+.4f}, negative in {100 * d['share_negative']:.0f}% of {d['n']}")
    lines += ["  " + line for line in reproduction_lines(result)]
    for note in result.get("notes", []):
        lines.append(f"  note: {note}")
    lines.append("  * headline metric of the benchmark")
    return "\n".join(lines)


def chart_bars(result: dict[str, Any]) -> list[tuple[str, dict, float | None]]:
    """(label, entry, chance) of every bar: rate metrics only (ranks have another scale)."""
    b = result["benchmark"]
    bars = [(k, v, result["chance"].get(k)) for k, v in result["metrics"].items()
            if not k.startswith(("MeanR", "MedianR")) and v.get("value") is not None]
    main = result["headline"][0]
    for column, groups in result.get("breakdowns", {}).items():
        bars += [(f"{main} {column}={g}", e[main], None) for g, e in groups.items() if main in e]
    top1 = top1_key(b)
    bars += [(f"{top1} vs {t}", e[top1], None) for t, e in result.get("by_negative_type", {}).items() if top1 in e]
    return [(label, e, c) for label, e, c in bars if e.get("value") is not None
            and (_is_pct(label.split(" ")[0], b) or label.startswith(main))]


def render_chart(result: dict[str, Any]) -> bytes:
    """PNG bytes: each bar with its interval and, where defined, its own chance level as a red tick."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bars = chart_bars(result)
    fig, ax = plt.subplots(figsize=(max(5, 0.7 * len(bars) + 2), 4))
    x = np.arange(len(bars))
    vals = np.array([100 * e["value"] for _, e, _ in bars])
    # error bars are clamped at 0: an interval always contains its value (float rounding aside)
    low = np.array([100 * max(0.0, e["value"] - e.get("low", e["value"])) for _, e, _ in bars])
    high = np.array([100 * max(0.0, e.get("high", e["value"]) - e["value"]) for _, e, _ in bars])
    ax.bar(x, vals, yerr=np.vstack([low, high]) if len(bars) else None, capsize=3, color="#4878a8")
    chance_x = [i for i, (_, _, c) in enumerate(bars) if c is not None]
    if chance_x:
        ax.hlines([100 * bars[i][2] for i in chance_x], [i - 0.4 for i in chance_x], [i + 0.4 for i in chance_x],
                  color="#c44e52", lw=2, label="chance (constant scorer), per metric")
        ax.legend(loc="upper right")
    ax.set_xticks(x, [b[0] for b in bars], rotation=35, ha="right")
    ax.set_ylabel(f"score (%), {int(100 * result['confidence'])}% CI" if result.get("n_resamples") else "score (%)")
    ax.set_xlabel("metric / breakdown")
    ax.set_ylim(0, 100)
    ax.set_title(f"{result['benchmark']} / {result['config']} — {result.get('model_id')} (n={result['n']})")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()


def plot_result(result: dict[str, Any], path: str | Path) -> Path:
    """Write `render_chart(result)` to `path` atomically."""
    from hardneg.io import atomic_write_bytes

    return atomic_write_bytes(path, render_chart(result))
