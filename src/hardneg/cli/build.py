"""`hardneg build <benchmark> --raw DIR --out DIR [--overwrite] [--push REPO]`: raw release -> Hub repo folder."""

from __future__ import annotations

import argparse
import json
import sys

DESCRIPTION = """\
Validate a benchmark's raw release and write its Hugging Face dataset repo:
Parquet per config and split, README.md card (configs, features, license,
citation, counts) and build_report.json. Every raw file is checked before
anything is written; a failed build leaves nothing behind, and an existing
--out is replaced only with --overwrite. The folder loads offline with
datasets.load_dataset(OUT, CONFIG); --push uploads it with your HF token.

raw files per benchmark: see each benchmark's declaration (hardneg list).
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    from hardneg import benchmarks

    raw_help = "\n".join(f"  {n:<14} " + b.raw_files.replace("\n", "\n" + " " * 17)
                         for n, b in benchmarks.all_benchmarks().items())
    p = subparsers.add_parser(
        "build",
        help="build a benchmark's Hub dataset repo from its raw release",
        description=DESCRIPTION.replace("see each benchmark's declaration (hardneg list).", "\n" + raw_help),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("benchmark", choices=list(benchmarks.names()), help="which benchmark the raw files are")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--raw", help="folder with the authors' raw release files")
    src.add_argument("--sample", action="store_true", help="use the tiny built-in sample release instead of --raw")
    p.add_argument("--out", required=True, help="repo folder to write (must not exist unless --overwrite)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    p.add_argument("--videos", help="local video folder: report which referenced videos are missing")
    p.add_argument(
        "--strict",
        action="store_true",
        help="fail if any file in --raw would be ignored (every file is listed as used or ignored, with the reason, "
        "in the output and in build_report.json)",
    )
    p.add_argument("--push", metavar="REPO_ID", help="also upload the folder to this Hub dataset repo (its declared id, e.g. video-hardneg/feint6k)")
    p.add_argument("--private", action="store_true", help="create the Hub repo as private (with --push)")
    p.add_argument("--token", help="Hub token (default: HF_TOKEN or the cached `hf auth login` token)")
    p.set_defaults(func=run)
    return p


def print_files(files: list[dict], raw) -> None:
    """Every file of the raw folder: used or ignored, and why."""
    used = sum(e["status"] == "used" for e in files)
    print(f"  files in {raw}: {used} used, {len(files) - used} ignored")
    for e in files:
        print(f"    {e['status']:<8} {e['path']}: {e['reason']}")


def run(args: argparse.Namespace) -> int:
    from hardneg.datasets.builder import build_benchmark
    from hardneg.datasets.samples import sample_raw_dir

    raw = sample_raw_dir(args.benchmark) if args.sample else args.raw
    print(f"validating {args.benchmark} raw files in {raw} ...", file=sys.stderr, flush=True)
    result = build_benchmark(args.benchmark, raw, args.out, overwrite=args.overwrite, videos=args.videos, strict=args.strict)
    print(f"built {args.benchmark} -> {result.out}")
    print_files(result.report.get("files", []), raw)
    for config, splits in result.report["counts"].items():
        for split, n in splits.items():
            print(f"  {config}/{split}: {n:,} rows")
    # every short entry of the parser's report (whatever the benchmark); long ones stay in build_report.json
    skip = {"counts", "files", "counts_by_vote", "paper_table2", "benchmark", "hardneg_version", "schema_version", "raw_files"}
    for key, value in result.report.items():
        if key == "video_coverage" and value:
            value = {k: value[k] for k in ("n_videos", "n_found", "n_missing", "coverage")}
        text = json.dumps(value, sort_keys=True, default=str)
        if key not in skip and value and len(text) <= 300:
            print(f"  {key}: {text}")
    for config, c in result.report.get("counts_by_vote", {}).items():
        paper = result.report["paper_table2"][config]
        print(
            f"  {config}: {c['pairs']:,} judged pairs, {c['relevant']:,} relevant, {c['unresolved']:,} unresolved "
            f"(paper Table 2: {paper['pairs']:,} pairs, {paper['relevant']:,} relevant, {paper['disagreement']:,} disagreements)"
        )
    print(f'  load with: datasets.load_dataset("{result.out}", "{result.build.configs[0].name}")')
    if args.push:
        from hardneg.datasets.push import push_folder

        try:
            info = push_folder(result.out, args.push, token=args.token, private=args.private)
        except (ValueError, FileNotFoundError):
            raise
        except Exception as exc:  # HTTP, auth or network failure: say what to check, keep the build
            raise ValueError(
                f"upload to {args.push} failed ({type(exc).__name__}: {exc}); check your token (HF_TOKEN, "
                f"`hf auth login` or --token), your write access and the network. The built folder is kept at "
                f"{result.out}: push it later with hardneg.datasets.push.push_folder"
            ) from exc
        print(f"pushed to https://huggingface.co/datasets/{args.push} ({getattr(info, 'oid', info)})")
    return 0
