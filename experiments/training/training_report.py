"""The training experiment's tables, computed from a committed results file alone, and docs/training.md's
generated blocks (`run.py --report` rewrites them; `--report --check` and a test fail when they differ).

Why from the results file alone: the report must regenerate byte for byte on any machine, without the
world, the model or a GPU. A results file of `training_runner` holds, per job, the validation curve and
the test scores at the scored steps (items right as a 0/1 string, retrieval ranks as digits), and the
test items' categories and candidate counts (for chance).

Statistics (`training_stats`): a contrast uses the seeds that both rows have finished; its interval and
its primary p come from a paired two-level bootstrap over seeds and test scenes (2,000 resamples) and the
t distribution on seeds - 1 degrees of freedom; Holm over the primary family; the detectable effect from
the same SE; the seeds a 2-point detectable effect needs from the seed SD of the per-seed differences.
The paired t over seeds and the exact sign-flip p are shown beside them (the sign-flip p's smallest
possible value is shown too: with 6 seeds it cannot pass Holm over 6 contrasts).
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from training_design import CATEGORIES, ROWS
from training_stats import (grouped_mean, holm, paired_seed_test, seeds_needed, smallest_signflip_p,
                            two_level_bootstrap, two_level_test)

RESAMPLES = 2000
KS = (1, 5, 10)
METRICS = ("fine", "action", "retrieval")


def load(path: Path) -> dict[str, Any]:
    return json.loads(gzip.decompress(Path(path).read_bytes()))


# ------------------------------------------------------------------------------------ per job


def _correct(s: str) -> np.ndarray:
    return np.frombuffer(s.encode(), np.uint8) - ord("0")


def _ranks(s: str) -> np.ndarray:
    r = np.frombuffer(s.encode(), np.uint8).astype(np.int64) - ord("0")
    r[r > 9] = 10  # "x": 10 or more
    return r


def retrieval_per_scene(score: dict) -> np.ndarray:
    """Per test scene: the mean over V2T and T2V and over R@1/5/10 of [its rank < k]."""
    v2t, t2v = _ranks(score["v2t"]), _ranks(score["t2v"])
    return np.mean([(r < k).astype(float) for r in (v2t, t2v) for k in KS], axis=0)


def values(body: dict, row: str, seed: int, step: int, metric: str) -> np.ndarray:
    """One job's per-scene values of `metric` at `step` (test items are one per scene)."""
    score = body["jobs"][f"{row}/{seed}"]["scores"][str(step)]
    if metric == "retrieval":
        return retrieval_per_scene(score)
    return _correct(score["test_correct"]).astype(float)


def groups_of(body: dict, metric: str) -> tuple[np.ndarray | None, np.ndarray]:
    """(groups for the macro mean or None, the scenes that count) of a metric."""
    cats = np.asarray(body["data"]["test_item_cat"])
    if metric == "fine":
        return cats, np.ones(len(cats), bool)
    if metric == "retrieval":
        return None, np.ones(len(cats), bool)
    keep = cats == CATEGORIES.index(metric)
    return None, keep


def matrix(body: dict, row: str, seeds: list[int], step: int, metric: str) -> np.ndarray:
    groups, keep = groups_of(body, metric)
    return np.stack([values(body, row, s, step, metric)[keep] for s in seeds])


def seeds_of(body: dict, *rows: str, step: int | None = None) -> list[int]:
    """The seeds every one of `rows` has finished (a job holds the plan's step, or `step`)."""
    step = str(step or body["plan"]["steps"])
    have = [{j["seed"] for j in body["jobs"].values() if j["row"] == r and step in j["scores"]} for r in rows]
    return sorted(set.intersection(*have)) if have else []


# ------------------------------------------------------------------------------------ summary


def row_summary(body: dict, row: str, boot_seed: int) -> dict[str, Any]:
    step = body["plan"]["steps"]
    seeds = seeds_of(body, row)
    out: dict[str, Any] = {"name": ROWS[row][0], "seeds": seeds}
    for i, metric in enumerate(METRICS):
        if not seeds:
            out[metric] = None
            continue
        groups, keep = groups_of(body, metric)
        x = matrix(body, row, seeds, step, metric)
        g = groups[keep] if groups is not None else None
        est = float(grouped_mean(x, g).mean())
        if len(seeds) > 1:
            boot = two_level_bootstrap(x, g, RESAMPLES, seed=boot_seed * 10 + i)
            t = two_level_test(est, boot, len(seeds), 1)
            out[metric] = {"mean": est, "low": t["low"], "high": t["high"]}
        else:
            out[metric] = {"mean": est, "low": float("nan"), "high": float("nan")}
    return out


def contrast(body: dict, a: str, b: str, metric: str, m: int, boot_seed: int, step: int | None = None) -> dict[str, Any]:
    """The paired contrast a - b on `metric` at the plan's step (or `step`) over the seeds both rows have there."""
    step = step or body["plan"]["steps"]
    seeds = seeds_of(body, a, b, step=step)
    out: dict[str, Any] = {"a": a, "b": b, "metric": metric, "seeds": seeds, "n": len(seeds), "step": step}
    if len(seeds) < 2:
        return out
    groups, keep = groups_of(body, metric)
    g = groups[keep] if groups is not None else None
    xa, xb = matrix(body, a, seeds, step, metric), matrix(body, b, seeds, step, metric)
    d = xa - xb
    est = float(grouped_mean(d, g).mean())
    boot = two_level_bootstrap(d, g, RESAMPLES, seed=boot_seed)
    out.update(two_level_test(est, boot, len(seeds), m))
    seed_test = paired_seed_test(grouped_mean(xa, g), grouped_mean(xb, g))
    out.update({"p_seed_t": seed_test["p_t"], "p_signflip": seed_test["p_signflip"], "seed_sd": seed_test["sd"],
                "min_signflip": smallest_signflip_p(len(seeds)),
                "seeds_for_target": seeds_needed(seed_test["sd"], body["plan"]["target"], m)})
    return out


def summarize(body: dict) -> dict[str, Any]:
    prof = body["profile"]
    rows = [r for r in prof["rows"] + prof["secondary_rows"] if seeds_of(body, r)]
    out: dict[str, Any] = {"rows": {r: row_summary(body, r, k) for k, r in enumerate(rows)}}
    m = len(prof["primary"])
    claims = {tuple(p[:3]): p[3] for p in body["primary_declared"]}
    prim = [dict(contrast(body, a, b, metric, m, 100 + k), claim=claims.get((a, b, metric), ""))
            for k, (a, b, metric) in enumerate(prof["primary"])]
    # Holm over the whole declared family: a contrast not yet tested counts as p = 1 (conservative)
    for p, adj in zip(prim, holm([p.get("p", 1.0) for p in prim])):
        if "p" in p:
            p["p_holm"] = adj
    out["primary"] = prim
    late = prof["pilot_steps"]  # sensitivity: the claims at the pilot's last step (the pilot's seeds only)
    out["late"] = [contrast(body, a, b, metric, m, 200 + k, step=late) for k, (a, b, metric) in
                   enumerate(prof["primary"]) if (a, b) == ("world-word", "coarse")]
    sec = []
    k = 0
    for r in rows:
        if r == "coarse":
            continue
        for metric in ("fine", "retrieval") + CATEGORIES:
            k += 1
            sec.append(contrast(body, r, "coarse", metric, 1, 1000 + k))
    tested = [s for s in sec if "p" in s]
    for s, adj in zip(tested, holm([s["p"] for s in tested])):
        s["p_holm"] = adj
    out["secondary"] = sec
    cats = np.asarray(body["data"]["test_item_cat"])
    cands = np.asarray(body["data"]["test_item_candidates"], float)
    out["chance"] = {CATEGORIES[c]: float(np.mean(1 / cands[cats == c])) for c in np.unique(cats)}
    out["chance_fine"] = float(np.mean(list(out["chance"].values())))
    n = len(cats)
    out["chance_retrieval"] = float(np.mean([k / n for k in KS]))
    return out


# ------------------------------------------------------------------------------------ tables


def _pct(x, digits: int = 1) -> str:
    return "–" if x is None or not np.isfinite(x) else f"{100 * x:.{digits}f}"


def _pts(x) -> str:
    return "–" if x is None or not np.isfinite(x) else f"{100 * x:+.1f}"


def _p(x) -> str:
    return "–" if x is None or not np.isfinite(x) else f"{x:.3g}"


def _seeds(seeds: list[int]) -> str:
    if not seeds:
        return "none"
    runs, start = [], seeds[0]
    for prev, cur in zip(seeds, seeds[1:] + [None]):
        if cur != prev + 1:
            runs.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = cur
    return ", ".join(runs)


def status_text(body: dict) -> str:
    """What the results file holds: the jobs done per row, and what remains of the plan."""
    from training_runner import main_jobs

    prof, plan = body["profile"], body.get("plan")
    lines = [f"Results file: profile `{body['profile_name']}`, {len(body['jobs'])} jobs finished "
             f"({body['device']}; torch {body['versions']['torch']})."]
    if plan is None:
        done = {r: sorted(j["seed"] for j in body["jobs"].values() if j["row"] == r) for r in prof["pilot_rows"]}
        lines.append(f"**The pilot has not finished** ({sum(map(len, done.values()))} of "
                     f"{len(prof['pilot_rows']) * prof['pilot_seeds']} pilot jobs): no plateau, no plan and no answer "
                     "yet. Finished pilot seeds: " + "; ".join(f"{ROWS[r][0]}: {_seeds(v)}" for r, v in done.items())
                     + ".")
        return "\n".join(lines)
    todo = [(r, s) for r, s in main_jobs(body) if f"{r}/{s}" not in body["jobs"]]
    lines.append("")
    lines.append("| row | seeds finished | seeds planned |")
    lines.append("|---|---|---|")
    for r in prof["rows"] + prof["secondary_rows"]:
        planned = plan["seeds"] if r in prof["rows"] else plan["secondary_seeds"]
        lines.append(f"| {ROWS[r][0]} | {_seeds(seeds_of(body, r))} | {planned} |")
    lines.append("")
    lines.append("The plan is complete." if not todo else
                 f"**Not complete: {len(todo)} of {len(main_jobs(body))} planned jobs remain** (first: "
                 f"{todo[0][0]} seed {todo[0][1]}); the tables use the seeds finished for every row a line "
                 "compares.")
    return "\n".join(lines)


def pilot_table(body: dict) -> str:
    plan = body["plan"]
    per = plan["plateau_per_row"]
    rows = list(per)
    steps = per[rows[0]]["steps"]
    lines = ["| step | " + " | ".join(f"{ROWS[r][0]}: val (%) ± SE" for r in rows) + " |",
             "|---|" + "---|" * len(rows)]
    for i, s in enumerate(steps):
        lines.append(f"| {s} | " + " | ".join(f"{_pct(per[r]['mean'][i])} ± {_pct(per[r]['se'][i])}" for r in rows)
                     + " |")
    lines.append("")
    lines.append("Plateau per pilot row (the definition above): " + "; ".join(
        f"{ROWS[r][0]}: step {per[r]['plateau']}" + ("" if per[r]["reached"] else " (NOT reached)") for r in rows)
        + f". Common step count: **{plan['steps']}**" + ("" if plan["reached"] else
                                                           " (NOT reached: the pilot was too short)") + ".")
    return "\n".join(lines)


def pilot_progress_table(body: dict) -> str:
    """The finished pilot jobs' validation curves while the pilot is still running (no plateau is claimed)."""
    from training_runner import mean_curve

    prof = body["profile"]
    rows = [r for r in prof["pilot_rows"] if any(j["row"] == r for j in body["jobs"].values())]
    curves = {r: mean_curve([j for j in body["jobs"].values() if j["row"] == r]) for r in rows}
    steps = curves[rows[0]][0]
    n = {r: sum(j["row"] == r for j in body["jobs"].values()) for r in rows}
    lines = ["| step | " + " | ".join(f"{ROWS[r][0]}: val (%) ± SE, {n[r]} seeds" for r in rows) + " |",
             "|---|" + "---|" * len(rows)]
    for i, st in enumerate(steps):
        lines.append(f"| {st} | " + " | ".join(f"{_pct(curves[r][1][i])} ± " + (_pct(curves[r][2][i]) if n[r] > 1 else "–")
                                               for r in rows) + " |")
    return "\n".join(lines)


def plan_table(body: dict) -> str:
    plan = body["plan"]
    lines = ["| pilot contrast (validation, step %d) | per-seed differences (points) | seed SD (points) | "
             "seeds for a %.0f-point detectable effect |" % (plan["steps"], 100 * plan["target"]), "|---|---|---|---|"]
    for name, v in plan["pilot_sd"].items():
        lines.append(f"| {name} | " + ", ".join(_pts(x) for x in v["differences"]) +
                     f" | {_pct(v['sd'])} | {v['seeds_needed']} |")
    lines.append("")
    lines.append(f"Seeds asked by the power formula: {plan['seeds_needed']}; planned: {plan['seeds']} for the primary "
                 f"rows (at most {body['profile']['max_seeds']}), {plan['secondary_seeds']} for the secondary rows "
                 f"(m = {plan['m']} primary contrasts).")
    return "\n".join(lines)


def rows_table(body: dict, s: dict) -> str:
    step = body["plan"]["steps"]
    lines = [f"| training ({step} steps) | seeds | fine-grained test accuracy (%) | action (%) | "
             "retrieval, mean R@1/5/10 (%) |", "|---|---|---|---|---|"]
    for r in s["rows"].values():
        cells = [f"{_pct(r[m]['mean'])} [{_pct(r[m]['low'])}, {_pct(r[m]['high'])}]" for m in METRICS]
        lines.append(f"| {r['name']} | {len(r['seeds'])} | " + " | ".join(cells) + " |")
    lines.append(f"| chance | | {_pct(s['chance_fine'])} | {_pct(s['chance'].get('action'))} | "
                 f"{_pct(s['chance_retrieval'])} |")
    return "\n".join(lines)


def curve_table(body: dict) -> str:
    """Validation and test accuracy (mean over each row's finished seeds) at a third, two thirds and all of
    the common step count."""
    plan = body["plan"]
    st = plan["curve_steps"]
    cats = np.asarray(body["data"]["test_item_cat"])
    lines = ["| training | " + " | ".join(f"step {x}: val / test (%)" for x in st) + " |", "|---|" + "---|" * len(st)]
    prof = body["profile"]
    for r in prof["rows"] + prof["secondary_rows"]:
        seeds = seeds_of(body, r)
        if not seeds:
            continue
        cells = []
        for x in st:
            val = np.mean([next(c["val"] for c in body["jobs"][f"{r}/{sd}"]["curve"] if c["step"] == x) for sd in seeds])
            test = np.mean([grouped_mean(values(body, r, sd, x, "fine")[None], cats)[0] for sd in seeds])
            cells.append(f"{_pct(val)} / {_pct(test)}")
        lines.append(f"| {ROWS[r][0]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def primary_table(s: dict) -> str:
    lines = ["| contrast (metric) | seeds | difference (points) [95% CI, seeds × scenes] | p (two-level t) | "
             "p (Holm) | p (paired t, seeds only) | p (sign-flip; smallest possible) | detectable effect (points) | "
             "seeds for 2 points |", "|---|---|---|---|---|---|---|---|---|"]
    for p in s["primary"]:
        if "p" not in p:
            lines.append(f"| {p['a']} vs {p['b']} ({p['metric']}) | {p['n']} | not enough seeds yet | | | | | | |")
            continue
        lines.append(f"| {p['a']} vs {p['b']} ({p['metric']}) | {p['n']} | {_pts(p['difference'])} "
                     f"[{_pts(p['low'])}, {_pts(p['high'])}] | {_p(p['p'])} | {_p(p['p_holm'])} | {_p(p['p_seed_t'])} | "
                     f"{_p(p['p_signflip'])}; {_p(p['min_signflip'])} | {100 * p['mde']:.1f} | {p['seeds_for_target']} |")
    return "\n".join(lines)


def claims_text(s: dict) -> str:
    """The two claims in words, from the primary family's first two contrasts (word-level vs coarse on
    fine-grained accuracy, and on coarse retrieval): the difference, its interval, p, Holm's p and the
    detectable effect, and what they allow one to say."""
    out = []
    for p in s["primary"]:
        if (p["a"], p["b"]) != ("world-word", "coarse") or p["metric"] not in ("fine", "retrieval"):
            continue
        what = ("(1) Do word-level hard negatives improve fine-grained accuracy at equal steps?" if p["metric"] == "fine"
                else "(2) Does coarse retrieval suffer?")
        if "p" not in p:
            out.append(f"**{what}** Not enough seeds yet ({p['n']}).")
            continue
        sig = p["p_holm"] < 0.05
        d, lo, hi, mde = (100 * p[k] for k in ("difference", "low", "high", "mde"))
        facts = (f"{_pts(p['difference'])} points [{_pts(p['low'])}, {_pts(p['high'])}] over {p['n']} seeds and the "
                 f"test scenes, p = {_p(p['p'])}, Holm p = {_p(p['p_holm'])}, detectable effect {mde:.1f} points")
        if p["metric"] == "fine":
            verdict = ("**Yes**" if sig and d > 0 else "**No: it hurts**" if sig else
                       f"**No effect was detected**: an effect of {mde:.1f} points would have been detected with 80% "
                       f"power, and the interval allows {lo:+.1f} to {hi:+.1f} points")
        else:
            verdict = ("**Yes: it suffers**" if sig and d < 0 else "**No: it improves**" if sig else
                       f"**No loss was detected**: a loss of {mde:.1f} points would have been detected with 80% power, "
                       f"and the interval allows {lo:+.1f} to {hi:+.1f} points")
        out.append(f"**{what}** {verdict} ({facts}).")
    late = [p for p in s.get("late", []) if "p" in p]
    if late:
        out.append(f"Sensitivity, at the pilot's last step ({late[0]['step']} steps, the {late[0]['n']} pilot seeds; "
                   "not the pre-declared test): " + "; ".join(
                       f"{p['metric']} {_pts(p['difference'])} points [{_pts(p['low'])}, {_pts(p['high'])}], p = "
                       f"{_p(p['p'])}" for p in late) + ".")
    return "\n\n".join(out)


def secondary_table(s: dict) -> str:
    metrics = ("fine", "retrieval") + tuple(c for c in CATEGORIES if c in s["chance"])
    got = {(x["a"], x["metric"]): x for x in s["secondary"]}
    lines = ["| training vs coarse | " + " | ".join(f"{m} (points, p Holm)" for m in metrics) + " |",
             "|---|" + "---|" * len(metrics)]
    for key, r in s["rows"].items():
        if key == "coarse":
            continue
        cells = []
        for m in metrics:
            x = got.get((key, m))
            cells.append("–" if x is None or "p" not in x else f"{_pts(x['difference'])} ({x['p_holm']:.2g})")
        lines.append(f"| {r['name']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _crossed(body: dict) -> str:
    from training_paper import crossed_primary

    return crossed_primary(body)


def block(body: dict) -> str:
    """Every table of one results file, in the order docs/training.md shows them."""
    parts = [status_text(body)]
    if not body.get("plan") and body.get("jobs"):
        parts.append("Pilot so far (validation accuracy, macro over the 9 categories; mean ± SE over the finished "
                     "pilot seeds; provisional):\n\n" + pilot_progress_table(body))
    if body.get("plan") and body["profile"].get("posrank_eval"):  # issue 50's profiles: PoSRank's own test
        from training_paper import sections

        return "\n\n".join(parts + ["Pilot (validation accuracy, macro over the 9 categories; mean ± SE over the pilot "
                                     "seeds):\n\n" + pilot_table(body), "Seed count:\n\n" + plan_table(body)]
                            + sections(body))
    if body.get("plan"):
        s = summarize(body)
        parts += ["Pilot (validation accuracy, macro over the 9 categories; mean ± SE over the pilot seeds):\n\n"
                  + pilot_table(body), "Seed count:\n\n" + plan_table(body),
                  "Every row at the common step count (95% intervals over seeds and test scenes):\n\n"
                  + rows_table(body, s), "Learning curves:\n\n" + curve_table(body),
                  f"Primary family (Holm over {len(s['primary'])}):\n\n" + primary_table(s),
                  "The same family with the crossed random-effects SE (issue 50: seed, scene and seed × scene "
                  "components from a two-way ANOVA, each counted once; Satterthwaite df):\n\n" + _crossed(body),
                  "The two claims, as the primary family answers them:\n\n" + claims_text(s),
                  "Secondary family (every row against coarse only; Holm over the whole table):\n\n"
                  + secondary_table(s)]
    return "\n\n".join(parts)


def history_block(path: Path) -> str:
    """Issue 28's H100 time-budget tables (history), as its own report prints them."""
    from training_timebudget import report

    return report(load(path))


# ------------------------------------------------------------------------------------ docs


MARK = re.compile(r"(<!-- generated: run\.py --report ([a-z0-9-]+) -->\n)((?:(?!<!-- generated:).)*?)(<!-- end generated -->)",
                  re.S)


def render(name: str, results: Path) -> str:
    if name.startswith("history-"):
        return history_block(results / f"timebudget-{name[len('history-'):]}.json.gz")
    if name == "positive-control":  # issue 50's seeing-tower control (diagnostics/positive_control.py)
        from training_paper import positive_control_block

        return positive_control_block(json.loads(gzip.decompress((results / "positive_control.json.gz").read_bytes())))
    return block(load(results / f"{name}.json.gz"))


def regenerate(docs: Path, results: Path, check: bool = False) -> int:
    """Rewrite every generated block of `docs` from `results`; with `check`, only say whether they differ."""
    from hardneg.io import atomic_write_text

    text = docs.read_text(encoding="utf-8")
    names = [m.group(2) for m in MARK.finditer(text)]
    if not names:
        raise SystemExit(f"error: {docs} has no '<!-- generated: run.py --report NAME -->' block")
    new = MARK.sub(lambda m: m.group(1) + render(m.group(2), results) + "\n" + m.group(4), text)
    if check:
        if new != text:
            print(f"{docs} is out of date: run `python experiments/training/run.py --report`")
            return 1
        print(f"{docs}: {len(names)} generated blocks up to date ({', '.join(names)})")
        return 0
    if new != text:
        atomic_write_text(docs, new)
    print(f"{docs}: regenerated {', '.join(names)}")
    return 0
