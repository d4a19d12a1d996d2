"""How long a board on a wiped disk takes to restore N submissions from its results repo (issue 42, N18).

The repo is the local stand-in for the Hub (tests/leaderboard/fakehub.py), filled with N records as the board
publishes them (one model each, a real predictions file each, on the test benchmarks' feint6k/msrvtt). The restore
is the board's own: list the repo, download by folder, check every record through the guards, validate and
recompute each file, store them in one transaction. Before issue 42 the download passed one `allow_patterns` entry
per file, and huggingface_hub matches files x patterns: the filter alone took 1.4 / 4.8 / 23.9 / 81.5 s for 500 /
1,000 / 2,000 / 4,000 submissions. Prints seconds per 1,000 submissions per size, wall-clock and this process's CPU
time (the CPU time is what a loaded, shared machine does not distort), and each size's ratio to the smallest
(flat = linear).

    PYTHONPATH=src python3 perf/bench_restore.py --sizes 500,1000,2000,4000,8000,16000
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "leaderboard"))

FEINT = ("feint6k", "msrvtt", "test")
RESULTS_REPO = "org/results"


def fill(hub, items, n: int, start: int = 0) -> None:
    """n more records in the repo, in the layout before issue 49 (`submissions/<benchmark>/<id>.json`), which a
    restore reads as it reads the current one."""
    from hardneg.leaderboard.example import predictions_bytes
    from hardneg.leaderboard.mirror import public_parquet

    hub.create_repo(RESULTS_REPO, repo_type="dataset", exist_ok=True)
    repo = hub.files[RESULTS_REPO]  # written straight into the repo's files (no commit per record: speed)
    for k in range(start, start + n):
        sid = uuid.UUID(int=k + 1).hex
        model = f"org/model-{k}"
        raw = predictions_bytes(items, model, seed=k)
        published = public_parquet(raw)
        record = {"id": sid, "model_id": model, "submitter": "alice", "benchmark": FEINT[0], "config": FEINT[1],
                  "split": FEINT[2], "version": 1, "data_revision": json.loads(
                      __import__("pyarrow.parquet", fromlist=["x"]).read_schema(
                          __import__("pyarrow").BufferReader(raw)).metadata[b"hardneg"])["data_revision"],
                  "metadata": {"identity": "hub"}, "results": {}, "file_sha256": hashlib.sha256(raw).hexdigest(),
                  "published_file_sha256": hashlib.sha256(published).hexdigest(),
                  "created_at": "2026-01-01T00:00:00.000+00:00", "seq": k + 1}
        repo[f"submissions/{FEINT[0]}/{sid}.json"] = json.dumps(record, indent=1, sort_keys=True).encode()
        repo[f"predictions/{sid}.parquet"] = published


def filter_seconds(n: int, per_file: bool) -> float:
    """huggingface_hub's own file filter (`filter_repo_objects`, what `snapshot_download` runs on the repo's file
    list) over a repo of n submissions (3 files each), with the patterns a restore passes: one per wanted file (the
    restore before issue 42) or the folders (now)."""
    from huggingface_hub.utils import filter_repo_objects

    from hardneg.leaderboard.mirror import HubMirror  # noqa: F401 (the patterns below are the mirror's)

    ids = [uuid.UUID(int=k + 1).hex for k in range(n)]
    files = [p for i in ids for p in (f"submissions/feint6k/{i}.json", f"predictions/{i}.parquet",
                                      f"per_example/{i}.npz")]
    wanted = [p for p in files if not p.startswith("per_example/")]
    patterns = wanted if per_file else ["submissions/*", "tombstones/*", "predictions/*"]
    t = time.perf_counter()
    got = list(filter_repo_objects(files, allow_patterns=patterns))
    assert len(got) == len(wanted)
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="500,1000,2000,4000", help="comma-separated submission counts")
    ap.add_argument("--resamples", type=int, default=20, help="bootstrap resamples of the recomputation")
    ap.add_argument("--filter-only", action="store_true",
                    help="time only huggingface_hub's file filter: one pattern per file (before) vs folders (now); "
                         "per-file patterns are timed up to 4,000 submissions (quadratic beyond)")
    args = ap.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    if args.filter_only:
        for n in sizes:
            folders = filter_seconds(n, per_file=False)
            before = f"{filter_seconds(n, per_file=True):8.2f} s" if n <= 4000 else "   (skipped)"
            print(f"{n:>6} submissions: filter with one pattern per file {before}; with folder patterns "
                  f"{folders:6.3f} s = {1000 * folders / n:.4f} s per 1,000", flush=True)
        return 0

    from fakehub import FakeHub
    from helpers import write_benchmarks

    from hardneg.leaderboard import Leaderboard, load_benchmarks
    from hardneg.leaderboard.mirror import HubMirror

    with tempfile.TemporaryDirectory(prefix="bench-restore-") as tmp:
        item_sets = load_benchmarks(write_benchmarks(Path(tmp) / "benchmarks"))
        hub = FakeHub()
        rows, have = [], 0
        for n in sizes:
            t = time.perf_counter()
            fill(hub, item_sets[FEINT], n - have, have)
            have = n
            made = time.perf_counter() - t
            store = Path(tmp) / f"store-{n}"
            t, cpu = time.perf_counter(), time.process_time()
            board = Leaderboard(store, item_sets, n_resamples=args.resamples, compute_blind=False,
                                mirror=HubMirror(RESULTS_REPO, api=hub, tmp_root=Path(tmp) / "t"))
            took, cpu = time.perf_counter() - t, time.process_time() - cpu
            assert board.store.count() == n, (board.store.count(), board.restored)
            board.close()
            shutil.rmtree(store)
            rows.append((n, took, cpu))
            print(f"{n:>6} submissions: restore {took:7.2f} s wall = {1000 * took / n:6.2f} s per 1,000 (ratio to "
                  f"{sizes[0]}: {(took / n) / (rows[0][1] / rows[0][0]):.2f}); CPU {cpu:7.2f} s = {1000 * cpu / n:6.2f}"
                  f" s per 1,000 (ratio {(cpu / n) / (rows[0][2] / rows[0][0]):.2f}); repo filled in {made:.1f} s",
                  flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
