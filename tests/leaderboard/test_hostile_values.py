"""Hostile values through every entrance of the board (issue 29): each is refused where it enters with a message
naming the field and the fix, and a value that reached the store anyway (an older board, an edited store) never
takes a page down: the board draws, and `hardneg leaderboard show` prints, every other row.

Entrances: the upload form / API (`Leaderboard.submit_files(..., model_meta)` and the Space's `model_meta_json`),
the predictions file's own `model_meta`, `hardneg submit` flags, and the store itself (a row written before the
checks existed).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

from hardneg.cli import main as hardneg_main
from hardneg.leaderboard import Leaderboard
from hardneg.leaderboard.board import BoardRow, Cell, board_columns, format_params, render
from hardneg.leaderboard.board import md_escape
from hardneg.leaderboard.drawing import UNDRAWN
from hardneg.leaderboard.example import predictions_bytes
from hardneg.leaderboard.model_meta import MAX_PARAMS, clean_model_meta, parse_model_meta_json, shown_model_meta
from hardneg.leaderboard.overall import OverallRow
from helpers import ALICE, free_port

FEINT = ("feint6k", "msrvtt", "test")
HUGE = 10**400  # 401 digits
#: each hostile `params` value (the names show in the test ids)
HOSTILE = {"401 digits": HUGE, "Infinity": float("inf"), "-Infinity": float("-inf"), "NaN": float("nan"),
           "1e400 text": "1e400", "401-digit text": "9" * 401, "over the limit": MAX_PARAMS + 1,
           "a list": [1, 2], "a dict": {"$gt": 1}, "negative": -5, "a bool": True}


def draw_everything(board: Leaderboard) -> pd.DataFrame:
    """What a page load draws (`spaces/leaderboard/app.py` refresh: Overall, its CSV, every benchmark's table and
    CSV) and what `hardneg leaderboard show` prints; returns the Overall table."""
    table = board.overall()
    board.overall_frame()
    for bench in board.benchmarks:
        board.table(bench)
        board.table_frame(bench)
    assert len(table) == len(board.average())
    return board.average()


def show_output(store, bench_root, capsys) -> str:
    capsys.readouterr()
    assert hardneg_main(["leaderboard", "show", "--data", str(store), "--benchmarks", str(bench_root),
                         "--resamples", "50"]) == 0
    return capsys.readouterr().out


def seed_board(store, item_sets) -> Leaderboard:
    board = Leaderboard(store, item_sets, n_resamples=50, compute_blind=False)
    assert board.submit(predictions_bytes(item_sets[FEINT], "org/good", seed=1), ALICE, {"params": "151M"}).ok
    return board


@pytest.mark.parametrize("name", list(HOSTILE))
def test_clean_model_meta_bounds_params(name):
    with pytest.raises(ValueError) as err:
        clean_model_meta({"params": HOSTILE[name]})
    msg = str(err.value)
    assert "model_meta.params" in msg and "give the number of parameters" in msg and len(msg) < 400
    assert shown_model_meta({"params": HOSTILE[name], "license": "mit"}) == {"license": "mit"}
    assert isinstance(format_params(HOSTILE[name]), str)  # never raises, whatever a stored row holds


def test_every_row_of_sizes_is_drawn():
    assert format_params(1.5e8) == "150M" and format_params(MAX_PARAMS) == "1000T"
    for value in (HUGE, float("inf"), float("nan"), 10**16):
        row = OverallRow("m", "submitted", {}, 0, 1, None, {"params": value})
        assert row.size_bucket() == "unknown" and format_params(value) in ("?", "")


@pytest.mark.parametrize("name", ["401 digits", "Infinity", "1e400 text", "a dict", "over the limit"])
def test_upload_form_and_api_refuse_and_the_board_stands(tmp_path, bench_root, item_sets, name, capsys):
    board = seed_board(tmp_path / "lb", item_sets)
    out = board.submit(predictions_bytes(item_sets[FEINT], "org/bad", seed=2), ALICE, {"params": HOSTILE[name]})
    assert not out.ok and "model_meta.params" in out.message and "nothing was stored" in out.message
    assert "internal error" not in out.message
    assert [s.model_id for s in board.store.all_submissions()] == ["org/good"]
    assert "org/good" in draw_everything(board)["Model"].tolist()
    assert "org/good" in show_output(tmp_path / "lb", bench_root, capsys)


@pytest.mark.parametrize("text,expected", [
    ('{"params": Infinity}', "Infinity"), ('{"params": -Infinity}', "Infinity"), ('{"params": NaN}', "NaN"),
    ('{"params": 1e400}', "not a finite number"), ('{"params": ' + "9" * 401 + "}", "401-digit number"),
    ('{"params": ' + "[" * 50 + "]" * 50 + "}", "nests 51 levels deep"), ('{"x": "' + "a" * 20_000 + '"}', "bytes; at most"),
    ("[1]", "JSON object"), ("{", "not JSON"),
])
def test_the_space_api_model_meta_json_is_bounded(text, expected):
    """The Space's /submit_files takes the model metadata as JSON text: size and depth checked before parsing."""
    with pytest.raises(ValueError, match=expected):
        parse_model_meta_json(text)
    assert parse_model_meta_json('{"params": "7B"}')["params"] == 7_000_000_000 and parse_model_meta_json("") is None


@pytest.mark.parametrize("name", ["401 digits", "Infinity", "NaN", "1e400 text", "a list", "negative"])
def test_the_files_own_model_meta_is_checked(tmp_path, bench_root, item_sets, name, capsys):
    board = seed_board(tmp_path / "lb", item_sets)
    data = predictions_bytes(item_sets[FEINT], "org/bad", seed=2, model_meta={"params": HOSTILE[name]})
    out = board.submit(data, ALICE)
    assert not out.ok and "model_meta.params" in out.message and "the file's own 'model_meta'" in out.message
    assert [s.model_id for s in board.store.all_submissions()] == ["org/good"]
    assert "org/good" in draw_everything(board)["Model"].tolist()
    assert "org/good" in show_output(tmp_path / "lb", bench_root, capsys)
    # a checked value in the file is stored cleaned
    ok = board.submit(predictions_bytes(item_sets[FEINT], "org/fine", seed=3, model_meta={"params": "7B"}), ALICE)
    assert ok.ok and ok.submission.model_meta["params"] == 7_000_000_000


def test_submit_flags_refuse_a_401_digit_params(tmp_path, bench_root, item_sets, capsys):
    path = tmp_path / "p.parquet"
    path.write_bytes(predictions_bytes(item_sets[FEINT], "dana/m", seed=2))
    store = tmp_path / "lb"
    seed_board(store, item_sets)
    capsys.readouterr()
    code = hardneg_main(["submit", str(path), "--space", str(store), "--benchmarks", str(bench_root), "--as", "dana",
                         "--no-hub-card", "--params", "9" * 401])
    err = capsys.readouterr().err
    assert code == 2 and "model_meta.params" in err and "401 characters" in err
    assert "Traceback" not in err and len(err) < 1000
    assert "org/good" in show_output(store, bench_root, capsys)


@pytest.mark.parametrize("meta", [{"params": HUGE}, {"params": float("inf")}, {"params": "1e400"},
                                  {"params": {"a": [1]}, "license": ["x"], "model_type": 7}, ["not", "a", "dict"],
                                  "text", {"params": 10**4000}])
def test_a_hostile_row_already_in_the_store_does_not_take_the_board_down(tmp_path, bench_root, item_sets, meta, capsys):
    """A row stored before the checks existed (written into the store's metadata directly): the page and `show`
    draw it without the bad value, and every other row."""
    store = tmp_path / "lb"
    board = seed_board(store, item_sets)
    (good,) = board.store.all_submissions()
    sys.set_int_max_str_digits(0)  # json.dumps of a 4,001-digit integer (what an old store could hold)
    try:  # as an older board stored it: straight into the store, no check
        board.store.add_files(model_id="org/hostile", submitter="alice", files=[dict(
            metadata={**good.metadata, "model_meta": meta}, file_bytes=b"an older board's file",
            parts=[dict(benchmark=good.benchmark, config=good.config, split=good.split,
                        data_revision=good.data_revision, results=good.results,
                        per_example=board.store.per_example(good.id))])])
        board = Leaderboard(store, item_sets, n_resamples=50, compute_blind=False)
        models = draw_everything(board)["Model"].tolist()
        assert "org/good" in models and "org/hostile" in models
        printed = show_output(store, bench_root, capsys)
        assert "org/good" in printed and "org/hostile" in printed
        for sizes in (["unknown"], ["100M–1B"]):
            board.overall(sizes=sizes)
    finally:
        sys.set_int_max_str_digits(4300)


def test_a_row_that_cannot_be_drawn_is_shown_as_such(item_sets):
    """render never fails on one row: the row that fails alone becomes a placeholder naming the model."""
    cols = board_columns("feint6k", item_sets)
    good = BoardRow("org/good", "submitted", {c.name: Cell(0.5, 0.4, 0.6) for c in cols})
    broken = BoardRow("org/broken", "submitted", {c.name: Cell("x", object(), None) for c in cols})  # noqa
    table = render([good, broken], cols)
    assert set(table["Model"]) == {"org/good", "org/broken"}
    assert table.loc[table["Model"] == "org/broken", "Source"].item() == md_escape(UNDRAWN)  # a Markdown cell
    with pytest.raises(Exception):  # the control: the broken row alone really cannot be drawn
        from hardneg.leaderboard.board import render_rows

        render_rows([broken], cols)


@pytest.mark.parametrize("name", ["mallory/../alice/model", "a//b", "org/", "/name", "org/na..me", "org/-x",
                                  "org/x.", "a/b/c", "org/m@main", "org/na me", "org/" + "n" * 97, "org/a--b"])
def test_model_names_are_one_hub_legal_pair(tmp_path, item_sets, name):
    board = Leaderboard(tmp_path / "lb", item_sets, n_resamples=50, compute_blind=False)
    out = board.submit(predictions_bytes(item_sets[FEINT], name, seed=1), ALICE)
    assert not out.ok and "is not a valid model name" in out.message, out.message
    assert board.store.count() == 0
    assert board.submit(predictions_bytes(item_sets[FEINT], "org/Model_v1.5-base", seed=1), ALICE).ok


def test_submit_to_a_space_that_is_down_says_so_without_a_traceback(tmp_path, item_sets):
    path = tmp_path / "p.parquet"
    path.write_bytes(predictions_bytes(item_sets[FEINT], "alice/m", seed=2))
    port = free_port()
    proc = subprocess.run([sys.executable, "-m", "hardneg", "submit", str(path), "--space", f"http://127.0.0.1:{port}",
                           "--hf-token", "hf_x", "--no-hub-card", "--retries", "0"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "did not answer" in proc.stderr and "try again" in proc.stderr


def test_submit_to_a_space_that_dies_mid_request_says_so_without_a_traceback(tmp_path, item_sets):
    """A server that accepts the connection and drops it (as a SIGKILLed Space does mid-submit)."""
    import socket
    import threading

    path = tmp_path / "p.parquet"
    path.write_bytes(predictions_bytes(item_sets[FEINT], "alice/m", seed=2))
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    port = srv.getsockname()[1]
    stop = threading.Event()

    def drop():
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            conn.recv(1024)
            conn.close()  # mid-request: no answer

    threading.Thread(target=drop, daemon=True).start()
    try:
        proc = subprocess.run([sys.executable, "-m", "hardneg", "submit", str(path), "--space",
                               f"http://127.0.0.1:{port}", "--hf-token", "hf_x", "--no-hub-card", "--retries", "1"],
                              capture_output=True, text=True, timeout=180)
    finally:
        stop.set()
        srv.close()
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "did not answer" in proc.stderr, proc.stderr


@pytest.mark.parametrize("text", ['{"params": Infinity}', '{"params": 1e400}', '{"params": ' + "9" * 401 + "}",
                                  '{"params": "' + "9" * 401 + '"}', '{"params": ' + "[" * 5000 + "]" * 5000 + "}",
                                  '{"link": "javascript:alert(1)"}', '{"params": {"$gt": 1}}'])
def test_the_running_space_refuses_hostile_model_meta_and_keeps_serving(space, item_sets, tmp_path, text):
    """Through the Space's HTTP API (`/submit_files`, what `hardneg submit` calls): refused with a plain message,
    nothing stored, the page still served and the board still drawn."""
    import urllib.request

    import gradio_client

    url, board = space
    before = board.store.count()
    path = tmp_path / "p.parquet"
    path.write_bytes(predictions_bytes(item_sets[FEINT], "alice/hostile", seed=5))
    c = gradio_client.Client(url, verbose=False, oauth_token="tok-alice")
    msg = c.predict([gradio_client.handle_file(str(path))], text, api_name="/submit_files")
    assert msg.startswith("submission refused") and "internal error" not in msg and "nothing was stored" in msg, msg
    assert board.store.count() == before
    with urllib.request.urlopen(url, timeout=60) as r:
        assert r.status == 200
    draw_everything(board)
