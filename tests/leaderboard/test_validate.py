"""Every refusal of the board names the problem and the fix; a valid file passes and aligns its scores."""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hardneg.leaderboard.example import predictions_bytes
from hardneg.leaderboard.validate import SubmissionError, validate_submission
from helpers import ALICE, BOB

FEINT = ("feint6k", "msrvtt", "test")
POS = ("posrank", "vln_uvo", "noun")
FIRE = ("fire", "msrvtt", "test")


def refused(data, item_sets, submitter=ALICE, **kw) -> str:
    with pytest.raises(SubmissionError) as err:
        validate_submission(data, submitter, item_sets, **kw)
    return str(err.value)


def test_valid_file_passes_and_keeps_item_order(item_sets):
    items = item_sets[FEINT]
    order = np.arange(len(items))[::-1]  # rows in reverse order in the file
    scores = [np.arange(6, dtype=np.float32) + i for i in range(len(items))]
    data = predictions_bytes(items, "org/m", scores=[scores[i] for i in order], ids=[items.ids[i] for i in order])
    sub = validate_submission(data, ALICE, item_sets)
    assert sub.model_id == "org/m" and sub.items is items and sub.mask is None
    np.testing.assert_array_equal(sub.scores[3], np.arange(6) + 3)


def test_ragged_candidates_get_a_mask(item_sets):
    items = item_sets[POS]
    sub = validate_submission(predictions_bytes(items, "org/m"), ALICE, item_sets)
    assert sub.mask is not None
    np.testing.assert_array_equal(sub.mask.sum(axis=1), items.n_candidates)


def test_missing_id(item_sets):
    items = item_sets[FEINT]
    data = predictions_bytes(items, "org/m", scores=[np.zeros(6)] * 7, ids=items.ids[:7].tolist())
    msg = refused(data, item_sets)
    assert "1 id of msrvtt/test missing: 'msrvtt:7'" in msg and "score every item" in msg


def test_extra_and_duplicate_ids(item_sets):
    items = item_sets[FEINT]
    ids = items.ids.tolist() + ["msrvtt:99", "msrvtt:0"]
    msg = refused(predictions_bytes(items, "org/m", scores=[np.zeros(6)] * len(ids), ids=ids), item_sets)
    assert "ids appear more than once: 'msrvtt:0'" in msg
    assert "1 id not in msrvtt/test: 'msrvtt:99'" in msg


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_and_inf(item_sets, bad):
    items = item_sets[FEINT]
    scores = [np.zeros(6, np.float32) for _ in range(len(items))]
    scores[2][4] = bad
    msg = refused(predictions_bytes(items, "org/m", scores=scores), item_sets)
    assert "1 item with NaN or infinite scores: 'msrvtt:2'" in msg


def test_wrong_candidate_count(item_sets):
    items = item_sets[POS]
    scores = [np.zeros(int(c)) for c in items.n_candidates]
    scores[1] = np.zeros(9)
    msg = refused(predictions_bytes(items, "org/m", scores=scores), item_sets)
    assert f"'uvo:noun:1' has 9, expected {items.n_candidates[1]}" in msg


def _table_bytes(table: pa.Table, meta_from: bytes) -> bytes:
    meta = pq.read_schema(pa.BufferReader(meta_from)).metadata
    buf = io.BytesIO()
    pq.write_table(table.replace_schema_metadata(meta), buf)
    return buf.getvalue()


def test_wrong_schema(item_sets):
    items = item_sets[FEINT]
    good = predictions_bytes(items, "org/m")
    table = pa.table({"id": items.ids.tolist(), "score": ["0.1"] * len(items)})
    msg = refused(_table_bytes(table, good), item_sets)
    assert "missing column 'scores' (list<float32>)" in msg and "unexpected columns ['score']" in msg
    table = pa.table({"id": list(range(len(items))), "scores": [["a"] * 6] * len(items)})
    msg = refused(_table_bytes(table, good), item_sets)
    assert "column 'id' has type int64; it must be string" in msg
    assert "column 'scores' has type list<element: string>; it must be list<float32>" in msg


def test_metadata_problems(item_sets):
    items = item_sets[FEINT]
    buf = io.BytesIO()
    pq.write_table(pa.table({"id": items.ids.tolist(), "scores": [[0.0] * 6] * len(items)}), buf)
    assert "no 'hardneg' metadata" in refused(buf.getvalue(), item_sets)
    msg = refused(predictions_bytes(items, "org/m", revision="sha256:old"), item_sets)
    assert "data_revision 'sha256:old' is not the board's feint6k data" in msg and "re-score" in msg
    msg = refused(predictions_bytes(items, "org/m", split="val"), item_sets)
    assert "config/split 'msrvtt/val' is not on the feint6k board; the board scores msrvtt/test, vatex/test" in msg
    msg = refused(predictions_bytes(items, "org/m", task="retrieval"), item_sets)
    assert "task 'retrieval' does not match benchmark 'feint6k'" in msg
    msg = refused(predictions_bytes(items, "bad name with spaces"), item_sets)
    assert "is not a valid model name" in msg
    assert "sign in with your Hugging Face account first" in refused(predictions_bytes(items, "org/m"), item_sets, submitter="")


def test_not_parquet_empty_and_too_large(item_sets):
    assert "not a readable Parquet file" in refused(b"import os; os.system('echo pwned')", item_sets)
    assert "the file is empty" in refused(b"", item_sets)
    data = predictions_bytes(item_sets[FEINT], "org/m")
    msg = refused(data, item_sets, max_bytes=len(data) - 1)
    assert f"over the {len(data) - 1:,}-byte limit" in msg


def test_names_live_in_the_submitters_namespaces(item_sets):
    items = item_sets[FEINT]
    for name in ("alice/m", "org/m", "alice-org/m", "ALICE/m"):  # the user, her orgs (Hub names: any case)
        assert validate_submission(predictions_bytes(items, name), ALICE, item_sets).model_id == name
    msg = refused(predictions_bytes(items, "bob/m"), item_sets)
    assert "model name 'bob/m' is in namespace 'bob'; you are signed in as 'alice' (organizations: alice-org, org)" in msg
    assert "has no namespace" in refused(predictions_bytes(items, "m"), item_sets)
    assert "is in namespace 'org'" in refused(predictions_bytes(items, "org/m"), item_sets, submitter=BOB)


@pytest.mark.parametrize("name", ["Human", "random", "human", "alice/Human", "org/random", "blind-unigram",
                                  "alice/CLIP4Clip", "RANDOM (EXACT CHANCE)"])
def test_baseline_and_reported_names_are_reserved(item_sets, name):
    msg = refused(predictions_bytes(item_sets[FEINT], name), item_sets)
    assert "is reserved" in msg or "not a valid model name" in msg, msg


def test_several_problems_reported_together(item_sets):
    items = item_sets[FEINT]
    ids = items.ids[:6].tolist() + ["zzz"]
    msg = refused(predictions_bytes(items, "org/m", scores=[np.zeros(6)] * 7, ids=ids, revision="x"), item_sets)
    assert "data_revision 'x'" in msg and "missing" in msg and "not in msrvtt/test: 'zzz'" in msg


def test_retrieval_columns_follow_metadata_video_order(item_sets):
    items = item_sets[FIRE]
    perm = [3, 0, 4, 1, 2]
    order = [items.video_ids[j] for j in perm]
    scores = [np.asarray([10 * i + j for j in perm], np.float32) for i in range(len(items))]
    sub = validate_submission(predictions_bytes(items, "org/m", scores=scores, video_ids=order), ALICE, item_sets)
    np.testing.assert_array_equal(sub.scores[2], [20, 21, 22, 23, 24])  # back in collection order
    msg = refused(predictions_bytes(items, "org/m", scores=scores, video_ids=order[:4] + ["v9"]), item_sets)
    assert "metadata video_ids must list the 5 videos of msrvtt once each" in msg
