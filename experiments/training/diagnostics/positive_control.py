"""Issue 50: the positive control where the effect must appear if the pipeline works, run over seeds.

The controls profile's positive control (world word-level vs coarse, free batches, a tower from scratch) showed no
effect; the probes beside this file found why (docs/training.md, "Why the positive control fails"): in free
batches the coarse term already teaches every slot the tower can see (our world lacks PoSRank's premise that coarse
captions carry no fine-grained difference), and the from-scratch 16 px tower cannot see most slots, whose negatives
then only teach the text tower which texts are true. This control builds the paper's conditions in:

* PoSRank's premise: every batch is drawn from scenes sharing both colours (`fine_term_probe.py --group adj`), so
  the coarse term's in-batch captions never differ in colour;
* a video tower that sees the slot, as the paper's CLIP does: per seed, the tower is first trained on every slot's
  word directly (`perception_probe.pretrain`, 3,000 steps), then both arms start from it;
* Eq. 3's negatives of that slot only (adjectives; the others are masked out), lambda 1, N = 1 (the design's).

Arms at equal steps from the same seed's tower: coarse only; + Eq. 3 as printed; + Eq. 3 with the positive in its
denominator (bounded); and, to show the last condition matters, + Eq. 3 as printed with all five parts of speech.
Primary metric (declared before the run): adjective PoSRank (MRR over the 1,000 test scenes) at the last step.
Primary family: the two adjective-only arms vs coarse, Holm over 2, crossed random-effects SE over seeds x scenes
(`training_stats.crossed_test`), two-sided alpha 0.05. Seeds: 8, from the 3-seed pilot's per-seed SD of 3.4 points
(detectable effect about 4.5 points at 80% power).

    OMP_NUM_THREADS=1 python experiments/training/diagnostics/positive_control.py            # run (resumable)
    python experiments/training/diagnostics/positive_control.py --report                     # the tables only

Results: experiments/training/results/positive_control.json.gz (per job: per-step PoSRank and the test scenes'
reciprocal ranks); the per-seed towers and jobs are cached in $PROBE_WORK/positive_control (not committed).
"""
import argparse
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

RESULTS = HERE.parent / "results" / "positive_control.json.gz"
SLOT, POS_INDEX = "adj", 1  # the slot the tower is taught to see; its index in training_design.POS

#: (name, label, fine_term_probe arguments beyond the shared ones)
ARMS = (("coarse", "coarse only", {"lam": 0.0, "only": SLOT}),
        ("printed", "+ Eq. 3 as printed, adjective negatives", {"lam": 1.0, "only": SLOT}),
        ("bounded", "+ Eq. 3 with the positive (bounded), adjective negatives", {"lam": 1.0, "only": SLOT,
                                                                                "withpos": True}),
        ("all-pos", "+ Eq. 3 as printed, all five parts of speech (secondary)", {"lam": 1.0, "only": None}))
PRIMARY = ("printed", "bounded")


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--steps", type=int, default=3000, help="training steps of every arm (scored 3 times)")
    ap.add_argument("--pretrain", type=int, default=3000, help="steps of the tower's direct training per seed")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes (1 torch thread each)")
    ap.add_argument("--report", action="store_true", help="print the tables from the results file, train nothing")
    ap.add_argument("--out", type=Path, default=RESULTS, help="the results file (default: the committed one)")
    return ap.parse_args()


def work_dir() -> Path:
    from probe_world import WORK

    return WORK / "positive_control"


def tower(seed: int, steps: int) -> Path:
    """The seed's tower trained to see every slot (cached)."""
    import torch
    from perception_probe import SLOTS, pretrain
    from probe_world import frames_at, load_world

    path = work_dir() / f"tower{seed}-{steps}.pt"
    if not path.is_file():
        d = load_world()
        logs = []
        net = pretrain(d, frames_at(d, 16), sorted(SLOTS), (16, steps, seed), logs.append)
        tmp = path.with_suffix(".tmp")
        torch.save(net.state_dict(), tmp)
        os.replace(tmp, path)
        (path.with_suffix(".json")).write_text(json.dumps(logs))
    return path


def job(key: tuple[int, str, int, int]) -> dict:
    """One arm of one seed: trained from the seed's tower; its record (cached as JSON)."""
    import torch

    torch.set_num_threads(1)
    seed, arm, steps, pre = key
    out = work_dir() / f"{arm}-s{seed}-{steps}-{pre}.json"
    if out.is_file():
        return json.loads(out.read_text())
    from fine_term_probe import train
    from probe_world import frames_at, load_world

    start = tower(seed, pre)
    d = load_world()
    extra = dict(ARMS[[a[0] for a in ARMS].index(arm)][2])
    a = SimpleNamespace(n=2000, size=16, dim=16, coarse=1.0, steps=steps, lr=1e-3, batch=8, N=1, seed=seed,
                        evals=3, group=SLOT, load=str(start), save=None, step0=0, pool="mean", split=False,
                        tag=f"{arm}-s{seed}", withpos=extra.pop("withpos", False), **extra)
    logs = []
    train(a, d, frames_at(d, 16), logs.append)
    rec = {"seed": seed, "arm": arm, "steps": steps, "pretrain": pre,
           "evals": [{k: v for k, v in r.items() if k != "test_rr"} for r in logs],
           "test_rr": np.round(logs[-1]["test_rr"], 6).tolist()}
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(rec))
    os.replace(tmp, out)
    return rec


def save(records: list[dict], settings: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    import gzip

    tmp = path.with_name(path.name + ".tmp")
    # mtime 0: the same results give the same bytes
    tmp.write_bytes(gzip.compress(json.dumps({"settings": settings, "jobs": records}, separators=(",", ":")).encode(),
                                  mtime=0))
    os.replace(tmp, path)


def report(path: Path = RESULTS) -> str:
    """The control's tables, from the results file alone (the renderer docs/training.md's block uses)."""
    import gzip

    from training_paper import positive_control_block

    return positive_control_block(json.loads(gzip.decompress(path.read_bytes())))


def settings_of(a) -> dict:
    """What the results file declares: every arm's name and label, the primary family, the slot, the sizes."""
    return {"seeds": a.seeds, "steps": a.steps, "pretrain": a.pretrain, "slot": SLOT, "pos_index": POS_INDEX, "N": 1,
            "lam": 1.0, "arms": [[name, label] for name, label, _ in ARMS], "primary": list(PRIMARY)}


def main():
    a = parse_args()
    if a.seeds < 2 or a.steps < 3 or a.pretrain < 3:
        raise SystemExit("error: --seeds needs at least 2 (the test is paired over seeds), --steps and --pretrain at "
                         "least 3 (each is scored 3 times)")
    if a.report:
        if not a.out.is_file():
            raise SystemExit(f"error: no results file at {a.out}: run this script without --report first")
        print(report(a.out))
        return
    work_dir().mkdir(parents=True, exist_ok=True)
    from probe_world import frames_at, load_world

    frames_at(load_world(), 16)  # prepared once, before the workers read it
    keys = [(seed, arm, a.steps, a.pretrain) for seed in range(a.seeds) for arm, _, _ in ARMS]
    records = []
    with ProcessPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        list(pool.map(tower, range(a.seeds), [a.pretrain] * a.seeds))  # every seed's tower before its arms
        for rec in pool.map(job, keys):
            records.append(rec)
            last = rec["evals"][-1]
            print(json.dumps({"seed": rec["seed"], "arm": rec["arm"], "test_posrank": last["test_posrank"],
                              "coarse": last["coarse"], "eq3": last["eq3"], "s": last["s"]}), flush=True)
            save(records, settings_of(a), a.out)
    print(report(a.out))


if __name__ == "__main__":
    main()
