"""Child process of the crash test: stores submissions until it is killed.

argv: data_dir benchmarks_dir mode. mode "pause": store 3, then stop inside the 4th write
transaction (prints IN_TRANSACTION) and wait to be killed. mode "loop": store forever,
printing COMMITTED <id> after each commit.
"""

import os
import sys
import threading
import time

from hardneg.leaderboard import Leaderboard, load_benchmarks
from hardneg.leaderboard.example import predictions_bytes
from hardneg.leaderboard.identity import Identity

data_dir, bench_dir, mode = sys.argv[1:4]
item_sets = load_benchmarks(bench_dir)
items = item_sets[("feint6k", "msrvtt", "test")]
board = Leaderboard(data_dir, item_sets, n_resamples=20, compute_blind=False)
pause = threading.Event()


def hook():
    if pause.is_set():
        print("IN_TRANSACTION", flush=True)
        time.sleep(600)


board.store._before_commit = hook
payload = os.urandom(1 << 20)  # a large blob makes the write span many pages
i = 0
while True:
    if mode == "pause" and i == 3:
        pause.set()
    out = board.submit(predictions_bytes(items, f"org/m{i % 3}", seed=i, note=payload.hex()[: 1 << 19]), Identity("alice", ("org",)))
    assert out.ok, out.message
    print(f"COMMITTED {out.submission.id}", flush=True)
    i += 1
