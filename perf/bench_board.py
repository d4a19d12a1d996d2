"""The board at 1,000 stored submissions: `hardneg leaderboard show` and a page load, against a 2 s target.

Builds the built-in samples (every benchmark, 44 parts), scores each part once per seed through the board's own
recompute, and stores 1,000 submissions (100 models x 10 random parts, plus versions) straight into a fresh
store (the same rows `Leaderboard.submit` writes, without re-running the bootstrap 1,000 times). Then times:

* `show`: the command in a fresh process (`python -m hardneg leaderboard show --data DIR`, imports included),
  and `Leaderboard(...).average()` in this process on a fresh board (the Overall table's computation);
* a page load: the Space app (`spaces/leaderboard/app.py`, read-only) on loopback: HTTP GET of `/` plus the
  Overall table a new visitor's page load computes right after a submission landed (every row recomputed for
  the new store state), then again from the app's cache.

    python perf/bench_board.py                 # 1,000 submissions
    python perf/bench_board.py --n 200 --repeat 1
    python perf/bench_board.py --items 6000     # one Feint6K-sized benchmark, 1,000 submissions (issue 29)

Prints seconds and the ratio to the 2 s target (issue 19). The machine may be shared: run it twice.
"""

from __future__ import annotations

import argparse
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

TARGET_S = 2.0
REPO = Path(__file__).resolve().parents[1]


def write_large(bench_dir: Path, n_items: int) -> None:
    """One Feint6K-sized benchmark (feint6k/msrvtt/test, `n_items` items x 6 captions; issue 29's first-load case),
    written by perf/bench_submission_bombs.py's writer."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_submission_bombs", REPO / "perf" / "bench_submission_bombs.py")
    bombs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bombs)
    bombs.write_board_data(bench_dir, n_items=n_items)


def fill(store_dir: Path, bench_dir: Path, n: int, models: int = 100, per_model: int = 10, seeds: int = 3,
         items: int | None = None):
    from hardneg.datasets import build_samples
    from hardneg.leaderboard import Leaderboard
    from hardneg.leaderboard.example import predictions_bytes
    from hardneg.leaderboard.recompute import recompute
    from hardneg.leaderboard.validate import validate_submission
    from hardneg.leaderboard.identity import Identity

    if items:
        write_large(bench_dir, items)
    else:
        build_samples(bench_dir, overwrite=True)
    board = Leaderboard(store_dir, benchmarks_dir=bench_dir, n_resamples=200, compute_blind=False)
    who = Identity("bench", ("org",))
    keys = sorted(board.item_sets)
    scored = {}
    for key in keys:
        for seed in range(seeds):
            data = predictions_bytes(board.item_sets[key], "org/template", seed=seed, skill=0.5 + seed)
            sub = validate_submission(data, who, board.item_sets, board.max_bytes)
            part = sub.parts[0]
            r = recompute(part.items, part.scores, part.mask, n_resamples=200)
            scored[(key, seed)] = (sub.metadata, data, r)
    rng = random.Random(0)
    stored = 0
    while stored < n:
        for m in range(models):
            if stored >= n:
                break
            for key in (rng.sample(keys, min(per_model, len(keys))) if len(keys) >= per_model else keys * per_model):
                if stored >= n:
                    break
                meta, data, r = scored[(key, rng.randrange(seeds))]
                board.store.add_file(
                    model_id=f"org/model-{m:03d}", submitter="bench",
                    metadata={**meta, "model_id": f"org/model-{m:03d}", "identity": "hub",
                              "model_meta": {"params": rng.choice([10**7, 10**8, 10**9]), "model_type": "contrastive"}},
                    file_bytes=data + f"{m}-{stored}".encode(),  # distinct files: every one a new version
                    parts=[dict(benchmark=key[0], config=key[1], split=key[2], data_revision=str(meta["data_revision"]),
                                results=r.to_dict(), per_example=r.per_example)])
                stored += 1
    return board.store.count()


def timed(fn, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def line(label: str, secs: list[float]) -> str:
    med = statistics.median(secs)
    return f"{label:<58} {med:7.3f} s (runs: {', '.join(f'{s:.3f}' for s in secs)})  x{med / TARGET_S:.2f} of target"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def view_all(board) -> None:
    """What a visitor's page load draws (`spaces/leaderboard/app.py`, `refresh`): the Overall table and its CSV,
    every benchmark's table and CSV."""
    board.overall()
    board.overall_frame()
    for bench in board.benchmarks:
        board.table(bench)
        board.table_frame(bench)


def page_loads(data: Path, bench: Path, repeat: int) -> None:
    """First and warm page loads of a running board (`Leaderboard.start_background`, as the Space app does):
    paired p-values are computed off the page load, so a first load only reads the store and the caches."""
    from hardneg.leaderboard import Leaderboard

    firsts, warm, after = [], [], []
    for _ in range(repeat):
        board = Leaderboard(data, benchmarks_dir=bench, compute_blind=False)
        t = time.perf_counter()
        board.start_background()
        view_all(board)  # a visitor right after the app started: baselines, rows, tables
        firsts.append(time.perf_counter() - t)
        t = time.perf_counter()
        board._pvalues.wait(600)
        ready = time.perf_counter() - t
        warm += timed(lambda: view_all(board), 1)
    print(line("first page load, fresh running board (tables + CSVs)", firsts))
    print(f"{'  (p-values then ready in the background after':<58} {ready:7.3f} s)")
    print(line("warm page load (same store state)", warm))
    for k in range(repeat):  # a submission lands, then a visitor loads the page
        one = board.store.all_submissions()[k]
        board.store.add_file(model_id=one.model_id, submitter="bench", metadata=one.metadata,
                             file_bytes=board.store.file_bytes(one.id) + f"first-{k}".encode(),
                             parts=[dict(benchmark=one.benchmark, config=one.config, split=one.split,
                                         data_revision=one.data_revision, results=one.results,
                                         per_example=board.store.per_example(one.id))])
        after += timed(lambda: view_all(board), 1)
    print(line("first page load after a new submission", after))
    t = time.perf_counter()
    board._pvalues.wait(600)
    print(f"{'  (its p-values then ready in the background after':<58} {time.perf_counter() - t:7.3f} s)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000, help="submissions to store (default 1000)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per figure (default 3)")
    ap.add_argument("--items", type=int, default=None,
                    help="instead of the samples: one Feint6K-sized benchmark of this many items (issue 29: 6000)")
    ap.add_argument("--page-only", action="store_true", help="only the first/warm page loads (no HTTP, no `show`)")
    args = ap.parse_args()
    from hardneg.leaderboard import Leaderboard

    with tempfile.TemporaryDirectory(prefix="bench-board-") as tmp:
        tmp = Path(tmp)
        data, bench = tmp / "store", tmp / "benchmarks"
        t = time.perf_counter()
        count = fill(data, bench, args.n, items=args.items)
        print(f"store: {count} submissions ({time.perf_counter() - t:.1f} s to build); target {TARGET_S:.1f} s each")
        page_loads(data, bench, args.repeat)
        if args.page_only:
            return 0

        env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "HF_HUB_OFFLINE": "1"}
        cmd = [sys.executable, "-m", "hardneg", "leaderboard", "show", "--data", str(data), "--benchmarks", str(bench)]
        rows = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout.count("org/model-")
        print(line(f"hardneg leaderboard show (fresh process, {rows} model rows)",
                   timed(lambda: subprocess.run(cmd, env=env, capture_output=True, check=True), args.repeat)))
        cmd_csv = cmd + ["--csv", "-"]
        print(line("hardneg leaderboard show --csv - (fresh process)",
                   timed(lambda: subprocess.run(cmd_csv, env=env, capture_output=True, check=True), args.repeat)))
        print(line("Overall table computation (fresh Leaderboard().average())",
                   timed(lambda: Leaderboard(data, benchmarks_dir=bench, compute_blind=False).average(), args.repeat)))

        import importlib.util

        spec = importlib.util.spec_from_file_location("bench_space_app", REPO / "spaces" / "leaderboard" / "app.py")
        app = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(app)
        from hardneg.leaderboard.signin import SignIn

        board = Leaderboard(data, benchmarks_dir=bench, compute_blind=False)
        demo = app.create_app(board, sign_in=SignIn("read-only", "benchmark")).queue()
        port = free_port()
        demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                    **app.launch_options(board))
        try:
            url = f"http://127.0.0.1:{port}/"

            def get():
                with urllib.request.urlopen(url, timeout=60) as r:
                    assert r.status == 200
                    r.read()

            get()  # warm the server's first response
            print(line("page load: HTTP GET / of the running app", timed(get, args.repeat)))
            board.overall()  # the running app has drawn the board once (baselines computed at the first load)
            after = []
            for k in range(args.repeat):  # a submission lands, then a new visitor loads the page: rows recomputed
                one = board.store.all_submissions()[k]
                board.store.add_file(model_id=one.model_id, submitter="bench", metadata=one.metadata,
                                     file_bytes=board.store.file_bytes(one.id) + f"again-{k}".encode(),
                                     parts=[dict(benchmark=one.benchmark, config=one.config, split=one.split,
                                                 data_revision=one.data_revision, results=one.results,
                                                 per_example=board.store.per_example(one.id))])
                after += timed(lambda: (get(), board.overall()), 1)
            print(line("page load: GET / + Overall after a new submission (running app)", after))
            print(line("page load: Overall again (the app's cache for this store state)",
                       timed(lambda: board.overall(), args.repeat)))
        finally:
            demo.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
