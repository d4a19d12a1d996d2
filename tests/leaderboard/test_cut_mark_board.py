"""Issue 41 item 6 on the board: a row whose submission's tokenizer cut captions carries the cut mark on its
benchmark's table (the legend above the table says what it means); a row without cuts, or with a hostile count
in its stored metadata, carries none."""

from __future__ import annotations

from hardneg.leaderboard.example import predictions_bytes
from hardneg.leaderboard.identity import Identity

FEINT = ("feint6k", "msrvtt", "test")
MARK = "✂"  # hardneg.truncation.CUT_MARK, spelled out so that the test stands apart from the code


def _cuts(n: int) -> dict:
    return {"context": 77, "captions": 40, "captions_cut": n, "longest": 90, "cut": [], "items_identical": 0,
            "identical": []}


def test_a_cut_submission_is_marked_on_its_benchmarks_table(board, item_sets):
    files = {"alice/cut": _cuts(3), "alice/whole": _cuts(0), "alice/unknown": None, "alice/odd": {"captions_cut": "3"}}
    for k, (model, cuts) in enumerate(files.items()):
        extra = {} if cuts is None else {"text_cuts": cuts}
        out = board.submit(predictions_bytes(item_sets[FEINT], model, seed=k, **extra), Identity("alice"))
        assert out.ok, out.message
    table = board.table("feint6k")
    names = {m.split(" ")[0]: m for m in table["Model"]}
    assert names["alice/cut"].endswith(MARK), names
    for model in ("alice/whole", "alice/unknown", "alice/odd"):
        assert MARK not in names[model], names[model]


def test_the_benchmark_legend_says_what_the_mark_means():
    from helpers import load_space_module

    app = load_space_module()
    assert MARK in app.CUT_LEGEND.format(cut=app.CUT_MARK) and "tokenizer cut" in app.CUT_LEGEND
