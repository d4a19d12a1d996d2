"""Files built to hurt the board: each is refused with a plain, bounded message, in bounded memory.

The bombs come from perf/bench_submission_bombs.py (a minimal Parquet writer, so a file
declaring 5*10^8 values takes milliseconds to make); the memory test checks each one in a fresh
process and asserts its peak resident memory.
"""

from __future__ import annotations

import importlib.util
import io
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hardneg.leaderboard.example import predictions_bytes
from hardneg.leaderboard.parquet_guard import json_depth
from hardneg.leaderboard.validate import (MAX_QUOTE, SubmissionError, limits_for, quote, upload_limit,
                                          validate_submission)
from helpers import ALICE

FEINT = ("feint6k", "msrvtt", "test")
FIRE = ("fire", "msrvtt", "test")
BENCH = Path(__file__).resolve().parents[2] / "perf" / "bench_submission_bombs.py"
PEAK_MB = 300


def bench_module():
    spec = importlib.util.spec_from_file_location("bench_submission_bombs", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def refused(data, item_sets, **kw) -> SubmissionError:
    with pytest.raises(SubmissionError) as err:
        validate_submission(data, ALICE, item_sets, **kw)
    return err.value


def with_metadata(items, raw: bytes) -> bytes:
    """A valid predictions file whose 'hardneg' metadata is replaced by `raw`."""
    table = pq.read_table(pa.BufferReader(predictions_bytes(items, "org/m")))
    buf = io.BytesIO()
    pq.write_table(table.replace_schema_metadata({b"hardneg": raw}), buf)
    return buf.getvalue()


def meta_of(items, **over) -> bytes:
    meta = json.loads(pq.read_schema(pa.BufferReader(predictions_bytes(items, "org/m"))).metadata[b"hardneg"])
    meta.update(over)
    return json.dumps(meta).encode()


@pytest.mark.parametrize("field,value", [("benchmark", ["feint6k"]), ("benchmark", {"a": 1}), ("config", ["msrvtt"]),
                                         ("split", 7), ("model_id", {"x": 1}), ("data_revision", None),
                                         ("model_revision", ["x"])])
def test_metadata_of_the_wrong_type_is_refused_not_crashed(item_sets, field, value):
    err = refused(with_metadata(item_sets[FEINT], meta_of(item_sets[FEINT], **{field: value})), item_sets)
    assert any(f"metadata {field} must be" in p for p in err.problems), err.problems


def test_deep_nesting_is_refused_before_parsing(item_sets):
    raw = meta_of(item_sets[FEINT])[:-1] + b', "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    err = refused(with_metadata(item_sets[FEINT], raw), item_sets)
    assert "nests 100,001 levels deep; at most 64" in str(err)
    assert json_depth(b'{"a": "[[[[[[", "b": [[1]], "c": "\\\\\\"[["}') == 3  # brackets inside strings do not count
    for bad in (b"\xff\xfe", b'{"a": ', b"[1, 2]", b"null"):
        assert "metadata" in str(refused(with_metadata(item_sets[FEINT], bad), item_sets))


def test_user_text_is_quoted_and_cut(item_sets):
    items = item_sets[FEINT]
    forged = "msrvtt\nstored org/fake v1 on feint6k/msrvtt/test (submission 0): R@1 1"
    msg = str(refused(with_metadata(items, meta_of(items, config=forged)), item_sets))
    assert not any(line.startswith("stored") for line in msg.splitlines()) and "\\nstored org/fake" in msg
    huge = str(refused(with_metadata(items, meta_of(items, config="c" * 3_000_000)), item_sets))
    assert len(huge) < 1000 and "3,000,000 characters" in huge
    # ids are quoted and cut too
    ids = items.ids.tolist()[:-1] + ["x\n" * 120]
    msg = str(refused(predictions_bytes(items, "org/m", ids=ids, scores=[np.zeros(6)] * len(ids)), item_sets))
    assert len(msg) < 1500 and "\\nx\\n" in msg
    assert quote("a" * 1000).endswith("… (1,000 characters)") and len(quote("a" * 1000)) < MAX_QUOTE + 40
    assert len(quote({"k": ["v" * 10_000] * 100})) < MAX_QUOTE + 40


@pytest.fixture(scope="module")
def bombs(item_sets):
    return bench_module().bombs(item_sets[FEINT])


def test_bombs_are_refused_by_their_declared_counts(item_sets, bombs):
    expected = {
        "one item, 5e8 scores": "column 'scores' holds 500,000,000 scores",
        "3e7 identical ids": "the file has 30,000,000 rows; msrvtt/test has 8 items",
        "1e7 rows": "the file has 10,000,000 rows",
        "lying footer": "column 'scores' holds 500,000,000 scores",  # counted from the page headers
        "1 MB id x every row": "an id is 1,000,000 bytes long",
        "100,000 nested brackets": "nests 100,001 levels deep",
        "10 MB config": "the 'hardneg' metadata is 10,000,",
        "benchmark as a list": "metadata benchmark must be a string, not list",
    }
    assert set(bombs) == set(expected)
    for name, (_, data) in bombs.items():
        err = refused(data, item_sets)
        assert expected[name] in str(err), (name, err.problems)
        assert len(str(err)) < 2000


def test_every_bomb_is_refused_in_bounded_memory(bench_root, bombs, tmp_path):
    """The bombs checked one after another in a fresh process: each refused, the process's peak memory (imports
    and item sets included) under 300 MB."""
    paths = []
    for k, (_, data) in enumerate(bombs.values()):
        paths.append(tmp_path / f"bomb{k}.parquet")
        paths[-1].write_bytes(data)
    reports = dict(zip(bombs, bench_module().measure(bench_root, *paths)))
    for name, r in reports.items():
        assert r["refused"], (name, r)
        assert r["peak_mb"] < PEAK_MB, (name, r)
    print("\n" + "\n".join(f"{n}: {r['seconds'] * 1000:.1f} ms, peak so far {r['peak_mb']:.0f} MB"
                           for n, r in reports.items()))


@pytest.mark.parametrize("options", [
    {},
    {"use_dictionary": False, "compression": "zstd"},
    {"data_page_version": "2.0", "compression": "gzip"},
    {"row_group_size": 3, "data_page_size": 64, "write_page_index": True},
    {"use_byte_stream_split": ["scores.list.element"], "use_dictionary": ["id"], "compression": "none"},
    {"write_statistics": False, "dictionary_pagesize_limit": 16},
])
def test_honest_files_of_any_writer_settings_pass(item_sets, options, tmp_path):
    """The page-header scan accepts what pyarrow writes, whatever the encoding, compression or page layout."""
    for key in (FEINT, FIRE, ("posrank", "vln_uvo", "noun")):
        items = item_sets[key]
        table = pq.read_table(pa.BufferReader(predictions_bytes(items, "org/m", seed=3)))
        buf = io.BytesIO()
        pq.write_table(table, buf, **options)
        sub = validate_submission(buf.getvalue(), ALICE, item_sets)
        assert sub.scores.shape[0] == len(items)
        path = tmp_path / "p.parquet"
        path.write_bytes(buf.getvalue())
        assert validate_submission(path, ALICE, item_sets).model_id == "org/m"  # from a path: memory-mapped


def test_padding_and_junk_after_the_columns_are_refused(item_sets):
    data = predictions_bytes(item_sets[FEINT], "org/m")
    footer = int.from_bytes(data[-8:-4], "little")
    body, tail = data[: -(footer + 8)], data[-(footer + 8):]
    # junk between the last column chunk and the footer: offsets still valid, the file just carries extra bytes
    err = refused(body + b"\0" * (3 << 20) + tail, item_sets)
    assert "remove whatever else it holds" in str(err) or "pages cannot be checked" in str(err)
    assert "footer length" in str(refused(data[:-8] + (10**9).to_bytes(4, "little") + b"PAR1", item_sets))
    assert "not a readable Parquet file" in str(refused(b"PAR1" + b"\0" * 100, item_sets))


def test_limits_follow_the_config(item_sets):
    lim = limits_for([item_sets[FEINT]])
    assert (lim.items, lim.candidates) == (8, 6) and lim.rows == 2 * 8 + 100
    assert upload_limit(item_sets) <= 256 * 2**20
    fire = limits_for([item_sets[FIRE]])
    assert fire.candidates == len(item_sets[FIRE].video_ids)
