"""N1 (issue 36): a stored row whose `results` are damaged is drawn as a placeholder naming its submission id, and
every other row stands: in `hardneg leaderboard show`, `show --csv` and the served page.

The damaged rows are written straight into the store's SQLite file (as an older board, an edited store or a
restored mirror could hold them), so they never passed the submission checks."""

from __future__ import annotations

import json
import sqlite3
import uuid

import pytest

from hardneg.cli import main as hardneg_main
from hardneg.leaderboard import Leaderboard
from hardneg.leaderboard.drawing import Placeholder, validate_stored_results
from hardneg.leaderboard.example import predictions_bytes
from helpers import ALICE, page_load

FEINT = ("feint6k", "msrvtt", "test")
GOOD = {"estimate": 0.5, "low": 0.25, "high": 0.75, "n": 8, "n_clusters": 8}

#: each damaged form of a stored `results` column (raw text, as the store holds it)
DAMAGED = {
    "empty object": "{}",
    "no metrics": json.dumps({"ties": "expected", "n_resamples": 50}),
    "text estimate": json.dumps({"metrics": {"R@1": {**GOOD, "estimate": "0.5"}}}),
    "metrics as a list": json.dumps({"metrics": [GOOD]}),
    "metrics empty": json.dumps({"metrics": {}}),
    "metrics as text": json.dumps({"metrics": "R@1=0.5"}),
    "metric entry a number": json.dumps({"metrics": {"R@1": 0.5}}),
    "NaN estimate": '{"metrics": {"R@1": {"estimate": NaN, "low": 0.1, "high": 0.9, "n": 8}}}',
    "1e400 estimate": '{"metrics": {"R@1": {"estimate": 1e400, "low": 0.1, "high": 0.9, "n": 8}}}',
    "bool estimate": json.dumps({"metrics": {"R@1": {**GOOD, "estimate": True}}}),
    "text interval bound": json.dumps({"metrics": {"R@1": {**GOOD, "low": "0.2"}}}),
    "n as text": json.dumps({"metrics": {"R@1": {**GOOD, "n": "8"}}}),
    "negative n": json.dumps({"metrics": {"R@1": {**GOOD, "n": -1}}}),
    "results a list": "[1, 2]",
    "results null": "null",
    "results a number": "0.5",
    "results not JSON": "{'metrics': ",
}


def store_damaged(store_path, model: str, results_text: str) -> str:
    """A copy of the store's first submission under `model` with `results_text` as its results; returns its id."""
    sub_id = uuid.uuid4().hex
    con = sqlite3.connect(store_path)
    try:
        con.execute("INSERT OR IGNORE INTO owners VALUES (?, 'alice', '2026-01-01')", (model,))
        con.execute("INSERT INTO submissions (id, model_id, submitter, benchmark, config, split, version, data_revision,"
                    " metadata, results, per_example, file_sha256, file, created_at)"
                    " SELECT ?, ?, submitter, benchmark, config, split, 1, data_revision, metadata, ?, per_example,"
                    " 'x', file, created_at FROM submissions ORDER BY seq LIMIT 1", (sub_id, model, results_text))
        con.commit()
    finally:
        con.close()
    return sub_id


def seed(store, item_sets) -> Leaderboard:
    board = Leaderboard(store, item_sets, n_resamples=50, compute_blind=False)
    assert board.submit(predictions_bytes(item_sets[FEINT], "org/good", seed=1), ALICE).ok
    assert board.submit(predictions_bytes(item_sets[FEINT], "org/other", seed=2), ALICE).ok
    return board


@pytest.mark.parametrize("form", list(DAMAGED))
def test_validate_stored_results_names_the_row(tmp_path, item_sets, form):
    board = seed(tmp_path / "lb", item_sets)
    sub_id = store_damaged(board.store.path, "org/damaged", DAMAGED[form])
    sub = board.store.get(sub_id)  # reading the store never fails on one row
    got = validate_stored_results(sub)
    assert isinstance(got, Placeholder) and got.id == sub_id and got.reason
    good = board.store.history("org/good")[0]
    assert validate_stored_results(good) == good.results["metrics"]  # a sound row passes unchanged


@pytest.mark.parametrize("form", list(DAMAGED))
def test_show_and_csv_draw_a_placeholder_and_every_other_row(tmp_path, bench_root, item_sets, form, capsys):
    store = tmp_path / "lb"
    board = seed(store, item_sets)
    sub_id = store_damaged(board.store.path, "org/damaged", DAMAGED[form])
    args = ["leaderboard", "show", "--data", str(store), "--benchmarks", str(bench_root), "--resamples", "50"]
    capsys.readouterr()
    assert hardneg_main(args) == 0
    out = capsys.readouterr().out
    assert "org/good" in out and "org/other" in out and sub_id in out and "Traceback" not in out
    assert hardneg_main([*args, "--csv", "-"]) == 0
    csv = capsys.readouterr().out
    lines = csv.splitlines()
    assert any(",org/good,submitted," in line for line in lines) and any(",org/other,submitted," in line for line in lines)
    assert sum(sub_id in line for line in lines) == 1
    # the benchmark table: the placeholder row says which submission and why
    table = Leaderboard(store, item_sets, n_resamples=50, compute_blind=False).table("feint6k")
    placeholder = table[table["Model"].str.contains(sub_id, regex=False)]
    assert len(placeholder) == 1 and "damaged" in " ".join(map(str, placeholder.iloc[0].tolist()))
    assert sum("org/good" in m for m in table["Model"]) == 1 and sum("org/other" in m for m in table["Model"]) == 1


@pytest.fixture(scope="module")
def served(space, item_sets):
    url, board = space
    for name, seed_ in (("alice/good", 1), ("alice-org/other", 2)):
        assert board.submit(predictions_bytes(item_sets[FEINT], name, seed=seed_), ALICE).ok
    return url, board


@pytest.mark.parametrize("form", list(DAMAGED))
def test_the_served_page_draws_a_placeholder_and_every_other_row(served, form):
    url, board = served
    sub_id = store_damaged(board.store.path, f"org/damaged-{list(DAMAGED).index(form)}", DAMAGED[form])
    answer = json.dumps(page_load(url))  # HTTPError (500, "drawing the board failed") before the fix
    assert sub_id in answer and "alice/good" in answer and "alice-org/other" in answer
    assert "failed" not in answer


@pytest.mark.parametrize("form", ["empty object", "text estimate", "metrics as a list", "results not JSON"])
def test_the_model_card_export_skips_a_damaged_part(tmp_path, item_sets, form):
    board = seed(tmp_path / "lb", item_sets)
    store_damaged(board.store.path, "org/damaged", DAMAGED[form])
    assert board.eval_results("org/damaged") == {}  # nothing to export, no traceback
    assert list(board.eval_results("org/good")) == [".eval_results/hardneg-feint6k.yaml"]
