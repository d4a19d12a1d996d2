"""Four 3.9 MB metadata files of nested lists sent at once (issue 29: each took 38-54 s and the server's peak
memory rose from 1.0 to 2.2 GB, and all four were stored): time and peak memory of the board refusing them.

Each file is a valid Feint6K-sized predictions file (6,000 items) whose 'hardneg' metadata also holds ~32,000
lists nested 60 deep (within the depth limit of 64, so only the value count refuses it). The four go to
`Leaderboard.submit` from four threads at once, as concurrent uploads reach the Space; then once more in a row.

    python perf/bench_nested_metadata.py

Prints wall seconds, each refusal, and the process's peak resident memory before and after (VmHWM: the item set
and the four files included).
"""

from __future__ import annotations

import importlib.util
import io
import json
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from hardneg.leaderboard import Leaderboard, load_benchmarks
    from hardneg.leaderboard.example import predictions_bytes
    from hardneg.leaderboard.identity import Identity

    spec = importlib.util.spec_from_file_location("bombs", REPO / "perf" / "bench_submission_bombs.py")
    bombs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bombs)
    with tempfile.TemporaryDirectory(prefix="bench-nested-") as tmp:
        tmp = Path(tmp)
        items = load_benchmarks(bombs.write_board_data(tmp / "bench"))
        it = items[("feint6k", "msrvtt", "test")]
        table = pq.read_table(pa.BufferReader(predictions_bytes(it, "alice/nested")))
        meta = json.loads(table.schema.metadata[b"hardneg"])
        unit = "[" * 60 + "]" * 60
        files = []
        for k in range(4):
            raw = json.dumps({**meta, "k": k}).encode()[:-1] + b', "x": [' + ",".join([unit] * 32_000).encode() + b"]}"
            buf = io.BytesIO()
            pq.write_table(table.replace_schema_metadata({b"hardneg": raw}), buf)
            files.append(buf.getvalue())
        board = Leaderboard(tmp / "store", items, n_resamples=200, compute_blind=False)
        who = Identity("alice")
        print(f"four files of {len(files[0]):,} bytes ('hardneg' metadata {len(raw):,} bytes, nested 61 deep)")
        before = peak_mb()
        out = [None] * 4

        def send(k):
            t = time.perf_counter()
            o = board.submit(files[k], who)
            out[k] = (time.perf_counter() - t, o.ok, o.message.splitlines()[-1][:120])

        t = time.perf_counter()
        threads = [threading.Thread(target=send, args=(k,)) for k in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        print(f"four at once: {time.perf_counter() - t:.3f} s wall")
        for s, ok, msg in out:
            print(f"  {s:.3f} s  {'STORED' if ok else 'refused'}: {msg}")
        t = time.perf_counter()
        for k in range(4):
            send(k)
        print(f"four in a row: {time.perf_counter() - t:.3f} s")
        print(f"peak memory of the process: {before:.0f} MB before, {peak_mb():.0f} MB after; stored: {board.store.count()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
