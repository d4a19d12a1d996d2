"""A running board computes paired p-values in the background (issue 29: a first page load of a Feint6K-sized
board waited about a minute for them): the table is drawn at once without them, they land, the page's refresh
token moves on, and the values are the same as the synchronous ones."""

from __future__ import annotations

from hardneg.leaderboard.example import predictions_bytes
from hardneg.leaderboard.identity import Identity
from hardneg.leaderboard.pvalues import BackgroundPValues

COL = "R@1 · msrvtt"


def fill(board):
    for model, skill, seed in (("org/strong", 8.0, 1), ("org/mid", 1.0, 2), ("org/weak", -8.0, 3)):
        for key, items in board.item_sets.items():
            if key[0] == "feint6k":
                assert board.submit(predictions_bytes(items, model, seed=seed, skill=skill),
                                    Identity("alice", ("org",))).ok


def p_values(board) -> dict[str, str]:
    return {r["Model"]: r["p vs #1"] for _, r in board.table("feint6k", sort_by=COL).iterrows()}


def test_p_values_land_in_the_background_and_match_the_synchronous_ones(board):
    fill(board)
    expected = p_values(board)  # computed during the draw (a board without start_background)
    assert expected["org/weak"] != ""
    board._pvalues = {}  # forget them: the running board must compute them itself
    board.start_background()
    assert isinstance(board._pvalues, BackgroundPValues)
    before = board.state()
    assert board._pvalues.wait(120)
    p_values(board)  # a draw schedules whatever the warm-up did not
    assert board._pvalues.wait(120)
    assert p_values(board) == expected
    assert board.state() != before  # open pages redraw when they land


def test_a_failing_p_value_is_logged_not_raised(caplog):
    cache = BackgroundPValues()
    cache.schedule("k", lambda: 1 / 0)
    cache.schedule("ok", lambda: 0.25)
    assert cache.wait(30)
    # a value that could not be computed is known as such (the cell says "n/a", not "computing…" for ever), and
    # moves the generation on too, so open pages redraw
    assert "k" not in cache and "k" in cache.unavailable and cache["ok"] == 0.25 and cache.generation == 2
