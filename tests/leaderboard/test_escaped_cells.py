"""Issue 49, N29: every cell a page draws is escaped, placeholders and the Submitter included: rows written straight
into the store (an older board, an edited store) with markup in their model name, submitter or results never draw
a live element."""

from __future__ import annotations

import re

import pytest

from hardneg.leaderboard import Leaderboard
from hardneg.leaderboard.example import predictions_bytes
from helpers import ALICE

FEINT = ("feint6k", "msrvtt", "test")
IMG = '<img src=x onerror="alert(1)">'


def live_markup(cell) -> bool:
    """Whether a Markdown cell holds a '<' that is not escaped (a live element), once the board's own links
    (`[name](<percent-encoded http(s) URL>)`, `board.md_link`) are set aside."""
    text = re.sub(r"\]\(<https?://[^<>\s\"']*>\)", "]", str(cell))
    return bool(re.search(r"(?<!\\)<", text)) or "javascript:" in text.lower()


@pytest.mark.parametrize("damaged", [False, True])
def test_stored_markup_is_drawn_as_text(tmp_path, item_sets, damaged):
    board = Leaderboard(tmp_path, item_sets, n_resamples=20, compute_blind=False)
    assert board.submit(predictions_bytes(item_sets[FEINT], "org/good", seed=1), ALICE).ok
    (good,) = board.store.all_submissions()
    results = {"metrics": "not results"} if damaged else good.results  # damaged: drawn as a placeholder
    board.store.add_files(model_id=f"org/{IMG}", submitter=IMG, files=[dict(
        metadata=good.metadata, file_bytes=b"an older board's file",
        parts=[dict(benchmark=good.benchmark, config=good.config, split=good.split, data_revision=good.data_revision,
                    results=results, per_example=board.store.per_example(good.id))])])
    board = Leaderboard(tmp_path, item_sets, n_resamples=20, compute_blind=False)
    table = board.table("feint6k")
    drawn = [c for col in table.columns for c in table[col].tolist()]
    assert any("img" in str(c) for c in drawn), "the stored row is not drawn at all"
    assert not [c for c in drawn if live_markup(c)], [c for c in drawn if live_markup(c)]
    overall = board.overall()
    assert not [c for col in overall.columns for c in overall[col].tolist() if live_markup(c)]
