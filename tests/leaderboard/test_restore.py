"""The Hub results repo as the board's source of truth (issue 36 §1): a board whose data folder is wiped (a Space
restarted without persistent storage, a move to new hardware) or left behind restores itself from the mirror at
start: every submission and tombstone, the same ids and versions, nothing twice. Checked against the local stand-in
for the Hub API (fakehub.FakeHub): the board, `show` and `show --csv` are compared byte for byte."""

from __future__ import annotations

import shutil
import sqlite3

import pytest

from hardneg.cli import main as hardneg_main
from hardneg.leaderboard import Leaderboard
from hardneg.leaderboard.example import predictions_bytes
from hardneg.leaderboard.mirror import HubMirror
from helpers import ALICE, BOB, FakeHub

FEINT = ("feint6k", "msrvtt", "test")
VATEX = ("feint6k", "vatex", "test")
CONTRAST = ("contrast_sets", "gender", "test")
REPO = "org/results"


def open_board(store, item_sets, hub) -> Leaderboard:
    return Leaderboard(store, item_sets, n_resamples=50, compute_blind=False, mirror=HubMirror(REPO, api=hub))


def snapshot(store, bench_root, capsys) -> dict:
    """Everything a visitor or an operator reads: `show`, `show --csv`, every benchmark's table and CSV (what the
    page draws), each model's history (ids, versions, states)."""
    capsys.readouterr()
    args = ["leaderboard", "show", "--data", str(store), "--benchmarks", str(bench_root), "--resamples", "50"]
    assert hardneg_main(args) == 0
    show = capsys.readouterr().out
    assert hardneg_main([*args, "--csv", "-"]) == 0
    csv = capsys.readouterr().out
    board = Leaderboard(store, None, benchmarks_dir=bench_root, n_resamples=50, compute_blind=False)
    out = {"show": show, "csv": csv, "overall": board.overall().to_csv(index=False)}
    for bench in board.benchmarks:
        out[bench] = board.table(bench).to_csv(index=False) + board.table_frame(bench).to_csv(index=False)
    for model in sorted({s.model_id for s in board.store.all_submissions()}):
        out[f"history {model}"] = board.history(model)
    out["count"] = board.store.count()
    return out


def fill(board: Leaderboard, item_sets) -> dict:
    """Several submissions (new versions, two models, two benchmarks, one file of two parts) and moderations (a
    hide, a hide then restore, a delete of every version of a model)."""
    ok = lambda out: out.ok and "stored" in out.message or pytest.fail(out.message)  # noqa: E731
    ids = {}
    ids["m1"] = board.submit(predictions_bytes(item_sets[FEINT], "org/m", seed=1), ALICE).submission.id
    ok(board.submit(predictions_bytes(item_sets[FEINT], "org/m", seed=2), ALICE))  # v2
    ok(board.submit_files([predictions_bytes(item_sets[FEINT], "org/two", seed=3),
                           predictions_bytes(item_sets[VATEX], "org/two", seed=4)], ALICE))
    ids["contrast"] = board.submit(predictions_bytes(item_sets[CONTRAST], "bob/c", seed=5), BOB).submission.id
    ok(board.submit(predictions_bytes(item_sets[FEINT], "bob/gone", seed=6), BOB))
    ids["hidden"] = board.submit(predictions_bytes(item_sets[FEINT], "alice/hidden", seed=7), ALICE).submission.id
    board.moderate("test-admin-token", ids["hidden"], "hide", "spam")
    board.moderate("test-admin-token", ids["contrast"], "hide", "checking")
    board.moderate("test-admin-token", ids["contrast"], "restore", "fine")
    board.moderate("test-admin-token", "bob/gone", "delete", "asked by its author")
    return ids


def test_a_wiped_store_is_restored_from_the_mirror_byte_for_byte(tmp_path, bench_root, item_sets, monkeypatch, capsys):
    monkeypatch.setenv("HARDNEG_ADMIN_TOKEN", "test-admin-token")
    hub, store = FakeHub(), tmp_path / "lb"
    board = open_board(store, item_sets, hub)
    ids = fill(board, item_sets)
    before = snapshot(store, bench_root, capsys)
    assert before["count"] == 7 and "alice/hidden" not in before["csv"] and "bob/gone" not in before["csv"]
    assert "bob/c" in before["csv"]  # hidden, then restored
    commits = len(hub.commits)

    shutil.rmtree(store)  # the restart on a wiped disk
    board = open_board(store, item_sets, hub)
    assert board.restored == {"submissions": 7, "tombstones": 4, "conflicts": 0, "orphans": 0, "unreadable": 0,
                              "duplicates": 0}
    after = snapshot(store, bench_root, capsys)
    assert after == before  # the board, `show`, `show --csv` and every history, byte for byte
    assert len(hub.commits) == commits  # restored rows are not pushed back

    # a second restart restores nothing and duplicates nothing
    board = open_board(store, item_sets, hub)
    assert board.restored["submissions"] == board.restored["tombstones"] == 0
    assert snapshot(store, bench_root, capsys) == before and len(hub.commits) == commits
    # the same file again is still "already stored" (the file's hash survived), and a new one is the next version
    again = board.submit(predictions_bytes(item_sets[FEINT], "org/m", seed=2), ALICE)
    assert again.ok and "already stored org/m v2" in again.message
    new = board.submit(predictions_bytes(item_sets[FEINT], "org/m", seed=9), ALICE)
    assert new.ok and new.submission.version == 3 and board.store.get(ids["m1"]).version == 1


def test_new_hardware_and_a_store_left_behind_catch_up(tmp_path, bench_root, item_sets, monkeypatch, capsys):
    monkeypatch.setenv("HARDNEG_ADMIN_TOKEN", "test-admin-token")
    hub = FakeHub()
    board = open_board(tmp_path / "a", item_sets, hub)
    assert board.submit(predictions_bytes(item_sets[FEINT], "org/early", seed=11), ALICE).ok
    # a copy of the store as it was then (an old disk image)
    (tmp_path / "old").mkdir()
    with sqlite3.connect(board.store.path) as src, sqlite3.connect(tmp_path / "old" / "leaderboard.sqlite") as dst:
        src.backup(dst)
    fill(board, item_sets)
    before = snapshot(tmp_path / "a", bench_root, capsys)
    behind = open_board(tmp_path / "old", item_sets, hub)  # behind its mirror: catches up
    assert behind.restored["submissions"] == 7 and behind.store.count() == 8
    fresh = open_board(tmp_path / "new", item_sets, hub)  # new hardware: an empty folder
    assert fresh.restored["submissions"] == 8
    for store in (tmp_path / "old", tmp_path / "new"):
        assert snapshot(store, bench_root, capsys) == before


def test_records_mirrored_without_per_item_values_are_rescored(tmp_path, bench_root, item_sets, monkeypatch, capsys):
    """A mirror written before the per-item values were published (records and Parquet only): the values are
    re-scored from the published predictions, and the board (its paired tests included) is the same."""
    monkeypatch.setenv("HARDNEG_ADMIN_TOKEN", "test-admin-token")
    hub = FakeHub()
    fill(open_board(tmp_path / "a", item_sets, hub), item_sets)
    before = snapshot(tmp_path / "a", bench_root, capsys)
    hub.files[REPO] = {p: d for p, d in hub.files[REPO].items() if not p.startswith("per_example/")}
    board = open_board(tmp_path / "b", item_sets, hub)
    assert board.restored["submissions"] == 7 and board.restored["unreadable"] == 0
    assert snapshot(tmp_path / "b", bench_root, capsys) == before


def test_a_hub_outage_at_start_refuses_submissions_until_the_mirror_is_read(tmp_path, item_sets, monkeypatch):
    """A board that could not read its mirror at start serves what it has, but stores nothing new (a new version
    could take a number the mirror already holds) until a retry reads it; moderations made during an outage are
    pushed when the Hub is back."""
    monkeypatch.setenv("HARDNEG_ADMIN_TOKEN", "test-admin-token")
    hub = FakeHub()
    first = open_board(tmp_path / "a", item_sets, hub)
    sub = first.submit(predictions_bytes(item_sets[FEINT], "org/m", seed=1), ALICE).submission
    hub.fail = True
    board = open_board(tmp_path / "b", item_sets, hub)
    out = board.submit(predictions_bytes(item_sets[FEINT], "org/m", seed=2), ALICE)
    assert not out.ok and "results repo" in out.message and board.store.count() == 0
    hub.fail = False
    out = board.submit(predictions_bytes(item_sets[FEINT], "org/m", seed=2), ALICE)
    assert out.ok and out.submission.version == 2 and board.store.count() == 2
    # a moderation goes the same path (issue 42): while the Hub is down it is not applied, and says so
    hub.fail = True
    msg = board.moderate("test-admin-token", sub.id, "hide", "outage")
    assert "did not confirm" in msg and board.store.get(sub.id).state == "visible"
    hub.fail = False
    board.moderate("test-admin-token", sub.id, "hide", "outage")
    assert board.store.unmirrored_tombstones() == []
    assert open_board(tmp_path / "c", item_sets, hub).store.get(sub.id).state == "hide"
