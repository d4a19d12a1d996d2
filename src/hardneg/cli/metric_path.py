"""`hardneg metric-path <name>`: print the folder of a shipped `evaluate` metric module."""

from __future__ import annotations

import argparse

from hardneg.metric_modules import METRIC_NAMES, metric_path


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "metric-path",
        help="print the folder of a shipped evaluate metric module",
        description=(
            "Print the absolute folder of one of the evaluate metric modules shipped with video-hardneg, "
            "so that evaluate.load(<that folder>) works offline and without a source checkout. "
            "From a checkout it is the repository's metrics/<name>/; from a wheel, the copy inside the package."
        ),
        epilog='example:  python -c "import evaluate; m = evaluate.load(\'$(hardneg metric-path rcad_accuracy)\')"',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("name", nargs="?", help=f"module name, one of: {', '.join(METRIC_NAMES)}")
    parser.add_argument("--all", action="store_true", help="print every module as `<name>\\t<folder>`")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    if args.all:
        for name in METRIC_NAMES:
            print(f"{name}\t{metric_path(name)}")
        return 0
    if not args.name:
        raise ValueError(f"give a module name (one of: {', '.join(METRIC_NAMES)}) or --all")
    print(metric_path(args.name))
    return 0
