"""Issue 36 N5: values one entrance let through are refused by the one guard of their kind (`hardneg.guards`):
a NUL in `license`, `model_revision` or a metadata key is no longer stored, and a link ending in a newline no
longer passes (the old pattern's `$` matched before a final newline). Each refusal names the field, nothing is
stored, and the board stands."""

from __future__ import annotations

import pytest

from hardneg.leaderboard import Leaderboard
from hardneg.leaderboard.example import predictions_bytes
from hardneg.leaderboard.model_meta import clean_model_meta, parse_model_meta_json
from helpers import ALICE

FEINT = ("feint6k", "msrvtt", "test")

FORM = {  # the upload form / API's model metadata
    "license with NUL": ({"license": "mit\x00"}, "model_meta.license", "NUL"),
    "revision with NUL": ({"revision": "abc\x00def"}, "model_meta.revision", "NUL"),
    "link ending in a newline": ({"link": "https://huggingface.co/org/m\n"}, "model_meta.link", "control character"),
    "link with a space": ({"link": "https://huggingface.co/org/m x"}, "model_meta.link", "not an http(s) URL"),
    "license with a bidi override": ({"license": "mit\u202e"}, "model_meta.license", "bidirectional"),
}

FILE = {  # the predictions file's own 'hardneg' metadata
    "model_revision with NUL": ({"model_revision": "v1\x00"}, "model_revision", "NUL"),
    "a metadata key with NUL": ({"note\x00": "x"}, "a key of metadata", "NUL"),
    "own model_meta license with NUL": ({"model_meta": {"license": "a\x00"}}, "model_meta.license", "NUL"),
    "a lone surrogate in a value": ({"note": "a\ud800"}, "metadata.note", "surrogate"),
}


@pytest.fixture
def board(tmp_path, item_sets):
    board = Leaderboard(tmp_path / "lb", item_sets, n_resamples=50, compute_blind=False)
    assert board.submit(predictions_bytes(item_sets[FEINT], "org/good", seed=1), ALICE).ok
    return board


@pytest.mark.parametrize("name", list(FORM))
def test_the_form_and_api_refuse(board, item_sets, name):
    meta, field, why = FORM[name]
    out = board.submit(predictions_bytes(item_sets[FEINT], "org/bad", seed=2), ALICE, meta)
    assert not out.ok and field in out.message and why in out.message and "nothing was stored" in out.message
    assert [s.model_id for s in board.store.all_submissions()] == ["org/good"]
    with pytest.raises(ValueError, match=field):
        clean_model_meta(meta)
    if "\ud800" not in str(meta):
        import json

        with pytest.raises(ValueError, match=field):
            parse_model_meta_json(json.dumps(meta))


@pytest.mark.parametrize("name", list(FILE))
def test_the_files_own_metadata_is_refused(board, item_sets, name):
    meta, field, why = FILE[name]
    out = board.submit(predictions_bytes(item_sets[FEINT], "org/bad", seed=2, **meta), ALICE)
    assert not out.ok and field in out.message and why in out.message, out.message
    assert "internal error" not in out.message
    assert [s.model_id for s in board.store.all_submissions()] == ["org/good"]


def test_clean_values_still_pass(board, item_sets):
    meta = {"license": "apache-2.0", "revision": "abc123", "link": "https://huggingface.co/org/fine?x=1#y"}
    out = board.submit(predictions_bytes(item_sets[FEINT], "org/fine", seed=3, model_revision="r1"), ALICE, meta)
    assert out.ok, out.message
    assert out.submission.model_meta["link"] == meta["link"]
