"""Hostile predictions files against the leaderboard's checks: time and peak memory per file.

Each file is small on disk and huge once decoded (run-length and dictionary encodings, or
a footer that understates what its pages hold), or its metadata is built to break a
parser. Each is checked by `validate_submission` in a fresh process against a
Feint6K-sized item set (6,000 items x 6 candidates); the process reports the wall time of
the check and its peak resident memory (VmHWM, i.e. `ru_maxrss` of this process image alone; imports and
item set included).

    python perf/bench_submission_bombs.py            # every bomb, a table at the end
    python perf/bench_submission_bombs.py --json out.json

The files are written by a minimal Parquet writer below (Thrift compact protocol, one row
group, dictionary + RLE pages, gzip), so a 5*10^8-value file takes milliseconds to make
rather than the 7 GB pyarrow needs to write it. The same builders serve the tests
(tests/leaderboard/test_bombs.py).
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from hardneg.memory import peak_rss_mb

# --- a minimal Parquet writer ---------------------------------------------------------------
_I32, _I64, _BINARY, _LIST, _STRUCT = 5, 6, 8, 9, 12
BYTE_ARRAY, FLOAT = 6, 4
PLAIN, RLE, RLE_DICTIONARY = 0, 3, 8
GZIP = 2


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _zz(n: int) -> int:
    return (n << 1) ^ (n >> 63)


def _value(t: int, v) -> bytes:
    if t in (_I32, _I64):
        return _varint(_zz(int(v)))
    if t == _BINARY:
        v = v.encode() if isinstance(v, str) else bytes(v)
        return _varint(len(v)) + v
    if t == _STRUCT:
        return _struct(v)
    if t == _LIST:
        etype, items = v
        head = bytes([len(items) << 4 | etype]) if len(items) < 15 else bytes([0xF0 | etype]) + _varint(len(items))
        return head + b"".join(_value(etype, x) for x in items)
    raise ValueError(t)


def _struct(fields) -> bytes:
    """fields: [(field id, thrift type, value)] in increasing id order."""
    out, last = bytearray(), 0
    for fid, t, v in fields:
        delta = fid - last
        out += bytes([delta << 4 | t]) if 0 < delta <= 15 else bytes([t]) + _varint(_zz(fid))
        last = fid
        out += _value(t, v)
    return bytes(out + b"\x00")


def _rle(count: int, value: int, width: int) -> bytes:
    """One RLE run of the RLE/bit-packing hybrid."""
    return _varint(count << 1) + int(value).to_bytes((width + 7) // 8, "little") if count else b""


def _pack(values: np.ndarray, width: int) -> bytes:
    """Values (a multiple of 8 of them) bit-packed LSB first, `width` bits each."""
    bits = ((np.asarray(values, np.uint32)[:, None] >> np.arange(width, dtype=np.uint32)) & 1).astype(np.uint8)
    return np.packbits(bits.ravel(), bitorder="little").tobytes()


def _bitpacked(values: np.ndarray, width: int) -> bytes:
    """One bit-packed run of the hybrid encoding (values padded to a multiple of 8)."""
    groups = (len(values) + 7) // 8
    padded = np.zeros(groups * 8, np.uint32)
    padded[: len(values)] = values
    return _varint(groups << 1 | 1) + _pack(padded, width)


def _bitpacked_periodic(period: np.ndarray, n: int, width: int) -> bytes:
    """`period` repeated to `n` values, bit-packed: one block of whole periods (a multiple of 8 values) is packed
    once and its bytes tiled, which makes 10^8 values in milliseconds; the remainder is a last run."""
    period = np.asarray(period, np.uint32)
    block = np.tile(period, 8 // math.gcd(len(period), 8))
    full = n // len(block)
    out = _varint((full * len(block) // 8) << 1 | 1) + _pack(block, width) * full if full else b""
    rest = n - full * len(block)
    if rest:
        out += _bitpacked(np.tile(period, -(-rest // len(period)))[:rest], width)
    return out


def _with_length(data: bytes) -> bytes:
    return len(data).to_bytes(4, "little") + data


def _page(kind: int, body: bytes, header_fields, compress: bool) -> bytes:
    payload = gzip.compress(body, compresslevel=6, mtime=0) if compress else body
    sub = 7 if kind == 2 else 5
    header = _struct([(1, _I32, kind), (2, _I32, len(body)), (3, _I32, len(payload)), (sub, _STRUCT, header_fields)])
    return header + payload


def craft_parquet(ids: list[str], id_index: np.ndarray | int, n_rows: int, per_row: int, metadata: dict | bytes,
                  declared_rows: int | None = None, declared_values: int | None = None, compress: bool = True) -> bytes:
    """A predictions-shaped Parquet file: `n_rows` rows, row k with id `ids[id_index[k % len(id_index)]]` (or
    `ids[id_index]` for every row) and `per_row` scores, all 0.0, dictionary-encoded. `declared_*` put other counts in the footer
    than the pages hold (a lying footer)."""
    out = bytearray(b"PAR1")
    # id column: dictionary page + one data page of dictionary indices
    dict_body = b"".join(len(s.encode()).to_bytes(4, "little") + s.encode() for s in ids)
    width = max(1, int(np.ceil(np.log2(max(len(ids), 2)))))
    if isinstance(id_index, (int, np.integer)):
        idx_body = bytes([width]) + _rle(n_rows, int(id_index), width)
    else:  # one period of indices, repeated over the rows
        idx_body = bytes([width]) + _bitpacked_periodic(np.asarray(id_index, np.uint32), n_rows, width)
    id_start = len(out)
    out += _page(2, dict_body, [(1, _I32, len(ids)), (2, _I32, PLAIN)], compress)
    id_data = len(out)
    out += _page(0, idx_body, [(1, _I32, n_rows), (2, _I32, RLE_DICTIONARY), (3, _I32, RLE), (4, _I32, RLE)], compress)
    id_len = len(out) - id_start
    # scores column (list<float>, every level present): repetition and definition levels, then indices into {0.0}
    levels = n_rows * per_row
    if per_row == 1:
        rep = _rle(n_rows, 0, 1)
    elif n_rows == 1:
        rep = _rle(1, 0, 1) + _rle(per_row - 1, 1, 1)
    else:
        pattern = np.ones(per_row, np.uint32)
        pattern[0] = 0
        rep = _bitpacked_periodic(pattern, levels, 1)
    body = _with_length(rep) + _with_length(_rle(levels, 1, 1)) + bytes([1]) + _rle(levels, 0, 1)
    sc_start = len(out)
    out += _page(2, np.float32(0).tobytes(), [(1, _I32, 1), (2, _I32, PLAIN)], compress)
    sc_data = len(out)
    out += _page(0, body, [(1, _I32, levels), (2, _I32, RLE_DICTIONARY), (3, _I32, RLE), (4, _I32, RLE)], compress)
    sc_len = len(out) - sc_start
    rows_claim = n_rows if declared_rows is None else declared_rows
    values_claim = levels if declared_values is None else declared_values

    def chunk(ptype, path, num_values, start, data_off, length):
        meta = [(1, _I32, ptype), (2, _LIST, (_I32, [PLAIN, RLE, RLE_DICTIONARY])), (3, _LIST, (_BINARY, path)),
                (4, _I32, GZIP if compress else 0), (5, _I64, num_values), (6, _I64, length), (7, _I64, length),
                (9, _I64, data_off), (11, _I64, start)]
        return [(2, _I64, start), (3, _STRUCT, meta)]

    schema = [
        [(4, _BINARY, "schema"), (5, _I32, 2)],
        [(1, _I32, BYTE_ARRAY), (3, _I32, 0), (4, _BINARY, "id"), (6, _I32, 0)],
        [(3, _I32, 0), (4, _BINARY, "scores"), (5, _I32, 1), (6, _I32, 3)],
        [(3, _I32, 2), (4, _BINARY, "list"), (5, _I32, 1)],
        [(1, _I32, FLOAT), (3, _I32, 0), (4, _BINARY, "element")],
    ]
    raw = metadata if isinstance(metadata, bytes) else json.dumps(metadata).encode()
    footer = _struct([
        (1, _I32, 1),
        (2, _LIST, (_STRUCT, schema)),
        (3, _I64, rows_claim),
        (4, _LIST, (_STRUCT, [[(1, _LIST, (_STRUCT, [chunk(BYTE_ARRAY, ["id"], min(n_rows, rows_claim), id_start,
                                                             id_data, id_len),
                                                       chunk(FLOAT, ["scores", "list", "element"], values_claim,
                                                             sc_start, sc_data, sc_len)])),
                               (2, _I64, id_len + sc_len), (3, _I64, rows_claim)]])),
        (5, _LIST, (_STRUCT, [[(1, _BINARY, "hardneg"), (2, _BINARY, raw)]])),
        (6, _BINARY, "hardneg bomb builder"),
    ])
    out += footer + len(footer).to_bytes(4, "little") + b"PAR1"
    return bytes(out)


# --- the bombs ----------------------------------------------------------------------------------
def predictions_meta(items, model_id: str = "alice/bomb", **over) -> dict:
    meta = dict(schema_version="1.0", task=items.task, benchmark=items.benchmark, config=items.config,
                split=items.split, data_revision=items.revision, model_id=model_id, model_revision="x",
                frames={"n_frames": 8}, hardneg_version="0.1.0")
    meta.update(over)
    return meta


def bombs(items, scale: float = 1.0) -> dict[str, tuple[str, bytes]]:
    """name -> (what it is, file bytes) for a multiple-choice item set; `scale` < 1 shrinks the counts (tests)."""
    ids = [str(i) for i in items.ids.tolist()]
    meta = predictions_meta(items)
    n1, n2, n3 = int(5e8 * scale), int(3e7 * scale), int(1e7 * scale)
    out = {
        "one item, 5e8 scores": (f"1 row whose list holds {n1:,} zero scores (RLE)",
                                 craft_parquet(ids, 0, 1, n1, meta)),
        "3e7 identical ids": (f"{n2:,} rows all with id {ids[0]!r}", craft_parquet(ids, 0, n2, 1, meta)),
        "1e7 rows": (f"{n3:,} rows cycling through the {len(ids):,} ids, 6 scores each",
                     craft_parquet(ids, np.arange(len(ids)), n3, int(items.n_candidates[0]), meta)),
        "lying footer": (f"footer declares 1 row of 6 scores; the page holds {n1:,}",
                         craft_parquet(ids, 0, 1, n1, meta, declared_values=int(items.n_candidates[0]))),
        "1 MB id x every row": (f"{len(ids):,} rows sharing one dictionary id of 1,000,000 characters",
                                craft_parquet(["x" * 1_000_000], 0, len(ids), int(items.n_candidates[0]), meta)),
        "100,000 nested brackets": ("metadata benchmark = [[[...]]] 100,000 deep",
                                    craft_parquet(ids, 0, 1, 6, json.dumps(meta)[:-1].encode()
                                                  + b', "benchmark": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")),
        "10 MB config": ("metadata config is 10,000,000 characters",
                         craft_parquet(ids, 0, 1, 6, predictions_meta(items, config="c" * 10_000_000))),
        "benchmark as a list": ("metadata benchmark = ['feint6k']",
                                craft_parquet(ids, 0, 1, 6, predictions_meta(items, benchmark=["feint6k"]))),
    }
    return out


def bad_inputs(items) -> dict[str, tuple[bytes, str | tuple]]:
    """name -> (file bytes, who submits: a user name or (user, orgs)) for ordinary mistakes and hostile metadata;
    each must be refused with a message naming the problem."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    from hardneg.leaderboard.example import predictions_bytes

    ids = items.ids.tolist()
    n, c = len(ids), int(items.n_candidates[0])
    good = predictions_bytes(items, "alice/m", seed=1)

    def with_meta(**over) -> bytes:
        table = pq.read_table(pa.BufferReader(good))
        meta = json.loads(table.schema.metadata[b"hardneg"])
        meta.update(over)
        buf = io.BytesIO()
        pq.write_table(table.replace_schema_metadata({b"hardneg": json.dumps(meta).encode()}), buf)
        return buf.getvalue()

    def raw_meta(raw: bytes | None) -> bytes:
        table = pq.read_table(pa.BufferReader(good))
        buf = io.BytesIO()
        pq.write_table(table.replace_schema_metadata({b"hardneg": raw} if raw is not None else None), buf)
        return buf.getvalue()

    def table_bytes(table) -> bytes:
        buf = io.BytesIO()
        pq.write_table(table.replace_schema_metadata(pq.read_schema(pa.BufferReader(good)).metadata), buf)
        return buf.getvalue()

    zeros = [np.zeros(c, np.float32) for _ in range(n)]
    nan = [z.copy() for z in zeros]
    nan[3][1] = np.nan
    short = [z.copy() for z in zeros]
    short[2] = np.zeros(c + 3, np.float32)
    return {
        "not Parquet": (b"import os; os.system('rm -rf /')", "alice"),
        "empty file": (b"", "alice"),
        "no 'hardneg' metadata": (raw_meta(None), "alice"),
        "metadata not UTF-8": (raw_meta(b"\xff\xfe{"), "alice"),
        "column 'score' instead of 'scores'": (table_bytes(pa.table({"id": ids, "score": [0.5] * n})), "alice"),
        "integer ids": (table_bytes(pa.table({"id": list(range(n)), "scores": [[0.0] * c] * n})), "alice"),
        "one item missing (partial coverage)": (predictions_bytes(items, "alice/m", scores=zeros[:-1], ids=ids[:-1]),
                                                "alice"),
        "one id twice": (predictions_bytes(items, "alice/m", scores=zeros + zeros[:1], ids=ids + ids[:1]), "alice"),
        "an id of another split": (predictions_bytes(items, "alice/m", scores=zeros, ids=ids[:-1] + ["other:1"]),
                                   "alice"),
        "a NaN score": (predictions_bytes(items, "alice/m", scores=nan), "alice"),
        "wrong number of scores": (predictions_bytes(items, "alice/m", scores=short), "alice"),
        "old data revision": (predictions_bytes(items, "alice/m", revision="sha256:0000"), "alice"),
        "unknown benchmark": (with_meta(benchmark="feint7k"), "alice"),
        "benchmark as a dict": (with_meta(benchmark={"$ne": 1}), "alice"),
        "config with a forged line": (with_meta(config="msrvtt\nstored alice/fake v1 on feint6k/msrvtt/test"), "alice"),
        "not signed in": (good, ""),
        "another user's namespace": (predictions_bytes(items, "bob/m", seed=1), "alice"),
        "an organization alice is not in": (predictions_bytes(items, "meta/m", seed=1), ("alice", ("alice-org",))),
        "no namespace": (predictions_bytes(items, "m", seed=1), "alice"),
        "a reported row's name": (predictions_bytes(items, "Human", seed=1), "alice"),
        "a baseline's name in one's namespace": (predictions_bytes(items, "alice/Random", seed=1), "alice"),
    }


def refusals(bench_root: Path) -> list[dict]:
    """Check every bad input; the first problem of each refusal and the message's length."""
    from hardneg.leaderboard.identity import Identity
    from hardneg.leaderboard.items import load_benchmarks
    from hardneg.leaderboard.validate import SubmissionError, validate_submission

    item_sets = load_benchmarks(bench_root)
    rows = []
    for name, (data, who) in bad_inputs(item_sets[("feint6k", "msrvtt", "test")]).items():
        identity = Identity(who[0], who[1]) if isinstance(who, tuple) else who
        try:
            validate_submission(data, identity, item_sets)
            rows.append({"name": name, "refused": False, "message": "accepted", "length": 0})
        except SubmissionError as exc:
            rows.append({"name": name, "refused": True, "message": exc.problems[0], "length": len(str(exc))})
    return rows


# --- measuring ------------------------------------------------------------------------------------
def write_board_data(root: Path, n_items: int = 6000, n_candidates: int = 6) -> Path:
    """A Feint6K-sized built folder: feint6k/msrvtt/test with n_items items of n_candidates captions."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from hardneg.schema import MC_ITEM_SCHEMA

    prov = {"origin": "human", "generator": None, "generator_version": None, "rule": None, "pos": None,
            "span": None, "replacement": None, "seed": None, "details": None}
    rows = [{"id": f"msrvtt:video{i}", "video_id": f"video{i // 2}", "source_dataset": "msrvtt", "source_split": "test",
             "category": "counterfactual", "captions": [f"caption {j} of {i}" for j in range(n_candidates)],
             "label": 0, "manipulated_index": None,
             "negative_types": ["positive"] + ["counterfactual"] * (n_candidates - 1),
             "provenance": [prov] * n_candidates} for i in range(n_items)]
    path = root / "feint6k" / "msrvtt" / "test-00000-of-00001.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=MC_ITEM_SCHEMA), path)
    return root


def _child(bench_root: str, *bombs: str) -> None:
    """In a fresh process: load the item sets, check each file in turn, print one JSON line per file with the
    check's time and the process's peak memory so far (so the last line bounds every check)."""
    from hardneg.leaderboard.identity import Identity
    from hardneg.leaderboard.items import load_benchmarks
    from hardneg.leaderboard.validate import SubmissionError, validate_submission

    item_sets = load_benchmarks(bench_root)
    for bomb in bombs:
        data = Path(bomb).read_bytes()
        base = peak_rss_mb()
        t0 = time.perf_counter()
        try:
            validate_submission(data, Identity("alice"), item_sets)
            refused, message = False, "accepted"
        except SubmissionError as exc:
            refused, message = True, exc.problems[0]
        seconds = time.perf_counter() - t0
        peak = peak_rss_mb()
        print(json.dumps({"file": bomb, "refused": refused, "seconds": seconds, "peak_mb": peak, "baseline_mb": base,
                          "message": message[:300]}), flush=True)


def measure(bench_root: Path, *paths: Path, timeout: float = 300) -> list[dict]:
    """Check the files in one fresh process, in order; one report (a dict) per file."""
    out = subprocess.run([sys.executable, __file__, "--child", str(bench_root), *map(str, paths)],
                         capture_output=True, text=True, timeout=timeout)
    reports = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or len(reports) != len(paths):
        failed = {"refused": False, "seconds": float("nan"), "peak_mb": float("nan"), "baseline_mb": float("nan"),
                  "message": f"child failed (rc {out.returncode}): {out.stderr[-500:]}"}
        reports += [dict(failed, file=str(p)) for p in paths[len(reports):]]
    return reports


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--child", nargs="+", metavar="PATH", help=argparse.SUPPRESS)
    p.add_argument("--items", type=int, default=6000, help="items of the Feint6K-sized item set (default 6000)")
    p.add_argument("--json", default=None, help="also write the results as JSON here")
    p.add_argument("--refusals", action="store_true", help="also check ordinary bad inputs and print their messages")
    args = p.parse_args(argv)
    if args.child:
        _child(*args.child)
        return 0
    from hardneg.leaderboard.items import load_benchmarks

    with tempfile.TemporaryDirectory() as tmp:
        root = write_board_data(Path(tmp) / "bench", n_items=args.items)
        items = load_benchmarks(root)[("feint6k", "msrvtt", "test")]
        rows = []
        for name, (what, data) in bombs(items).items():
            path = Path(tmp) / "bomb.parquet"
            path.write_bytes(data)
            (r,) = measure(root, path)
            r.update(name=name, what=what, file_bytes=len(data))
            rows.append(r)
            print(f"{name:26s} {len(data):>11,} B  refused={r['refused']!s:5s} {r['seconds'] * 1000:8.1f} ms  "
                  f"peak {r['peak_mb']:6.1f} MB (before the check {r['baseline_mb']:6.1f} MB)  {r['message'][:90]}",
                  flush=True)
        from hardneg.leaderboard.example import predictions_bytes

        control = predictions_bytes(items, "alice/control", seed=0)
        path = Path(tmp) / "valid.parquet"
        path.write_bytes(control)
        (valid,) = measure(root, path)
        print(f"{'valid file (control)':26s} {len(control):>11,} B  accepted={not valid['refused']!s:5s} "
              f"{valid['seconds'] * 1000:8.1f} ms  peak {valid['peak_mb']:6.1f} MB", flush=True)
        bad = refusals(root) if args.refusals else []
    print("\n| file | on disk | refused | check time | peak memory (process) | of which before the check | message |")
    print("|---|---:|---|---:|---:|---:|---|")
    for r in rows:
        msg = r["message"].replace("|", "\\|")[:110]
        print(f"| {r['name']} | {r['file_bytes']:,} B | {'yes' if r['refused'] else 'NO'} | {r['seconds'] * 1000:.0f} ms "
              f"| {r['peak_mb']:.0f} MB | {r['baseline_mb']:.0f} MB | {msg} |")
    print(f"| valid file (control, {args.items:,} items) | {len(control):,} B | {'no' if not valid['refused'] else 'YES'} "
          f"| {valid['seconds'] * 1000:.0f} ms | {valid['peak_mb']:.0f} MB | {valid['baseline_mb']:.0f} MB | accepted |")
    if bad:
        print("\n| bad input | refused | first problem in the message | message length |")
        print("|---|---|---|---:|")
        for r in bad:
            msg = r["message"].replace("|", "\\|").replace("\n", " ")[:150]
            print(f"| {r['name']} | {'yes' if r['refused'] else 'NO'} | {msg} | {r['length']} |")
    if args.json:
        Path(args.json).write_text(json.dumps({"bombs": rows, "refusals": bad}, indent=1))
    return 0 if all(r["refused"] for r in rows + bad) and not valid["refused"] else 1


if __name__ == "__main__":
    sys.exit(main())
