"""Chaos run of the board against an unreliable Hub (issue 42): nothing acknowledged is lost or doubled.

A board process makes submissions and moderations (hides, restores, deletes) while the stand-in Hub
(tests/leaderboard/fakehub.py, its repo in a folder) fails a share of every kind of call (`--fail`, default 20%;
half the failing commits land and lose their reply). The board is killed (SIGKILL) at random moments `--kills`
times (a third of them, where the draw allows, while it restores at start-up), and its disk wiped each time; a new board process starts on an empty store, restores from the repo and
goes on with the operation that was in flight. At the end a board on a fresh disk and a reliable Hub restores the
repo, and the run checks: every acknowledged submission is in the repo exactly once and on the board exactly once;
every acknowledged moderation is in the repo exactly once and on the board; no (model, part, version) is held
twice; each submission's state is its last acknowledged moderation's. Prints the counts; exit 1 on any mismatch.

    PYTHONPATH=src python3 perf/chaos_mirror.py                       # 200 operations, 10 kills, 20% failures
    PYTHONPATH=src python3 perf/chaos_mirror.py --ops 60 --kills 3    # the slow test's size
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


def plan(n_ops: int, seed: int) -> list[dict]:
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
                        "seed": i})
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
    hub = FakeHub(root=args.hub, fail_rate=args.fail, seed=args.seed)
    item_sets = load_benchmarks(args.benchmarks)
    print(json.dumps({"restoring": True}), flush=True)
    board = Leaderboard(args.store, item_sets, n_resamples=20, compute_blind=False,
                        mirror=HubMirror(RESULTS_REPO, api=hub, policy=PublishPolicy(tries=4, backoff_s=0.02)))
    while board._restore_error is not None:  # the background restore retries until the Hub answers
        time.sleep(0.05)
    print(json.dumps({"started": True}), flush=True)
    for i in range(args.start, len(ops)):
        op, out = ops[i], None
        for _ in range(20):  # the same operation again until acknowledged (a retry never doubles it)
            if op["kind"] == "submit":
                part = tuple(PARTS[op["part"]])
                res = board.submit(predictions_bytes(item_sets[part], op["model"], seed=op["seed"]), ALICE)
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
                msg = board.moderate("tok", target, op["action"], f"chaos op {i}")
                if msg.startswith(f"{op['action']}: 1 submission"):
                    seq = board.store._query("SELECT MAX(seq) FROM tombstones WHERE submission_id = ?", (target,))[0][0]
                    out = {"op": i, "kind": "moderate", "id": target, "action": op["action"], "seq": seq}
                    break
            time.sleep(0.05)
        if out is None:
            out = {"op": i, "kind": "refused"}
        if out["kind"] == "submit":
            subs.append(out["id"])
        print(json.dumps(out), flush=True)
    board.close()
    return 0


# --- the parent: kills, wipes, restarts, checks ----------------------------------------------------------------------
def run(n_ops: int, kills: int, fail: float, seed: int, quiet: bool = False) -> dict:
    sys.path.insert(0, str(HELPERS))
    from fakehub import FakeHub
    from helpers import write_benchmarks

    from hardneg.leaderboard import Leaderboard, load_benchmarks
    from hardneg.leaderboard.mirror import HubMirror

    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="hardneg-chaos-") as tmp:
        tmp = Path(tmp)
        bench = write_benchmarks(tmp / "benchmarks")
        (tmp / "plan.json").write_text(json.dumps(plan(n_ops, seed)))
        acked_file = tmp / "acked.jsonl"
        acked_file.write_text("")
        start_kills = kills // 3  # killed while it restores at start-up (before it takes operations)
        kill_at = set(rng.sample(range(2, n_ops - 2), kills - start_kills))
        (tmp / "t").mkdir()
        acked: list[dict] = []
        next_op, restarts, killed, refused = 0, 0, 0, 0
        t0 = time.perf_counter()
        while next_op < n_ops:
            store = tmp / "store"
            cmd = [sys.executable, __file__, "--child", "--plan", str(tmp / "plan.json"), "--acked", str(acked_file),
                   "--hub", str(tmp / "hub"), "--store", str(store), "--benchmarks", str(bench),
                   "--start", str(next_op), "--fail", str(fail), "--seed", str(rng.randrange(1 << 30))]
            with open(tmp / "board.log", "a") as log:
                proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True,
                                        env={**os.environ, "TMPDIR": str(tmp / "t")})
            restarts += 1
            kill = False
            started = threading.Event()
            early = {"killed": False}
            timer = None

            def kill_early(proc=proc):
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
                    acked.append(msg)
                    with open(acked_file, "a") as f:
                        f.write(json.dumps(msg) + "\n")
                refused += msg["kind"] == "refused"
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
                kill = True
            if kill:
                killed += 1
                shutil.rmtree(store, ignore_errors=True)  # the disk is wiped with each kill
            elif proc.returncode != 0:
                raise SystemExit(f"the board process failed (exit {proc.returncode}); see its log:\n"
                                 + (tmp / "board.log").read_text()[-3000:])
        took = time.perf_counter() - t0
        # --- the checks: a fresh disk, a reliable Hub ----------------------------------------------------------
        hub = FakeHub(root=tmp / "hub")
        files = hub.files.get(RESULTS_REPO, {})
        records = [json.loads(d) for p, d in files.items() if p.startswith("submissions/") and p.endswith(".json")]
        tombs = [json.loads(d) for p, d in files.items() if p.startswith("tombstones/")]
        final = Leaderboard(tmp / "final", load_benchmarks(bench), n_resamples=20, compute_blind=False,
                            mirror=HubMirror(RESULTS_REPO, api=hub))
        final.close()
        left = [p.name for p in (tmp / "t").glob("hardneg-mirror-*")] + [
            p.name for p in Path(tempfile.gettempdir()).glob(f"hardneg-mirror-{os.getpid()}-*")]
        on_board = Counter(s.id for s in final.store.all_submissions())
        in_repo = Counter(r["id"] for r in records)
        versions = Counter((r["model_id"], r["benchmark"], r["config"], r["split"], r["version"]) for r in records)
        tomb_keys = Counter((t["submission_id"], t["seq"]) for t in tombs)
        board_tombs = {(r[0], r[1]) for r in final.store._query("SELECT submission_id, seq FROM tombstones")}
        subs = [a for a in acked if a["kind"] == "submit"]
        mods = [a for a in acked if a["kind"] == "moderate"]
        problems = [f"temporary folder left: {n}" for n in left]
        ids = {a["id"] for a in subs}
        for i in ids:
            if in_repo[i] != 1 or on_board[i] != 1:
                problems.append(f"submission {i}: {in_repo[i]} in the repo, {on_board[i]} on the board")
        problems += [f"{k} held {n} times" for k, n in versions.items() if n > 1]
        for m in mods:
            if tomb_keys[(m["id"], m["seq"])] != 1 or (m["id"], m["seq"]) not in board_tombs:
                problems.append(f"moderation {m['action']} of {m['id']} (seq {m['seq']}): "
                                f"{tomb_keys[(m['id'], m['seq'])]} in the repo, on the board: "
                                f"{(m['id'], m['seq']) in board_tombs}")
        last = {}
        for m in sorted(mods, key=lambda m: m["seq"]):
            last[m["id"]] = m["action"]
        for i, action in last.items():
            state = final.store.get(i).state
            if state != ("visible" if action == "restore" else action):
                problems.append(f"submission {i}: state {state}, last acknowledged moderation {action}")
        counts = {
            "operations": n_ops, "acknowledged submissions": len(subs), "acknowledged moderations": len(mods),
            "refused after 20 tries": refused, "kills (disk wiped)": killed, "board starts": restarts,
            "repo records": len(records), "repo tombstones": len(tombs),
            "board rows after a fresh restore": sum(on_board.values()),
            "acknowledged submissions in repo exactly once": sum(in_repo[i] == 1 for i in ids),
            "acknowledged submissions on board exactly once": sum(on_board[i] == 1 for i in ids),
            "acknowledged moderations in repo exactly once": sum(tomb_keys[(m["id"], m["seq"])] == 1 for m in mods),
            "records not acknowledged (landed while their board was killed)": len(set(in_repo) - ids),
            "restore skipped": len(final.mirror.report.get("skipped", [])),
            "kills during a start-up restore": kills // 3 - start_kills,
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
    ap.add_argument("--ops", type=int, default=200)
    ap.add_argument("--kills", type=int, default=10)
    ap.add_argument("--fail", type=float, default=0.2, help="share of Hub calls that fail")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    for flag in ("--plan", "--acked", "--hub", "--store", "--benchmarks"):
        ap.add_argument(flag, help=argparse.SUPPRESS)
    ap.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args)
    counts = run(args.ops, args.kills, args.fail, args.seed)
    return 1 if counts["problems"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
