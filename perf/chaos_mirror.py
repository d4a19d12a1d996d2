"""Chaos run of several boards on one results repo against an unreliable Hub (issues 42 and 49): nothing
acknowledged is lost or doubled, nothing refused is stored, no version is taken twice.

`--writers` board processes (default 2: two replicas of a Space, or two boards run by mistake) share one repo of
the stand-in Hub (tests/leaderboard/fakehub.py, its repo in a folder, compare-and-swap across processes). Each makes
submissions (8 shared model names, so the writers race for the same versions) and moderations (hides, restores,
deletes) while the Hub fails a share of every kind of call (`--fail`, default 20%; half the failing commits land
and lose their reply), lets a share of commits land after the client timed out (`--late`, default 10%, landing
`--late-s` later), and answers `file_exists` late (`--lag`). Each board is killed (SIGKILL) at random moments
(`--kills` per writer; a third of them, where the draw allows, while it restores at start-up), and its disk wiped
each time; a new process starts on an empty store, restores from the repo and goes on with the operation that was
in flight (a retry of the same file or moderation until it is acknowledged). At the end a board on a fresh disk and
a reliable Hub restores the repo, and the run checks: every acknowledged submission is in the repo exactly once and
on the board exactly once; every acknowledged moderation's tombstone is in the repo, once, with its action; no
(model, part, version) is held twice; every submission refused as "nothing was stored" is absent; each
submission's state on the board is the last moderation of the repo's commit history. Prints the counts; exit 1 on
any mismatch.

    PYTHONPATH=src python3 perf/chaos_mirror.py                                  # 2 writers x 100 operations
    PYTHONPATH=src python3 perf/chaos_mirror.py --writers 2 --ops 16 --kills 1   # the test suite's size
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HELPERS = REPO / "tests" / "leaderboard"
RESULTS_REPO = "org/results"
PARTS = [("feint6k", "msrvtt", "test"), ("feint6k", "vatex", "test"), ("contrast_sets", "gender", "test")]


def plan(n_ops: int, seed: int, seed_base: int = 0) -> list[dict]:
    """The operations: ~80% submissions (8 models, 3 parts, a new file each), ~20% moderations of an earlier
    acknowledged submission (picked by the board process from what was acknowledged: `pick`)."""
    rng = random.Random(seed)
    ops = []
    for i in range(n_ops):
        if i > 5 and rng.random() < 0.2:
            ops.append({"kind": "moderate", "action": rng.choice(["hide", "restore", "hide", "delete"]),
                        "pick": rng.random()})
        else:
            ops.append({"kind": "submit", "model": f"org/m{rng.randrange(8)}", "part": rng.randrange(len(PARTS)),
                        "seed": seed_base + i})
    return ops


# --- the board process ---------------------------------------------------------------------------------------------
def child(args) -> int:
    sys.path.insert(0, str(HELPERS))
    from fakehub import FakeHub
    from helpers import ALICE

    from hardneg.leaderboard import Leaderboard, load_benchmarks
    from hardneg.leaderboard.example import predictions_bytes
    from hardneg.leaderboard.mirror import HubMirror, PublishPolicy

    os.environ["HARDNEG_ADMIN_TOKEN"] = "tok"
    Leaderboard.restore_retry_s = (0.1, 0.5)
    ops = json.loads(Path(args.plan).read_text())
    acked = [json.loads(line) for line in Path(args.acked).read_text().splitlines() if line.strip()]
    subs = [a["id"] for a in acked if a["kind"] == "submit"]
    hub = FakeHub(root=args.hub, fail_rate=args.fail, seed=args.seed, late_rate=args.late, late_s=args.late_s,
                  lag_s=args.lag)
    item_sets = load_benchmarks(args.benchmarks)
    print(json.dumps({"restoring": True}), flush=True)
    board = Leaderboard(args.store, item_sets, n_resamples=20, compute_blind=False,
                        mirror=HubMirror(RESULTS_REPO, api=hub, policy=PublishPolicy(tries=4, backoff_s=0.02)))
    while board._restore_error is not None:  # the background restore retries until the Hub answers
        time.sleep(0.05)
    print(json.dumps({"started": True}), flush=True)
    for i in range(args.start, len(ops)):
        op, out, last = ops[i], None, ""
        for _ in range(20):  # the same operation again until acknowledged (a retry never doubles it)
            if op["kind"] == "submit":
                part = tuple(PARTS[op["part"]])
                res = board.submit(predictions_bytes(item_sets[part], op["model"], seed=op["seed"]), ALICE)
                last = res.message
                if res.ok and "stored" in res.message:
                    s = res.submission
                    out = {"op": i, "kind": "submit", "id": s.id, "model": s.model_id, "version": s.version,
                           "part": [s.benchmark, s.config, s.split]}
                    break
            else:
                if not subs:
                    out = {"op": i, "kind": "skip"}
                    break
                target = subs[int(op["pick"] * len(subs))]
                msg = last = board.moderate("tok", target, op["action"], f"chaos op {i}")
                if msg.startswith(f"{op['action']}: 1 submission"):
                    out = {"op": i, "kind": "moderate", "id": target, "action": op["action"],
                           "path": board.writer._last_tombstone(target)}
                    break
            time.sleep(0.05)
        if out is None:  # never acknowledged: "nothing was stored" (known) or "may still land" (unknown)
            out = {"op": i, "kind": "refused", "known": "nothing was stored" in last, "seed": op.get("seed"),
                   "model": op.get("model"), "part": op.get("part")}
        if out["kind"] == "submit":
            subs.append(out["id"])
        print(json.dumps(out), flush=True)
    board.close()
    return 0


# --- the parent: kills, wipes, restarts, checks ----------------------------------------------------------------------
def drive(w: int, tmp: Path, bench: Path, cfg: dict, rng: random.Random, acked: list, lock: threading.Lock) -> dict:
    """One writer: its board process started, killed (disk wiped) and started again until its plan is done."""
    n_ops, kills = cfg["ops"], cfg["kills"]
    (tmp / f"plan{w}.json").write_text(json.dumps(plan(n_ops, cfg["seed"] * 1000 + w, seed_base=w * 100000)))
    acked_file = tmp / f"acked{w}.jsonl"
    acked_file.write_text("")
    start_kills = kills // 3  # killed while it restores at start-up (before it takes operations)
    kill_at = set(rng.sample(range(2, n_ops - 2), kills - start_kills))
    stats = {"restarts": 0, "killed": 0, "start_kills": 0, "refused": [], "unknown": 0}
    next_op = 0
    while next_op < n_ops:
        store = tmp / f"store{w}"
        cmd = [sys.executable, __file__, "--child", "--plan", str(tmp / f"plan{w}.json"), "--acked", str(acked_file),
               "--hub", str(tmp / "hub"), "--store", str(store), "--benchmarks", str(bench),
               "--start", str(next_op), "--fail", str(cfg["fail"]), "--late", str(cfg["late"]),
               "--late-s", str(cfg["late_s"]), "--lag", str(cfg["lag"]), "--seed", str(rng.randrange(1 << 30))]
        with open(tmp / f"board{w}.log", "a") as log:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True,
                                    env={**os.environ, "TMPDIR": str(tmp / "t")})
        stats["restarts"] += 1
        kill, started, early, timer = False, threading.Event(), {"killed": False}, None

        def kill_early(proc=proc, started=started, early=early):
            if not started.is_set() and proc.poll() is None:
                early["killed"] = True
                proc.send_signal(signal.SIGKILL)

        for line in proc.stdout:
            msg = json.loads(line)
            if msg.get("restoring") and start_kills and next_op > 0:  # mid-way through the restore
                timer = threading.Timer(rng.uniform(0.02, 0.4), kill_early)
                timer.start()
            if "op" not in msg:
                started.set() if msg.get("started") else None
                continue
            next_op = msg["op"] + 1
            if msg["kind"] in ("submit", "moderate"):
                with lock:
                    acked.append({**msg, "writer": w})
                with open(acked_file, "a") as f:
                    f.write(json.dumps(msg) + "\n")
            if msg["kind"] == "refused":
                stats["refused"].append(msg) if msg["known"] else None
                stats["unknown"] += not msg["known"]
            if msg["op"] in kill_at:
                kill_at.discard(msg["op"])
                time.sleep(rng.uniform(0, 0.15))  # mid-way through the next operation
                proc.send_signal(signal.SIGKILL)
                kill = True
                break
        proc.wait()
        if timer is not None:
            timer.cancel()
            timer.join()
        if early["killed"]:
            start_kills -= 1
            stats["start_kills"] += 1
            kill = True
        if kill:
            stats["killed"] += 1
            shutil.rmtree(store, ignore_errors=True)  # the disk is wiped with each kill
        elif proc.returncode != 0:
            raise SystemExit(f"board process {w} failed (exit {proc.returncode}); see its log:\n"
                             + (tmp / f"board{w}.log").read_text()[-3000:])
    return stats


def run(n_ops: int, kills: int, fail: float, seed: int, quiet: bool = False, writers: int = 2, late: float = 0.1,
        late_s: float = 0.3, lag: float = 2.0) -> dict:
    """`writers` boards, `n_ops` operations and `kills` kills each; returns the counts ("problem list": every
    mismatch)."""
    sys.path.insert(0, str(HELPERS))
    from fakehub import FakeHub
    from helpers import write_benchmarks

    from hardneg.leaderboard import Leaderboard, load_benchmarks
    from hardneg.leaderboard.mirror import HubMirror, derive_id
    from hardneg.leaderboard.writer import TARGET
    from hardneg.leaderboard.example import predictions_bytes

    cfg = {"ops": n_ops, "kills": kills, "fail": fail, "seed": seed, "late": late, "late_s": late_s, "lag": lag}
    with tempfile.TemporaryDirectory(prefix="hardneg-chaos-") as tmp:
        tmp = Path(tmp)
        bench = write_benchmarks(tmp / "benchmarks")
        (tmp / "t").mkdir()
        acked: list[dict] = []
        lock = threading.Lock()
        results: dict[int, dict] = {}
        errors: list[BaseException] = []
        t0 = time.perf_counter()

        def one(w):
            try:
                results[w] = drive(w, tmp, bench, cfg, random.Random(seed * 7919 + w), acked, lock)
            except BaseException as exc:  # noqa: BLE001 (reported below)
                errors.append(exc)

        threads = [threading.Thread(target=one, args=(w,)) for w in range(writers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        took = time.perf_counter() - t0
        # --- the checks: a fresh disk, a reliable Hub ----------------------------------------------------------
        hub = FakeHub(root=tmp / "hub")
        files = hub.files.get(RESULTS_REPO, {})
        repo = hub._repos[RESULTS_REPO]
        records = [json.loads(d) for p, d in files.items() if p.startswith("submissions/") and p.endswith(".json")]
        tomb_paths = sorted((p for p in files if p.startswith("tombstones/")), key=lambda p: (repo.last[p], p))
        item_sets = load_benchmarks(bench)
        final = Leaderboard(tmp / "final", item_sets, n_resamples=20, compute_blind=False,
                            mirror=HubMirror(RESULTS_REPO, api=hub))
        final.close()
        left = [p.name for p in (tmp / "t").glob("hardneg-mirror-*")] + [
            p.name for p in Path(tempfile.gettempdir()).glob(f"hardneg-mirror-{os.getpid()}-*")]
        on_board = Counter(s.id for s in final.store.all_submissions())
        in_repo = Counter(r["id"] for r in records)
        versions = Counter((r["model_id"], r["benchmark"], r["config"], r["split"], r["version"]) for r in records)
        subs = [a for a in acked if a["kind"] == "submit"]
        mods = [a for a in acked if a["kind"] == "moderate"]
        problems = [f"temporary folder left: {n}" for n in left]
        ids = {a["id"] for a in subs}
        for i in ids:
            if in_repo[i] != 1 or on_board[i] != 1:
                problems.append(f"submission {i}: {in_repo[i]} in the repo, {on_board[i]} on the board")
        problems += [f"{k} held {n} times" for k, n in versions.items() if n > 1]
        problems += [f"record {i} held {n} times" for i, n in in_repo.items() if n > 1]
        for m in mods:
            if m.get("path") is None and m["action"] == "restore":  # visible already: nothing to store
                continue
            body = json.loads(files[m["path"]]) if m.get("path") in files else {}
            if body.get("submission_id") != m["id"] or TARGET.get(body.get("action")) != TARGET[m["action"]]:
                problems.append(f"moderation {m['action']} of {m['id']}: its tombstone {m.get('path')} holds {body}")
        refused = [r for w in results.values() for r in w["refused"]]
        for r in refused:  # told "nothing was stored": absent
            part = PARTS[r["part"]]
            sha = __import__("hashlib").sha256(predictions_bytes(item_sets[part], r["model"], seed=r["seed"])).hexdigest()
            if derive_id(r["model"], *part, sha) in in_repo:
                problems.append(f"operation {r['op']} was refused as not stored, and the repo holds it")
        last = {}
        for p in tomb_paths:
            t = json.loads(files[p])
            last[t["submission_id"]] = t["action"]
        wrong = 0
        for i, action in last.items():
            if i not in on_board:
                continue
            state = final.store.get(i).state
            if state != ("visible" if action == "restore" else action):
                wrong += 1
                problems.append(f"submission {i}: state {state} on the board, last moderation in the repo {action}")
        acked_paths = {m.get("path") for m in mods}
        counts = {
            "writers": writers, "operations": n_ops * writers,
            "acknowledged submissions": len(subs), "acknowledged moderations": len(mods),
            "refused as not stored (known)": len(refused),
            "left unknown after 20 tries": sum(w["unknown"] for w in results.values()),
            "kills (disk wiped)": sum(w["killed"] for w in results.values()),
            "kills during a start-up restore": sum(w["start_kills"] for w in results.values()),
            "board starts": sum(w["restarts"] for w in results.values()),
            "repo commits": len(repo.commits), "repo records": len(records), "repo tombstones": len(tomb_paths),
            "board rows after a fresh restore": sum(on_board.values()),
            "lost (acknowledged, not in the repo or not on the board exactly once)":
                sum(in_repo[i] != 1 or on_board[i] != 1 for i in ids),
            "duplicated (a record or a (model, part, version) twice)":
                sum(n > 1 for n in versions.values()) + sum(n > 1 for n in in_repo.values()),
            "wrong states": wrong,
            "records not acknowledged (landed while their board was killed)": len(set(in_repo) - ids),
            "tombstones not acknowledged (landed while their board was killed)": len(set(tomb_paths) - acked_paths),
            "restore skipped": len(final.mirror.report.get("skipped", [])),
            "temporary restore folders left": len(left),
            "problems": len(problems), "seconds": round(took, 1),
        }
        if not quiet:
            for k, v in counts.items():
                print(f"{k}: {v}")
            for p in problems[:20]:
                print("PROBLEM:", p)
        counts["problem list"] = problems
        return counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--writers", type=int, default=2, help="board processes on the one repo")
    ap.add_argument("--ops", type=int, default=100, help="operations per writer")
    ap.add_argument("--kills", type=int, default=5, help="kills (disk wiped) per writer")
    ap.add_argument("--fail", type=float, default=0.2, help="share of Hub calls that fail")
    ap.add_argument("--late", type=float, default=0.1, help="share of commits that land after the client timed out")
    ap.add_argument("--late-s", type=float, default=0.3, help="how long after the timeout a late commit lands")
    ap.add_argument("--lag", type=float, default=2.0, help="seconds file_exists lags behind a commit")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    for flag in ("--plan", "--acked", "--hub", "--store", "--benchmarks"):
        ap.add_argument(flag, help=argparse.SUPPRESS)
    ap.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)
    counts = run(args.ops, args.kills, args.fail, args.seed, writers=args.writers, late=args.late, late_s=args.late_s,
                 lag=args.lag)
    return 1 if counts["problems"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
