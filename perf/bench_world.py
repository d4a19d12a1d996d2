"""World build speed: `generate_world` with 1, 2, 4, ... worker processes, speed-up over serial.

Every row builds the same world (same seed, same settings) into a fresh folder and reports videos/s
(wall), CPU-seconds per video (this process and its writing processes) and the largest writing
process's peak memory; the speed-up is over the serial build (`workers=1`, in this process), with
the `0.7 x workers` goal beside it. Each build is compared with the serial one byte for byte.
Rounds alternate the worker counts; medians are printed (on a shared machine wall time mostly
measures the other tenants).

    python perf/bench_world.py --quick                 # 40 scenes of 32x32, 1 and 2 workers
    python perf/bench_world.py --scenes 2000           # the default 64x64 world, 1..cores workers

Goal (printed, never asserted): speed-up >= 0.7 x workers, byte-identical output.
Results: docs/world.md.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from poolstats import Row, median, proc_cpu, proc_peak_mb, workers_list  # noqa: E402


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(p.relative_to(folder).as_posix().encode())
            h.update(p.read_bytes())
    return h.hexdigest()


def build(out: Path, scenes: int, config, workers: int) -> tuple[Row, str]:
    """One build; the row's CPU counts the writing processes (read before they stop)."""
    import hardneg.pool as hpool
    from hardneg.world import generate_world

    pids: list[int] = []
    real_close = hpool.WorkerPool.close

    def close(self):  # read the workers' CPU time and peak while they still run (a second close finds none)
        if not self.pids():
            return real_close(self)
        row.pids = self.pids()
        row.cpu_workers_live = {p: proc_cpu(p) for p in row.pids}
        row.peak_live = max((proc_peak_mb(p) for p in row.pids), default=0.0)
        real_close(self)

    row = Row(pids)
    row.cpu_workers_live, row.peak_live = {}, 0.0
    hpool.WorkerPool.close = close
    try:
        n_test = scenes // 6
        with row:
            generate_world(out, n_train=scenes - n_test, n_test=n_test, seed=0, config=config, workers=workers)
    finally:
        hpool.WorkerPool.close = real_close
    row.cpu += sum(row.cpu_workers_live.values())  # workers started inside the row: all their CPU is the row's
    row.peak_worker_mb = row.peak_live
    return row, _digest(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="40 scenes of 32x32, 8 frames; workers 1 and 2")
    ap.add_argument("--scenes", type=int, default=None, help="scenes per build (default 200, --quick 40)")
    ap.add_argument("--workers", default=None, help="worker counts, comma-separated (default 1,2,4,... up to the cores)")
    ap.add_argument("--repeats", type=int, default=3, help="alternating rounds (medians; default 3, --quick 1)")
    ap.add_argument("--workdir", default=None, help="where to build (default: a temporary folder)")
    args = ap.parse_args()

    from hardneg.pool import available_cores
    from hardneg.world import WorldConfig

    cores = available_cores()
    config = WorldConfig(32, 32, 8, 8) if args.quick else WorldConfig()
    scenes = args.scenes or (40 if args.quick else 200)
    counts = workers_list(cores, args.workers or ("1,2" if args.quick and cores >= 2 else None))
    if 1 not in counts:
        counts = [1] + counts
    repeats = 1 if args.quick and args.repeats == 3 else args.repeats
    work = Path(args.workdir or tempfile.mkdtemp(prefix="bench-world-"))
    t0 = time.perf_counter()
    rows: dict[int, list[Row]] = {w: [] for w in counts}
    digests: dict[int, set[str]] = {w: set() for w in counts}
    try:
        for r in range(repeats):
            for w in counts:
                out = work / f"w{w}-r{r}"
                shutil.rmtree(out, ignore_errors=True)
                row, digest = build(out, scenes, config, w)
                rows[w].append(row)
                digests[w].add(digest)
                shutil.rmtree(out, ignore_errors=True)
        serial = median([scenes / r.wall for r in rows[1]])
        print(f"world build: {scenes} scenes of {config.width}x{config.height}, {config.n_frames} frames; {cores} cores "
              f"available; median of {repeats} alternating rounds")
        print(f"  {'workers':>7s} {'videos/s':>9s} {'CPU-s/video':>12s} {'this process CPU-s':>19s} {'worker MB':>10s} "
              f"{'speed-up':>9s} {'goal 0.7 x workers':>19s} {'same bytes as serial':>21s}")
        reference = next(iter(digests[1]))
        for w in counts:
            rate = median([scenes / r.wall for r in rows[w]])
            cpu = median([r.cpu / scenes for r in rows[w]])
            own = median([r.cpu_self for r in rows[w]])  # the calling process: work no worker can share
            peak = median([r.peak_worker_mb for r in rows[w]])
            same = digests[w] == {reference} and len(digests[1]) == 1
            print(f"  {w:7d} {rate:9.2f} {cpu:12.4f} {own:19.2f} {peak:10.0f} {rate / serial:9.2f} {0.7 * w:19.1f} "
                  f"{str(same):>21s}")
        print(f"total {time.perf_counter() - t0:.0f} s")
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
