"""FIRE analyses on a hand-built 3-query example: A = B + C, pooling bias, overlap, caption length."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest

from hardneg.analysis import (
    caption_length_analysis,
    label_correction,
    pooling_bias,
    pools_from_topk,
    system_overlap,
)
from hardneg.analysis.inputs import Judgments

from .helpers import SCORES, judgments


def test_label_correction_hand_computed(artifacts_dir):
    # q0: original v0 at rank 2, FIRE v3 at rank 1; q1: original first; q2: original at rank 4, FIRE v4, v0 at 1, 2.
    # B (original only): R@1 = 1/3, R@5 = 1, mAP = (1/2 + 1 + 1/4) / 3
    # A (FIRE):          C@1 = 1,   C@5 = 1, mAP = (1 + 1 + (1 + 1 + 3/4) / 3) / 3
    r = label_correction({"toy": SCORES}, judgments(), ks=(1, 5))
    v = r.values["toy"]
    assert v["C@1"]["B_exact"] == pytest.approx(1 / 3)
    assert v["C@1"]["A_exact"] == pytest.approx(1.0)
    assert v["C@5"]["B_exact"] == pytest.approx(1.0) and v["C@5"]["A_exact"] == pytest.approx(1.0)
    assert v["mAP"]["B_exact"] == pytest.approx((0.5 + 1 + 0.25) / 3)
    assert v["mAP"]["A_exact"] == pytest.approx((1 + 1 + 2.75 / 3) / 3)
    assert r.rows[0]["C@1"] == "100.00 (33.33 + 66.67)"
    assert r.rows[0]["C@5"] == "100.00 (100.00 + 0.00)"
    for m in ("C@1", "C@5", "mAP"):  # A = B + C exactly, as decimals
        assert Decimal(repr(v[m]["A"])) == Decimal(repr(v[m]["B"])) + Decimal(repr(v[m]["C"]))
    d = r.to_dict()
    assert d["columns"] == ["system", "C@1", "C@5", "mAP"] and d["details"]["values"]["toy"]["C@1"]["C"] == 0.6667
    r.plot(artifacts_dir / "analysis_label_correction.png")


def _pool_example():
    # 2 queries, 4 videos, originals v0, v1. Judged pairs (query, video, label) with the system that surfaced them.
    pairs = [(0, 2, 1, ("s1",)), (0, 3, 1, ("s2",)), (1, 3, 0, ("s1", "s2")), (1, 2, 1, ("s1",))]
    j = Judgments(["q0", "q1"], ["a", "b"], ["v0", "v1", "v2", "v3"], np.array([0, 1]),
                  np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs]), np.array([p[2] for p in pairs]),
                  [p[3] for p in pairs])
    systems = {
        "s1": np.array([[0.2, 0.1, 0.9, 0.0], [0.1, 0.3, 0.8, 0.0]]),  # top 1: v2, v2 (both FIRE positives from s1)
        "s2": np.array([[0.1, 0.2, 0.0, 0.9], [0.0, 0.9, 0.1, 0.2]]),  # top 1: v3 (FIRE, from s2), v1 (original)
    }
    return j, systems


def test_pooling_bias_hand_built(artifacts_dir):
    from hardneg.analysis import pools_from_column

    j, systems = _pool_example()
    pools = pools_from_column(j, ["s1", "s2"])
    assert pools["s1"].tolist() == [True, False, True, True] and pools["s2"].tolist() == [False, True, True, False]
    r = pooling_bias(systems, j, pools, ks=(1,))
    # s1: All C@1 = 1 (v2 relevant for both); New keeps only s2's pairs -> v2 unjudged for both queries -> 0
    assert r.values["s1"]["All"]["C@1"] == pytest.approx(1.0)
    assert r.values["s1"]["New"]["C@1"] == pytest.approx(0.0)
    # s2: All = 1; New keeps s1's pairs: q0's v3 unjudged -> 0, q1's original first -> 1
    assert r.values["s2"]["All"]["C@1"] == pytest.approx(1.0)
    assert r.values["s2"]["New"]["C@1"] == pytest.approx(0.5)
    bias = {row["system"]: row["C@1"] for row in r.rows if row["judgments"].startswith("bias")}
    assert bias == pytest.approx({"s1": 1.0, "s2": 0.5})
    r.plot(artifacts_dir / "analysis_pooling_bias.png")


def test_pools_from_topk_marks_pairs_in_each_top_k():
    j, systems = _pool_example()
    pools = pools_from_topk(systems, j, k=1)
    assert pools["s1"].tolist() == [True, False, False, True]  # s1's top 1 is v2 for both queries
    assert pools["s2"].tolist() == [False, True, False, False]  # s2's top 1: (q0, v3), (q1, v1 = original)
    pools2 = pools_from_topk(systems, j, k=2)
    assert pools2["s2"].tolist() == [False, True, True, False]  # q1's second best for s2 is v3


def test_pooling_bias_new_system_keeps_every_pool():
    j, systems = _pool_example()
    pools = {"s1": np.array([True, False, True, True]), "s2": np.array([False, True, True, False])}
    r = pooling_bias({"newcomer": systems["s1"]}, j, pools, ks=(1,))
    assert r.values["newcomer"]["New"]["C@1"] == r.values["newcomer"]["All"]["C@1"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="bool per judged pair"):
        pooling_bias(systems, j, {"s1": np.array([True])})


def test_overlap_hand_computed(artifacts_dir):
    # query 0: top-3 A = v0 v1 v2, B = v0 v2 v1 -> overlap 1, RBO 0.955; query 1: disjoint top 3 -> 0, 0.
    a = np.array([[6, 5, 4, 3, 2, 1], [6, 5, 4, 3, 2, 1]], dtype=float)
    b = np.array([[6, 4, 5, 3, 2, 1], [1, 2, 3, 4, 5, 6]], dtype=float)
    c = a.copy()
    r = system_overlap({"A": a, "B": b, "C": c}, k=3, p=0.9)
    rows = {row["systems"]: row for row in r.rows}
    assert rows["A & B"]["overlap"] == pytest.approx(0.5)
    assert rows["A & B"]["RBO"] == pytest.approx(0.955 / 2)
    assert rows["A & C"]["overlap"] == pytest.approx(1.0) and rows["A & C"]["RBO"] == pytest.approx(1.0)
    assert r.overlap_matrix[0, 1] == r.overlap_matrix[1, 0] == pytest.approx(0.5)
    r.plot(artifacts_dir / "analysis_overlap.png")
    with pytest.raises(ValueError, match="at least two"):
        system_overlap({"A": a})


def test_caption_length_bins_hand_computed(artifacts_dir):
    texts = ["a man", "a cat", "a dog runs fast", "a woman slices a red tomato"]  # 2, 2, 4, 6 words
    n_pos = np.array([5, 3, 1, 1])
    correct = {"a": np.array([1.0, 0.0, 1.0, 0.0]), "b": np.array([1.0, 1.0, 0.0, 0.0])}
    r = caption_length_analysis(texts, n_pos, correct, bin_width=2)
    assert [row["length_bin"] for row in r.rows] == ["2-3", "4-5", "6+"]
    first = r.rows[0]
    assert first["queries"] == 2 and first["mean_positives"] == 4.0 and first["max_positives"] == 5
    assert first["a C@1"] == 0.5 and first["b C@1"] == 1.0
    assert r.breakdown[0] == {"length_bin": "2-3", "both": 0.5, "only a": 0.0, "only b": 0.5, "neither": 0.0}
    assert r.breakdown[2]["neither"] == 1.0
    assert r.params["pearson_length_vs_positives"] < 0  # shorter captions, more positives
    r.plot(artifacts_dir / "analysis_caption_length.png")


def test_caption_length_counts_known_positives_from_judgments():
    j = judgments()
    assert j.n_positives().tolist() == [2, 1, 3]  # q0: v0 + v3; q1: v1 (v3 judged irrelevant); q2: v2 + v4 + v0


def test_label_correction_prints_a_negative_gain_with_a_minus_sign():
    # one query: original at rank 1, a FIRE positive at rank 3 -> AP drops from 1 to (1 + 2/3) / 2
    j = Judgments(["q"], ["a"], ["v0", "v1", "v2"], np.array([0]), np.array([0]), np.array([2]), np.array([1]))
    r = label_correction({"s": np.array([[0.9, 0.5, 0.1]])}, j, ks=(1,))
    assert r.values["s"]["mAP"]["C"] == pytest.approx(-(1 - 5 / 6), abs=1e-4)
    assert r.rows[0]["mAP"] == "83.33 (100.00 - 16.67)"


def test_topk_matches_a_stable_full_sort_with_ties():
    from hardneg.analysis.fire_pooling_bias import topk_indices

    rng = np.random.default_rng(0)
    for trial in range(100):
        s = rng.integers(0, 5, (12, 9)).astype(float) if trial % 2 else rng.random((12, 9))
        k = int(rng.integers(1, 10))
        assert (topk_indices(s, k) == np.argsort(-s, axis=1, kind="stable")[:, :k]).all()
