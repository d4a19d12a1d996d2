"""`hardneg evaluate`: every metric of a predictions file, with intervals, a JSON result and a chart."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

DESCRIPTION = """Compute every metric of the benchmark a predictions file was scored on, with
cluster-bootstrap confidence intervals (whole videos resampled), broken down by category
(contrast-set type, part of speech), source dataset and negative type, plus Feint6K's Δs
(object vs action swap) where the negatives say which is which. Prints a report, writes the
result as JSON and a bar chart PNG: both or neither (everything is computed and rendered
before either file is written). Intervals are percentile intervals of a cluster bootstrap
over videos, clamped to contain the value (docs/metrics.md). A chance check:
hardneg score --model constant ... gives exactly the chance column under the default ties.

example:
  hardneg evaluate clip-feint6k.parquet                 # dataset taken from the file's metadata
  hardneg evaluate p.parquet --dataset built/posrank --json p.json --plot p.png
  hardneg evaluate owl-con-atphard.parquet --ties original --items authors   # the authors' 1,844 questions

Where scores tie, each metric the ties move is printed with its pessimistic-to-optimistic range
(every tie lost .. every tie won) beside its value, and kept in the JSON as `tie_range`."""


def add_parser(subparsers) -> None:
    from hardneg.ranking import TIE_RULES

    p = subparsers.add_parser("evaluate", help="compute every metric of a predictions file with intervals",
                              description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("predictions", help="predictions Parquet written by hardneg score")
    p.add_argument("--dataset", default=None, help="dataset folder or Hub id (default: the one in the file's metadata)")
    p.add_argument("--trust-metadata-dataset", action="store_true",
                   help="load a Hub dataset named only by the file's metadata (off: only --dataset, the file's local "
                        "folder or the benchmark's declared repo are loaded)")
    p.add_argument("--ties", default="expected", choices=[*TIE_RULES, "original"],
                   help="tie rule (default expected: exact expectation over random orders of tied candidates); "
                        "original: the benchmark authors' own rule (its declaration), with the tie-aware values "
                        "and their difference printed beside it to two decimals")
    p.add_argument("--items", default=None, metavar="NAME",
                   help="score one of the item sets the benchmark declares instead of every item (e.g. ATP-Hard's "
                        "'authors': the 1,844 questions VideoCon's eval_atphard.py scores); the report and the JSON "
                        "say which set was used")
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1000; 0 turns intervals off)")
    p.add_argument("--confidence", type=float, default=0.95, help="interval level (default 0.95)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--json", default=None,
                   help="result JSON (default: <predictions>.metrics.json; '-': standard output, the report goes to "
                        "standard error)")
    p.add_argument("--plot", default=None,
                   help="bar chart PNG (default: <predictions>.metrics.png; '-': standard output, the report goes to "
                        "standard error)")
    p.add_argument("--overwrite", action="store_true", help="replace existing --json/--plot files")
    p.set_defaults(func=run)


def write_together(files: dict[Path, bytes]) -> None:
    """Write every file or none: each is staged in full beside its target first (so a failure while
    writing leaves the old files as they were), then all are renamed into place; a failure during the
    renames puts back what was there before."""
    import contextlib
    import os

    from hardneg.io import atomic_write_bytes

    token = os.urandom(4).hex()
    staged = {path: path.parent / f".{path.name}.{token}.tmp" for path in files}
    old = {path: path.read_bytes() if path.is_file() else None for path in files}
    done: list[Path] = []
    try:
        for path, data in files.items():
            atomic_write_bytes(staged[path], data)
        for path in files:
            os.replace(staged[path], path)
            done.append(path)
    except BaseException:
        for path in done:  # undo: the old content back, or no file where there was none
            with contextlib.suppress(OSError):
                if old[path] is None:
                    path.unlink()
                else:
                    atomic_write_bytes(path, old[path])
        for tmp in staged.values():
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
        raise


def run(args: argparse.Namespace) -> int:
    import sys

    from hardneg.evaluation import evaluate_predictions, format_result, render_chart
    from hardneg.io import is_stdout, refuse_overwrite, write_stdout

    stem = Path(args.predictions)
    if is_stdout(args.json) and is_stdout(args.plot):
        raise ValueError("--json - and --plot - both ask for standard output; give one of them a file path")
    json_path = Path(args.json or stem.with_suffix(".metrics.json"))
    png_path = Path(args.plot or stem.with_suffix(".metrics.png"))
    files = {name: path for name, path in (("json", json_path), ("plot", png_path)) if not is_stdout(path)}
    if len(files) == 2 and json_path.resolve() == png_path.resolve():
        raise ValueError(f"--json and --plot both name {json_path}; give them different paths")
    for path in files.values():
        refuse_overwrite(path, args.overwrite)
    result = evaluate_predictions(args.predictions, dataset=args.dataset, ties=args.ties,
                                  n_resamples=args.resamples, seed=args.seed, confidence=args.confidence,
                                  trust_metadata_dataset=args.trust_metadata_dataset, items=args.items)
    # everything that can fail (the report, the JSON, the chart) is made before anything is written,
    # so the two files are written together or not at all and a rerun is never refused over half a result
    report = format_result(result)
    payload = (json.dumps(result, indent=2, sort_keys=True, default=str) + "\n").encode("utf-8")
    chart = render_chart(result)
    to_stdout = len(files) < 2
    # with `-` standard output carries the file alone (pipeable); the report then goes to standard error
    print(report, file=sys.stderr if to_stdout else sys.stdout)
    write_together({path: payload if name == "json" else chart for name, path in files.items()})
    if is_stdout(args.json):
        write_stdout(payload)
    elif is_stdout(args.plot):
        write_stdout(chart)
    print(f"wrote {' and '.join(str(p) for p in files.values())}", file=sys.stderr if to_stdout else sys.stdout)
    return 0
