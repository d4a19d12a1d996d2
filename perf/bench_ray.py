"""PoSRank generation through the batch runner: local backend vs Ray at 1 and 2 workers.

Runs the same captions through `hardneg.runner.run_map` with each backend, each run in a fresh
process, checks that every configuration wrote byte-identical shards, and prints per
configuration: wall time, throughput, the ratio to the local backend, the start-up time (until
the first batch starts: worker start, model loading, Ray Data planning; from per-batch
timestamps), the busy throughput, Ray's own `ray.init`, and from them (time(N) = start-up +
N / busy rate) the input size above which each Ray configuration beats the local backend.

    python perf/bench_ray.py                       # real PoSRank captions when present
    python perf/bench_ray.py --n 960 --batch-size 32 --workers 1,2

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

POSRANK_UVO = Path(__file__).resolve().parents[1].parent / "shared" / "realdata" / "posrank_uvo"
REALDATA = POSRANK_UVO / "captions.txt"
VOCABULARY = POSRANK_UVO / "vln_uvo_word_dic_20230920.json"  # the authors' {pos: words} vocabulary


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
        raise SystemExit(f"only {len(ids)} captions in {path}; lower --n")
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


def pick_factory(k: int, vocabulary: Path, quiet: bool = False):
    try:
        from hardneg.generators.posrank import make_batch_fn
    except ImportError:
        if not quiet:
            print("batch function: spaCy tagging stand-in (hardneg.generators.posrank not importable)")
        return make_standin_fn
    # without the release vocabulary file, an explicit empty vocabulary turns that tier off
    vocab = str(vocabulary) if vocabulary.exists() else {}
    if not quiet:
        print(f"batch function: hardneg.generators.posrank.make_batch_fn(k={k}, seed=0, vocabulary={vocab or '{}'})")
    return functools.partial(make_batch_fn, k=k, seed=0, vocabulary=vocab)


class Timed:
    """Factory wrapper that logs, per worker, when its models were ready and each batch's span."""

    def __init__(self, factory, log: str):
        self.factory, self.log = factory, log

    def _write(self, line: str) -> None:
        with open(self.log, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    def __call__(self):
        t = time.time()
        fn = self.factory()
        self._write(f"ready {t} {time.time()}")

        def timed(batch):
            t0 = time.time()
            out = fn(batch)
            self._write(f"batch {t0} {time.time()}")
            return out

        return timed


def measure_one(args, backend: str, workers: int, n: int, out: Path) -> dict:
    """One run in this (fresh) process, so no model cached by an earlier run helps it.

    Splits the wall time into start-up (until the first batch starts: Ray Data planning, worker
    start, model loading), the busy span (first batch start to last batch end) and the tail.
    """
    table = load_captions(args.captions, n, quiet=True)
    log = str(out) + ".log"
    factory = Timed(pick_factory(args.k, args.vocabulary, quiet=True), log)
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
        shutil.rmtree(out, ignore_errors=True)
        start = time.time()
        s = run_map(factory, table, out, id_column="source_id", batch_size=args.batch_size, backend=backend,
                    num_workers=workers, progress=False)
        end = time.time()
        assert s.rows_in == n and s.shards_run == s.shards_total
    finally:
        if backend == "ray":
            ray.shutdown()
    spans = [tuple(map(float, ln.split()[1:])) for ln in Path(log).read_text().splitlines() if ln.startswith("batch")]
    first, last = min(a for a, _ in spans), max(b for _, b in spans)
    return {"init": init, "run": end - start, "startup": first - start, "busy": last - first,
            "tail": end - last, "n": n}


def measure(args, backend: str, workers: int, n: int, out: Path, hash_seed: str | None = None) -> dict:
    cmd = [sys.executable, __file__, "--one", f"{backend},{workers},{n},{out}", "--captions", str(args.captions),
           "--batch-size", str(args.batch_size), "--k", str(args.k), "--vocabulary", str(args.vocabulary), "--ray-cpus", str(args.ray_cpus)]
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
    ap.add_argument("--vocabulary", type=Path, default=VOCABULARY, help="PoSRank {pos: words} JSON (default: realdata)")
    ap.add_argument("--n", type=int, default=960, help="captions (default 960)")
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
        backend, w, n_one, out = args.one.split(",", 3)
        print(json.dumps(measure_one(args, backend, int(w), int(n_one), Path(out))))
        return 0
    n = args.n
    workers = [int(x) for x in args.workers.split(",")]
    load_captions(args.captions, n)
    pick_factory(args.k, args.vocabulary)
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} CPUs, load average {load[0]:.1f} at start; Ray instance: {args.ray_cpus} CPUs; "
          f"batch size {args.batch_size}; each run in a fresh process\n")

    tmp = Path(tempfile.mkdtemp(prefix="bench_ray."))
    configs = [("local", 1)] + [("ray", w) for w in workers]
    res: dict[str, dict] = {}
    outs: dict[str, Path] = {}
    try:
        for backend, w in configs:
            name = f"{backend} x{w}"
            outs[name] = tmp / f"{backend}{w}"
            res[name] = measure(args, backend, w, n, outs[name])
            print(f"{name}: {res[name]}", flush=True)
        # the same first shards with another hash seed (shard bytes do not depend on the shard count)
        other = tmp / "local1-hashseed"
        measure(args, "local", 1, min(n, 4 * args.batch_size), other, hash_seed=str(int(args.hash_seed) + 1))
        by_index = {k[:10]: v for k, v in shard_bytes(outs["local x1"]).items()}
        stable = all(by_index.get(k[:10]) == v for k, v in shard_bytes(other).items())
        print(f"batch function output independent of PYTHONHASHSEED ({args.hash_seed} vs "
              f"{int(args.hash_seed) + 1}): {'yes' if stable else 'NO (a set/dict-order dependence in the batch function)'}")
        ref = shard_bytes(outs["local x1"])
        same = {name: shard_bytes(out) == ref for name, out in outs.items()}
        rows = read_output(outs["local x1"]).num_rows
        print(f"identical shard bytes to local x1 ({len(ref)} shards, {rows} output rows): "
              + ", ".join(f"{k}: {'yes' if v else 'NO'}" for k, v in same.items()))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    ray_init = sorted(r["init"] for r in res.values() if r["init"])[len(workers) // 2] if workers else 0.0
    base = res["local x1"]
    print(f"\nN = {n} captions")
    print(f"{'config':9s} | {'wall s':>6s} | {'cap/s':>6s} | {'ratio':>5s} | {'start-up s':>10s} | {'busy cap/s':>10s}")
    fits = {}
    for name, r in res.items():
        rate = n / r["busy"]
        fixed = r["startup"] + r["tail"]
        fits[name] = (fixed, rate)
        print(f"{name:9s} | {r['run']:6.1f} | {n / r['run']:6.2f} | {base['run'] / r['run']:5.2f} | "
              f"{r['startup']:10.1f} | {rate:10.2f}")
    print(f"(ratio = local x1 wall time / config wall time; start-up = until the first batch starts: "
          f"worker start and model loading, plus Ray Data planning for Ray; ray.init of a local instance "
          f"= {ray_init:.1f} s more, paid once per cluster)")
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
                      f"(busy rate {r:.2f} <= {lr:.2f} captions/s)")
    return 0 if all(same.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
