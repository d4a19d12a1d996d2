"""Every metric of a predictions file, with cluster-bootstrap intervals, by group and negative type.

Reads a predictions file (`hardneg score` output), joins it to its benchmark by id, and
calls the ranking core (`hardneg.ranking`) for all numbers: nothing is recomputed here.
Intervals resample whole videos (`bootstrap_ci` with the video id as cluster). Items the
model could not score (missing videos) are counted and reported, never silently dropped:
every metric states its denominator.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from hardneg.ranking import bootstrap_ci, multiple_choice, retrieval
from hardneg.scoring import BenchmarkData, load_benchmark, read_predictions

#: Per benchmark: R@K cut-offs and the metrics shown first (the paper's own).
BENCHMARK_METRICS: dict[str, dict[str, Any]] = {
    "feint6k": {"ks": (1, 2), "headline": ["R@1", "R@2", "MeanR"]},
    "contrast_sets": {"ks": (1,), "headline": ["R@1"]},
    "posrank": {"ks": (1,), "headline": ["PoSRank", "MRR"]},
    "fire": {"ks": (1, 5, 10), "headline": ["C@1", "C@5", "mAP", "R@1"]},
}
#: Negative types that swap an object vs an action (Feint6K's Δs analysis, Fig. 5).
OBJECT_TYPES = ("noun", "id", "gender")
ACTION_TYPES = ("verb", "verb_lm", "verb_human", "counterfactual")

#: per-example source of an aggregate (means only; medians get no interval)
_MC_SOURCE = {"MeanR": "rank", "MRR": "RR"}
_RET_SOURCE = {"mAP": "AP", "MeanR": "rank_original", "MRR": "RR_original", "MeanR_first": "rank_first"}


def chance_levels(n_candidates: np.ndarray, ks) -> dict[str, float]:
    """What a scorer that ignores the input gets on average (R@k = k/C, MeanR = (C+1)/2, MRR = H_C/C)."""
    c = np.asarray(n_candidates, np.float64)
    harmonic = np.array([np.sum(1.0 / np.arange(1, int(n) + 1)) for n in c])
    out = {f"R@{k}": float(np.mean(np.minimum(k, c) / c)) for k in ks}
    out.update({"MeanR": float(np.mean((c + 1) / 2)), "MRR": float(np.mean(harmonic / c))})
    out["PoSRank"] = out["MRR"]
    return out


def _ci(values: np.ndarray, clusters: np.ndarray, n_resamples: int, seed: int, confidence: float) -> dict[str, float]:
    if n_resamples == 0:  # intervals off
        return {"value": float(np.mean(values))}
    ci = bootstrap_ci(values, clusters, n_resamples=n_resamples, confidence=confidence, seed=seed)
    return {"value": ci.estimate, "low": ci.low, "high": ci.high, "std_error": ci.std_error}


def _with_cis(result, sources: dict[str, str], names: list[str], clusters, rows, n_resamples, seed, confidence):
    out: dict[str, dict[str, float]] = {}
    for name in names:
        src = sources.get(name, name)
        if src not in result.per_example:
            continue
        vals = np.asarray(result.per_example[src], np.float64)
        if rows is not None:
            vals = vals[rows]
        cl = clusters if rows is None else clusters[rows]
        out[name] = _ci(vals, cl, n_resamples, seed, confidence)
    return out


def _padded(scores: list[list[float]], labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c = max(len(s) for s in scores)
    mat = np.zeros((len(scores), c), np.float64)
    mask = np.zeros((len(scores), c), bool)
    for i, s in enumerate(scores):
        mat[i, : len(s)] = s
        mask[i, : len(s)] = True
    return mat, mask


def _negative_type_matrix(types: list[list[str]], shape) -> np.ndarray:
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


def evaluate_multiple_choice(data: BenchmarkData, table, meta: dict, ties: str, n_resamples: int, seed: int,
                             confidence: float) -> dict[str, Any]:
    items = data.items
    item_ids = items["id"].to_pylist()
    pred_ids = table["id"].to_pylist()
    index = {i: k for k, i in enumerate(item_ids)}
    unknown = [i for i in pred_ids if i not in index]
    if unknown:
        raise ValueError(f"predictions hold {len(unknown)} ids not in {data.dataset} config {data.config} "
                         f"(e.g. {unknown[0]!r}); score the same dataset/config/split")
    if len(set(pred_ids)) != len(pred_ids):
        raise ValueError("predictions hold duplicate ids; each item must be scored once")
    rows = np.array([index[i] for i in pred_ids], np.int64)
    captions = items["captions"].to_pylist()
    scores = table["scores"].to_pylist()
    for pid, r, s in zip(pred_ids, rows, scores):
        if len(s) != len(captions[r]):
            raise ValueError(f"predictions row {pid!r} has {len(s)} scores but the item has {len(captions[r])} captions")
    labels = np.asarray(items["label"].to_pylist(), np.int64)[rows]
    videos = np.asarray(items["video_id"].to_pylist(), dtype=object)[rows]
    category = np.asarray([c or "" for c in items["category"].to_pylist()], dtype=object)[rows]
    source = np.asarray([c or "" for c in items["source_dataset"].to_pylist()], dtype=object)[rows]
    mat, mask = _padded(scores, labels)
    types = _negative_type_matrix([items["negative_types"][int(r)].as_py() for r in rows], mat.shape)
    spec = BENCHMARK_METRICS.get(data.benchmark, {"ks": (1, 2), "headline": ["R@1", "MeanR"]})
    ks = spec["ks"]
    names = [f"R@{k}" for k in ks] + ["MeanR", "MRR"]
    res = multiple_choice(mat, labels, mask=mask, ks=ks, ties=ties, seed=seed if ties == "random" else None,
                          groups={"category": category, "source_dataset": source})
    out: dict[str, Any] = {
        "task": "multiple_choice",
        "n_items": len(item_ids), "n_scored": len(pred_ids), "coverage": len(pred_ids) / max(len(item_ids), 1),
        "candidates": sorted({int(m.sum()) for m in mask}),
        "chance": chance_levels(mask.sum(1), ks),
        "tie_rate": res.aggregate.get("tie_rate"),
        "overall": _with_cis(res, _MC_SOURCE, names, videos, None, n_resamples, seed, confidence),
    }
    out["overall"]["MedianR"] = {"value": res.aggregate["MedianR"]}
    by_group: dict[str, dict[str, Any]] = {}
    for gname, gvals in (("category", category), ("source_dataset", source)):
        uniq = sorted(set(gvals))
        if len(uniq) < 2 and gname == "source_dataset":
            continue
        by_group[gname] = {}
        for g in uniq:
            sel = np.nonzero(gvals == g)[0]
            entry = _with_cis(res, _MC_SOURCE, names, videos, sel, n_resamples, seed, confidence)
            entry["n"] = int(sel.size)
            by_group[gname][g or "(none)"] = entry
    out["by_group"] = by_group
    if data.benchmark == "posrank":  # mean over parts of speech of the per-POS MRR (Eq. 1)
        groups = sorted(set(category))
        n_g = {g: int((category == g).sum()) for g in groups}
        weights = np.array([len(category) / (len(groups) * n_g[g]) for g in category])
        out["overall"]["PoSRank"] = _ci(np.asarray(res.per_example["RR"]) * weights, videos, n_resamples, seed, confidence)
        out["overall"]["PoSRank"]["parts_of_speech"] = groups
    by_type: dict[str, Any] = {}
    positive_col = np.zeros_like(mask)
    positive_col[np.arange(len(labels)), labels] = True
    for t in sorted({x for x in types[mask] if x and x != "positive"}):
        sub_mask = mask & ((types == t) | positive_col)
        sel = np.nonzero((sub_mask & ~positive_col).any(1))[0]
        if sel.size == 0:
            continue
        r = multiple_choice(mat[sel], labels[sel], mask=sub_mask[sel], ks=(1,), ties=ties,
                            seed=seed if ties == "random" else None)
        entry = _with_cis(r, _MC_SOURCE, ["R@1", "MRR"], videos[sel], None, n_resamples, seed, confidence)
        entry["n"] = int(sel.size)
        by_type[t] = entry
    out["by_negative_type"] = by_type
    ds = delta_s(mat, mask, labels, types)
    if ds:
        out["delta_s"] = ds
    return out


def evaluate_retrieval(data: BenchmarkData, table, meta: dict, ties: str, n_resamples: int, seed: int,
                       confidence: float) -> dict[str, Any]:
    video_ids = meta.get("video_ids")
    if video_ids is None:
        raise ValueError("retrieval predictions need 'video_ids' in their metadata (hardneg score writes them)")
    vindex = {v: j for j, v in enumerate(video_ids)}
    q_ids = data.queries["query_id"].to_pylist()
    qpos = {q: i for i, q in enumerate(q_ids)}
    pred_ids = table["id"].to_pylist()
    unknown = [q for q in pred_ids if q not in qpos]
    if unknown:
        raise ValueError(f"predictions hold query ids not in {data.dataset} config {data.config} (e.g. {unknown[0]!r})")
    scores = np.asarray(table["scores"].to_pylist(), np.float64).reshape(len(pred_ids), len(video_ids))
    rel = np.zeros(scores.shape, bool)
    row_of = {q: i for i, q in enumerate(pred_ids)}
    qr = data.qrels
    for q, v, lab in zip(qr["query_id"].to_pylist(), qr["video_id"].to_pylist(), qr["label"].to_pylist()):
        if lab == 1 and q in row_of and v in vindex:
            rel[row_of[q], vindex[v]] = True
    orig_vid = dict(zip(q_ids, data.queries["video_id"].to_pylist()))
    original = np.array([vindex.get(orig_vid[q], -1) for q in pred_ids])
    keep = original >= 0  # a query whose original video is missing cannot be ranked
    spec = BENCHMARK_METRICS["fire"]
    res = retrieval(scores[keep], rel[keep], original=original[keep], ks=spec["ks"], ties=ties,
                    seed=seed if ties == "random" else None)
    clusters = np.array([orig_vid[q] for q in pred_ids], dtype=object)[keep]
    names = [f"C@{k}" for k in spec["ks"]] + ["mAP"] + [f"R@{k}" for k in spec["ks"]] + ["MeanR", "MRR"]
    # chance: what a scorer that ignores the input gets on these relevance labels (a constant score,
    # exact expected ties); it depends on how many positives each query has
    const = retrieval(np.zeros((int(keep.sum()), scores.shape[1]), np.float32), rel[keep], original=original[keep], ks=spec["ks"])
    out = {
        "task": "retrieval", "n_items": len(q_ids), "n_scored": int(keep.sum()), "n_videos": len(video_ids),
        "coverage": float(keep.sum()) / max(len(q_ids), 1), "tie_rate": res.aggregate.get("tie_rate"),
        "chance": {name: float(const.aggregate[name]) for name in names if name in const.aggregate},
        "overall": _with_cis(res, _RET_SOURCE, names, clusters, None, n_resamples, seed, confidence),
    }
    return out


def evaluate_predictions(predictions: str | Path, dataset: str | None = None, ties: str = "expected",
                         n_resamples: int = 1000, seed: int = 0, confidence: float = 0.95) -> dict[str, Any]:
    """All metrics of a predictions file as a JSON-ready dict."""
    table, meta = read_predictions(predictions)
    ds = dataset or meta.get("dataset")
    if not ds:
        raise ValueError("the predictions file does not name its dataset; pass --dataset (folder or Hub id)")
    splits = [s for s in str(meta.get("split", "")).split(",") if s] or None
    data = load_benchmark(ds, meta["config"], splits, benchmark=meta.get("benchmark"))
    if data.data_revision != meta.get("data_revision"):
        note = (f"dataset revision {data.data_revision} differs from the one scored ({meta.get('data_revision')}); "
                "ids are matched, but rescore if the items changed")
    else:
        note = None
    fn = evaluate_retrieval if data.task == "retrieval" else evaluate_multiple_choice
    result = fn(data, table, meta, ties, n_resamples, seed, confidence)
    result.update({
        "benchmark": data.benchmark, "config": data.config, "splits": data.splits, "dataset": str(ds),
        "model_id": meta.get("model_id"), "model_revision": meta.get("model_revision"), "frames": meta.get("frames"),
        "ties": ties, "confidence": confidence, "n_resamples": n_resamples, "seed": seed,
        "headline": BENCHMARK_METRICS.get(data.benchmark, {}).get("headline", []),
        "videos": meta.get("videos"), "predictions": str(predictions),
    })
    if note:
        result["warning"] = note
    return result


def _fmt(entry: dict[str, float], pct: bool) -> str:
    f = (lambda x: f"{100 * x:.1f}") if pct else (lambda x: f"{x:.2f}")
    if "low" not in entry:
        return f(entry["value"])
    return f"{f(entry['value'])} [{f(entry['low'])}, {f(entry['high'])}]"


def _is_pct(name: str) -> bool:
    return not name.startswith(("MeanR", "MedianR"))


def format_result(result: dict[str, Any]) -> str:
    """A plain-text report: overall metrics, then each breakdown (percentages for rates)."""
    lines = [f"{result['benchmark']} / {result['config']} ({','.join(result['splits'])}) — model {result['model_id']}",
             f"scored {result['n_scored']}/{result['n_items']} ({100 * result['coverage']:.0f}%), ties={result['ties']}, "
             f"tie rate {100 * (result.get('tie_rate') or 0):.1f}%, "
             + (f"{int(100 * result['confidence'])}% cluster-bootstrap CIs over videos" if result.get("n_resamples", 1)
                else "no intervals (--resamples 0)") + "; rates in %"]
    if result.get("chance"):
        shown = ("R@1", "MeanR") if result["task"] == "multiple_choice" else ("C@1", "mAP", "R@1", "MeanR")
        lines.append("chance (a scorer that ignores the input): " + ", ".join(
            f"{k} {_fmt({'value': result['chance'][k]}, _is_pct(k))}" for k in shown if k in result["chance"]))
    lines.append("  " + "  ".join(f"{k} {_fmt(v, _is_pct(k))}" for k, v in result["overall"].items()
                                  if isinstance(v, dict) and "value" in v))
    for gname, groups in result.get("by_group", {}).items():
        for g, entry in groups.items():
            metrics = "  ".join(f"{k} {_fmt(v, _is_pct(k))}" for k, v in entry.items() if isinstance(v, dict))
            lines.append(f"  {gname}={g} (n={entry['n']}): {metrics}")
    for t, entry in result.get("by_negative_type", {}).items():
        metrics = "  ".join(f"{k} {_fmt(v, _is_pct(k))}" for k, v in entry.items() if isinstance(v, dict))
        lines.append(f"  vs {t} negatives only (n={entry['n']}): {metrics}")
    for kind, d in result.get("delta_s", {}).items():
        lines.append(f"  Δs {kind} swap: mean {d['mean']:+.4f}, negative in {100 * d['share_negative']:.0f}% of {d['n']}")
    if result.get("warning"):
        lines.append(f"  warning: {result['warning']}")
    return "\n".join(lines)


def plot_result(result: dict[str, Any], path: str | Path) -> Path:
    """Bar chart of the rate metrics with their intervals (overall, per group, per negative type)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from hardneg.io import atomic_write_bytes

    bars: list[tuple[str, dict]] = []
    for k, v in result["overall"].items():
        if isinstance(v, dict) and "value" in v and _is_pct(k) and k != "MedianR":
            bars.append((k, v))
    main = "R@1" if result["task"] == "multiple_choice" else "C@1"
    for gname, groups in result.get("by_group", {}).items():
        if len(groups) > 1:
            bars += [(f"{main} {g}", e[main]) for g, e in groups.items() if main in e]
    bars += [(f"R@1 vs {t}", e["R@1"]) for t, e in result.get("by_negative_type", {}).items()]
    fig, ax = plt.subplots(figsize=(max(5, 0.7 * len(bars) + 2), 4))
    x = np.arange(len(bars))
    vals = np.array([100 * b[1]["value"] for b in bars])
    err = np.array([[100 * (b[1]["value"] - b[1].get("low", b[1]["value"])),
                     100 * (b[1].get("high", b[1]["value"]) - b[1]["value"])] for b in bars]).T
    ax.bar(x, vals, yerr=err if len(bars) else None, capsize=3, color="#4878a8")
    if result.get("chance"):
        main_chance = "R@1" if result["task"] == "multiple_choice" else "C@1"
        ax.axhline(100 * result["chance"][main_chance], color="#c44e52", ls="--", lw=1, label=f"chance {main_chance}")
        ax.legend(loc="upper right")
    ax.set_xticks(x, [b[0] for b in bars], rotation=35, ha="right")
    ax.set_ylabel(f"score (%), {int(100 * result['confidence'])}% CI" if result.get("n_resamples", 1) else "score (%)")
    ax.set_xlabel("metric / breakdown")
    ax.set_ylim(0, 100)
    ax.set_title(f"{result['benchmark']} / {result['config']} — {result['model_id']} (n={result['n_scored']})")
    fig.tight_layout()
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return atomic_write_bytes(path, buf.getvalue())
