"""`hardneg leaderboard serve|show`: the board on your own machine, and its Overall table in a terminal.

`serve` starts the Space app (`spaces/leaderboard/app.py`) on loopback in LOCAL mode: no Hub sign-in, one
identity (`--as NAME`, default your OS user) for every submission, shown as "local". It refuses to start where
it would be public (SPACE_ID set): there, sign-in must be Hugging Face OAuth. `show` prints the Overall table
(percent with one decimal, the header says so) or writes it as CSV (`--csv FILE`, `-` = stdout): a machine
output, so fractions in [0, 1] with each interval bound in its own column (`<benchmark>:<metric> low/high`).

The benchmarks a store is scored against: its declared set, recorded in the store folder (`board.json`: each
benchmark and the folder it is read from). `--benchmarks DIR` (folders written by `hardneg build`, or a `hardneg
run` folder's data/), here or in `hardneg submit`, only ever adds to it; with nothing recorded yet,
$HARDNEG_LB_BENCHMARKS, else the built-in samples (built into `<data>/benchmarks`). `benchmarks` lists the set;
`benchmarks --set DIR` is the one way to narrow it, and says which benchmarks (and stored rows) that hides.

A `--data` folder that does not exist is refused (a misspelled name never shows an empty board); `--create`
starts a new, empty board there.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from hardneg.apps import BOARD_PORT

DEFAULT_DATA = "hardneg-board"
DEFAULT_PORT = BOARD_PORT  # 7860; the demo's is 7861, so both start side by side
BOARD_FILE = "board.json"


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("leaderboard", help="run the leaderboard locally (serve) or print its Overall table (show)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="action", metavar="<action>", required=True)
    s = sub.add_parser("serve", help="start the board on this machine (local mode, no sign-in)")
    _common(s)
    s.add_argument("--port", type=int, default=None,
                   help=f"port to listen on (default {DEFAULT_PORT}, or a free one when that is taken; it is printed)")
    s.add_argument("--as", dest="as_name", default=None, metavar="NAME",
                   help="the identity every submission is stored under (default: your OS user name)")
    s.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    s.set_defaults(func=serve)
    w = sub.add_parser("show", help="print the Overall table (or write it as CSV)")
    _common(w)
    w.add_argument("--csv", default=None, metavar="FILE|-", help="write CSV to FILE (`-`: stdout) instead of a table: fractions, interval bounds "
                        "in their own columns")
    w.set_defaults(func=show)
    b = sub.add_parser("benchmarks", help="list the board's declared benchmark set, or replace it (--set DIR)")
    b.add_argument("--data", default=DEFAULT_DATA, help=f"the board's store folder (default ./{DEFAULT_DATA})")
    b.add_argument("--set", dest="set_dir", default=None, metavar="DIR",
                   help="declare exactly the benchmarks built under DIR: the one command that can narrow a board "
                        "(submissions and --benchmarks only ever add); it says which benchmarks it hides and how "
                        "many stored submissions they hold (they stay stored)")
    b.set_defaults(func=benchmarks_command)
    t = sub.add_parser("status", help="the board's results repo: restored or not, records skipped, the outbox")
    t.add_argument("--data", default=DEFAULT_DATA, help=f"the board's store folder (default ./{DEFAULT_DATA})")
    t.set_defaults(func=status)


def _common(p) -> None:
    p.add_argument("--data", default=DEFAULT_DATA, help=f"the board's store folder (default ./{DEFAULT_DATA})")
    p.add_argument("--benchmarks", default=None,
                   help="folder of built benchmarks (default: recorded in the store folder, $HARDNEG_LB_BENCHMARKS, "
                        "or the built-in samples)")
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples per interval (default 1000)")
    p.add_argument("--create", action="store_true",
                   help="start a new, empty board when the --data folder does not exist (without it, a folder that "
                        "does not exist is refused: a misspelled --data never shows an empty board)")


def _benchmarks_in(root: Path) -> list[str]:
    from hardneg import benchmarks as registry

    return [b for b in registry.names() if (Path(root) / b).is_dir()]


def declared_benchmarks(data: str | Path) -> dict[str, Path]:
    """The board's declared benchmark set: benchmark -> the folder it is loaded from (`board.json`; {} when none).
    A board.json of before issue 41 (`{"benchmarks": DIR}`) declares every benchmark folder under DIR."""
    from hardneg import benchmarks as registry

    try:
        record = json.loads((Path(data) / BOARD_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    declared = record.get("declared") if isinstance(record, dict) else None
    if isinstance(declared, dict):
        return {b: Path(r) for b, r in declared.items() if b in registry.names() and isinstance(r, str)}
    root = record.get("benchmarks") if isinstance(record, dict) else None
    return {b: Path(root) for b in _benchmarks_in(Path(root))} if isinstance(root, str) else {}


def declare_benchmarks(data: str | Path, declared: dict[str, Path]) -> None:
    """Write the declared set (benchmark -> folder), in the registry's order."""
    from hardneg import benchmarks as registry
    from hardneg.io import atomic_write_text

    data = Path(data)
    data.mkdir(parents=True, exist_ok=True)
    ordered = {b: str(Path(declared[b]).resolve()) for b in registry.names() if b in declared}
    atomic_write_text(data / BOARD_FILE, json.dumps({"declared": ordered}, indent=1) + "\n")


def remember_benchmarks(data: str | Path, benchmarks: str | Path) -> list[str]:
    """Add the benchmarks of a folder to the board's declared set (so `show` and `serve` need only --data) and
    return the names added. A benchmark already declared keeps its folder and none is ever dropped (issue 41: a
    2-benchmark submission had silently hidden the other 8 benchmarks' results); `hardneg leaderboard
    benchmarks --set DIR` is the one way to narrow the set, and it says what that hides."""
    declared = declared_benchmarks(data)
    root = Path(benchmarks).resolve()
    added = [b for b in _benchmarks_in(root) if b not in declared]
    declared.update({b: root for b in added})
    declare_benchmarks(data, declared)
    return added


def board_item_sets(data: str | Path, explicit: str | None) -> dict:
    """The item sets a board is scored against: the declared set (each benchmark from its recorded folder), with
    the benchmarks of an explicit --benchmarks folder loaded from it (and added to the declared set). With nothing
    declared: --benchmarks, $HARDNEG_LB_BENCHMARKS, or the built-in samples (built into `<data>/benchmarks`)."""
    from hardneg.leaderboard.items import load_benchmarks

    declared = declared_benchmarks(data)
    if explicit:
        if not Path(explicit).is_dir():
            raise FileNotFoundError(f"--benchmarks {explicit}: no such folder; pass the folder of `hardneg build` "
                                    "outputs (or a `hardneg run` folder's data/)")
        added = remember_benchmarks(data, explicit)
        if added and declared:  # a first declaration is no news
            print(f"board {data}: benchmarks added to its declared set from {explicit}: {', '.join(added)}",
                  file=sys.stderr)
        declared.update({b: Path(explicit) for b in _benchmarks_in(Path(explicit))})
    elif not declared:
        root = _default_folder(data)
        declared = {b: root for b in _benchmarks_in(root)}
        remember_benchmarks(data, root)
    item_sets: dict = {}
    by_root: dict[Path, list[str]] = {}
    for b, root in declared.items():
        by_root.setdefault(Path(root), []).append(b)
    for root, names in by_root.items():
        gone = [b for b in names if not (root / b).is_dir()]
        if gone:  # said, never silently dropped
            print(f"board {data}: the declared benchmark(s) {', '.join(gone)} are not shown: their folder "
                  f"{root} is gone (pass --benchmarks DIR holding them, or `hardneg leaderboard benchmarks --set`)",
                  file=sys.stderr)
        if len(gone) < len(names):
            item_sets.update(load_benchmarks(root, [b for b in names if b not in gone]))
    if not item_sets:
        raise FileNotFoundError(f"board {data}: none of its declared benchmarks' folders exist; pass --benchmarks DIR "
                                "(the folder of `hardneg build` outputs, or a `hardneg run` folder's data/)")
    return item_sets


def _default_folder(data: str | Path) -> Path:
    if os.environ.get("HARDNEG_LB_BENCHMARKS"):
        return Path(os.environ["HARDNEG_LB_BENCHMARKS"])
    from hardneg.datasets import build_samples, sample_benchmarks

    root = Path(data) / "benchmarks"
    missing = [b for b in sample_benchmarks() if not (root / b).is_dir()]
    if missing:
        print(f"building the built-in samples into {root} ...", file=sys.stderr)
        build_samples(root, overwrite=True, benchmarks=tuple(missing))
    return root


def check_data_folder(data: str | Path, create: bool) -> None:
    """Refuse a --data folder that does not exist unless `--create` asks for a new board (issue 33: `show --data
    my-bord`, a typo, made an empty board and showed "0 stored versions")."""
    folder = Path(data)
    if folder.is_dir():
        return
    if folder.exists():
        raise FileExistsError(f"--data {folder}: a file, not a board folder; pass the board's folder")
    if create:
        return
    raise FileNotFoundError(f"--data {folder}: no such board folder; check the name (a board is the folder given to "
                            "`hardneg submit --space DIR` or to an earlier `leaderboard serve`), or add --create "
                            "to start a new, empty board there")


def open_board(args):
    from hardneg.leaderboard import Leaderboard

    check_data_folder(args.data, getattr(args, "create", False))
    item_sets = board_item_sets(args.data, args.benchmarks)
    # the text-only `blind-unigram` baseline the README promises: computed here too (under a second on the samples;
    # shown as "pending" with the reason where the models extra cannot load it)
    return Leaderboard(args.data, item_sets=item_sets, n_resamples=args.resamples, compute_blind=True)


def benchmarks_command(args) -> int:
    """`hardneg leaderboard benchmarks`: the declared set, and the explicit way to change it."""
    from hardneg.leaderboard.store import Store

    check_data_folder(args.data, False)
    declared = declared_benchmarks(args.data)
    store = Store(args.data)
    stored = {b: len(store.current(b)) for b in set(declared) | set(_benchmarks_in(Path(args.set_dir or ".")))}
    if args.set_dir is None:
        print(f"board {args.data}: {len(declared)} declared benchmark(s)")
        for b, root in declared.items():
            print(f"  {b}: {root}{'' if (root / b).is_dir() else ' (folder gone: not shown)'}; "
                  f"{stored[b]} stored submission(s) shown")
        return 0
    new = {b: Path(args.set_dir).resolve() for b in _benchmarks_in(Path(args.set_dir))}
    if not new:
        raise FileNotFoundError(f"--set {args.set_dir}: no built benchmark folders there (`hardneg build` outputs)")
    hidden = [b for b in declared if b not in new]
    added = [b for b in new if b not in declared]
    declare_benchmarks(args.data, new)
    print(f"board {args.data}: declared benchmarks now {', '.join(new)} (from {args.set_dir})")
    for b in hidden:
        print(f"  hides {b}: {stored[b]} stored submission(s) no longer shown (they stay stored; declare a folder "
              f"holding {b} again to show them)")
    for b in added:
        print(f"  adds {b}")
    if not hidden:
        print("  hides nothing")
    return 0


def show(args) -> int:
    from hardneg.io import atomic_write_text

    board = open_board(args)
    if args.csv is None:
        table = board.average()
        print(f"Overall ({board.store.count()} stored versions; scores in percent, one decimal, [95% interval])")
        print(table.to_string(index=False) if len(table) else "(no rows)")
        return 0
    # a machine output: fractions, each interval bound in its own column (`hardneg.vocabulary`'s rule)
    table = board.overall_frame()
    if args.csv == "-":
        sys.stdout.write(table.to_csv(index=False))
    else:
        atomic_write_text(Path(args.csv), table.to_csv(index=False))
        print(f"wrote {args.csv}: {len(table)} rows")
    return 0


def serve(args) -> int:
    from hardneg.leaderboard.identity import local_identity
    from hardneg.leaderboard.signin import LocalModeRefused, SignIn, refuse_local_if_public

    try:
        refuse_local_if_public()
    except LocalModeRefused as exc:
        print(f"hardneg leaderboard serve: error: {exc}", file=sys.stderr)
        return 2
    from hardneg.apps import choose_port, load_space_app, private_upload_dir

    who = local_identity(args.as_name)
    check_data_folder(args.data, args.create)  # before a port is taken or the samples are built
    port = choose_port(args.port, DEFAULT_PORT, args.host, "hardneg leaderboard serve")
    board = open_board(args)
    private_upload_dir("leaderboard")  # uploads never meet another Gradio app's clean-up
    app = load_space_app("leaderboard")
    mode = SignIn("local", "hardneg leaderboard serve", who)  # create_app says the mode, once (issue 41)
    demo = app.create_app(board, sign_in=mode, url=f"http://{args.host}:{port}").queue(default_concurrency_limit=4, max_size=app.QUEUE_MAX)
    print(f"serving {args.data} at http://{args.host}:{port}/ (Ctrl+C stops)", file=sys.stderr)
    demo.launch(server_name=args.host, server_port=port, quiet=True, **app.launch_options(board))
    return 0


def status(args) -> int:
    """What the board last wrote of its results repo (`mirror-status.json`: the restore's state and report), and the
    store's outbox counted now (rows the repo does not hold). Exit 1 when the board is not restored, a record was
    skipped or the outbox is not empty: something for the operator to look at."""
    from hardneg.leaderboard.service import STATUS_FILE
    from hardneg.leaderboard.store import Store

    check_data_folder(args.data, False)
    path = Path(args.data) / STATUS_FILE
    st = json.loads(path.read_text()) if path.is_file() else {"repo": None}
    box = Store(args.data).outbox_counts()
    if not st.get("repo"):
        print(f"{args.data}: no results repo recorded (a board without a mirror, or one never started with it)")
    else:
        print(f"results repo: {st['repo']}\nrestore: {st.get('restore')}\nlast restore added: {st.get('restored')}")
        for p, why in st.get("skipped", []):
            print(f"skipped: {p}: {why}")
        if st.get("last_publish_failure"):
            print(f"last publish failure: {st['last_publish_failure']}")
    if st.get("repo"):
        print(f"outbox: {box['submissions']} submission(s), {box['tombstones']} moderation(s) not in the results "
              "repo")
    trouble = st.get("repo") and (st.get("restore") != "restored" or st.get("skipped") or any(box.values()))
    return 1 if trouble else 0
