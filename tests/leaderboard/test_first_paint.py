"""Issue 41 item 7: the page the board serves already holds the default Overall table (a new visitor sees the board
without waiting for the page's first refresh); a fresh page's refresh brings the served table up to date."""

from __future__ import annotations

import urllib.request

from helpers import free_port, load_space_module, page_load

from hardneg.leaderboard import Leaderboard
from hardneg.leaderboard.example import predictions_bytes
from hardneg.leaderboard.identity import Identity
from hardneg.leaderboard.signin import SignIn

FEINT = ("feint6k", "msrvtt", "test")


def test_the_served_page_holds_the_overall_table(tmp_path, item_sets):
    board = Leaderboard(tmp_path / "store", item_sets, n_resamples=20, compute_blind=False)
    assert board.submit(predictions_bytes(item_sets[FEINT], "alice/first", seed=1), Identity("alice")).ok
    app = load_space_module()
    demo = app.create_app(board, sign_in=SignIn("read-only", "tests")).queue()
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                **app.launch_options(board))
    url = f"http://127.0.0.1:{port}/"
    try:
        served = lambda: urllib.request.urlopen(url, timeout=60).read().decode()  # noqa: E731
        assert "alice/first" in served()  # in the HTML itself, before any refresh ran
        assert board.submit(predictions_bytes(item_sets[FEINT], "alice/second", seed=2), Identity("alice")).ok
        page_load(url)  # a new visitor's page load: its refresh draws the new state
        assert "alice/second" in served()
    finally:
        demo.close()
