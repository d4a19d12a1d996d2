"""`hardneg evaluate`: every metric of a predictions file, with intervals, a JSON result and a chart."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

DESCRIPTION = """Compute every metric of the benchmark a predictions file was scored on, with
cluster-bootstrap confidence intervals (whole videos resampled), broken down by category
(contrast-set type, part of speech), source dataset and negative type, plus Feint6K's Δs
(object vs action swap) where the negatives say which is which. Prints a report, writes the
result as JSON and a bar chart PNG.

example:
  hardneg evaluate clip-feint6k.parquet                 # dataset taken from the file's metadata
  hardneg evaluate p.parquet --dataset built/posrank --json p.json --plot p.png"""


def add_parser(subparsers) -> None:
    from hardneg.ranking import TIE_RULES

    p = subparsers.add_parser("evaluate", help="compute every metric of a predictions file with intervals",
                              description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("predictions", help="predictions Parquet written by hardneg score")
    p.add_argument("--dataset", default=None, help="dataset folder or Hub id (default: the one in the file's metadata)")
    p.add_argument("--ties", default="expected", choices=TIE_RULES,
                   help="tie rule (default expected: exact expectation over random orders of tied candidates)")
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1000; 0 turns intervals off)")
    p.add_argument("--confidence", type=float, default=0.95, help="interval level (default 0.95)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--json", default=None, help="result JSON (default: <predictions>.metrics.json)")
    p.add_argument("--plot", default=None, help="bar chart PNG (default: <predictions>.metrics.png)")
    p.add_argument("--overwrite", action="store_true", help="replace existing --json/--plot files")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hardneg.evaluation import evaluate_predictions, format_result, plot_result
    from hardneg.io import atomic_write_text, refuse_overwrite

    stem = Path(args.predictions)
    json_path = Path(args.json or stem.with_suffix(".metrics.json"))
    png_path = Path(args.plot or stem.with_suffix(".metrics.png"))
    refuse_overwrite(json_path, args.overwrite)
    refuse_overwrite(png_path, args.overwrite)
    result = evaluate_predictions(args.predictions, dataset=args.dataset, ties=args.ties,
                                  n_resamples=args.resamples, seed=args.seed, confidence=args.confidence)
    print(format_result(result))
    atomic_write_text(json_path, json.dumps(result, indent=2, sort_keys=True, default=str))
    plot_result(result, png_path)
    print(f"wrote {json_path} and {png_path}")
    return 0
