"""Issue 50's report: PoSRank's own metrics (Table 4's layout, the paper's numbers beside ours), the positive
and negative controls, every metric's plateau, and the two declared claims with the crossed random-effects SE.

Why a module of its own: `training_report` keeps issue 43's tables (the cpu profile) byte for byte; the
profiles with PoSRank's evaluation (`posrank_eval`: `controls`, `paper`) add these sections. Computed from a
results file alone, like every table of docs/training.md. Imports no other report module (no cycle).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from training_design import CATEGORIES, POS, ROWS
from training_stats import crossed_seeds_needed, crossed_test, group_weights, holm

#: PoSRank Table 4 (X-CLIP on VLN-UVO): V2T, T2V mean recall (%), PoSRank noun, adj, verb, adv, prep
PAPER_TABLE4 = {
    "Coarse-Grained Training": (56.7, 41.0, 0.367, 0.440, 0.315, 0.201, 0.184),
    "Word-Level Negatives": (47.5, 40.0, 0.894, 0.864, 0.969, 0.468, 0.701),
    "Phrase-Level Negatives": (52.5, 40.2, 0.839, 0.723, 0.913, 0.382, 0.527),
    "Fine-Grained Prompting": (52.9, 39.8, 0.860, 0.781, 0.954, 0.439, 0.555),
}
OURS = {"coarse": "Coarse-Grained Training", "world-word": "Word-Level Negatives"}
KS = (1, 5, 10)
RANK36 = "0123456789abcdefghijklmnopqrstuvwxyz"  # training_runner._rank36's alphabet
NI_MARGIN = 0.02  # claim (2)'s declared margin (docs/training.md; training_runner.NI_MARGIN)
WIDE = 0.10  # the positive control "shows the effect": Holm p < 0.05 AND PoSRank up by at least 0.10 MRR
METRICS = ("posrank",) + tuple(f"posrank-{p}" for p in POS) + ("v2t", "t2v", "retrieval", "fine")


def _decode(s: str, alphabet: str) -> np.ndarray:
    return np.asarray([alphabet.index(ch) for ch in s], np.int64)


def _recall(s: str) -> np.ndarray:
    """Per scene, the mean over R@1/5/10 of one direction's stored rank string ("x" = 10 or more)."""
    r = np.asarray([10 if ch == "x" else int(ch) for ch in s])
    return np.mean([(r < k) for k in KS], axis=0)


def per_scene(body: dict, row: str, seed: int, step: int, metric: str) -> tuple[np.ndarray, np.ndarray | None]:
    """(values per test scene, the scenes' groups for a macro mean or None) of one job at `step`. PoSRank =
    the mean over the parts of speech of 1 / r (every world caption fills all five, so this is the mean of
    PoSRank^p); a scene without a negative of p counts as missing (NaN) for PoSRank^p."""
    sc = body["jobs"][f"{row}/{seed}"]["scores"][str(step)]
    if metric == "fine":
        return np.asarray([int(c) for c in sc["test_correct"]], float), np.asarray(body["data"]["test_item_cat"])
    if metric in CATEGORIES:  # one category's items (one item per scene): the other scenes are missing
        cats = np.asarray(body["data"]["test_item_cat"])
        v = np.asarray([int(c) for c in sc["test_correct"]], float)
        return np.where(cats == CATEGORIES.index(metric), v, np.nan), None
    if metric in ("v2t", "t2v"):
        return _recall(sc[metric]), None
    if metric == "retrieval":
        return (_recall(sc["v2t"]) + _recall(sc["t2v"])) / 2, None
    r = np.stack([_decode(sc["posrank"][p], RANK36) for p in POS], 1).astype(float)
    rr = np.where(r > 0, 1.0 / np.where(r > 0, r, 1.0), np.nan)
    if metric == "posrank":
        return np.nanmean(rr, 1), None
    return rr[:, POS.index(metric.split("-", 1)[1])], None


def matrix(body: dict, row: str, seeds: list[int], step: int, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """(seeds x kept scenes, the kept scenes' weights in the metric's mean)."""
    vals = [per_scene(body, row, s, step, metric) for s in seeds]
    x = np.stack([v for v, _ in vals])
    keep = ~np.isnan(x).any(0)
    groups = vals[0][1]
    return x[:, keep], group_weights(groups[keep] if groups is not None else None, int(keep.sum()))


def seeds_with(body: dict, rows: tuple[str, ...], step: int) -> list[int]:
    have = [{j["seed"] for j in body["jobs"].values() if j["row"] == r and str(step) in j["scores"]} for r in rows]
    return sorted(set.intersection(*have)) if have else []


def estimate(body: dict, row: str, step: int, metric: str) -> dict[str, Any] | None:
    """A row's mean of `metric` over its seeds and the test scenes, with the crossed SE's 95% interval."""
    seeds = seeds_with(body, (row,), step)
    if not seeds:
        return None
    x, w = matrix(body, row, seeds, step, metric)
    if len(seeds) < 2:
        return {"mean": float(x.mean(0) @ w), "low": float("nan"), "high": float("nan"), "n": 1}
    t = crossed_test(x, 1, w)
    return {"mean": t["difference"], "low": t["low"], "high": t["high"], "n": len(seeds)}


def contrast(body: dict, a: str, b: str, metric: str, m: int, step: int) -> dict[str, Any]:
    """a - b on `metric` at `step`, paired over the seeds both have: the crossed random-effects test, and the
    seeds at which its detectable effect would be at most the plan's target."""
    seeds = seeds_with(body, (a, b), step)
    out: dict[str, Any] = {"a": a, "b": b, "metric": metric, "n": len(seeds), "step": step}
    if len(seeds) < 2:
        return out
    xa, w = matrix(body, a, seeds, step, metric)
    xb, _ = matrix(body, b, seeds, step, metric)
    out.update(crossed_test(xa - xb, m, w))
    out["seeds_for_target"] = crossed_seeds_needed(out, float(np.sum(w ** 2)), body["plan"]["target"], m)
    return out


def chance(body: dict) -> dict[str, float]:
    """Every metric's chance level: PoSRank^p = mean over scenes of H(K+1) / (K+1) with K the scene's negatives
    of p (a random ranking); mean recall = mean over k of k / N; the item accuracy, macro of 1 / candidates."""
    d = body["data"]
    out: dict[str, float] = {}
    n = len(d["test_item_cat"])
    out["v2t"] = out["t2v"] = out["retrieval"] = float(np.mean([k / n for k in KS]))
    cats, cands = np.asarray(d["test_item_cat"]), np.asarray(d["test_item_candidates"], float)
    out["fine"] = float(np.mean([np.mean(1 / cands[cats == c]) for c in np.unique(cats)]))
    if "test_posrank_candidates" in d:
        k = np.asarray(d["test_posrank_candidates"], float)  # (scenes, 5) negatives per part of speech
        h = np.vectorize(lambda j: float(np.sum(1.0 / np.arange(1, j + 2))) / (j + 1))
        mrr = np.where(k > 0, h(k), np.nan)
        for i, p in enumerate(POS):
            out[f"posrank-{p}"] = float(np.nanmean(mrr[:, i]))
        out["posrank"] = float(np.nanmean(np.nanmean(mrr, 1)))
    if "test_posrank_blind" in d:  # a video-blind text scorer's level (`training_chance`): below H(K+1)/(K+1)
        blind = np.asarray(d["test_posrank_blind"], float)
        for i, p in enumerate(POS):
            out[f"blind-posrank-{p}"] = float(blind[i])
        out["blind-posrank"] = float(np.nanmean(blind))
    return out


def chance_band(ch: dict, metric: str) -> tuple[float, float]:
    """(low, high) chance levels of `metric` for the negative control: PoSRank's runs from a video-blind text
    scorer's level (`training_chance`: the caption's rank among one-word edits is triangular, not uniform) to
    H(K+1)/(K+1) (an exchangeable scorer); every other metric has one level."""
    c = ch.get(metric, float("nan"))
    b = ch.get(f"blind-{metric}", c)
    return min(b, c), max(b, c)


# ------------------------------------------------------------------------------------ text


def _f(x, pct: bool) -> str:
    if x is None or not np.isfinite(x):
        return "–"
    return f"{100 * x:.1f}" if pct else f"{x:.3f}"


def _pts(x) -> str:
    return "–" if x is None or not np.isfinite(x) else f"{100 * x:+.1f}"


def table4(body: dict, step: int) -> str:
    """Table 4's layout: the paper's rows, then ours (mean over seeds; 95% intervals below), then chance."""
    cols = ("v2t", "t2v") + tuple(f"posrank-{p}" for p in POS)
    lines = ["| training | V2T | T2V | noun | adj | verb | adv | prep | PoSRank mean |", "|---|" + "---|" * 8]
    for name, v in PAPER_TABLE4.items():
        lines.append(f"| paper (X-CLIP, VLN-UVO): {name} | " + " | ".join(
            f"{x:.1f}" if i < 2 else f"{x:.3f}" for i, x in enumerate(v)) + f" | {np.mean(v[2:]):.3f} |")
    for row in body["profile"]["rows"]:
        est = {c: estimate(body, row, step, c) for c in cols + ("posrank",)}
        if est["posrank"] is None:
            continue
        n = est["posrank"]["n"]
        cells = [_f(est[c]["mean"], c in ("v2t", "t2v")) for c in cols + ("posrank",)]
        lines.append(f"| ours ({n} seeds, {step} steps): {ROWS[row][0]} | " + " | ".join(cells) + " |")
        if n > 1:
            lines.append(f"| &nbsp;&nbsp;95% interval | " + " | ".join(
                f"[{_f(est[c]['low'], c in ('v2t', 't2v'))}, {_f(est[c]['high'], c in ('v2t', 't2v'))}]"
                for c in cols + ("posrank",)) + " |")
    ch = chance(body)
    lines.append("| ours: chance | " + " | ".join(_f(ch.get(c), c in ("v2t", "t2v")) for c in cols + ("posrank",)) + " |")
    if "blind-posrank" in ch:
        lines.append("| ours: chance of a video-blind text scorer | – | – | " + " | ".join(
            _f(ch.get(f"blind-{c}"), False) for c in cols[2:] + ("posrank",)) + " |")
    return "\n".join(lines)


def plateau_table(body: dict) -> str:
    per = body["plan"].get("plateau_per_metric", {})
    rows = sorted({r for v in per.values() for r in v}, key=list(ROWS).index)
    lines = ["| metric (validation) | " + " | ".join(ROWS[r][0] for r in rows) + " |", "|---|" + "---|" * len(rows)]
    for metric, v in per.items():
        lines.append(f"| {metric} | " + " | ".join(
            f"step {v[r]['plateau']}" + ("" if v[r]["reached"] else " (NOT reached)") for r in rows) + " |")
    lines.append("")
    lines.append(f"Every metric is reported at the common step **{body['plan']['steps']}**, at or past every plateau above"
                 + ("." if body["plan"]["reached"] else " (one or more NOT reached: the pilot was too short)."))
    return "\n".join(lines)


def contrasts_table(found: list[dict]) -> str:
    lines = ["| contrast (metric) | seeds | difference [95% CI, crossed SE] | SE | df | p | p (Holm) | detectable effect "
             "| seeds for 2 points |", "|---|---|---|---|---|---|---|---|---|"]
    for c in found:
        if "p" not in c:
            lines.append(f"| {c['a']} vs {c['b']} ({c['metric']}) | {c['n']} | not enough seeds | | | | | | |")
            continue
        lines.append(f"| {c['a']} vs {c['b']} ({c['metric']}) | {c['n']} | {_pts(c['difference'])} "
                     f"[{_pts(c['low'])}, {_pts(c['high'])}] | {100 * c['se']:.2f} | {c['df']:.0f} | {c['p']:.3g} | "
                     + (f"{c['p_holm']:.3g}" if "p_holm" in c else "–") + f" | {100 * c['mde']:.1f} | {c['seeds_for_target']} |")
    return "\n".join(lines + ["", "Differences, SEs and detectable effects in points (MRR x 100 for PoSRank)."])


def controls_text(body: dict, step: int, primary: list[dict]) -> str:
    """What the positive and negative controls show, and hence what a null in the main contrast means."""
    out = []
    pos = next((c for c in primary if (c["a"], c["b"], c["metric"]) == ("world-word", "coarse", "posrank")), None)
    shows = bool(pos and "p" in pos and pos["p_holm"] < 0.05 and pos["difference"] >= WIDE)
    if pos is None or "p" not in pos:
        out.append("**Positive control:** not enough seeds yet.")
    else:
        out.append(f"**Positive control** (world word-level vs coarse, trained and tested on the same generator's "
                   f"negatives: PoSRank, mean over the parts of speech): {_pts(pos['difference'])} points "
                   f"[{_pts(pos['low'])}, {_pts(pos['high'])}], Holm p = {pos['p_holm']:.3g}. " +
                   ("**It shows the effect** (significant and at least 10 points of MRR): the pipeline can show "
                    "what hard negatives do, so a null elsewhere is a fact about that contrast, not a fault of the "
                    "pipeline." if shows else
                    "**It does NOT show the effect in this setting** (free batches, a tower trained from scratch, all five "
                    "parts of speech): whether the pipeline can show it at all is the question of the positive control "
                    "with the paper's conditions (`diagnostics/positive_control.py`)."))
    ch = chance(body)
    seeds = seeds_with(body, ("shuffled",), step)
    if seeds:
        parts, above, below = [], [], []
        for metric in ("posrank", "retrieval", "fine"):
            e = estimate(body, "shuffled", step, metric)
            lo, hi = chance_band(ch, metric)
            if not (e["n"] > 1 and e["low"] <= hi + 0.02):
                above.append(metric)
            elif e["high"] < lo - 0.02:
                below.append(metric)
            scale = 100
            level = f"{scale * hi:.1f}" if lo == hi else f"{scale * lo:.1f} (a video-blind text scorer) to {scale * hi:.1f}"
            parts.append(f"{metric} {scale * e['mean']:.1f} [{scale * e['low']:.1f}, {scale * e['high']:.1f}] vs chance "
                         f"{level}")
        verdict = (f". **ABOVE chance** on {', '.join(above)}: the pipeline leaks the answer somewhere." if above else
                   f". **BELOW chance** on {', '.join(below)}: a model that cannot have learned the videos ranks the "
                   "true caption under its negatives, so the texts alone set the positive apart from them (a bias the "
                   "trained rows inherit)." if below else ". **At chance** (every interval within 2 points of its chance level).")
        out.append(f"**Negative control** (coarse on captions shuffled against videos, {len(seeds)} seeds): "
                   + "; ".join(parts) + verdict)
    return "\n\n".join(out)


def claims_text(primary: list[dict]) -> str:
    out = []
    for c in primary:
        if (c["a"], c["b"]) != ("world-word", "coarse") or "p" not in c:
            continue
        if c["metric"] == "posrank":
            sig = c["p_holm"] < 0.05
            out.append(f"**Claim (1), superiority on PoSRank:** {_pts(c['difference'])} points [{_pts(c['low'])}, "
                       f"{_pts(c['high'])}], Holm p = {c['p_holm']:.3g}, detectable effect {100 * c['mde']:.1f} points: "
                       + ("**word-level negatives help**." if sig and c["difference"] > 0 else
                          "**they hurt**." if sig else "**no effect detected**."))
        if c["metric"] == "retrieval":
            ni = c["low"] > -NI_MARGIN
            out.append(f"**Claim (2), non-inferiority on mean recall (margin {100 * NI_MARGIN:.0f} points, declared "
                       f"before the run):** {_pts(c['difference'])} points [{_pts(c['low'])}, {_pts(c['high'])}], "
                       f"detectable effect {100 * c['mde']:.1f} points: " +
                       ("**non-inferior** (the interval's low end is above the margin)." if ni else
                        "**non-inferiority NOT shown** (the interval reaches below the margin)."))
    return "\n\n".join(out)


def sections(body: dict) -> list[str]:
    """docs/training.md's issue-50 sections of a results file with PoSRank's evaluation (after the plan)."""
    step = body["plan"]["steps"]
    m = len(body["profile"]["primary"])
    primary = primary_family(body)
    detail = [contrast(body, "world-word", "coarse", metric, 1, step) for metric in METRICS]
    return ["Plateau of every reported metric (validation scenes; the definition above):\n\n" + plateau_table(body),
            "PoSRank's Table 4 beside ours (V2T / T2V: mean of R@1/5/10, %; PoSRank: MRR against the word-level "
            "negatives of each part of speech):\n\n" + table4(body, step),
            "The controls:\n\n" + controls_text(body, step, primary),
            f"Primary family (Holm over {m}; crossed random-effects SE, Satterthwaite df):\n\n" + contrasts_table(primary),
            "The claims:\n\n" + (claims_text(primary) or "Not enough seeds yet."),
            "World word-level vs coarse on every metric (each alone, no multiplicity correction):\n\n"
            + contrasts_table(detail)]


def crossed_primary(body: dict) -> str:
    """Issue 43's primary family re-tested with the crossed random-effects SE (beside its two-level bootstrap,
    which counts the seed x scene term in both levels): Holm over the family, as before."""
    return contrasts_table(primary_family(body))


def primary_family(body: dict) -> list[dict]:
    """The results file's declared primary contrasts at the plan's step, crossed SE, Holm over the family (a
    contrast without enough seeds counts as p = 1)."""
    step = body["plan"]["steps"]
    m = len(body["profile"]["primary"])
    got = [contrast(body, a, b, metric, m, step) for a, b, metric in body["profile"]["primary"]]
    for c, adj in zip(got, holm([c.get("p", 1.0) for c in got])):
        if "p" in c:
            c["p_holm"] = adj
    return got


def positive_control_block(got: dict) -> str:
    """The seeing-tower positive control's tables (`diagnostics/positive_control.py`), from its results file alone:
    the arms' test PoSRank, adjective PoSRank over training, and the declared contrasts on the declared slot
    (crossed random-effects SE over seeds x test scenes, Holm over the primary arms), with the verdict by the
    controls' own rule (`WIDE`: significant AND at least 10 points of MRR)."""
    s, jobs = got["settings"], got["jobs"]
    arms, primary, k = [tuple(a) for a in s["arms"]], list(s["primary"]), int(s["pos_index"])
    by = {(j["arm"], j["seed"]): j for j in jobs}
    seeds = sorted(sd for sd in {j["seed"] for j in jobs} if all((a, sd) in by for a, _ in arms))
    if len(seeds) < 2:
        return f"Positive control: {len(seeds)} seed(s) with every arm finished; not enough to test."
    steps = [e["step"] for e in by[arms[0][0], seeds[0]]["evals"]]
    lines = [f"Results file: {len(seeds)} seeds with every arm ({', '.join(map(str, seeds))}), "
             f"{s['steps']} steps per arm from the seed's tower (trained {s['pretrain']} steps on every slot's word), "
             f"batches drawn from scenes sharing both colours, N = {s['N']}, lambda {s['lam']:g}; PoSRank on the "
             f"{len(by[arms[0][0], seeds[0]]['test_rr'])} test scenes at step {steps[-1]}.", "",
             "| arm | noun | adj | verb | adv | prep | mean | adj per seed |", "|---|---|---|---|---|---|---|---|"]
    for name, label in arms:
        per = np.array([by[name, sd]["evals"][-1]["test_posrank"] for sd in seeds])
        lines.append(f"| {label} | " + " | ".join(f"{x:.3f}" for x in per.mean(0)) + f" | {per.mean():.3f} | "
                     + " / ".join(f"{x:.3f}" for x in per[:, k]) + " |")
    lines += ["", f"Test adjective PoSRank at steps {', '.join(map(str, steps))} (mean over seeds): " + "; ".join(
        f"{label}: " + " / ".join(f"{np.mean([by[name, sd]['evals'][i]['test_posrank'][k] for sd in seeds]):.3f}"
                                  for i in range(len(steps))) for name, label in arms) + ".", ""]
    base = np.array([by[arms[0][0], sd]["test_rr"] for sd in seeds], float)[:, :, k]
    tests = {}
    for name, _ in arms[1:]:
        x = np.array([by[name, sd]["test_rr"] for sd in seeds], float)[:, :, k] - base
        tests[name] = crossed_test(x[:, ~np.isnan(x).any(0)], len(primary) if name in primary else 1)
    for name, adj in zip(primary, holm([tests[n]["p"] for n in primary])):
        tests[name]["p_holm"] = adj
    lines += ["| contrast (adjective PoSRank) | difference, points [95% CI] | SE | df | p | p (Holm) | per-seed differences |",
              "|---|---|---|---|---|---|---|"]
    for name, label in arms[1:]:
        t = tests[name]
        per = [100 * (by[name, sd]["evals"][-1]["test_posrank"][k] - by[arms[0][0], sd]["evals"][-1]["test_posrank"][k])
               for sd in seeds]
        lines.append(f"| {label} vs {arms[0][1]} | {_pts(t['difference'])} [{_pts(t['low'])}, {_pts(t['high'])}] | "
                     f"{100 * t['se']:.2f} | {t['df']:.0f} | {t['p']:.3g} | "
                     + (f"{t['p_holm']:.3g}" if "p_holm" in t else "– (secondary)") + " | "
                     + ", ".join(f"{x:+.1f}" for x in per) + " |")
    verdicts = []
    for name in primary:
        t = tests[name]
        label = dict(arms)[name]
        shows = t["p_holm"] < 0.05 and t["difference"] >= WIDE
        verdicts.append(f"*{label}*: " + ("**shows the effect** (Holm p < 0.05 and at least 10 points)" if shows else
                                          "significant but under 10 points" if t["p_holm"] < 0.05 else
                                          "**does NOT show the effect**"))
    lines += ["", "Verdict by the controls' rule (Holm p < 0.05 and a gain of at least 10 points of MRR): "
              + "; ".join(verdicts) + "."]
    return "\n".join(lines)
