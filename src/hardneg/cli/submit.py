"""`hardneg submit`: send predictions to the leaderboard and print what it says.

What is sent: one predictions file (`hardneg score`), or a `hardneg run` output folder: every predictions file
in it (`<folder>/predictions/*.parquet`), stored as ONE submission, atomically (all files or none). `--model-id`
renames the model in every file before sending (the files themselves are not changed). The model's metadata
(parameters, type, license, link, revision) is read from its Hub model card when there is one and from the
flags otherwise (flags win); offline, the card is skipped with a note. It is stored with the submission
(`model_meta`) and shown on the board.

With a Space URL or Hub id the files go through the Space's API (`gradio_client`, endpoint `/submit_files`).
The Space needs to know who you are: your Hub token (`huggingface_hub.get_token()`: `hf auth login` or
$HF_TOKEN, or --hf-token) is passed as Gradio's `oauth_token`, and the Space checks it with the Hub's `whoami`;
the model name must be in your namespace or one of your organizations'. A failed call is retried: the board
stores the same file once, so a retry after a lost reply never makes a second version. A board on this machine
(a loopback URL: `hardneg leaderboard serve`) needs no token: in its local mode it stores every submission under
its own identity, and a board that does need one answers with its refusal.

With a local folder the files are submitted straight into that leaderboard store (your own board, no account):
the identity is `--as NAME` (default: your OS user name), marked "local" on the board, which may write
`NAME/...` and `local/...` model names.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_SPACE = "video-hardneg/leaderboard"
#: what the board answers when it stored the files, or had stored them before
ACCEPTED = ("stored ", "already stored ")


def add_parser(subparsers) -> argparse.ArgumentParser:
    from hardneg.leaderboard.model_meta import MODEL_TYPES

    p = subparsers.add_parser(
        "submit",
        help="submit predictions (a file or a `hardneg run` folder) to the leaderboard",
        description=(
            "Submit predictions to the leaderboard: a predictions Parquet (`hardneg score`) or a `hardneg run` "
            "output folder (every predictions file in it, stored as one submission: all or none). The board "
            "checks them (every id once, no NaN, the data revision, ...), recomputes every metric with intervals "
            "and stores them as new versions (the same file twice is stored once). Refusals list every problem "
            "with its fix. On a Space you are identified by your Hugging Face token (`hf auth login`, $HF_TOKEN "
            "or --hf-token) and the model id must be '<your user name>/<name>' or '<your organization>/<name>'; "
            "into a local folder you are `--as NAME` (default: your OS user), shown as 'local'."
        ),
    )
    p.add_argument("predictions", help="a predictions .parquet file, or a `hardneg run` --out folder")
    p.add_argument("--space", default=DEFAULT_SPACE,
                   help=f"Space URL (http://127.0.0.1:7860), Hub Space id (default {DEFAULT_SPACE}), "
                        "or a local leaderboard data folder (with --benchmarks)")
    p.add_argument("--benchmarks", default=None,
                   help="with a local --space folder: the folder of built benchmarks (`hardneg build` outputs, "
                        "or a `hardneg run` folder's data/)")
    p.add_argument("--create", action="store_true",
                   help="with a local --space folder: start a new board there when the folder does not exist (without "
                        "it, a folder that does not exist is refused: a misspelled --space never makes a new board)")
    p.add_argument("--model-id", default=None, metavar="ORG/NAME",
                   help="the model's name on the board (overrides the name in the files)")
    p.add_argument("--hf-token", default=None,
                   help="Hub token that identifies you on a Space (default: huggingface_hub.get_token(), i.e. "
                        "$HF_TOKEN or the token saved by `hf auth login`)")
    p.add_argument("--as", "--submitter", dest="submitter", default=None, metavar="NAME",
                   help="local folder boards only: the name you submit as (default: your OS user name)")
    p.add_argument("--retries", type=int, default=2,
                   help="retries of a failed call to the Space (default 2; safe: the same file is stored once)")
    g = p.add_argument_group("model metadata (default: the Hub model card, when the model is on the Hub)")
    g.add_argument("--params", default=None, help="number of parameters (151000000, 151M, 7B)")
    g.add_argument("--model-type", default=None, choices=MODEL_TYPES, help="how the model scores captions")
    g.add_argument("--license", default=None, help="the model's license (e.g. mit, apache-2.0)")
    g.add_argument("--link", default=None, help="http(s) page of the model (default: its Hub page)")
    g.add_argument("--revision", default=None, help="the model's revision (commit, tag)")
    g.add_argument("--no-hub-card", action="store_true", help="do not read the Hub model card")
    p.set_defaults(func=run)
    return p


def is_remote(space: str, benchmarks: str | None = None) -> bool:
    """A URL, or an owner/name Space id that is not a local folder (--benchmarks means local)."""
    if re.match(r"^https?://", space):
        return True
    return benchmarks is None and not Path(space).exists() and bool(re.match(r"^[\w.-]+/[\w.-]+$", space))


def is_loopback(space: str) -> bool:
    """A URL of this machine: a board started with `hardneg leaderboard serve` there uses its own local identity."""
    from urllib.parse import urlparse

    host = urlparse(space).hostname if "://" in space else None
    return host in ("127.0.0.1", "localhost", "::1")


def hub_token(explicit: str | None = None) -> str | None:
    if explicit:
        return explicit
    try:
        from huggingface_hub import get_token
    except ImportError:
        return os.environ.get("HF_TOKEN")
    return get_token()


def prediction_files(path: Path) -> list[Path]:
    """A file as is; a `hardneg run` folder: every `predictions/*.parquet` (or `*.parquet` at its top)."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise FileNotFoundError(f"{path} not found; pass a predictions .parquet (`hardneg score`) or a `hardneg run` "
                                "--out folder")
    files = sorted((path / "predictions").glob("*.parquet")) or sorted(path.glob("*.parquet"))
    if not files:
        raise FileNotFoundError(f"{path} holds no predictions (.parquet in {path / 'predictions'} or {path}); is it "
                                "a `hardneg run` --out folder?")
    return files


def file_metadata(data: bytes) -> dict:
    import pyarrow.parquet as pq

    from hardneg.schema import read_predictions_metadata

    return read_predictions_metadata(pq.read_schema(io.BytesIO(data)))


def renamed(data: bytes, model_id: str) -> bytes:
    """The same predictions with `model_id` in their metadata (everything else kept)."""
    import pyarrow.parquet as pq

    from hardneg.schema import PREDICTIONS_METADATA_KEY

    table = pq.read_table(io.BytesIO(data))
    meta = dict(table.schema.metadata or {})
    fields = json.loads(meta[PREDICTIONS_METADATA_KEY])
    fields["model_id"] = model_id
    meta[PREDICTIONS_METADATA_KEY] = json.dumps(fields, sort_keys=True).encode()
    buf = io.BytesIO()
    pq.write_table(table.replace_schema_metadata(meta), buf)
    return buf.getvalue()


def read_files(paths: list[Path], model_id: str | None) -> list[bytes]:
    from hardneg.scoring import check_model_id

    model_id = check_model_id(model_id)
    out = []
    for p in paths:
        data = p.read_bytes()
        try:
            meta = file_metadata(data)
        except Exception as exc:
            raise ValueError(f"{p} is not a predictions file ({exc})") from None
        if model_id and meta.get("model_id") != model_id:
            data = renamed(data, model_id)
        out.append(data)
    return out


def check_names(files: list[bytes], given: str | None, who=None) -> None:
    """Refuse, once and with the fix, predictions whose model name no board takes (issue 33: a `hardneg run`
    folder without --model-id named a bare `tiny-clip` in all 44 files, and the board refused each file in turn).

    Without --model-id, every file's `model_id` must be ORG/NAME; into a local board (`who`: its identity) it
    must also be a namespace that identity may write. With --model-id the files are renamed, so nothing to do."""
    if given:
        return
    names = sorted({str(file_metadata(data).get("model_id") or "") for data in files})
    for name in names:
        bare = name.rsplit("/", 1)[-1] or "NAME"
        if "/" not in name:
            problem = (f"the predictions name the model {name[:80]!r}, which has no namespace (a board names a model "
                       "ORG/NAME)")
        elif who is not None and not who.may_write(name):
            problem = (f"the predictions name the model {name[:80]!r}, and this local board stores names in "
                       f"{who.username}/ or local/ only")
        else:
            continue
        raise ValueError(f"{problem}; pass --model-id local/{bare} for a board of your own (or --model-id "
                         f"<your Hub user or organization>/{bare} for the Hub); the files are renamed as they are sent")


def gather_model_meta(args, files: list[bytes]) -> tuple[dict, str]:
    """(model_meta, a note): the Hub card of the model the predictions came from, then the flags."""
    from hardneg.leaderboard.model_meta import from_hub, merge

    meta = file_metadata(files[0])
    inner = meta.get("model") if isinstance(meta.get("model"), dict) else {}
    hub_id = inner.get("model_id") or meta.get("model_id")
    revision = args.revision or inner.get("model_revision") or meta.get("model_revision")
    card, note = ({}, "--no-hub-card: metadata from flags only") if args.no_hub_card else \
        from_hub(str(hub_id), revision)
    flags = {"params": args.params, "model_type": args.model_type, "license": args.license, "link": args.link,
             "revision": args.revision}
    if not card.get("model_type") and isinstance(inner.get("model_type"), str):
        card = {**card, "model_type": inner["model_type"]}  # what the adapter says it is (a video LLM: generative)
    return merge(card, flags), note


def submit_remote(files: list[bytes], space: str, token: str, model_meta: dict, retries: int = 2,
                  wait_s: float = 2.0) -> str:
    """One call to the Space's /submit_files with the token as `oauth_token`; retried on failure (idempotent)."""
    import threading

    from gradio_client import Client, handle_file

    # the client's worker threads die with their own traceback when the Space goes away mid-call (a SIGKILLed
    # server): the call's own error says it all, so their tracebacks are kept off the terminal
    quiet, threading.excepthook = threading.excepthook, lambda args: None
    try:
        return _submit_remote(files, space, token, model_meta, retries, wait_s, Client, handle_file)
    finally:
        threading.excepthook = quiet


#: how long one upload or answer may take (gradio_client's own default is httpx's 5 s: under 60 page-load threads,
#: 21 of 80 uploads hit it with nothing stored; issue 42, N20); the connection itself gets `CONNECT_TIMEOUT_S`
UPLOAD_TIMEOUT_S = 120.0
CONNECT_TIMEOUT_S = 15.0


def what_happened(exc: Exception) -> str:
    """One line on a failed call: a timeout says which and how long (the board stores a file whole or not at all,
    so nothing was stored by that attempt)."""
    import httpx

    if isinstance(exc, httpx.ConnectTimeout):
        return f"could not connect within {CONNECT_TIMEOUT_S:.0f} s"
    if isinstance(exc, httpx.TimeoutException):
        return (f"the upload or its answer took longer than {UPLOAD_TIMEOUT_S:.0f} s ({type(exc).__name__}; the "
                "Space is busy or slow)")
    return f"the Space did not answer ({type(exc).__name__}: {str(exc)[:120]})"


def _submit_remote(files, space, token, model_meta, retries, wait_s, Client, handle_file) -> str:
    import httpx

    last: Exception | None = None
    timeout = httpx.Timeout(UPLOAD_TIMEOUT_S, connect=CONNECT_TIMEOUT_S)
    with tempfile.TemporaryDirectory(prefix="hardneg-submit-") as tmp:
        paths = []
        for k, data in enumerate(files):
            p = Path(tmp) / f"predictions-{k}.parquet"
            p.write_bytes(data)
            paths.append(str(p))
        for attempt in range(retries + 1):
            try:
                client = Client(space, token=token, oauth_token=token, verbose=False,
                                httpx_kwargs={"timeout": timeout})
                return client.predict([handle_file(p) for p in paths], json.dumps(model_meta),
                                      api_name="/submit_files")
            except Exception as exc:  # network errors, a Space restarting: the board stores the same file once
                last = exc
                if attempt < retries:
                    print(f"attempt {attempt + 1} of {retries + 1}: {what_happened(exc)}; retrying in "
                          f"{wait_s * 2 ** attempt:.0f} s (a retry never makes a second version)", file=sys.stderr)
                    time.sleep(wait_s * 2 ** attempt)
    raise ConnectionError(f"the Space {space} did not take the files after {retries + 1} attempts (last: "
                          f"{what_happened(last)}); check that it is running (open it in a "
                          "browser) and try again: a retry never stores a second version")


def submit_local(files: list[bytes], data_dir: str, benchmarks: str | None, who, model_meta: dict) -> str:
    from hardneg.leaderboard import Leaderboard

    if benchmarks is None:
        raise ValueError("a local --space folder needs --benchmarks (the folder of `hardneg build` outputs, or a "
                         "`hardneg run` folder's data/)")
    from hardneg.cli.leaderboard import remember_benchmarks

    board = Leaderboard(data_dir, benchmarks_dir=benchmarks, compute_blind=False)
    # `hardneg leaderboard show --data DIR` needs no --benchmarks; a folder with fewer benchmarks never narrows the set
    added = remember_benchmarks(data_dir, benchmarks)
    if added:
        print(f"board {data_dir}: declared benchmarks {', '.join(added)} (from {benchmarks})", file=sys.stderr)
    return board.submit_files(files, who, model_meta).message


def run(args) -> int:
    from hardneg.leaderboard.identity import local_identity

    files = read_files(prediction_files(Path(args.predictions)), args.model_id)
    remote = is_remote(args.space, args.benchmarks)
    who = None if remote else local_identity(args.submitter)
    check_names(files, args.model_id, who)
    if not remote:  # the rule of `leaderboard serve` and `show`: a misspelled folder never becomes a new board
        from hardneg.cli.leaderboard import check_data_folder

        try:
            check_data_folder(args.space, args.create)
        except FileNotFoundError as exc:
            raise FileNotFoundError(str(exc).replace("--data", "--space", 1)) from None
    model_meta, note = gather_model_meta(args, files)
    print(f"model metadata: {note}", file=sys.stderr)
    if remote:
        token = hub_token(args.hf_token)
        if not token and not is_loopback(args.space):  # a board on this machine (`leaderboard serve`) needs none
            raise ValueError("the leaderboard identifies you by your Hugging Face token: run `hf auth login`, "
                             "set HF_TOKEN, or pass --hf-token (or submit into a local board folder: "
                             "--space DIR --benchmarks DIR)")
        message = submit_remote(files, args.space, token, model_meta, retries=args.retries)
    else:
        message = submit_local(files, args.space, args.benchmarks, who, model_meta)
    print(message)
    return 0 if message.startswith(ACCEPTED) else 1
