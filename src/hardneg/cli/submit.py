"""`hardneg submit`: send a predictions file to the leaderboard and print what it says.

With a Space URL or Hub id the file goes through the Space's API (`gradio_client`,
endpoint `/submit`), exactly as an upload in the browser would; with a local folder it
is submitted straight into that leaderboard store (for running your own board).
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

DEFAULT_SPACE = "video-hardneg/leaderboard"


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "submit",
        help="submit a predictions file to the leaderboard",
        description=(
            "Submit a predictions Parquet (written by `hardneg score`) to the leaderboard. The board checks it "
            "(every id once, no NaN, the data revision, ...), recomputes every metric with intervals and stores "
            "it as a new version. Refusals list every problem with its fix."
        ),
    )
    p.add_argument("predictions", help="predictions .parquet file (one benchmark config; one or more of its splits)")
    p.add_argument("--space", default=DEFAULT_SPACE,
                   help=f"Space URL (http://127.0.0.1:7860), Hub Space id (default {DEFAULT_SPACE}), "
                        "or a local leaderboard data folder (with --benchmarks)")
    p.add_argument("--submitter", default=os.environ.get("HF_USER") or os.environ.get("USER", ""),
                   help="your Hub user name: the first submitter of a model name owns it (default $HF_USER or $USER)")
    p.add_argument("--benchmarks", default=None,
                   help="with a local --space folder: the folder of built benchmarks (`hardneg build` outputs)")
    p.add_argument("--hf-token", default=None, help="token for a private Space (default: $HF_TOKEN)")
    p.set_defaults(func=run)
    return p


def is_remote(space: str, benchmarks: str | None = None) -> bool:
    """A URL, or an owner/name Space id that is not a local folder (--benchmarks means local)."""
    if re.match(r"^https?://", space):
        return True
    return benchmarks is None and not Path(space).exists() and bool(re.match(r"^[\w.-]+/[\w.-]+$", space))


def submit_remote(path: Path, space: str, submitter: str, token: str | None = None) -> str:
    from gradio_client import Client, handle_file

    client = Client(space, token=token or os.environ.get("HF_TOKEN"), verbose=False)
    return client.predict(handle_file(str(path)), submitter, api_name="/submit")


def submit_local(path: Path, data_dir: str, benchmarks: str | None, submitter: str) -> str:
    from hardneg.leaderboard import Leaderboard

    if benchmarks is None:
        raise ValueError("a local --space folder needs --benchmarks (the folder of `hardneg build` outputs)")
    board = Leaderboard(data_dir, benchmarks_dir=benchmarks, compute_blind=False)
    return board.submit(path.read_bytes(), submitter).message


def run(args) -> int:
    path = Path(args.predictions)
    if not path.is_file():
        raise FileNotFoundError(f"predictions file {path} not found; pass the .parquet written by `hardneg score`")
    if not args.submitter:
        raise ValueError("no submitter name: pass --submitter <your Hub user name>")
    if is_remote(args.space, args.benchmarks):
        message = submit_remote(path, args.space, args.submitter, args.hf_token)
    else:
        message = submit_local(path, args.space, args.benchmarks, args.submitter)
    print(message)
    return 0 if message.startswith("stored ") else 1
