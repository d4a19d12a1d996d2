"""The board's views without a browser: Overall (coverage, average over one unit, intervals, sort, filters),
the downloads (fractions), per-item details, the drill-down, the store state that drives live refresh, About."""

from __future__ import annotations

import io

import numpy as np
import pyarrow.parquet as pq
import pytest

from hardneg import benchmarks, vocabulary
from hardneg.leaderboard.example import predictions_bytes
from hardneg.leaderboard.identity import Identity
from hardneg.leaderboard.overall import Z95, combine, overall_metric
from hardneg.leaderboard.board import Cell

ORG = Identity("alice", ("org",))
FEINT = ("feint6k", "msrvtt", "test")


def submit_everything(board, model, skill, seed, meta=None, only=None):
    for key, items in board.item_sets.items():
        if only is None or key[0] in only:
            extra = {"model_meta": meta} if meta else {}
            out = board.submit(predictions_bytes(items, model, seed=seed, skill=skill, **extra), ORG)
            assert out.ok, out.message


def test_overall_lists_every_model_and_averages_only_full_coverage(board):
    submit_everything(board, "org/full", 3.0, 1, {"params": 150_000_000, "model_type": "contrastive", "license": "mit"})
    submit_everything(board, "org/half", 1.0, 2, {"params": 7_000_000_000, "model_type": "generative"},
                      only={"feint6k", "fire"})
    names = board.overall_names()
    assert names == [b for b in board.benchmarks if overall_metric(b) is not None]
    assert all(vocabulary.unit(overall_metric(b).key) == "fraction" for b in names)  # one unit averaged
    table = board.overall(links=False)
    rows = {r["Model"]: r for _, r in table.iterrows()}
    avg = next(c for c in table.columns if c.startswith("Average"))
    assert "full coverage only" in avg and "(%)" in avg
    assert rows["org/full"]["Coverage"] == f"{len(names)}/{len(names)}"
    assert rows["org/half"]["Coverage"] == f"2/{len(names)}" and rows["org/half"][avg] == ""
    # the average is the mean of the per-benchmark fractions, shown in percent with its interval
    frame = board.overall_frame()
    full = frame.set_index("model").loc["org/full"]
    per = [full[f"{b}:{overall_metric(b).key}"] for b in names]
    assert full["average"] == pytest.approx(np.mean(per))
    assert 0 <= full["average low"] <= full["average"] <= full["average high"] <= 1
    assert rows["org/full"][avg] == vocabulary.display(overall_metric(names[0]).key, full["average"],
                                                       full["average low"], full["average high"])
    # Feint6K's cell is its declared number: the mean over its configs of R@1 (`Benchmark.overall`)
    feint_cols = [c for c in board.columns("feint6k") if c.metric == overall_metric("feint6k").key and c.config]
    row = next(r for r in board.rows("feint6k") if r.model == "org/full")
    assert full[f"feint6k:{overall_metric('feint6k').key}"] == pytest.approx(
        np.mean([row.cells[c.name].estimate for c in feint_cols]))
    # every recomputed cell has an interval; baselines are listed too
    from hardneg.leaderboard.overall import header

    assert all("[" in table.loc[table["Model"] == "org/full", header(b)].item() for b in names)
    assert {"random (exact chance)", f"text-only (blind-unigram)"} <= set(rows)
    # sort (worst first), search, filters by type and size
    worst = board.overall(descending=False, kinds=["submitted"], links=False)
    assert worst["Model"].tolist()[-1] == "org/half"  # no average: last whatever the order
    assert board.overall(search="HALF", links=False)["Model"].tolist() == ["org/half"]
    assert board.overall(types=["generative"], links=False)["Model"].tolist() == ["org/half"]
    assert board.overall(sizes=["100M–1B"], links=False)["Model"].tolist() == ["org/full"]
    assert set(board.overall(sizes=["unknown"], links=False)["Model"]) == {"random (exact chance)",
                                                                          "text-only (blind-unigram)"}
    by_feint = board.overall(sort_by="feint6k", kinds=["submitted"], links=False)["Model"].tolist()
    assert by_feint == ["org/full", "org/half"]
    # the page's table links the model (Markdown), escaped
    linked = board.overall(search="full")["Model"].iloc[0]
    assert linked == "[org/full](<https://huggingface.co/org/full>)"


def test_combined_interval_is_the_normal_approximation_in_range():
    a, b = Cell(0.5, 0.4, 0.6), Cell(0.7, 0.6, 0.8)
    c = combine([a, b])
    se = np.sqrt(2 * (0.2 / (2 * Z95)) ** 2) / 2
    assert c.estimate == pytest.approx(0.6) and c.low == pytest.approx(0.6 - Z95 * se)
    assert combine([Cell(0.99, 0.9, 1.0), Cell(1.0, 1.0, 1.0)]).high <= 1.0
    assert combine([Cell(0.5)]).low is None


def test_downloads_hold_fractions_and_the_page_percent(board):
    submit_everything(board, "org/m", 2.0, 3, only={"feint6k"})
    frame = board.table_frame("feint6k")
    page = board.table("feint6k")
    row = frame.set_index("model").loc["org/m"]
    assert 0 <= row["R@1 · msrvtt"] <= 1 and "R@1 · msrvtt (%)" in page.columns
    shown = page.set_index("Model").loc["org/m", "R@1 · msrvtt (%)"]
    assert shown.startswith(f"{100 * row['R@1 · msrvtt']:.1f} [")
    assert "MeanR · msrvtt (rank)" in page.columns and row["MeanR · msrvtt"] >= 1


def test_details_parquet_and_drill_down_match_the_submitted_scores(board):
    items = board.item_sets[FEINT]
    scores = [np.zeros(6, np.float32) for _ in range(len(items))]
    for i in range(len(items)):
        scores[i][items.label[i]] = 1.0
    scores[2][(items.label[2] + 1) % 6] = 5.0  # item 2: a negative beats the positive
    scores[5][(items.label[5] + 3) % 6] = 1.0  # item 5: a negative ties it
    assert board.submit(predictions_bytes(items, "org/d", scores=scores), ORG).ok
    table = pq.read_table(io.BytesIO(board.details_parquet("org/d")))
    assert table.num_rows == len(items) and set(table.column("model_id").to_pylist()) == {"org/d"}
    got = dict(zip(table.column("id").to_pylist(), table.column("scores").to_pylist()))
    assert got[items.ids[2]] == pytest.approx(scores[2].tolist())
    ranks = dict(zip(table.column("id").to_pylist(), table.column("positive_rank").to_pylist()))
    assert ranks[items.ids[2]] == 2 and ranks[items.ids[0]] == 1
    assert "value:R@1" in table.column_names
    fails = board.failures("org/d", *FEINT)
    assert [(f.item_id, f.outcome) for f in fails] == [(items.ids[2], "beaten"), (items.ids[5], "tied")]
    f = fails[0]
    assert f.positive == items.captions[2][items.label[2]] and f.winner == items.captions[2][(items.label[2] + 1) % 6]
    assert f.winner_score == 5.0 and f.negative_type == "counterfactual" and "origin=human" in f.provenance
    with pytest.raises(ValueError, match="no shown submission"):
        board.failures("org/d", "feint6k", "vatex", "test")


def test_drill_down_on_retrieval_names_the_relevance_of_the_top_video(board):
    items = board.item_sets[("fire", "msrvtt", "test")]
    scores = [np.zeros(len(items.video_ids), np.float32) for _ in range(len(items))]
    for i in range(len(items)):
        scores[i][items.original[i]] = 1.0
    q0 = int(np.nonzero(items.ids == "q0")[0][0])
    scores[q0][items.video_ids.index("v1")] = 2.0  # v1: judged relevant to q0 by FIRE
    assert board.submit(predictions_bytes(items, "org/r", scores=scores), ORG).ok
    (f,) = board.failures("org/r", "fire", "msrvtt", "test")
    assert (f.item_id, f.query, f.positive, f.winner) == ("q0", "query 0", "v0", "v1")
    assert "judged relevant" in f.negative_type and "source=fire" in f.provenance


def test_state_changes_with_every_submission_and_moderation(board):
    before = board.state()
    items = board.item_sets[FEINT]
    out = board.submit(predictions_bytes(items, "org/s", seed=4), ORG)
    after = board.state()
    assert after != before and board.submit(predictions_bytes(items, "org/s", seed=4), ORG).ok
    assert board.state() == after  # the same file again stores nothing: nothing to redraw
    assert "org/s" in board.table("feint6k")["Model"].tolist()
    board.moderate("test-admin-token", out.submission.id, "hide", "test")
    assert board.state() != after and "org/s" not in board.table("feint6k")["Model"].tolist()
    assert pq.read_table(io.BytesIO(board.details_parquet("org/s"))).num_rows == 0  # hidden: not published


def test_about_is_written_from_the_declarations(board):
    from hardneg.leaderboard.about import about_markdown

    text = about_markdown(board.benchmarks)
    for name in board.benchmarks:
        decl = benchmarks.get(name)
        assert decl.title in text and decl.original_ties in text
        assert all(f"`{m.key}`" in text for m in decl.metrics)
    assert 'ties="expected"' in text and "cover every benchmark" in text and "How to submit" in text


def test_every_benchmark_tab_states_its_data_license():
    """A non-commercial license (TempCompass: CC BY-NC 4.0) must show on the board, not only on the card."""
    from hardneg.leaderboard.about import about_markdown, data_license

    text = about_markdown(benchmarks.names())
    for name in benchmarks.names():
        decl = benchmarks.get(name)
        line = data_license(decl)
        assert line in text and all(f"`{x}`" in line for x in decl.licenses)
    assert "`cc-by-nc-4.0`" in data_license(benchmarks.get("tempcompass"))


def test_negative_type_view_against_chance(board):
    submit_everything(board, "org/t", 2.0, 5, only={"contrast_sets"})
    view = board.by_negative_type("contrast_sets")["org/t"]
    assert set(view) == {"gender", "verb_lm"}
    for entry in view.values():
        assert entry["chance"] == pytest.approx(0.2)  # every negative of these items has the type: 1 of 5
        assert entry["low"] <= entry["estimate"] <= entry["high"]


def test_links_in_cells_are_http_only_and_quoted():
    from hardneg.leaderboard.board import md_link

    assert md_link("org/m", "https://huggingface.co/org/m") == "[org/m](<https://huggingface.co/org/m>)"
    assert md_link("a_b*", "javascript:alert(1)") == "a\\_b\\*"  # not a link, markup escaped
    assert "<script" not in md_link("x", "https://x.org/<script>") and "%3Cscript%3E" in md_link("x", "https://x.org/<script>")


def test_submitted_metadata_is_shown_escaped_and_within_the_contract(board):
    items = board.item_sets[FEINT]
    meta = {"params": "lots", "model_type": "<b>best</b>", "license": "[click](javascript:x)" + "x" * 100}
    refused = board.submit(predictions_bytes(items, "org/meta", seed=6, model_meta=meta), ORG)
    assert not refused.ok and "model_meta.params 'lots'" in refused.message  # checked where it enters (issue 29)
    assert board.submit(predictions_bytes(items, "org/meta", seed=6), ORG).ok
    (sub,) = [s for s in board.store.all_submissions() if s.model_id == "org/meta"]
    board.store.add_files(model_id="org/meta", submitter="alice", files=[dict(  # as an older board stored it
        metadata={**sub.metadata, "model_meta": meta}, file_bytes=b"older", parts=[dict(
            benchmark=sub.benchmark, config=sub.config, split=sub.split, data_revision=sub.data_revision,
            results=sub.results, per_example=board.store.per_example(sub.id))])])
    row = board.overall(search="org/meta").iloc[0]
    assert row["Type"] == "other" and row["Params"] == ""
    assert "](javascript" not in row["License"] and len(row["License"]) < 60
    page = board.table("feint6k", search="org/meta").iloc[0]
    assert page["Type"] == "other" and "](javascript" not in page["License"]
