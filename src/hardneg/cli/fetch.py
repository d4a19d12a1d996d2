"""`hardneg fetch BENCHMARK|all`: the pinned release files and videos, downloaded, checked and built."""

from __future__ import annotations

import argparse
import sys

DESCRIPTION = """Download a benchmark's release files (the authors' files at a pinned commit, each checked
against its sha256), build its Hub folder with `hardneg build`, download and unpack its videos from the
pinned Hub repo (or link lmms-eval's $HF_HOME/<cache_dir> copy when you have one), check that every video
the items reference is there and decodes, and write a coverage report (N of M present; which are missing
and why). Everything goes under $HARDNEG_CACHE/fetch (default ~/.cache/hardneg/fetch); `hardneg run
--benchmarks NAME` then uses it with no --data and no --videos.

Interrupted? Rerun the same command: finished files are kept and a partial download resumes. Where a
benchmark's videos have no redistributable copy, the official source and the steps are printed.
Offline (HF_HUB_OFFLINE=1) it uses what is there and names what is missing. docs/fetching.md.

examples:
  hardneg fetch tempcompass --dry-run        # each file's URL, size and sha256, and the video source
  hardneg fetch tempcompass
  hardneg fetch all --no-videos              # release files and built folders only
  hardneg fetch vitatecs --mirror https://mirror.example.org   # the same paths from a mirror"""


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("fetch", help="download a benchmark's pinned release files and videos, checked",
                              description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("benchmark", help="a benchmark name (hardneg list) or 'all'")
    p.add_argument("--dry-run", action="store_true", help="print every file's URL, size and sha256 and the video "
                                                          "source, download nothing")
    p.add_argument("--mirror", metavar="URL", default=None,
                   help="fetch the same paths from this base URL (release files and the Hub's resolve/ paths)")
    p.add_argument("--cache-dir", default=None, help="cache root (default $HARDNEG_CACHE or ~/.cache/hardneg)")
    p.add_argument("--no-videos", action="store_true", help="release files and the built folder only")
    p.add_argument("--no-decode-check", action="store_true", help="check that each video is present, not that it "
                                                                  "decodes (faster on large sets)")
    p.add_argument("--no-lmms-eval-cache", action="store_true",
                   help="download the archives even when lmms-eval's $HF_HOME/<cache_dir> holds the videos")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(func=run)


def settings_from(args: argparse.Namespace):
    from pathlib import Path

    from hardneg.fetching import FetchSettings

    extra = {"cache": Path(args.cache_dir)} if args.cache_dir else {}
    return FetchSettings(mirror=args.mirror, progress=not args.no_progress, videos=not args.no_videos,
                         decode_check=not args.no_decode_check, reuse_lmms_eval=not args.no_lmms_eval_cache, **extra)


def names_of(benchmark: str) -> list[str]:
    from hardneg import benchmarks as registry
    from hardneg.fetching.pipeline import fetchable, source_of

    if benchmark == "all":
        return fetchable()
    registry.get(benchmark)  # a clear error naming the known ones
    source_of(benchmark)
    return [benchmark]


def run(args: argparse.Namespace) -> int:
    from hardneg.fetching import FetchError, dry_run, fetch_benchmark
    from hardneg.fetching.coverage import summary

    settings = settings_from(args)
    names = names_of(args.benchmark)
    if args.dry_run:
        for name in names:
            print("\n".join(dry_run(name, settings)))
        return 0
    failed = []
    for name in names:
        try:
            state = fetch_benchmark(name, settings)
        except FetchError as exc:
            if len(names) == 1:
                raise
            print(f"hardneg fetch: {name}: error: {exc}", file=sys.stderr)
            failed.append(name)
            continue
        print(f"{name}: release {state['source']['repo']} @ {state['commit'][:12]} -> {state['built']}")
        print(f"  videos: {state['videos_fetch']['how']}")
        for step in state["videos_fetch"].get("steps", []):
            print(f"    - {step}")
        print(f"  coverage: {summary(state['coverage'])}")
        print(f"  report: {settings.root / 'coverage' / (name + '.json')}")
        print(f"  next: hardneg run --model MODEL --benchmarks {name} --out runs/MODEL")
    if failed:
        print(f"hardneg fetch: {len(failed)} of {len(names)} failed: {', '.join(failed)}; rerun them", file=sys.stderr)
        return 2
    return 0
