"""`hardneg quickstart`: the README's main job, offline, in about a minute on a CPU.

A thin call of `hardneg.run_model` on the built-in samples with the built-in tiny
random-weight CLIP (so the numbers sit near chance by design), then one table.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from hardneg.run import sample_videos  # noqa: F401  (the demo Space imports it from here)

DESCRIPTION = """Run the whole pipeline on the built-in samples: build every benchmark's sample
dataset, make synthetic videos for their video ids, score each config with a model (default:
the built-in tiny random-weight CLIP; its scores carry no meaning, so the results should sit
near chance), and print every config's headline metrics with 95% intervals.
Swap in a real model with --model openai/clip-vit-base-patch32 (downloads it); run your own
model on real data with hardneg run or hardneg.run_model (README, "Evaluate your own model")."""


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("quickstart", help="score the built-in sample with the built-in tiny model and print results",
                              description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="tiny-clip", help="model to score (default tiny-clip, built in)")
    p.add_argument("--out", default=None, help="work folder for datasets, predictions and results (default: a new temporary folder)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --out folder's results")
    p.add_argument("--benchmarks", default=None, help="comma-separated subset (default: every benchmark with a sample)")
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1000; 0: no intervals)")
    p.add_argument("--device", default=None, help="cpu or cuda (default: cuda when available)")
    p.add_argument("--cache-dir", default=None, help="embedding and sample-video cache (default ~/.cache/hardneg)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import time

    from hardneg.run import RESULTS_FILE, format_table, run_model

    t0 = time.perf_counter()
    if args.out:
        out = Path(args.out)
        if out.exists() and any(out.iterdir()) and not args.overwrite:
            raise FileExistsError(f"{out} already exists and is not empty; pass --overwrite to replace its results, "
                                  "or choose another --out")
    else:
        out = Path(tempfile.mkdtemp(prefix="hardneg-quickstart-"))
    print(f"scoring the built-in samples with {args.model} in {out}")
    results = run_model(args.model, args.benchmarks or "all", out=out, resamples=args.resamples, device=args.device,
                        cache_dir=args.cache_dir, overwrite=args.overwrite, progress=True, charts=True)
    print()
    print(format_table(results, f"model: {args.model} (built-in samples; a random-weight model should sit near chance)"))
    print(f"\nresults: {out / RESULTS_FILE}; predictions and charts: {out / 'predictions'}; "
          f"took {time.perf_counter() - t0:.0f} s")
    return 0
