"""Time and peak memory of building every declared benchmark whose full release is in ../shared/realdata.

Each build runs in its own fresh process (so its peak memory is its own), validates the whole
release and writes the Hub folder to a temporary directory, as `hardneg build` does. The anchor
is the floor any builder pays: reading every file of the raw folder once and parsing its JSON /
CSV with the standard library (json.load, csv.reader), in the same process before the build.
Budget per build: 30 s and 500 MB on 2 cores (issue 20).

    python perf/bench_build.py                      # every benchmark with a release there
    python perf/bench_build.py --only tempcompass   # one
    python perf/bench_build.py --realdata DIR       # another realdata folder

Which realdata folder holds which benchmark's release is the one table below; the benchmarks
themselves come from the declarations (`hardneg.benchmarks`), so a new declaration is built as
soon as its folder is listed here.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: benchmark -> folder of ../shared/realdata holding its full release (what the README there lists)
REALDATA_FOLDER = {
    "contrast_sets": "contrast_sets",
    "posrank": "posrank_uvo",
    "vitatecs": "vitatecs",
    "vilma": "vilma",
    "videocon-ssv2": "videocon",
    "videocon-atphard": "videocon",
    "tempcompass": "tempcompass",
}
LIMIT_S, LIMIT_MB = 30.0, 500.0
DEFAULT_REALDATA = Path(__file__).resolve().parents[1].parent / "shared" / "realdata"


def read_floor(raw: Path) -> float:
    """Seconds to read every file once and parse JSON / CSV with the standard library."""
    import csv
    import io

    start = time.perf_counter()
    for path in sorted(p for p in raw.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if path.suffix == ".json":
            json.loads(data)
        elif path.suffix == ".jsonl":
            for line in data.splitlines():
                if line.strip():
                    json.loads(line)
        elif path.suffix in (".csv", ".tsv"):
            for _ in csv.reader(io.StringIO(data.decode("utf-8"), newline=""),
                                delimiter="\t" if path.suffix == ".tsv" else ","):
                pass
    return time.perf_counter() - start


def child(name: str, raw: str) -> None:
    """Run in a fresh process: the anchor, then the build; print one JSON line."""
    from hardneg.datasets import build_benchmark
    from hardneg.memory import peak_rss_mb

    floor = read_floor(Path(raw))
    base = peak_rss_mb()
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        result = build_benchmark(name, raw, Path(tmp) / name)
        seconds = time.perf_counter() - start
    rows = sum(n for splits in result.report["counts"].values() for n in splits.values())
    print(json.dumps({"seconds": seconds, "floor": floor, "peak_mb": peak_rss_mb(), "before_mb": base,
                      "rows": rows, "configs": len(result.report["counts"])}))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--realdata", default=str(DEFAULT_REALDATA), help="folder of the real releases")
    ap.add_argument("--only", default=None, help="comma-separated benchmark names")
    ap.add_argument("--child", nargs=2, metavar=("NAME", "RAW"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return 0
    from hardneg import benchmarks

    realdata = Path(args.realdata)
    wanted = set(args.only.split(",")) if args.only else None
    print(f"builds of the full releases in {realdata} (each in a fresh process; budget {LIMIT_S:.0f} s, "
          f"{LIMIT_MB:.0f} MB)")
    print(f"{'benchmark':<18} {'rows':>8} {'build s':>8} {'anchor s':>9} {'ratio':>7} {'peak MB':>8}  within budget")
    failed = 0
    for name in benchmarks.names():
        if wanted and name not in wanted:
            continue
        folder = REALDATA_FOLDER.get(name)
        raw = realdata / folder if folder else None
        if raw is None or not raw.is_dir():
            print(f"{name:<18} {'-':>8}  no full release in {realdata.name}/ (skipped)")
            continue
        proc = subprocess.run([sys.executable, __file__, "--child", name, str(raw)], capture_output=True, text=True)
        if proc.returncode != 0:
            failed += 1
            last = (proc.stderr.strip().splitlines() or ["?"])[-1]
            print(f"{name:<18} build failed: {last[:160]}")
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        ok = r["seconds"] <= LIMIT_S and r["peak_mb"] <= LIMIT_MB
        failed += not ok
        print(f"{name:<18} {r['rows']:>8,} {r['seconds']:>8.2f} {r['floor']:>9.3f} "
              f"{r['seconds'] / max(r['floor'], 1e-9):>6.0f}x {r['peak_mb']:>8.0f}  {'yes' if ok else 'NO'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
