"""Any stored row draws (issue 42, N16): a store holding rows of benchmarks, configs or splits the board has no
items for (a board rebuilt without a config, a row restored into it) draws every surface: each benchmark's table
and CSV, Overall, `show`, `show --csv`, the details download, the drill-down's choices, the model card export. The
rows the board cannot score are shown as placeholders naming their parts, never dropped in silence and never a
crash (on the previous main every page load returned HTTP 500 and `show` exited 1 with KeyError)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from hardneg.cli import main as hardneg_main  # noqa: E402
from hardneg.leaderboard import Leaderboard, load_benchmarks  # noqa: E402
from hardneg.leaderboard.example import predictions_bytes  # noqa: E402
from hardneg.leaderboard.store import Store  # noqa: E402
from helpers import ALICE  # noqa: E402

FEINT = ("feint6k", "msrvtt", "test")
#: parts a store may hold: on the board, a config it was rebuilt without, an unknown config, an unknown split, a
#: declared benchmark the board does not have, a benchmark no version declares
PARTS = [FEINT, ("contrast_sets", "gender", "test"), ("feint6k", "vatex", "test"), ("feint6k", "zzz", "test"),
         ("feint6k", "msrvtt", "val"), ("videocon", "all", "test"), ("nosuch", "x", "y")]


@pytest.fixture(scope="module")
def narrow_root(bench_root, tmp_path_factory):
    """The test benchmarks rebuilt without feint6k/vatex."""
    root = tmp_path_factory.mktemp("narrow")
    shutil.copytree(bench_root, root, dirs_exist_ok=True)
    shutil.rmtree(root / "feint6k" / "vatex")
    return root


@pytest.fixture(scope="module")
def scored(item_sets):
    """Real submissions' stored values (results, per-item values, file) per part the board has; a row of a part it
    lacks reuses feint6k/msrvtt's."""
    folder = Path(tempfile.mkdtemp(prefix="hardneg-scored-"))
    board = Leaderboard(folder, item_sets, n_resamples=20, compute_blind=False)
    out = {}
    for part in PARTS[:2]:
        sub = board.submit(predictions_bytes(item_sets[part], "org/m", seed=1), ALICE).submission
        out[part] = (sub.results, board.store.per_example(sub.id), board.store.file_bytes(sub.id))
    shutil.rmtree(folder)
    return out


@pytest.mark.slow
@settings(max_examples=8, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(rows=st.lists(st.tuples(st.sampled_from(["org/a", "org/b", "alice-org/c"]), st.sampled_from(PARTS),
                          st.sampled_from(["visible", "hide"])), min_size=1, max_size=8))
def test_every_surface_draws_whatever_parts_the_store_holds(rows, narrow_root, scored, capsys):
    folder = Path(tempfile.mkdtemp(prefix="hardneg-anyrow-"))
    try:
        store = Store(folder)
        for k, (model, (bench, config, split), state) in enumerate(rows):
            results, per_example, file_bytes = scored.get((bench, config, split), scored[FEINT])
            sub = store.add_submission(model_id=model, submitter="alice", benchmark=bench, config=config, split=split,
                                       data_revision="r", metadata={"k": k}, results=results, per_example=per_example,
                                       file_bytes=file_bytes)  # one file: a part stored once per model
            if state == "hide":
                store.add_tombstone(sub.id, "hide", "t")
        board = Leaderboard(folder, load_benchmarks(narrow_root), n_resamples=20, compute_blind=False)
        drawn = ""
        for bench in board.benchmarks:
            drawn += board.table(bench).to_csv(index=False) + board.table_frame(bench).to_csv(index=False)
            board.by_negative_type(bench)
        drawn += board.overall().to_csv(index=False) + board.overall_frame().to_csv(index=False)
        board.details_parquet()
        for model in board.model_ids():
            board.parts_of(model)
            try:
                board.eval_results(model)
            except ValueError:
                pass  # nothing exportable for this model (a clear refusal, not a crash)
        args = ["leaderboard", "show", "--data", str(folder), "--benchmarks", str(narrow_root), "--resamples", "20"]
        capsys.readouterr()
        assert hardneg_main(args) == 0
        assert hardneg_main([*args, "--csv", "-"]) == 0
        shown = capsys.readouterr().out
        # every visible row the board has no items for is named as a placeholder, in the tables and in `show`
        hidden = {(m, p) for m, p, s in rows if s == "hide"}  # the same file is one row per (model, part)
        away = {(m, p) for m, p, s in rows if (m, p) not in hidden and p not in load_benchmarks(narrow_root)}
        for model, (bench, config, split) in away:
            assert f"{bench}/{config}/{split}" in drawn and f"{bench}/{config}/{split}" in shown, (model, bench)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
