"""`hardneg submit`: send a predictions file to the leaderboard and print what it says.

With a Space URL or Hub id the file goes through the Space's API (`gradio_client`,
endpoint `/submit`), exactly as an upload in the browser would. The Space needs to know
who you are: your Hub token (`huggingface_hub.get_token()`: `hf auth login` or
$HF_TOKEN, or --hf-token) is passed as Gradio's `oauth_token`, and the Space checks it
with the Hub's `whoami`; the model name in the file must be in your namespace or one of
your organizations'. A failed call is retried: the board stores the same file once, so
a retry after a lost reply never makes a second version.

With a local folder the file is submitted straight into that leaderboard store (for
running your own board) under --submitter, or your Hub account when it is not given.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

DEFAULT_SPACE = "video-hardneg/leaderboard"
#: what the board answers when it stored the file, or had stored it before
ACCEPTED = ("stored ", "already stored ")


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "submit",
        help="submit a predictions file to the leaderboard",
        description=(
            "Submit a predictions Parquet (written by `hardneg score`) to the leaderboard. The board checks it "
            "(every id once, no NaN, the data revision, ...), recomputes every metric with intervals and stores "
            "it as a new version (the same file twice is stored once). Refusals list every problem with its fix. "
            "You are identified by your Hugging Face token (`hf auth login`, $HF_TOKEN or --hf-token); the "
            "file's model_id must be '<your user name>/<name>' or '<your organization>/<name>'."
        ),
    )
    p.add_argument("predictions", help="predictions .parquet file (one benchmark config; one or more of its splits)")
    p.add_argument("--space", default=DEFAULT_SPACE,
                   help=f"Space URL (http://127.0.0.1:7860), Hub Space id (default {DEFAULT_SPACE}), "
                        "or a local leaderboard data folder (with --benchmarks)")
    p.add_argument("--hf-token", default=None,
                   help="Hub token that identifies you (default: huggingface_hub.get_token(), i.e. $HF_TOKEN or "
                        "the token saved by `hf auth login`)")
    p.add_argument("--submitter", default=None,
                   help="local folder boards only: the user name to store under (default: your Hub account)")
    p.add_argument("--benchmarks", default=None,
                   help="with a local --space folder: the folder of built benchmarks (`hardneg build` outputs)")
    p.add_argument("--retries", type=int, default=2,
                   help="retries of a failed call to the Space (default 2; safe: the same file is stored once)")
    p.set_defaults(func=run)
    return p


def is_remote(space: str, benchmarks: str | None = None) -> bool:
    """A URL, or an owner/name Space id that is not a local folder (--benchmarks means local)."""
    if re.match(r"^https?://", space):
        return True
    return benchmarks is None and not Path(space).exists() and bool(re.match(r"^[\w.-]+/[\w.-]+$", space))


def hub_token(explicit: str | None = None) -> str | None:
    if explicit:
        return explicit
    try:
        from huggingface_hub import get_token
    except ImportError:
        return os.environ.get("HF_TOKEN")
    return get_token()


def submit_remote(path: Path, space: str, token: str, retries: int = 2, wait_s: float = 2.0) -> str:
    """One call to the Space's /submit with the token as `oauth_token`; retried on failure (idempotent)."""
    from gradio_client import Client, handle_file

    last: Exception | None = None
    for attempt in range(retries + 1):
        try:
            client = Client(space, token=token, oauth_token=token, verbose=False)
            return client.predict(handle_file(str(path)), api_name="/submit")
        except Exception as exc:  # network errors, a Space restarting: the board stores the same file once
            last = exc
            if attempt < retries:
                print(f"the Space did not answer ({type(exc).__name__}); retrying in {wait_s * 2 ** attempt:.0f} s "
                      "(a retry never makes a second version)", file=sys.stderr)
                time.sleep(wait_s * 2 ** attempt)
    raise ConnectionError(f"the Space {space} did not answer after {retries + 1} attempts: "
                          f"{type(last).__name__}: {str(last)[:200]}")


def submit_local(path: Path, data_dir: str, benchmarks: str | None, who) -> str:
    from hardneg.leaderboard import Leaderboard

    if benchmarks is None:
        raise ValueError("a local --space folder needs --benchmarks (the folder of `hardneg build` outputs)")
    board = Leaderboard(data_dir, benchmarks_dir=benchmarks, compute_blind=False)
    return board.submit(path, who).message


def run(args) -> int:
    path = Path(args.predictions)
    if not path.is_file():
        raise FileNotFoundError(f"predictions file {path} not found; pass the .parquet written by `hardneg score`")
    token = hub_token(args.hf_token)
    if is_remote(args.space, args.benchmarks):
        if not token:
            raise ValueError("the leaderboard identifies you by your Hugging Face token: run `hf auth login`, "
                             "set HF_TOKEN, or pass --hf-token")
        message = submit_remote(path, args.space, token, retries=args.retries)
    else:
        who = args.submitter  # your own board: the name you give, else your Hub account
        if not who and token:
            from hardneg.leaderboard.identity import identity_from_token

            try:
                who = identity_from_token(token)
            except Exception as exc:
                raise ValueError(f"the Hub did not confirm your token ({exc}); pass --submitter for a local "
                                 "board") from None
        if not who:
            raise ValueError("no identity: pass --submitter for a local board, or log in with `hf auth login`")
        message = submit_local(path, args.space, args.benchmarks, who)
    print(message)
    return 0 if message.startswith(ACCEPTED) else 1
