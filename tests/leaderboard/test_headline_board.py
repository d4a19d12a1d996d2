"""Issue 27: one number per benchmark on the board (Overall and tabs read the results engine's value), the tabs'
default columns and sort, the rank, the Kind label, links of local names, subsets scored from their larger config,
and the text-only baseline on a local board."""

from __future__ import annotations

import pytest

from hardneg import benchmarks as registry
from hardneg.leaderboard import Leaderboard
from hardneg.leaderboard.board import MAX_DEFAULT_COLUMNS
from hardneg.leaderboard.example import predictions_bytes
from hardneg.leaderboard.identity import local_identity
from hardneg.results import benchmark_value

FEINT = [("feint6k", "msrvtt", "test"), ("feint6k", "vatex", "test")]


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    """Built samples of the benchmarks whose tabs the issue names (ViLMA, World, ATP-Hard)."""
    from hardneg.datasets import build_samples

    root = tmp_path_factory.mktemp("samples")
    build_samples(root, overwrite=True, benchmarks=("vilma", "world", "videocon-atphard"))
    return root


def _submit_all(board, model, who, seed, skill, keys):
    files = [predictions_bytes(board.item_sets[k], model, seed=seed, skill=skill) for k in keys]
    out = board.submit_files(files, who)
    assert out.ok, out.message
    return out


def test_overall_and_tab_show_the_engines_number(board):
    """Feint6K's number is the mean of R@1 over its two configs (its declaration): the tab's '· overall' column and
    the Overall cell are that value, computed by `benchmark_value` from the stored parts, never averaged again."""
    _submit_all(board, "org/a", "org", 1, 2.0, FEINT)
    subs = {s.config: s for s in board.store.current("feint6k")}
    want = benchmark_value(registry.get("feint6k"), {c: s.results["metrics"] for c, s in subs.items()},
                           {c: s.results["metrics"]["R@1"]["n"] for c, s in subs.items()})
    r1 = [subs[c].results["metrics"]["R@1"]["estimate"] for c in ("msrvtt", "vatex")]
    assert want["rule"] == "mean" and want["value"] == pytest.approx(sum(r1) / 2)
    row = next(r for r in board.overall_rows() if r.model == "org/a")
    assert row.cells["feint6k"].estimate == pytest.approx(want["value"])
    assert (row.cells["feint6k"].low, row.cells["feint6k"].high) == pytest.approx((want["low"], want["high"]))
    cols = board.columns("feint6k")
    assert cols[0].overall and cols[0].name == "R@1 · overall" and cols[0].parts == ("msrvtt/test", "vatex/test")
    tab = board.table("feint6k")
    assert tab.columns[5] == "R@1 · overall (%)"  # first score column: what the tab sorts by by default
    mine = tab[tab["Model"] == "org/a"].iloc[0]
    assert float(mine["R@1 · overall (%)"].split()[0]) == pytest.approx(100 * want["value"], abs=0.051)
    frame = board.overall_frame()
    assert frame.loc[frame["model"] == "org/a", "feint6k:R@1"].item() == pytest.approx(want["value"])
    # one part only: no number for the benchmark (coverage says so), but the part's own column is there
    _submit_all(board, "org/half", "org", 2, 1.0, FEINT[:1])
    half = next(r for r in board.overall_rows() if r.model == "org/half")
    assert "feint6k" not in half.cells and half.parts_covered == 1


def test_rank_is_the_models_rank_whichever_the_order(board):
    """'#' is the rank in the sort column (best = 1): showing worst first does not make the worst model #1."""
    for model, skill, seed in (("org/strong", 6.0, 3), ("org/weak", -2.0, 4)):
        _submit_all(board, model, "org", seed, skill, FEINT)
    best = board.overall(sort_by="feint6k", links=False)  # these models cover Feint6K only (no average)
    worst = board.overall(sort_by="feint6k", descending=False, links=False)
    rank = lambda t: dict(zip(t["Model"], t["#"]))  # noqa: E731
    assert rank(best) == rank(worst) and rank(best)["org/strong"] == 1
    assert worst.iloc[0]["Model"] != "org/strong" and worst.iloc[0]["#"] != 1
    tab_best, tab_worst = board.table("feint6k"), board.table("feint6k", descending=False)
    ranked = lambda t: {m: k for m, k, kind in zip(t["Model"], t["#"], t["Kind"]) if kind != "reported"}  # noqa: E731
    assert ranked(tab_best) == ranked(tab_worst) and ranked(tab_best)["org/strong"] == 1


def test_local_rows_say_local_everywhere_and_link_nowhere(board):
    _submit_all(board, "local/mine", local_identity("me"), 5, 1.0, FEINT)
    overall = board.overall()
    tab = board.table("feint6k")
    assert overall.loc[overall["Model"] == "local/mine", "Kind"].item() == "local"
    assert tab.loc[tab["Model"] == "local/mine", "Kind"].item() == "local"
    assert "huggingface.co" not in overall.loc[overall["Model"] == "local/mine", "Model"].item()
    assert "Hub page" not in tab.columns  # no row here has a Hub page: the column is left out
    row = next(r for r in board.rows("feint6k") if r.model == "local/mine")
    assert row.link == ""
    assert board.overall_frame().query("model == 'local/mine'")["kind"].item() == "local"
    assert board.table_frame("feint6k").query("model == 'local/mine'")["kind"].item() == "local"
    # a Hub name still links to its page
    _submit_all(board, "org/hub", "org", 6, 1.0, FEINT)
    assert "https://huggingface.co/org/hub" in board.overall().loc[lambda t: t["Model"].str.contains("org/hub"),
                                                                    "Model"].item()


def test_tabs_default_columns_and_sort(samples, tmp_path):
    """ViLMA shows its summary columns (the rest in the column picker), World sorts by its number by default,
    ATP-Hard's number is its `atp-hard` column."""
    board = Leaderboard(tmp_path / "store", benchmarks_dir=samples, compute_blind=False, n_resamples=50)
    vilma = board.columns("vilma")
    shown = [c.name for c in vilma if c.headline]
    assert shown == ["Accuracy · all", "Proficiency · all", "Combined · all"]
    assert len(vilma) > MAX_DEFAULT_COLUMNS and vilma[0].overall
    world = board.columns("world")
    assert world[0].overall and world[0].name == "Accuracy · overall"
    assert world[0].parts == ("posrank/test", "counterfactual/test", "temporal/test")
    assert board.table("world").columns[5] == "Accuracy · overall (%)"
    atp = board.columns("videocon-atphard")
    assert atp[0].name == "Accuracy · atp-hard" and atp[0].overall and sum(c.overall for c in atp) == 1


def test_a_file_for_atp_hard_gives_its_subsets(samples, tmp_path):
    """Imported scores of every `atp-hard` item: the board stores `causal` and `temporal` from the same rows, so
    the tab has all three and the benchmark's number is covered; the subsets equal their own submission's."""
    board = Leaderboard(tmp_path / "store", benchmarks_dir=samples, compute_blind=False, n_resamples=50)
    key = ("videocon-atphard", "atp-hard", "test")
    data = predictions_bytes(board.item_sets[key], "org/atp", seed=9, skill=1.0)
    out = board.submit(data, "org")
    assert out.ok and "scored from the file's own rows" in out.message
    stored = {s.config: s for s in board.store.current("videocon-atphard")}
    assert set(stored) == {"atp-hard", "causal", "temporal"}
    row = next(r for r in board.overall_rows() if r.model == "org/atp")
    assert row.cells["videocon-atphard"].estimate == stored["atp-hard"].results["metrics"]["Accuracy"]["estimate"]
    # the causal part equals what a file of the causal items alone gives
    whole = board.item_sets[key]
    causal = board.item_sets[("videocon-atphard", "causal", "test")]
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(pa.BufferReader(data))
    by_id = dict(zip(table["id"].to_pylist(), table["scores"].to_pylist()))
    alone = predictions_bytes(causal, "org/causal-alone", scores=[np.asarray(by_id[i]) for i in causal.ids.tolist()])
    assert board.submit(alone, "org").ok
    alone_sub = next(s for s in board.store.current("videocon-atphard") if s.model_id == "org/causal-alone")
    assert stored["causal"].results["metrics"]["Accuracy"]["estimate"] == \
        pytest.approx(alone_sub.results["metrics"]["Accuracy"]["estimate"])
    assert len(whole) == len(causal) + len(board.item_sets[("videocon-atphard", "temporal", "test")])
    # the same file again: nothing new, the derived parts included
    again = board.submit(data, "org")
    assert again.ok and again.message.count("already stored") == 3


def test_local_board_shows_the_text_only_baseline(tmp_path, bench_root):
    """`hardneg leaderboard show` lists the `blind-unigram` baseline the README promises."""
    from hardneg.cli import main

    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["leaderboard", "show", "--data", str(tmp_path / "lb"), "--create", "--benchmarks",
                     str(bench_root), "--resamples", "50"]) == 0
    assert "text-only (blind-unigram)" in buf.getvalue()


def test_show_csv_holds_fractions(tmp_path, bench_root, item_sets):
    """Issue 27 item 7: `leaderboard show --csv -` is a machine output: fractions, interval bounds in their own
    columns, never "37.6 [32.7, 42.5]" strings; the terminal table keeps the display."""
    import contextlib
    import csv
    import io

    from hardneg.cli import main

    store = tmp_path / "lb"
    board = Leaderboard(store, item_sets, compute_blind=False)
    _submit_all(board, "local/csv", local_identity("me"), 7, 2.0, FEINT)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["leaderboard", "show", "--data", str(store), "--benchmarks", str(bench_root), "--csv", "-"]) == 0
    rows = list(csv.DictReader(io.StringIO(buf.getvalue())))
    mine = next(r for r in rows if r["model"] == "local/csv")
    assert not any("[" in v for r in rows for v in r.values())
    want = board.overall_frame().set_index("model").loc["local/csv"]
    for column in ("feint6k:R@1", "feint6k:R@1 low", "feint6k:R@1 high"):
        assert 0 <= float(mine[column]) <= 1 and float(mine[column]) == pytest.approx(want[column])
    assert mine["kind"] == "local" and mine["rank"] == ""  # no average (one benchmark of five): no rank by it
