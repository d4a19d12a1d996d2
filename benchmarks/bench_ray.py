"""PoSRank generation through the batch runner: local backend vs Ray at 1 and 2 workers.

Runs the same captions through `hardneg.runner.run_map` with each backend at two input sizes,
checks that every configuration wrote byte-identical shards, and prints per configuration:
wall time, throughput, the ratio to the local backend, a fixed cost and a marginal rate
(two-point fit: time(N) = fixed + N / rate), Ray's own start-up (`ray.init`), and from them
the input size above which each Ray configuration beats the local backend.

    python benchmarks/bench_ray.py                       # real PoSRank captions when present
    python benchmarks/bench_ray.py --sizes 64,960 --batch-size 32 --workers 1,2

Timings depend on the machine and its load: run it on the machine you plan to use.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa

from hardneg.runner import read_output, run_map

REALDATA = Path(__file__).resolve().parents[1].parent / "shared" / "realdata" / "posrank_uvo" / "captions.txt"


def load_captions(path: Path | None, n: int, quiet: bool = False) -> pa.Table:
    """PoSRank release captions (`<video>##*##<k>**#**<caption>`), or synthetic ones without it."""
    if path and path.exists():
        ids, caps = [], []
        for line in path.read_text(encoding="utf-8").splitlines():
            if "**#**" in line:
                i, c = line.split("**#**", 1)
                ids.append(i)
                caps.append(c)
            if len(ids) == n:
                break
        source = str(path)
    else:
        words = "a person in a red shirt quickly opens the small door and walks into the dark room".split()
        ids = [f"cap{i:06d}" for i in range(n)]
        caps = [" ".join(words[(i + j) % len(words)] for j in range(8 + i % 6)) for i in range(n)]
        source = "synthetic"
    if len(ids) < n:
        raise SystemExit(f"only {len(ids)} captions in {path}; lower --sizes")
    if not quiet:
        print(f"captions: {source} ({n} used)")
    return pa.table({"source_id": ids, "caption": caps})


def _spacy_tag_batch(batch: dict, nlp) -> dict:
    docs = list(nlp.pipe(batch["caption"]))
    return {"source_id": batch["source_id"], "tags": [" ".join(t.pos_ for t in d) for d in docs]}


def make_standin_fn():
    """Stand-in when the PoSRank generator is absent: spaCy part-of-speech tagging."""
    from hardneg.resources import load_spacy

    return functools.partial(_spacy_tag_batch, nlp=load_spacy(("parser", "ner")))


def pick_factory(k: int, quiet: bool = False):
    try:
        from hardneg.generators.posrank import make_batch_fn
    except ImportError:
        if not quiet:
            print("batch function: spaCy tagging stand-in (hardneg.generators.posrank not importable)")
        return make_standin_fn
    if not quiet:
        print(f"batch function: hardneg.generators.posrank.make_batch_fn(k={k}, seed=0)")
    return functools.partial(make_batch_fn, k=k, seed=0)


def timed_run(factory, table, out: Path, batch_size: int, backend: str, workers: int) -> float:
    shutil.rmtree(out, ignore_errors=True)
    t0 = time.perf_counter()
    s = run_map(factory, table, out, id_column="source_id", batch_size=batch_size, backend=backend,
                num_workers=workers, progress=False)
    dt = time.perf_counter() - t0
    assert s.rows_in == table.num_rows and s.shards_run == s.shards_total
    return dt


def measure_one(args, backend: str, workers: int, n: int, out: Path) -> dict:
    """One measurement in this (fresh) process, so no model cached by an earlier run helps it."""
    table = load_captions(args.captions, n, quiet=True)
    factory = pick_factory(args.k, quiet=True)
    init = 0.0
    if backend == "ray":
        import ray

        t0 = time.perf_counter()
        # actors get this process's hash seed, like the local run (see --hash-seed)
        env = {"env_vars": {"PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", "random")}}
        ray.init(address="local", num_cpus=args.ray_cpus, include_dashboard=False, logging_level="ERROR",
                 runtime_env=env)
        init = time.perf_counter() - t0
    try:
        run = timed_run(factory, table, out, args.batch_size, backend, workers)
    finally:
        if backend == "ray":
            ray.shutdown()
    return {"init": init, "run": run}


def measure(args, backend: str, workers: int, n: int, out: Path, hash_seed: str | None = None) -> dict:
    cmd = [sys.executable, __file__, "--one", f"{backend},{workers},{n},{out}", "--captions", str(args.captions),
           "--batch-size", str(args.batch_size), "--k", str(args.k), "--ray-cpus", str(args.ray_cpus)]
    env = dict(os.environ, PYTHONHASHSEED=hash_seed if hash_seed is not None else args.hash_seed)
    res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if res.returncode != 0:
        raise SystemExit(f"measurement {backend} x{workers} N={n} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def shard_bytes(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.glob("part-*.parquet"))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--captions", type=Path, default=REALDATA, help="PoSRank captions.txt (default: realdata)")
    ap.add_argument("--sizes", default="64,960", help="two input sizes (captions) for the fit")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--workers", default="1,2", help="Ray worker counts")
    ap.add_argument("--k", type=int, default=5, help="negatives per caption and part of speech")
    ap.add_argument("--ray-cpus", type=int, default=2)
    ap.add_argument("--hash-seed", default="0",
                    help="PYTHONHASHSEED of every worker (default 0). The byte-identity check needs a batch "
                         "function that does not depend on it; the bench reports whether it does")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)  # internal: one measurement
    args = ap.parse_args(argv)
    if args.one:
        backend, w, n, out = args.one.split(",", 3)
        print(json.dumps(measure_one(args, backend, int(w), int(n), Path(out))))
        return 0
    sizes = sorted(int(x) for x in args.sizes.split(","))
    if len(sizes) != 2 or sizes[0] >= sizes[1]:
        raise SystemExit("--sizes needs two different sizes, e.g. 64,320")
    workers = [int(x) for x in args.workers.split(",")]
    load_captions(args.captions, sizes[1])
    pick_factory(args.k)
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} CPUs, load average {load[0]:.1f} at start; Ray instance: {args.ray_cpus} CPUs; "
          "each measurement in a fresh process\n")

    tmp = Path(tempfile.mkdtemp(prefix="bench_ray."))
    configs = [("local", 1)] + [("ray", w) for w in workers]
    times: dict[str, dict[int, float]] = {}
    inits: list[float] = []
    outs: dict[str, Path] = {}
    try:
        for backend, w in configs:
            name = f"{backend} x{w}"
            times[name] = {}
            for n in sizes:
                outs[name] = tmp / f"{backend}{w}-{n}"
                m = measure(args, backend, w, n, outs[name])
                times[name][n] = m["run"]
                if backend == "ray":
                    inits.append(m["init"])
                print(f"{name:9s} N={n:5d}: {m['run']:7.1f} s" + (f"  (ray.init {m['init']:.1f} s)" if m["init"] else ""),
                      flush=True)
        ray_init = sorted(inits)[len(inits) // 2]
        other = tmp / "local1-hashseed"
        measure(args, "local", 1, sizes[0], other, hash_seed=str(int(args.hash_seed) + 1))
        stable = shard_bytes(other) == shard_bytes(tmp / f"local1-{sizes[0]}")
        print(f"batch function output independent of PYTHONHASHSEED ({args.hash_seed} vs "
              f"{int(args.hash_seed) + 1}, N={sizes[0]}): {'yes' if stable else 'NO (a set/dict-order dependence in the batch function)'}")
        ref = shard_bytes(outs["local x1"])
        same = {name: shard_bytes(out) == ref for name, out in outs.items()}
        rows = read_output(outs["local x1"]).num_rows
        print(f"\nidentical shard bytes to local x1 at N={sizes[1]} ({len(ref)} shards, {rows} output rows): "
              + ", ".join(f"{k}: {'yes' if v else 'NO'}" for k, v in same.items()))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    n1, n2 = sizes
    fits = {}
    for name, t in times.items():
        rate = (n2 - n1) / (t[n2] - t[n1]) if t[n2] > t[n1] else float("inf")
        fits[name] = (t[n1] - n1 / rate, rate)
    print(f"\n{'config':9s} | {'thr N=' + str(n1):>11s} | {'thr N=' + str(n2):>11s} | {'ratio':>5s} | "
          f"{'fixed s':>7s} | {'marg. cap/s':>11s}")
    base = times["local x1"]
    for name, t in times.items():
        fixed, rate = fits[name]
        print(f"{name:9s} | {n1 / t[n1]:11.2f} | {n2 / t[n2]:11.2f} | {base[n2] / t[n2]:5.2f} | "
              f"{fixed:7.1f} | {rate:11.2f}")
    print(f"(throughput in captions/s; ratio = local x1 time / config time at N={n2}; Ray fixed cost excludes "
          f"ray.init = {ray_init:.1f} s (median), paid once per cluster)")
    lf, lr = fits["local x1"]
    for name, (f, r) in fits.items():
        if name == "local x1":
            continue
        for label, extra in (("on a running cluster", 0.0), ("starting Ray too", ray_init)):
            if r > lr:
                n_star = (f + extra - lf) / (1 / lr - 1 / r)
                print(f"break-even {name} vs local x1, {label}: N ~ {max(n_star, 0):.0f} captions")
            else:
                print(f"break-even {name} vs local x1, {label}: never on this machine "
                      f"(marginal rate {r:.2f} <= {lr:.2f} captions/s)")
    return 0 if all(same.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
