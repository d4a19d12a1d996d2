"""Issue 41 item 7: the built-in models carry their type and license to the board (a run of tiny-clip submitted with
no Hub card and no flags showed Type "unknown" and an empty License), and Overall leaves out a License column that
no row fills."""

from __future__ import annotations

import pyarrow.parquet as pq

from hardneg.leaderboard import Leaderboard
from hardneg.leaderboard.example import predictions_bytes
from hardneg.leaderboard.identity import Identity
from hardneg.schema import read_predictions_metadata


def test_a_tiny_clip_run_shows_its_type_and_license(tmp_path, capsys):
    from hardneg.cli import main as hardneg_main

    run = tmp_path / "run"
    assert hardneg_main(["run", "--model", "tiny-clip", "--benchmarks", "feint6k", "--model-id", "local/tiny",
                         "--out", str(run), "--resamples", "0", "--no-charts", "--no-progress"]) == 0
    (pred,) = sorted((run / "predictions").glob("*.parquet"))[:1]
    assert read_predictions_metadata(pq.read_schema(pred))["model_meta"] == {"model_type": "contrastive",
                                                                             "license": "apache-2.0"}
    store = tmp_path / "board"
    store.mkdir()
    assert hardneg_main(["submit", str(run), "--space", str(store), "--benchmarks", str(run / "data"),
                         "--no-hub-card"]) == 0
    capsys.readouterr()
    board = Leaderboard(store, benchmarks_dir=run / "data", n_resamples=20, compute_blind=False)
    overall = board.overall()
    row = overall[overall["Model"].str.contains("local/tiny")].iloc[0]
    assert row["Type"] == "contrastive" and row["License"] == "apache-2.0"
    tab = board.table("feint6k")
    mine = tab[tab["Model"].str.contains("local/tiny")].iloc[0]
    assert mine["Type"] == "contrastive" and mine["License"] == "apache-2.0"


def test_overall_leaves_out_a_license_column_no_row_fills(tmp_path, item_sets):
    board = Leaderboard(tmp_path / "store", item_sets, n_resamples=20, compute_blind=False)
    for k, (key, items) in enumerate(item_sets.items()):
        assert board.submit(predictions_bytes(items, "alice/m", seed=k), Identity("alice")).ok
    assert "License" not in board.overall().columns
    assert board.submit(predictions_bytes(next(iter(item_sets.values())), "alice/licensed", seed=9,
                                          model_meta={"license": "mit"}), Identity("alice")).ok
    assert "License" in board.overall().columns
