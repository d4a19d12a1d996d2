"""Recomputed scores against hand-computed values; baselines at exact chance; ties, sorting, filters, reported rows."""

from __future__ import annotations

import numpy as np
import pytest

from hardneg.leaderboard.baselines import blind_baseline, random_baseline
from hardneg.leaderboard.board import REPORTED_STATUS, board_columns
from hardneg.leaderboard.example import predictions_bytes
from hardneg.leaderboard.identity import Identity
from hardneg.leaderboard.recompute import recompute
from hardneg.ranking import paired_test

FEINT = ("feint6k", "msrvtt", "test")


def ranked_scores(items, ranks):
    """Scores that put each item's positive at the given rank (no ties)."""
    out = []
    for i, r in enumerate(ranks):
        c = int(items.n_candidates[i])
        s = np.arange(c, 0, -1, dtype=np.float32)  # candidate order 0..c-1 gets scores c..1
        order = [j for j in range(c) if j != items.label[i]]
        order.insert(r - 1, int(items.label[i]))
        scores = np.empty(c, np.float32)
        scores[order] = s
        out.append(scores)
    return out


def test_multiple_choice_hand_computed(item_sets):
    items = item_sets[FEINT]
    ranks = [1, 2, 3, 1, 2, 3, 1, 2]
    from hardneg.leaderboard.validate import validate_submission

    sub = validate_submission(predictions_bytes(items, "a/m", scores=ranked_scores(items, ranks)), "a", item_sets)
    r = recompute(items, sub.scores, sub.mask, n_resamples=300)
    assert r.metrics["R@1"]["estimate"] == pytest.approx(3 / 8)
    assert r.metrics["R@2"]["estimate"] == pytest.approx(6 / 8)
    assert r.metrics["MeanR"]["estimate"] == pytest.approx(15 / 8)
    assert r.metrics["MRR"]["estimate"] == pytest.approx((3 + 3 / 2 + 2 / 3) / 8)
    for m in r.metrics.values():
        assert m["low"] <= m["estimate"] <= m["high"] and m["n_clusters"] == 8
    assert r.metrics["R@1"]["high"] > r.metrics["R@1"]["low"]


def test_random_baseline_is_exact_chance(item_sets):
    r = random_baseline(item_sets[FEINT], n_resamples=50).result
    assert r.metrics["R@1"]["estimate"] == pytest.approx(1 / 6)
    assert r.metrics["MeanR"]["estimate"] == pytest.approx(3.5)
    assert r.metrics["R@1"]["low"] == pytest.approx(1 / 6) == r.metrics["R@1"]["high"]
    pos = item_sets[("posrank", "vln_uvo", "noun")]  # ragged: 4, 5, 6, 4, 5 candidates
    r = random_baseline(pos, n_resamples=50).result
    expected = np.mean([sum(1 / k for k in range(1, c + 1)) / c for c in (4, 5, 6, 4, 5)])
    assert r.metrics["MRR"]["estimate"] == pytest.approx(expected)


def test_blind_baseline_uses_captions_only(item_sets):
    class LongerIsBetter:  # a text-only "model": scores a caption by its length
        def score(self, video, captions):
            assert video is None
            return np.asarray([len(c) for c in captions], np.float32)

    items = item_sets[FEINT]  # the positive caption says "right", negatives "wrong": same length -> ties
    b = blind_baseline(items, LongerIsBetter(), n_resamples=50)
    assert b.result.metrics["R@1"]["estimate"] == pytest.approx(1 / 6)
    fire = blind_baseline(item_sets[("fire", "msrvtt", "test")], LongerIsBetter(), n_resamples=50)
    assert "equals chance" in fire.note


def test_fire_original_vs_fire_labels_hand_computed(item_sets):
    items = item_sets[("fire", "msrvtt", "test")]
    # columns v0..v4; q0: v1 > v0; q1: v1 first; q2: v4 > v0 > v2; q3: v3 first
    scores = np.array([[4, 5, 1, 2, 3], [1, 5, 2, 3, 4], [4, 1, 3, 2, 5], [4, 1, 2, 5, 3]], float)
    r = recompute(items, scores, None, n_resamples=300)
    m = {k: v["estimate"] for k, v in r.metrics.items()}
    assert m["C@1"] == pytest.approx(1.0) and m["C@1_original"] == pytest.approx(0.5)
    assert m["mAP"] == pytest.approx((1 + 1 + 5 / 6 + 1) / 4)
    assert m["mAP_original"] == pytest.approx((1 / 2 + 1 + 1 / 3 + 1) / 4)
    assert m["C@5"] == m["C@5_original"] == pytest.approx(1.0)


def test_columns_per_benchmark(item_sets):
    names = {b: [c.name for c in board_columns(b, item_sets)] for b in ("feint6k", "contrast_sets", "posrank", "fire")}
    # first the benchmark's one number (issue 27): a computed "· overall" column for a mean over configs, or the
    # one config's own column (FIRE here has one config)
    assert names["feint6k"][:4] == ["R@1 · overall", "R@1 · msrvtt", "R@2 · msrvtt", "MeanR · msrvtt"]
    assert names["contrast_sets"] == ["Accuracy · overall", "Accuracy · gender", "Accuracy · verb_lm"]
    assert names["posrank"] == ["PoSRank · overall", "PoSRank · vln_uvo/noun", "PoSRank_noun · vln_uvo/noun",
                                "PoSRank · vln_uvo/verb", "PoSRank_verb · vln_uvo/verb"]
    assert board_columns("posrank", item_sets)[0].parts == ("vln_uvo/noun", "vln_uvo/verb")  # each split a part
    headline = {b: [c.name for c in board_columns(b, item_sets) if c.headline] for b in ("posrank", "fire")}
    assert headline["fire"] == ["C@1 · msrvtt", "C@5 · msrvtt", "C@10 · msrvtt", "mAP · msrvtt"]
    assert board_columns("fire", item_sets)[0].overall  # one config here: its own column is the number
    assert names["fire"][4:] == ["C@1_original · msrvtt", "C@5_original · msrvtt", "C@10_original · msrvtt",
                                 "mAP_original · msrvtt"]
    assert headline["posrank"] == ["PoSRank · overall", "PoSRank · vln_uvo/noun", "PoSRank · vln_uvo/verb"]


def submit_all(board, model, submitter, skill, seed, benchmark="feint6k"):
    for key, items in board.item_sets.items():
        if key[0] == benchmark:
            out = board.submit(predictions_bytes(items, model, seed=seed, skill=skill), Identity(submitter, ("org",)))
            assert out.ok, out.message


def test_ties_with_leader_sorting_and_filters(board):
    submit_all(board, "org/strong", "alice", 8.0, 1)
    submit_all(board, "org/strong-too", "alice", 8.0, 2)
    submit_all(board, "org/weak", "bob", -8.0, 3)
    col = "R@1 · msrvtt"
    df = board.table("feint6k", sort_by=col)
    rows = {r["Model"]: r for _, r in df.iterrows()}
    assert rows["org/strong"]["Status"] in ("leader", "tied with leader (intervals overlap)")
    assert rows["org/strong-too"]["Status"] in ("leader", "tied with leader (intervals overlap)")
    assert rows["org/weak"]["Status"] == ""
    assert float(rows["org/weak"]["p vs #1"]) < 0.05
    # the board's p-value is the core's paired test on the two models' stored per-example values
    leader = next(m for m, r in rows.items() if r["Status"] == "leader")
    subs = {s.model_id: s for s in board.store.current("feint6k") if s.config == "msrvtt"}
    a, b = board.store.per_example(subs[leader].id)["R@1"], board.store.per_example(subs["org/weak"].id)["R@1"]
    p = paired_test(a, b, board.item_sets[FEINT].clusters, n_resamples=2000).p_value
    assert float(rows["org/weak"]["p vs #1"]) == pytest.approx(p, abs=1e-3)
    # every score of a recomputed row carries its interval
    assert all("[" in rows["org/weak"][c] for c in df.columns if "·" in c)
    assert rows["InternVideo w/ LLM-teacher-lgt"]["Status"] == REPORTED_STATUS
    shown = col + " (%)"  # the page's header says the unit
    assert rows["InternVideo w/ LLM-teacher-lgt"][shown] == "65.8" and "Table 1" in rows["InternVideo w/ LLM-teacher-lgt"]["Source"]
    assert rows["random (exact chance)"][shown] == "16.7 [16.7, 16.7]"
    # sort: best first (MeanR: lower is better), and reversed
    mean_r = board.table("feint6k", sort_by="MeanR · msrvtt", kinds=["submitted"])
    assert mean_r["Model"].iloc[-1] == "org/weak"
    assert board.table("feint6k", sort_by="MeanR · msrvtt", descending=False, kinds=["submitted"])["Model"].iloc[0] == "org/weak"
    # search, kinds, column choice
    found = board.table("feint6k", search="WEAK")
    assert found["Model"].tolist() == ["org/weak"]
    only = board.table("feint6k", kinds=["reported"], shown=["R@2 · vatex"])
    assert set(only["Kind"]) == {"reported"} and "R@1 · msrvtt (%)" not in only.columns and "R@2 · vatex (%)" in only.columns
    fig = board.chart("feint6k", col)
    assert len(fig.axes[0].patches) == len(board.table("feint6k", sort_by=col)[lambda d: d[shown] != ""])


def test_posrank_cell_is_the_engines_mean_over_parts_of_speech(board):
    items = board.item_sets[("posrank", "vln_uvo", "noun")]
    assert board.submit(predictions_bytes(items, "alice/p", seed=1), "alice").ok
    row = board.table("posrank", kinds=["submitted"]).iloc[0]
    assert row["PoSRank · vln_uvo/noun (%)"] != "" and row["PoSRank · vln_uvo/verb (%)"] == ""
    sub = board.store.current("posrank")[0]
    mrr = sub.results["metrics"]["MRR"]["estimate"]
    assert sub.results["metrics"]["PoSRank"]["estimate"] == pytest.approx(mrr)  # one part of speech: PoSRank = MRR
    assert row["PoSRank · vln_uvo/noun (%)"].startswith(f"{100 * mrr:.1f} [")  # a fraction, shown as percent


def test_blind_baseline_marked_pending_when_it_cannot_load(tmp_path, item_sets, monkeypatch):
    import hardneg.models
    from hardneg.leaderboard import Leaderboard

    def broken(name, **kw):
        raise FileNotFoundError("GloVe word list not installed")

    monkeypatch.setattr(hardneg.models, "load_model", broken)
    board = Leaderboard(tmp_path, item_sets, n_resamples=20)
    row = board.table("contrast_sets", kinds=["baseline"], search="text-only").iloc[0]
    assert row["Source"].startswith("pending: FileNotFoundError") and row["Accuracy · gender (%)"] == ""


def test_submit_target_detection():
    from hardneg.cli.submit import is_remote

    assert is_remote("http://127.0.0.1:7860/") and is_remote("video-hardneg/leaderboard")
    assert not is_remote("lb/data", benchmarks="built") and not is_remote("/tmp")
