"""Fuzzing the board's entrances and its drawing (issue 36): whatever arrives, the board stores a validated value
or answers a clear refusal (never "internal error"), and whatever a stored row's metadata holds, every page draws
and the other rows stand.

Entrances: the upload form / API (`Leaderboard.submit(..., model_meta)`), a predictions file's 'hardneg' metadata
(arbitrary bytes, and a real file's metadata with arbitrary fields), and the store itself (rows written as an
older board or an edited store could hold them, drawn by every page and by `hardneg leaderboard show`'s table).
Example counts come from the Hypothesis profile (tests/conftest.py); `budget(n)` scales them.
"""

from __future__ import annotations

import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from hardneg.leaderboard import Leaderboard  # noqa: E402
from hardneg.leaderboard.example import predictions_bytes  # noqa: E402
from hardneg.leaderboard.model_meta import FIELDS, clean_model_meta  # noqa: E402
from hardneg.leaderboard.validate import SubmissionError, ValidatedSubmission, validate_submission  # noqa: E402
from hardneg.schema import PREDICTIONS_METADATA_KEY  # noqa: E402
from helpers import ALICE  # noqa: E402

FEINT = ("feint6k", "msrvtt", "test")


def budget(n: int) -> int:
    return max(1, n * settings.default.max_examples // 100)


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
                    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=12), c, max_size=4),
                    max_leaves=16)
TEXT = st.text(st.characters(), max_size=60) | st.sampled_from(["", "\x00", "a\nb", "\ud800", "org/my model",
                                                                 "https://h.co/a\n", "9" * 401])
META = st.dictionaries(st.sampled_from(FIELDS), JSON | TEXT, max_size=5)
#: the metadata fields a predictions file declares
FILE_FIELDS = ["task", "benchmark", "config", "split", "data_revision", "model_id", "model_revision", "model_meta",
               "video_ids", "frames"]


@pytest.fixture(scope="module")
def board(tmp_path_factory, item_sets):
    board = Leaderboard(tmp_path_factory.mktemp("fuzz-board"), item_sets, n_resamples=20, compute_blind=False)
    assert board.submit(predictions_bytes(item_sets[FEINT], "org/good", seed=1), ALICE).ok
    return board


def _refusal_is_clear(message: str) -> None:
    assert "internal error" not in message and "Traceback" not in message
    assert message.startswith("submission refused") and len(message) < 4000


@settings(max_examples=budget(60))
@given(meta=META | JSON)
def test_fuzz_the_upload_form_and_api_model_meta(board, item_sets, meta):
    out = board.submit(predictions_bytes(item_sets[FEINT], "alice/fuzz", seed=2), ALICE, meta)
    if not out.ok:
        _refusal_is_clear(out.message)
        return
    stored = out.submission.model_meta
    assert clean_model_meta(stored) == {**dict.fromkeys(FIELDS), **stored}  # what is stored passes its guard again


def _with_metadata(item_sets, raw: bytes) -> bytes:
    good = pq.read_table(io.BytesIO(predictions_bytes(item_sets[FEINT], "alice/fuzz", seed=3)))
    table = good.replace_schema_metadata({PREDICTIONS_METADATA_KEY: raw})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def _good_metadata(item_sets) -> dict:
    raw = pq.read_schema(io.BytesIO(predictions_bytes(item_sets[FEINT], "alice/fuzz", seed=3))).metadata
    return json.loads(raw[PREDICTIONS_METADATA_KEY])


@settings(max_examples=budget(60))
@given(edits=st.dictionaries(st.sampled_from(FILE_FIELDS) | st.text(max_size=10), JSON | TEXT, max_size=4),
       raw=st.none() | st.binary(max_size=300))
def test_fuzz_a_files_metadata(item_sets, edits, raw):
    if raw is None:
        raw = json.dumps({**_good_metadata(item_sets), **edits}).encode("utf-8", "surrogatepass")
    try:
        got = validate_submission(_with_metadata(item_sets, raw), ALICE, item_sets)
    except SubmissionError as exc:
        assert exc.problems and all(len(p) < 2000 for p in exc.problems)
        return
    assert isinstance(got, ValidatedSubmission) and got.model_id == "alice/fuzz"


@settings(max_examples=budget(25))
@given(meta=JSON | TEXT | META, extra=st.dictionaries(st.text(max_size=10), JSON | TEXT, max_size=3),
       model_id=st.sampled_from(["org/stored"]) | TEXT)
def test_fuzz_drawing_stored_rows(tmp_path_factory, item_sets, meta, extra, model_id):
    """A row as an older board or an edited store may hold it (model name, model_meta and other metadata of any
    value): every page draws, with the good row, and the row itself appears (drawn or as a placeholder)."""
    store = tmp_path_factory.mktemp("stored")
    board = Leaderboard(store, item_sets, n_resamples=20, compute_blind=False)
    assert board.submit(predictions_bytes(item_sets[FEINT], "org/good", seed=1), ALICE).ok
    (good,) = board.store.all_submissions()
    try:
        board.store.add_files(model_id=model_id, submitter="alice", files=[dict(
            metadata={**good.metadata, **extra, "model_meta": meta}, file_bytes=b"an older board's file",
            parts=[dict(benchmark=good.benchmark, config=good.config, split=good.split,
                        data_revision=good.data_revision, results=good.results,
                        per_example=board.store.per_example(good.id))])])
    except (ValueError, TypeError, UnicodeError, pa.ArrowException):
        pass  # the store itself refused to hold it (not JSON, not UTF-8): nothing to draw
    board = Leaderboard(store, item_sets, n_resamples=20, compute_blind=False)
    table = board.overall()
    board.overall_frame()
    for bench in board.benchmarks:
        board.table(bench)
        board.table_frame(bench)
    assert "org/good" in board.average()["Model"].tolist()
    assert len(table) == len(board.average())
