"""Issue 43's runner of the equal-step design: one model per job, jobs spread over processes, resumable.

Why a runner of its own (docs/training.md, "The CPU design"): on a small machine the design was slow
because of its threads (2 torch threads per step on a shared 2-core machine cost ten times 1 thread)
and because every step resized the frames again. Here

* the inputs are prepared once (`prepare_inputs`: the frames resized and standardised for the
  model, `TinyTemporal.prepare_frames`), cached in the work folder and fingerprinted;
* a **job** is one row at one seed, trained alone with 1 torch thread (`train_job`); the jobs of a
  design are spread over `--jobs` processes (default: the cores), so seeds and rows use every core;
* every finished job is written at once into the results file (`ResultsFile.add`: an atomic
  rewrite of a gzip JSON), and a rerun skips the jobs it holds: the design resumes after any
  interruption and splits over several sittings;
* a job depends on (data, row, seed, steps) only -- batches and negatives on (seed, step, row),
  the weights on the seed -- so a rerun on CPU gives the same bits (`reproduce`);
* the **pilot** (`PILOT_ROWS` x `pilot_seeds`, `pilot_steps` steps, validated every `eval_every`
  steps, the test scenes scored at every validation) finds the plateau (`plateau`); the pilot's
  jobs are also the main jobs of their (row, seed): a job's state at step S does not depend on how
  far it trains afterwards (no schedule), so its scores at S are those of a job stopped at S;
* the **plan** then fixes the common step count (the plateau) and the seed count, from the pilot's
  seed SD by the t-distribution power formula (`training_stats.seeds_needed`).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from training_design import (CATEGORIES, POS, ROWS, batch_for, encode_video, evaluate, make_net, macro,
                             posrank_ranks, prepare, step_loss)
from training_stats import seeds_needed

#: the primary family of issue 43: issue 34's declared contrasts, plus claim (2) tested on retrieval
#: (row a, row b, metric, the claim). Metric "fine" = test accuracy, macro over the item categories;
#: "retrieval" = mean over V2T/T2V and R@1/5/10 on the test scenes; a category name = its accuracy.
PRIMARY = (
    ("world-word", "coarse", "fine", "(1) word-level hard negatives help fine-grained understanding (PoSRank)"),
    ("world-word", "coarse", "retrieval", "(2) coarse retrieval does not suffer from hard negatives (PoSRank)"),
    ("gen-phrase", "gen-word", "retrieval", "phrase-level beats word-level on coarse retrieval (PoSRank Table 4)"),
    ("prompt", "gen-phrase", "fine", "fine-grained prompting beats phrase-level on fine-grained metrics (PoSRank)"),
    ("eq1", "coarse", "action", "LLM-teacher-lbl helps on actions (Feint6K)"),
    ("eq2", "coarse", "action", "LLM-teacher-lgt helps on actions (Feint6K)"),
)
PILOT_ROWS = ("coarse", "world-word")
#: the pilot contrasts whose seed SD sizes the seed count: (row a, row b, metric on the validation scenes)
PILOT_CONTRASTS = (("world-word", "coarse", "fine"),)
#: the rows of the two claims the experiment must answer first ((1) and (2) of PRIMARY): on a small machine they
#: get every planned seed before the other rows start, so a run that stops early still answers them
CLAIM_ROWS = ("world-word", "coarse")
TARGET = 0.02  # the detectable effect the seed count aims at (2 points)
WAVE = 6  # seeds per wave: rows are balanced after every wave
PROFILES = {
    # the slow test's configuration: one contrast (world-word vs coarse), 6 seeds; the pipeline, not the answer
    "ci": {"train": 256, "val": 54, "test": 200, "batch": 8, "n_per_pos": 1, "dim": 16, "image_size": 16,
           "lr": 1e-3, "eval_every": 50, "pilot_steps": 400, "pilot_seeds": 2, "pilot_rows": ["coarse", "world-word"],
           "window": 3, "min_steps": 100, "seeds": 6, "max_seeds": 6, "secondary_seeds": 6,
           "rows": ["coarse", "world-word"], "secondary_rows": [], "claim_rows": list(CLAIM_ROWS),
           "primary": [["world-word", "coarse", "fine"]], "pilot_contrasts": [["world-word", "coarse", "fine"]]},
    # the CPU design (issue 43): the outside review's sizes, 2,000 training scenes, a plateau within 6,000 steps
    "cpu": {"train": 2000, "val": 300, "test": 1000, "batch": 8, "n_per_pos": 1, "dim": 16, "image_size": 16,
            "lr": 1e-3, "eval_every": 250, "pilot_steps": 6000, "pilot_seeds": 4, "pilot_rows": list(PILOT_ROWS),
            "window": 6, "min_steps": 1000, "seeds": 6, "max_seeds": 30, "secondary_seeds": 6,
            "rows": ["coarse", "world-word", "gen-word", "gen-phrase", "prompt", "eq1", "eq2"], "claim_rows": list(CLAIM_ROWS),
            "secondary_rows": ["world-word-withpos"],
            "primary": [list(p[:3]) for p in PRIMARY], "pilot_contrasts": [list(p) for p in PILOT_CONTRASTS]},
}
# issue 50: PoSRank's own test (MRR per part of speech against the world's word-level negatives, V2T/T2V mean
# recall) with the controls. `controls`: the positive control (world word-level vs coarse, trained and tested
# on negatives of the same generator: the paper's setup) and the negative control (captions shuffled against
# videos), small, to know that the pipeline shows the effect before the long design runs.
PAPER_METRICS = ["fine", "retrieval", "posrank"]  # the metrics whose plateau the pilot finds (validation curves)
# Sized to run in about half an hour on 2 shared cores (each PoSRank test scoring encodes ~50,000 texts: 2 scorings)
PROFILES["controls"] = {**PROFILES["cpu"], "posrank_eval": True, "pilot_steps": 1200, "eval_every": 600,
                        "min_steps": 600, "pilot_seeds": 3,
                        "pilot_rows": ["coarse", "world-word", "shuffled"], "window": 1, "seeds": 3, "max_seeds": 3,
                        "secondary_seeds": 3, "rows": ["coarse", "world-word", "shuffled"], "secondary_rows": [],
                        "primary": [["world-word", "coarse", "posrank"], ["world-word", "coarse", "fine"],
                                    ["world-word", "coarse", "retrieval"]],
                        "pilot_contrasts": [["world-word", "coarse", "posrank"]], "plateau_metrics": PAPER_METRICS}
# `paper`: the two claims on PoSRank's metrics, seeds by power in waves (TARGET), each metric's plateau from a
# 6,000-step pilot; claim (2) is non-inferiority with the margin declared in docs/training.md (`NI_MARGIN`)
PROFILES["paper"] = {**PROFILES["cpu"], "posrank_eval": True, "pilot_rows": ["coarse", "world-word", "shuffled"],
                     "pilot_seeds": 4, "rows": ["coarse", "world-word"], "secondary_rows": [], "max_seeds": 96,
                     "primary": [["world-word", "coarse", "posrank"], ["world-word", "coarse", "retrieval"]],
                     "pilot_contrasts": [["world-word", "coarse", "posrank"], ["world-word", "coarse", "retrieval"]],
                     "plateau_metrics": PAPER_METRICS}
NI_MARGIN = 0.02  # claim (2): world word-level is non-inferior on mean recall when the 95% interval's low end > -2 points
# the GPU design: the CPU design's rows, statistics and plan with larger sizes (several jobs share the GPU: --jobs)
PROFILES["gpu"] = {**PROFILES["cpu"], "train": 10000, "val": 500, "test": 2000, "batch": 128, "n_per_pos": 16,
                   "dim": 64, "image_size": 32, "eval_every": 300, "pilot_steps": 9000, "min_steps": 3000}
RANK_CAP = 10  # retrieval ranks are stored up to 10 ("x" = 10 or more): R@1/5/10 need no more


# ------------------------------------------------------------------------------------ inputs


def fingerprint(a: dict[str, np.ndarray]) -> str:
    """sha256 over every array's name, dtype, shape and bytes: the prepared inputs' identity."""
    h = hashlib.sha256()
    for k in sorted(a):
        v = np.ascontiguousarray(a[k])
        h.update(f"{k}|{v.dtype}|{v.shape}|".encode())
        h.update(v.tobytes())
    return h.hexdigest()


def prepare_inputs(profile: dict, world_seed: int, workers: int, negatives: Path | None, cache: Path | None):
    """The design's arrays (training_design.prepare) with the frames prepared once for the model (float32,
    resized and standardised), cached in `cache` (a work folder; not committed)."""
    import torch

    from hardneg.models.trainable import TinyTemporal
    from training_world import Data

    if cache is not None and (cache / "meta.json").is_file():
        return Data.load(cache)
    data = prepare(profile, world_seed, workers, negatives)
    tok = TinyTemporal(data.meta["vocabulary"], dim=8, image_size=profile["image_size"])
    for part in ("train", "val", "test"):
        raw = torch.from_numpy(data.a[f"{part}_frames"])
        data.a[f"{part}_frames"] = torch.cat([tok.prepare_frames(raw[i:i + 256]) for i in range(0, len(raw), 256)]).numpy()
    data.meta["fingerprint"] = fingerprint(data.a)
    data.meta["arrays"] = sorted(data.a)
    if cache is not None:
        data.save(cache)
    return data


# ------------------------------------------------------------------------------------ one job


def _bits(x: np.ndarray) -> str:
    return "".join("1" if v else "0" for v in np.asarray(x).tolist())


def _ranks(r: np.ndarray) -> str:
    return "".join("x" if v >= RANK_CAP else str(int(v)) for v in np.asarray(r).tolist())


def retrieval_ranks(net, data, frames, tokens, part: str = "test") -> tuple[np.ndarray, np.ndarray]:
    """Per scene of `part`: the rank of its true caption among all its captions (V2T) and of its video among
    all its videos (T2V), CLS head; 0 = first."""
    import torch
    import torch.nn.functional as F

    from training_design import _encode_text

    net.eval()
    with torch.no_grad():
        v = F.normalize(encode_video(net, frames)[0], dim=-1)
        t = F.normalize(_encode_text(net, tokens, torch.from_numpy(data.a[f"{part}_caption"]).to(v.device)), dim=-1)
        sim = v @ t.T
        out = [(s > s.diag()[:, None]).sum(1).cpu().numpy() for s in (sim, sim.T)]
    net.train()
    return out[0], out[1]


def train_job(data, row: str, seed: int, steps: int, cfg: dict, test_at: str | tuple[int, ...] = "every",
              threads: int = 1) -> dict[str, Any]:
    """Row `row` at `seed` trained alone for `steps` steps (AdamW, the design's batches), validated and scored
    on the test scenes every `eval_every` steps (`test_at="every"`: the pilot) or at the given steps and the
    last (a main job: validating at every step would cost it ~15%).
    Returns the job's record: the curve (step, validation accuracy macro over categories, mean loss) and the
    test scores per scored step (items right as a 0/1 string, retrieval ranks as a digit string)."""
    import torch

    torch.set_num_threads(threads)
    t0 = time.perf_counter()
    dev = cfg.get("device", "cpu")
    net = make_net(data.meta["vocabulary"], seed, cfg, row == "prompt").to(dev)
    opt = torch.optim.AdamW(net.parameters(), lr=cfg["lr"], weight_decay=0.01)
    frames = {p: torch.from_numpy(data.a[f"{p}_frames"]).to(dev) for p in ("train", "val", "test")}
    tokens = torch.from_numpy(data.a["tokens"]).to(dev)
    head = "prompt" if row == "prompt" else "cls"
    E = cfg["eval_every"]
    curve, scores, losses = [], {}, []
    for step in range(steps):
        b = {k: torch.from_numpy(v).to(dev) for k, v in batch_for(data, row, seed, step, cfg).items()}
        loss = step_loss(net, frames["train"], tokens, b, row == "prompt")
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
        done = step + 1
        if done != steps and (done % E if test_at == "every" else done not in test_at):
            continue  # a pilot job validates every `eval_every` steps; a main job at its scored steps only
        right = evaluate(net, data, "val", frames["val"], tokens, head)
        val = macro(right, data.a["val_item_cat"])
        val_cat = {CATEGORIES[c]: x for c, x in _per_cat(right, data.a["val_item_cat"]).items()}
        curve.append({"step": done, "val": round(val, 6), "val_action": round(val_cat.get("action", float("nan")), 6),
                      "loss": round(float(np.mean(losses[-E:])), 6)})
        v2t, t2v = retrieval_ranks(net, data, frames["test"], tokens)  # the test scenes: wherever it validates
        scores[str(done)] = {"test_correct": _bits(evaluate(net, data, "test", frames["test"], tokens, head)),
                             "v2t": _ranks(v2t), "t2v": _ranks(t2v)}
        if "test_posrank" in data.a:  # issue 50: PoSRank's metrics, on validation (the plateau) and test
            curve[-1].update(paper_validation(net, data, frames["val"], tokens, head))
            r = posrank_ranks(net, data, "test", frames["test"], tokens, head)
            scores[str(done)]["posrank"] = {p: _rank36(r[:, k]) for k, p in enumerate(POS)}
    return {"row": row, "seed": seed, "steps": steps, "curve": curve, "scores": scores,
            "seconds": round(time.perf_counter() - t0, 1), "threads": threads}


def _rank36(r: np.ndarray) -> str:
    """Ranks 0..35 as one character each (0 = no negative of that part of speech; PoSRank's ranks are <= 17)."""
    return "".join(RANK36[int(v)] for v in np.asarray(r).tolist())


RANK36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def paper_validation(net, data, frames, tokens, head: str) -> dict[str, float]:
    """The validation scenes' PoSRank (MRR macro over the parts of speech) and mean recall (V2T and T2V,
    R@1/5/10): the curves whose plateaus the pilot finds for those metrics."""
    r = posrank_ranks(net, data, "val", frames, tokens, head)
    mrr = [float(np.mean(1.0 / r[r[:, k] > 0, k])) for k in range(r.shape[1]) if (r[:, k] > 0).any()]
    v2t, t2v = retrieval_ranks(net, data, frames, tokens, "val")
    rec = float(np.mean([(x < k).mean() for x in (v2t, t2v) for k in (1, 5, 10)]))
    return {"val_posrank": round(float(np.mean(mrr)), 6), "val_retrieval": round(rec, 6)}


def _per_cat(correct: np.ndarray, cats: np.ndarray) -> dict[int, float]:
    return {int(c): float(correct[cats == c].mean()) for c in np.unique(cats)}


# ------------------------------------------------------------------------------- the results file


class ResultsFile:
    """The design's results as one gzip JSON, rewritten atomically after every finished job (a cut-off run
    keeps every job it finished; a rerun skips them). Only the parent process writes it."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.body: dict[str, Any] = json.loads(gzip.decompress(self.path.read_bytes())) if self.path.is_file() else {}

    def save(self) -> None:
        from hardneg.io import atomic_write_bytes

        raw = json.dumps(self.body, indent=None, separators=(",", ":"), sort_keys=True, default=float)
        atomic_write_bytes(self.path, gzip.compress(raw.encode(), mtime=0))

    def add(self, job: dict) -> None:
        self.body.setdefault("jobs", {})[f"{job['row']}/{job['seed']}"] = job
        self.save()

    def job(self, row: str, seed: int) -> dict | None:
        return self.body.get("jobs", {}).get(f"{row}/{seed}")


# ------------------------------------------------------------------------------- pilot and plan


def mean_curve(jobs: list[dict], key: str = "val") -> tuple[list[int], np.ndarray, np.ndarray]:
    """(steps, mean over the jobs, SE over the jobs) of a curve field at the steps every job has."""
    steps = sorted(set.intersection(*[{c["step"] for c in j["curve"]} for j in jobs]))
    vals = np.asarray([[next(c[key] for c in j["curve"] if c["step"] == s) for s in steps] for j in jobs], float)
    se = vals.std(0, ddof=1) / math.sqrt(len(jobs)) if len(jobs) > 1 else np.zeros(len(steps))
    return steps, vals.mean(0), se


def plateau(steps: list[int], mean: np.ndarray, se: np.ndarray, window: int) -> tuple[int, bool]:
    """(step, reached): the first validation step s after which the seed-mean validation accuracy stays flat
    within its seed noise until the end of the pilot, over at least `window` further evaluations:
    |mean(s') - mean(s)| <= 2 * noise for every later s', noise = the root-mean-square, over s and the later
    steps, of the seed-level SE of the mean (the SD over the pilot seeds / sqrt(seeds)). `reached` is False
    when no step has `window` evaluations after it that stay flat (the pilot's last step is returned: the
    pilot was too short)."""
    for i in range(len(steps) - window):
        w = slice(i, len(steps))
        noise = float(np.sqrt(np.mean(se[w] ** 2)))
        if np.all(np.abs(mean[w] - mean[i]) <= 2 * noise):
            return steps[i], True
    return steps[-1], False


def pilot_seed_sd(jobs: dict[str, dict], contrast: tuple[str, str, str], step: int) -> tuple[float, list[float]]:
    """The SD over pilot seeds of the per-seed paired difference (row a - row b) on the validation scenes at
    `step` (metric "fine" = the macro validation accuracy, "action" = its action category)."""
    a, b, metric = contrast
    key = "val" if metric == "fine" else f"val_{metric}"
    seeds = sorted({j["seed"] for j in jobs.values() if j["row"] == a} & {j["seed"] for j in jobs.values() if j["row"] == b})

    def at(j):
        return next(c[key] for c in j["curve"] if c["step"] == step)

    d = [at(jobs[f"{a}/{s}"]) - at(jobs[f"{b}/{s}"]) for s in seeds]
    return (float(np.std(d, ddof=1)) if len(d) > 1 else float("nan")), d


def make_plan(profile: dict, jobs: dict[str, dict], data: dict | None = None) -> dict[str, Any]:
    """The plateau (per pilot row, and the latest), the common step count, and the seed count from the pilot.
    With PoSRank's evaluation (issue 50) the seed count comes from the TEST scenes' pilot scores at the common
    step: the crossed random-effects components of each pilot contrast (`training_paper.contrast`), so that the
    detectable effect is at most `TARGET` for every claim (`data`: the results file's data record)."""
    E = profile["eval_every"]
    per_row = {}
    for row in [r for r in profile["pilot_rows"] if r != "shuffled"]:  # the negative control has no plateau to find
        js = [j for j in jobs.values() if j["row"] == row and j["steps"] == profile["pilot_steps"]]
        steps, mean, se = mean_curve(js)
        s, reached = plateau(steps, mean, se, profile["window"])
        per_row[row] = {"plateau": s, "reached": reached, "steps": steps, "mean": mean.round(6).tolist(),
                        "se": se.round(6).tolist()}
    per_metric = {}  # issue 50: every reported metric's own plateau (the negative control has none to find)
    for metric in profile.get("plateau_metrics", []):
        key = "val" if metric == "fine" else f"val_{metric}"
        per_metric[metric] = {}
        for row in [r for r in profile["pilot_rows"] if r != "shuffled"]:
            js = [j for j in jobs.values() if j["row"] == row and j["steps"] == profile["pilot_steps"]]
            steps, mean, se = mean_curve(js, key)
            s, reached = plateau(steps, mean, se, profile["window"])
            per_metric[metric][row] = {"plateau": s, "reached": reached, "mean": mean.round(6).tolist(),
                                       "se": se.round(6).tolist()}
    found = [r for r in per_row.values()] + [r for m in per_metric.values() for r in m.values()]
    step = max(max(r["plateau"] for r in found), profile["min_steps"])
    step = int(math.ceil(step / E) * E)
    m = len(profile["primary"])
    sds = {}
    for c in profile["pilot_contrasts"]:
        sd, d = pilot_seed_sd(jobs, tuple(c), step)
        sds[f"{c[0]} vs {c[1]} ({c[2]})"] = {"sd": sd, "differences": d,
                                              "seeds_needed": seeds_needed(sd, TARGET, m, most=profile["max_seeds"] * 10)}
    if profile.get("posrank_eval"):
        from training_paper import contrast

        pilot = {"jobs": jobs, "plan": {"target": TARGET}, "data": data or {}}
        for c in profile["pilot_contrasts"]:
            got = contrast(pilot, c[0], c[1], c[2], m, step)
            sds[f"{c[0]} vs {c[1]} ({c[2]}), test scenes, crossed"] = {
                "sd": float(math.sqrt(got["s2_seed"] + got["s2_seed_scene"] / max(1, len(pilot["data"].get("test_item_cat", [1]))))),
                "differences": [], "seeds_needed": got["seeds_for_target"], "mde_now": got["mde"], "test": True}
    # the test scenes' crossed entries decide when there are any (issue 50); the validation SD otherwise
    need = max(v["seeds_needed"] for v in sds.values() if v.get("test") or not profile.get("posrank_eval"))
    seeds = int(min(max(need, profile["seeds"]), profile["max_seeds"]))
    seeds = int(math.ceil(seeds / WAVE) * WAVE) if profile["max_seeds"] >= WAVE else seeds
    seeds = min(seeds, profile["max_seeds"])
    curve_steps = sorted({int(math.ceil(step * f / 3 / E) * E) for f in (1, 2, 3)})
    extra = {"plateau_per_metric": per_metric} if per_metric else {}
    return {**extra, "plateau_per_row": per_row, "steps": step, "reached": all(r["reached"] for r in found),
            "curve_steps": curve_steps, "pilot_sd": sds, "seeds_needed": need, "target": TARGET, "m": m,
            "seeds": seeds, "secondary_seeds": min(profile["secondary_seeds"], seeds)}


# ------------------------------------------------------------------------------------ the driver


_DATA = None


def _init(folder: str, threads: int) -> None:
    global _DATA
    import torch

    from training_world import Data

    torch.set_num_threads(threads)
    _DATA = Data.load(Path(folder))


def _run(args: tuple) -> dict:
    row, seed, steps, cfg, test_at, threads = args
    return train_job(_DATA, row, seed, steps, cfg, test_at, threads)


def default_jobs() -> int:
    n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, n)


def run_jobs(todo: list[tuple], data_dir: Path, results: ResultsFile, jobs: int, threads: int, log) -> None:
    """Run `todo` (row, seed, steps, cfg, test_at) on `jobs` processes, adding each record as it finishes."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    if not todo:
        return
    with ProcessPoolExecutor(min(jobs, len(todo)), mp_context=mp.get_context("spawn"), initializer=_init,
                             initargs=(str(data_dir), threads)) as pool:
        futures = {pool.submit(_run, (*t, threads)): t for t in todo}
        for f in as_completed(futures):
            rec = f.result()
            results.add(rec)
            last = rec["curve"][-1]
            log(f"  {rec['row']} seed {rec['seed']}: {rec['steps']} steps in {rec['seconds']}s, "
                f"val {100 * last['val']:.1f}% ({len(results.body['jobs'])} jobs done)")


def design_record(profile_name: str, profile: dict, world_seed: int) -> dict:
    import torch

    return {"design": "equal steps, one model per job (issue 43)", "profile_name": profile_name, "profile": profile,
            "world_seed": world_seed, "primary_declared": [list(p) for p in PRIMARY if list(p[:3]) in profile["primary"]],
            "lambda": 0.2, "versions": {"torch": torch.__version__, "numpy": np.__version__}}


def main_jobs(body: dict) -> list[tuple[str, int]]:
    """(row, seed) of the main design in run order: first the two claims' rows (`claim_rows`) seed by seed to
    the planned count; then seed by seed the other primary rows, and the secondary rows while the seed is below
    the secondary seed count (so the other rows are balanced whenever a run stops)."""
    plan, prof = body["plan"], body["profile"]
    first = [r for r in prof["rows"] if r in prof.get("claim_rows", [])]
    out = [(r, s) for s in range(plan["seeds"]) for r in first]
    for s in range(plan["seeds"]):
        out += [(r, s) for r in prof["rows"] if r not in first]
        if s < plan["secondary_seeds"]:
            out += [(r, s) for r in prof["secondary_rows"]]
    return out


def run(profile_name: str, results_path: Path, work: Path, world_seed: int = 0, workers: int = 1,
        jobs: int | None = None, negatives: Path | None = None, device: str = "cpu", log=print,
        max_jobs: int | None = None) -> int:
    """Pilot, plan, then the main jobs; everything added to `results_path` as it finishes. Returns 0 when the
    design is complete, 3 when `max_jobs` stopped it early (rerun the same command to continue)."""
    import torch

    profile = dict(PROFILES[profile_name])
    results = ResultsFile(results_path)
    if results.body:
        if results.body.get("profile") != profile:
            raise SystemExit(f"error: {results_path} was made with another profile ({results.body.get('profile_name')}); "
                             "choose another results file")
    else:
        results.body = design_record(profile_name, profile, world_seed)
        results.body["jobs"] = {}
    threads = 1 if device == "cpu" else max(1, torch.get_num_threads())
    jobs = jobs or default_jobs()
    t0 = time.perf_counter()
    data = prepare_inputs(profile, world_seed, workers, negatives, work / "data")
    fp = results.body.setdefault("data", {"fingerprint": data.meta["fingerprint"], "n_texts": data.meta["n_texts"],
                                          "masked_unknown": data.meta["masked_unknown"],
                                          "rewrite_labels": data.meta["rewrite_labels"],
                                          "generators": data.meta["generators"],
                                          "test_item_cat": data.a["test_item_cat"].tolist(),
                                          "test_item_candidates": (data.a["test_item_cand"] >= 0).sum(1).tolist(),
                                          "val_items": int(len(data.a["val_item_cat"])),
                                          "sizes": {p: int(len(data.a[f"{p}_caption"])) for p in ("train", "val", "test")}})
    if "test_posrank" in data.a and "test_posrank_candidates" not in fp:  # PoSRank's chance (issue 50)
        fp["test_posrank_candidates"] = (data.a["test_posrank"] >= 0).sum(2).tolist()
    if "test_posrank" in data.a and "test_posrank_blind" not in fp:  # a video-blind scorer's PoSRank^p (issue 50)
        from training_chance import posrank_blind_chance

        fp["test_posrank_blind"] = posrank_blind_chance(data.a["tokens"], data.a["test_caption"], data.a["test_posrank"])
    if fp["fingerprint"] != data.meta["fingerprint"]:
        raise SystemExit(f"error: the prepared inputs in {work / 'data'} differ from those of {results_path} "
                         "(fingerprint); delete that folder so that they are prepared again")
    results.body.setdefault("device", device if device != "cpu" else f"cpu ({threads} thread per job, {jobs} jobs)")
    results.save()
    log(f"inputs ready in {time.perf_counter() - t0:.0f}s ({work / 'data'})")
    cfg = {**profile, "device": device}
    budget = [max_jobs if max_jobs is not None else 1 << 30]

    def take(todo):
        n = min(len(todo), budget[0])
        budget[0] -= n
        return todo[:n]

    pilot = [(r, s, profile["pilot_steps"], cfg, "every") for s in range(profile["pilot_seeds"])
             for r in profile["pilot_rows"] if results.job(r, s) is None]
    run_jobs(take(pilot), work / "data", results, jobs, threads, log)
    if any(results.job(r, s) is None for s in range(profile["pilot_seeds"]) for r in profile["pilot_rows"]):
        return 3
    if "plan" not in results.body:
        results.body["plan"] = make_plan(profile, results.body["jobs"], results.body["data"])
        results.save()
        p = results.body["plan"]
        log(f"plan: plateau at step {p['steps']} (reached: {p['reached']}), seeds needed {p['seeds_needed']}, "
            f"planned {p['seeds']} (secondary rows {p['secondary_seeds']})")
    plan = results.body["plan"]
    todo = [(r, s, plan["steps"], cfg, tuple(plan["curve_steps"])) for r, s in main_jobs(results.body)
            if results.job(r, s) is None]
    run_jobs(take(todo), work / "data", results, jobs, threads, log)
    left = [1 for r, s in main_jobs(results.body) if results.job(r, s) is None]
    return 3 if left else 0


def reproduce(results_path: Path, work: Path, pairs: list[tuple[str, int]], upto: int | None = None,
              workers: int = 1, negatives: Path | None = None, log=print) -> list[str]:
    """Retrain the stored jobs `pairs` (to `upto` steps, or their full length) and compare every stored number
    up to that step bit for bit (validation curve, test items, retrieval ranks). Returns the mismatches."""
    body = ResultsFile(results_path).body
    profile = body["profile"]
    data = prepare_inputs(profile, body["world_seed"], workers, negatives, work / "data")
    bad = []
    if data.meta["fingerprint"] != body["data"]["fingerprint"]:
        bad.append(f"inputs: fingerprint {data.meta['fingerprint'][:12]} != stored {body['data']['fingerprint'][:12]}")
        return bad
    cfg = {**profile, "device": "cpu"}
    for row, seed in pairs:
        stored = body["jobs"][f"{row}/{seed}"]
        n = min(upto or stored["steps"], stored["steps"])
        want = [s for s in map(int, stored["scores"]) if s <= n]
        E = profile["eval_every"]
        grid = list(range(E, stored["steps"] + 1, E)) + ([stored["steps"]] if stored["steps"] % E else [])
        every = [c["step"] for c in stored["curve"]] == grid  # a pilot job: validated at every eval_every steps
        got = train_job(data, row, seed, n, cfg, "every" if every else tuple(want), threads=1)
        for c_got, c_want in zip(got["curve"], [c for c in stored["curve"] if c["step"] <= n]):
            if c_got != c_want and not (c_got["step"] == n and n != stored["steps"] and n % profile["eval_every"]):
                bad.append(f"{row}/{seed} step {c_want['step']}: curve {c_got} != stored {c_want}")
        for s in want:
            if got["scores"].get(str(s)) != stored["scores"][str(s)]:
                bad.append(f"{row}/{seed} step {s}: test scores differ from the stored ones")
        log(f"  {row} seed {seed}: {n} steps retrained, {len(want)} scored steps compared")
    return bad
