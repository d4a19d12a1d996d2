"""`hardneg demo`: start the demo Space (spaces/demo/app.py) on this machine, from a clone or an installed wheel.

With no option it serves the built-in samples with the built-in tiny model on http://127.0.0.1:7861 (the board's
`hardneg leaderboard serve` takes 7860), or on a free port when 7861 is taken; the address is printed. The
options are the app's own (`python spaces/demo/app.py --help`).
"""

from __future__ import annotations

import argparse

#: the app's options, passed through as given
OPTIONS = {
    "--data": "folder of built benchmarks (default: the built-in samples)",
    "--videos": "folder of videos named by id (default: synthetic videos for the samples)",
    "--models": "comma-separated models: registered names, Hub ids, local folders or module:Class "
                "(default: tiny-clip + blind-unigram on CPU)",
    "--real": "comma-separated benchmarks shown with real examples, their videos fetched at start-up from the pinned "
              "sources (only those videos; docs/fetching.md)",
    "--real-examples": "real examples per --real benchmark (default 3)",
    "--mirror": "fetch the real examples from this mirror (as hardneg fetch --mirror)",
    "--device": "torch device (default: CPU)",
    "--host": "address to listen on (default 127.0.0.1: this machine only)",
    "--port": "port (default 7861, or a free one when that is taken; printed)",
}


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("demo", help="start the demo Space on this machine (built-in samples and tiny model)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for flag, text in OPTIONS.items():
        p.add_argument(flag, default=None, help=text)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hardneg.apps import load_space_app

    argv = []
    for flag in OPTIONS:
        value = getattr(args, flag[2:].replace("-", "_"))
        if value is not None:
            argv += [flag, value]
    load_space_app("demo", "hardneg_demo_space").main(argv)
    return 0
