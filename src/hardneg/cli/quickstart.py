"""`hardneg quickstart`: the README's main job, offline, in about a minute on a CPU.

Builds the built-in sample of every benchmark format, writes short synthetic videos for its
video ids, scores every config with a model (default: the built-in tiny random-weight CLIP,
so the numbers sit near chance by design), evaluates them with intervals and prints one table.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

DESCRIPTION = """Run the whole pipeline on the built-in samples: build every declared benchmark's
sample datasets, make synthetic videos for their video ids, score each config with a model
(default: the built-in tiny random-weight CLIP; its scores carry no meaning, so the results
should sit near chance), and print every config's headline metrics with 95% intervals.
Swap in a real model with --model openai/clip-vit-base-patch32 (downloads it) and your own
benchmark with hardneg score / hardneg evaluate."""


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("quickstart", help="score the built-in sample with the built-in tiny model and print results",
                              description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="tiny-clip", help="model to score (default tiny-clip, built in)")
    p.add_argument("--out", default=None, help="work folder for datasets, predictions and results (default: a new temporary folder)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --out folder's results")
    p.add_argument("--benchmarks", default=None, help="comma-separated subset (default: every benchmark with a built-in sample)")
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1000)")
    p.add_argument("--device", default=None, help="cpu or cuda (default: cuda when available)")
    p.add_argument("--cache-dir", default=None, help="embedding and sample-video cache (default ~/.cache/hardneg)")
    p.set_defaults(func=run)


def scoreable_configs(folder: Path) -> list[str]:
    """Configs of a built benchmark that get their own predictions (not FIRE's -queries/-videos tables)."""
    from hardneg.items import scoreable_configs as configs

    return configs(folder)


def sample_videos(video_ids: list[str], cache_dir: Path) -> Path:
    """Synthetic videos for the sample ids (made once, kept in the cache)."""
    from hardneg.video import write_synthetic_video

    folder = cache_dir / "sample_videos_v2"  # v2: H.264, playable in browsers
    for vid in video_ids:
        path = folder / f"{vid}.mp4"
        if not path.is_file():
            write_synthetic_video(path, vid)
    return folder


def run(args: argparse.Namespace) -> int:
    import time

    from hardneg.datasets import build_samples, sample_benchmarks, sample_video_ids
    SAMPLE_BENCHMARKS = sample_benchmarks()
    from hardneg.evaluation import evaluate_predictions, plot_result
    from hardneg.io import atomic_write_text
    from hardneg.models import load_model
    from hardneg.resources import cache_dir as default_cache_dir
    from hardneg.scoring import score_benchmark

    t0 = time.perf_counter()
    benchmarks = tuple(args.benchmarks.split(",")) if args.benchmarks else SAMPLE_BENCHMARKS
    unknown = [b for b in benchmarks if b not in SAMPLE_BENCHMARKS]
    if unknown:
        raise ValueError(f"--benchmarks: no sample for {unknown}; choose from {list(SAMPLE_BENCHMARKS)}")
    if args.out:
        out = Path(args.out)
        if out.exists() and any(out.iterdir()) and not args.overwrite:
            raise FileExistsError(f"{out} already exists and is not empty; pass --overwrite to replace its results, "
                                  "or choose another --out")
    else:
        out = Path(tempfile.mkdtemp(prefix="hardneg-quickstart-"))
    cache = Path(args.cache_dir) if args.cache_dir else default_cache_dir()
    print(f"[1/4] building the built-in samples of {', '.join(benchmarks)} in {out / 'data'}")
    built = build_samples(out / "data", overwrite=True, benchmarks=benchmarks)
    ids = sorted({v for b in benchmarks for v in sample_video_ids(b)})
    videos = sample_videos(ids, cache)
    print(f"[2/4] {len(ids)} synthetic sample videos in {videos}")
    print(f"[3/4] loading model {args.model}")
    model = load_model(args.model, device=args.device)
    rows, results = [], {}
    print("[4/4] scoring and evaluating")
    for bench, folder in built.items():
        for config in scoreable_configs(folder):
            pred = out / "predictions" / f"{bench}-{config}.parquet"
            run_ = score_benchmark(args.model, str(folder), config, pred, videos=str(videos), cache_dir=str(cache),
                                   device=args.device, overwrite=True, progress=False, loaded_model=model)
            res = evaluate_predictions(pred, n_resamples=args.resamples)
            plot_result(res, pred.with_suffix(".png"))
            results[f"{bench}/{config}"] = res
            vr = run_.video_report
            for metric in res["headline"]:
                if metric in res["metrics"]:
                    rows.append((bench, config, res["n"], metric, res["metrics"][metric],
                                 res.get("chance", {}).get(metric), f"{vr['ok']} ok/{vr['missing'] + vr['unreadable']} bad"))
    atomic_write_text(out / "results.json", json.dumps(results, indent=2, sort_keys=True, default=str))
    print()
    print(format_table(rows, args.model))
    print(f"\nresults: {out / 'results.json'}; predictions and charts: {out / 'predictions'}; "
          f"took {time.perf_counter() - t0:.0f} s")
    return 0


def format_table(rows, model: str) -> str:
    head = ("benchmark", "config", "n", "metric", "value [95% CI]", "chance", "videos")
    cells = []
    for bench, config, n, metric, e, chance, vids in rows:
        pct = not metric.startswith(("MeanR", "MedianR"))
        f = (lambda x: f"{100 * x:.1f}") if pct else (lambda x: f"{x:.2f}")
        value = f"{f(e['value'])} [{f(e['low'])}, {f(e['high'])}]" if "low" in e else f(e["value"])
        cells.append((bench, config, str(n), metric + (" %" if pct else ""), value,
                      "" if chance is None else f(chance), vids))
    widths = [max(len(r[i]) for r in [head, *cells]) for i in range(len(head))]
    line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    title = f"model: {model} (built-in samples; a random-weight model should sit near chance)"
    return "\n".join([title, line(head), line(tuple("-" * w for w in widths)), *map(line, cells)])
