"""Issue 33 item 4: the newcomer's stumbles on the board's command line and pages (not the browser layout, which
test_layout_1280.py checks): a run without --model-id refused once with the fix, a misspelled --data refused,
the Submit tab's wording in local mode, and the "p vs #1" cell never silently empty."""

from __future__ import annotations

from pathlib import Path

import pytest

from hardneg.cli import main as hardneg_main
from hardneg.leaderboard import Leaderboard
from hardneg.leaderboard.example import predictions_bytes
from hardneg.leaderboard.identity import local_identity


def _run_folder(root: Path, item_sets, model_id: str) -> Path:
    """A `hardneg run`-like folder: one predictions file per part, every one naming `model_id`."""
    (root / "predictions").mkdir(parents=True)
    for k, ((b, c, s), items) in enumerate(sorted(item_sets.items())):
        (root / "predictions" / f"{b}-{c}-{s}.parquet").write_bytes(predictions_bytes(items, model_id, seed=k))
    return root


def test_submit_without_model_id_is_explained_once_with_the_fix(tmp_path, bench_root, item_sets, capsys):
    run = _run_folder(tmp_path / "run", item_sets, "tiny-clip")
    assert len(list((run / "predictions").iterdir())) > 3
    code = hardneg_main(["submit", str(run), "--space", str(tmp_path / "board"), "--benchmarks", str(bench_root),
                         "--no-hub-card", "--as", "alice"])
    out = capsys.readouterr()
    text = out.out + out.err
    assert code == 2
    assert text.count("tiny-clip") <= 3 and text.count("no namespace") == 1, text
    assert "--model-id local/tiny-clip" in text and "error:" in text and "Traceback" not in text
    assert len(text.strip().splitlines()) <= 3, text
    assert not (tmp_path / "board").exists()  # nothing written


def test_submit_into_a_local_board_refuses_a_name_it_cannot_write_once(tmp_path, bench_root, item_sets, capsys):
    run = _run_folder(tmp_path / "run", item_sets, "openai/clip")
    code = hardneg_main(["submit", str(run), "--space", str(tmp_path / "board"), "--benchmarks", str(bench_root),
                         "--no-hub-card", "--as", "alice"])
    text = "".join(capsys.readouterr())
    assert code == 2 and text.count("openai/clip") == 1 and "--model-id local/clip" in text, text
    # with the fix it is stored
    assert hardneg_main(["submit", str(run), "--space", str(tmp_path / "board"), "--benchmarks", str(bench_root),
                         "--no-hub-card", "--as", "alice", "--model-id", "local/clip", "--create"]) == 0


def test_a_problem_every_file_shares_is_said_once(tmp_path, item_sets):
    """The board's own refusal (the Space's API, where the CLI cannot know the identity): a shared problem once."""
    board = Leaderboard(tmp_path / "store", item_sets, n_resamples=20, compute_blind=False)
    files = [predictions_bytes(items, "tiny-clip", seed=k) for k, items in enumerate(item_sets.values())]
    out = board.submit_files(files, "alice")
    assert not out.ok
    assert out.message.count("has no namespace") == 1, out.message
    assert "every file" in out.message and out.message.endswith("nothing was stored")
    # a problem of one file alone is still named with its file
    files[1] = predictions_bytes(list(item_sets.values())[1], "tiny-clip", seed=1, revision="not-the-data")
    out = board.submit_files(files, "alice")
    assert out.message.count("has no namespace") == 1 and f"file 2 of {len(files)}:" in out.message, out.message
    assert "data_revision" in out.message


@pytest.mark.parametrize("action", ["show", "serve"])
def test_a_board_folder_that_does_not_exist_is_refused(action, tmp_path, bench_root, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my-board").mkdir()
    code = hardneg_main(["leaderboard", action, "--data", "my-bord", "--benchmarks", str(bench_root)])
    err = capsys.readouterr().err
    assert code == 2 and "error:" in err and "my-bord" in err and "--create" in err, err
    assert not (tmp_path / "my-bord").exists()


def test_create_starts_a_new_board_and_an_existing_one_needs_nothing(tmp_path, bench_root, capsys):
    assert hardneg_main(["leaderboard", "show", "--data", str(tmp_path / "new"), "--create", "--benchmarks",
                         str(bench_root), "--resamples", "20"]) == 0
    assert (tmp_path / "new").is_dir() and "stored versions" in capsys.readouterr().out
    assert hardneg_main(["leaderboard", "show", "--data", str(tmp_path / "new"), "--resamples", "20"]) == 0
    (tmp_path / "a-file").write_text("x")
    assert hardneg_main(["leaderboard", "show", "--data", str(tmp_path / "a-file"), "--create"]) == 2
    assert "not a board folder" in capsys.readouterr().err


def _markdown(demo, elem_id: str) -> str:
    return next(b.value for b in demo.blocks.values() if getattr(b, "elem_id", None) == elem_id)


def test_local_mode_submit_tab_says_what_local_mode_does(tmp_path, item_sets):
    from helpers import load_space_module

    from hardneg.leaderboard.signin import SignIn

    app = load_space_module()
    board = Leaderboard(tmp_path / "store", item_sets, n_resamples=20, compute_blind=False)
    local = _markdown(app.create_app(board, sign_in=SignIn("local", "tests", local_identity("alice"))),
                      "submit-help")
    assert "Sign in with your Hugging Face" not in local and "Hub token)" not in local, local
    assert "no sign-in" in local and "alice" in local and "local/<name>" in local and "no token" in local
    hub = _markdown(app.create_app(board, sign_in=SignIn("read-only", "tests")), "submit-help")
    assert "Sign in with your Hugging Face account" in hub and "uses your Hub token" in hub


def test_local_submit_tab_gives_the_boards_own_address(tmp_path, item_sets):
    """Issue 41: the Submit tab showed a literal `<this page's port>`; the launcher knows the address."""
    from helpers import load_space_module

    from hardneg.leaderboard.signin import SignIn

    app = load_space_module()
    board = Leaderboard(tmp_path / "store", item_sets, n_resamples=20, compute_blind=False)
    mode = SignIn("local", "tests", local_identity("alice"))
    text = _markdown(app.create_app(board, sign_in=mode, url="http://127.0.0.1:7931"), "submit-help")
    assert "--space http://127.0.0.1:7931`" in text and "<" not in text.split("--space")[1], text
    unknown = _markdown(app.create_app(board, sign_in=mode), "submit-help")  # no launcher said: it says how
    assert "this page's port>" not in unknown and "PORT: the port in this page's address" in unknown


def _two_models(board, benchmark: str) -> None:
    who = local_identity("alice")
    for model, skill, seed in (("local/strong", 3.0, 1), ("local/weak", -1.0, 2)):
        files = [predictions_bytes(items, model, seed=seed + k, skill=skill)
                 for k, ((b, _, _), items) in enumerate(sorted(board.item_sets.items())) if b == benchmark]
        assert board.submit_files(files, who).ok


@pytest.mark.parametrize("bench", ["feint6k", "contrast_sets"])
def test_p_vs_1_is_filled_on_a_number_computed_over_several_configs(bench, tmp_path, item_sets):
    """The tab's default sort column is the benchmark's number, a mean over its configs ("R@1 · overall"): it has
    no per-item values of its own, so "p vs #1" stayed empty. Its paired test runs on the parts' values, weighted so
    that their mean is the number itself."""
    from hardneg.leaderboard.board import paired_test

    board = Leaderboard(tmp_path / "store", item_sets, n_resamples=50, compute_blind=False)
    _two_models(board, bench)
    col = next(c for c in board.columns(bench) if c.headline)
    assert col.overall and not col.config  # a computed column
    rows = {r.model: r for r in board.rows(bench)}
    for model in ("local/strong", "local/weak"):
        values = rows[model].per_example[col.name]
        assert values.mean() == pytest.approx(rows[model].cells[col.name].estimate, abs=1e-12)
    table = {r["Model"]: r for _, r in board.table(bench).iterrows()}
    leader = next(m for m, r in table.items() if r["Status"] == "leader")
    other = "local/weak" if leader == "local/strong" else "local/strong"
    p = paired_test(rows[leader].per_example[col.name], rows[other].per_example[col.name],
                    rows[leader].clusters[col.name], n_resamples=2000).p_value
    assert float(table[other]["p vs #1"]) == pytest.approx(p, abs=1e-3)
    assert table[leader]["p vs #1"] == "—"


def test_p_vs_1_says_why_it_is_empty(tmp_path, item_sets):
    """No p-value: the cell says why (no per-item values, computing in the background), never a bare blank."""
    import numpy as np

    from hardneg.leaderboard.board import (P_NO_VALUES, P_OTHER_ITEMS, P_PENDING, BoardRow, Cell, Column,
                                           mark_ties)

    col = Column("R@1 · x", "x", "test", "R@1")
    rows = [BoardRow("a/one", "submitted", {col.name: Cell(0.9, 0.8, 1.0)}),
            BoardRow("a/two", "submitted", {col.name: Cell(0.5, 0.4, 0.6)})]
    notes: dict = {}
    _, pvals = mark_ties(rows, col, cache={}, notes=notes)
    assert not pvals and notes[1] == P_NO_VALUES
    rows[0].per_example[col.name], rows[0].clusters[col.name] = np.ones(4), np.arange(4)
    rows[1].per_example[col.name] = np.zeros(3)
    notes = {}
    mark_ties(rows, col, cache={}, notes=notes)
    assert notes[1] == P_OTHER_ITEMS

    class Later(dict):  # a background cache whose worker has not run yet
        def schedule(self, *args):
            self.asked = args

    rows[1].per_example[col.name] = np.zeros(4)
    notes, cache = {}, Later()
    mark_ties(rows, col, cache=cache, notes=notes)
    assert notes[1] == P_PENDING and cache.asked


def test_generative_models_are_marked_on_overall_and_every_tab_from_their_stored_type(tmp_path, item_sets):
    from hardneg.leaderboard.board import GENERATIVE_MARK

    board = Leaderboard(tmp_path / "store", item_sets, n_resamples=20, compute_blind=False)
    who = local_identity("alice")
    for model, meta in (("local/vlm-named-clip", {"model_type": "generative"}), ("local/llava-not", {})):
        files = [predictions_bytes(items, model, seed=k) for k, items in enumerate(item_sets.values())]
        assert board.submit_files(files, who, meta).ok
    overall = board.overall()["Model"].tolist()
    assert f"local/vlm-named-clip {GENERATIVE_MARK}" in overall and "local/llava-not" in overall
    for bench in board.benchmarks:
        models = board.table(bench)["Model"].tolist()
        assert f"local/vlm-named-clip {GENERATIVE_MARK}" in models and "local/llava-not" in models, bench
    # the terminal's table and the machine outputs keep plain names (the Type column says it there)
    assert "local/vlm-named-clip" in board.average()["Model"].tolist()
    assert "local/vlm-named-clip" in board.overall_frame()["model"].tolist()
