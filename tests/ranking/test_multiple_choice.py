"""multiple_choice against brute force over tie orders, plain-Python references and scikit-learn."""

import json

import numpy as np
import pytest

from hardneg.ranking import TIE_RULES, multiple_choice

from . import reference as ref

KS = (1, 2, 3)


def tied_case(seed, n=40, c=6, levels=3, ragged=True):
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, levels, size=(n, c)).astype(np.float64)
    mask = rng.random((n, c)) < 0.75 if ragged else np.ones((n, c), bool)
    positive = rng.integers(0, c, size=n)
    mask[np.arange(n), positive] = True
    return scores, positive, mask


def candidates(mask_row):
    return [j for j, ok in enumerate(mask_row) if ok]


@pytest.mark.parametrize("seed", range(4))
def test_expected_equals_average_over_all_tie_orders(seed):
    scores, positive, mask = tied_case(seed)
    res = multiple_choice(scores, positive, mask=mask, ks=KS)
    for i in range(scores.shape[0]):
        want = ref.mean_over_orders(
            list(scores[i]), lambda o: ref.single_metrics(o, positive[i], KS), candidates(mask[i])
        )
        for key, value in want.items():
            assert res.per_example[key][i] == pytest.approx(value, abs=1e-12), (i, key)


@pytest.mark.parametrize("seed", range(3))
def test_pessimistic_and_optimistic_are_the_extremes(seed):
    scores, positive, mask = tied_case(seed)
    worst = multiple_choice(scores, positive, mask=mask, ks=KS, ties="pessimistic")
    best = multiple_choice(scores, positive, mask=mask, ks=KS, ties="optimistic")
    for i in range(scores.shape[0]):
        lo, hi = ref.extremes_over_orders(
            list(scores[i]), lambda o: ref.single_metrics(o, positive[i], KS), candidates(mask[i])
        )
        assert worst.per_example["rank"][i] == hi["rank"]
        assert best.per_example["rank"][i] == lo["rank"]
        for k in KS:
            assert worst.per_example[f"R@{k}"][i] == lo[f"R@{k}"]
            assert best.per_example[f"R@{k}"][i] == hi[f"R@{k}"]


def test_benchmark_rules_are_named_aliases():
    scores, positive, mask = tied_case(7)
    for alias, base in (("feint6k", "optimistic"), ("posrank", "pessimistic")):
        a = multiple_choice(scores, positive, mask=mask, ties=alias)
        b = multiple_choice(scores, positive, mask=mask, ties=base)
        assert a.aggregate == b.aggregate


def test_fire_rule_is_stable_descending_argsort():
    scores, positive, mask = tied_case(3)
    res = multiple_choice(scores, positive, mask=mask, ks=KS, ties="fire")
    for i in range(scores.shape[0]):
        cand = candidates(mask[i])
        masked = np.where(mask[i], scores[i], -np.inf)
        order = [j for j in np.argsort(-masked, kind="stable") if mask[i, j]]
        assert order == [j for j in ref.order_by(list(scores[i]), list(range(6))) if j in cand]
        assert res.per_example["rank"][i] == order.index(positive[i]) + 1


def test_random_rule_is_seeded_and_unbiased():
    c = 6
    scores = np.zeros((60000, c))
    positive = np.arange(60000) % c
    a = multiple_choice(scores, positive, ties="random", seed=5)
    b = multiple_choice(scores, positive, ties="random", seed=5)
    other = multiple_choice(scores, positive, ties="random", seed=6)
    np.testing.assert_array_equal(a.per_example["rank"], b.per_example["rank"])
    assert not np.array_equal(a.per_example["rank"], other.per_example["rank"])
    # R@1 is a mean of 60000 Bernoulli(1/6): 5 standard errors is 0.0076
    assert abs(a["R@1"] - 1 / c) < 0.0076
    assert set(np.unique(a.per_example["rank"])) == set(range(1, c + 1))


@pytest.mark.parametrize("c", [1, 2, 5, 6, 21])
def test_constant_scorer_is_exactly_chance(c):
    scores = np.full((7, c), 0.3)
    positive = np.arange(7) % c
    res = multiple_choice(scores, positive, ks=(1, 2))
    assert res["R@1"] == pytest.approx(1 / c, abs=1e-15)
    assert res["R@2"] == pytest.approx(min(2, c) / c, abs=1e-15)
    assert res["MeanR"] == pytest.approx((c + 1) / 2, abs=1e-15)
    assert res["MedianR"] == pytest.approx((c + 1) / 2, abs=1e-15)
    assert res["MRR"] == pytest.approx(sum(1 / r for r in range(1, c + 1)) / c, abs=1e-14)
    assert res["tie_rate"] == (1.0 if c > 1 else 0.0)
    assert multiple_choice(scores, positive, ties="feint6k")["R@1"] == 1.0
    assert multiple_choice(scores, positive, ties="posrank")["MeanR"] == c


def test_ragged_rows_via_mask_equal_separate_calls():
    rng = np.random.default_rng(1)
    a = rng.random((10, 5))
    b = rng.random((10, 21))
    padded = np.zeros((20, 21))
    padded[:10, :5] = a
    padded[10:] = b
    mask = np.zeros((20, 21), bool)
    mask[:10, :5] = True
    mask[10:] = True
    pos = np.r_[np.zeros(10, int), np.arange(10)]
    joint = multiple_choice(padded, pos, mask=mask, ks=(1, 5))
    sep_a = multiple_choice(a, pos[:10], ks=(1, 5))
    sep_b = multiple_choice(b, pos[10:], ks=(1, 5))
    for key in ("rank", "R@1", "R@5", "RR"):
        np.testing.assert_allclose(joint.per_example[key], np.r_[sep_a.per_example[key], sep_b.per_example[key]])
    np.testing.assert_array_equal(joint.per_example["n_candidates"], np.r_[np.full(10, 5), np.full(10, 21)])


def test_matches_scikit_learn_on_tie_free_scores():
    from sklearn.metrics import label_ranking_average_precision_score, top_k_accuracy_score

    rng = np.random.default_rng(0)
    n, c = 500, 6
    scores = rng.random((n, c))
    positive = rng.integers(0, c, n)
    res = multiple_choice(scores, positive, ks=(1, 2, 3))
    for k in (1, 2, 3):
        want = top_k_accuracy_score(positive, scores, k=k, labels=np.arange(c))
        assert res[f"R@{k}"] == pytest.approx(want, abs=1e-12)
    onehot = np.zeros((n, c), bool)
    onehot[np.arange(n), positive] = True
    assert res["MRR"] == pytest.approx(label_ranking_average_precision_score(onehot, scores), abs=1e-12)


def test_adversarial_positive_never_in_top_k():
    scores = np.tile(np.arange(6, 0, -1, dtype=float), (4, 1))  # column 5 always last
    res = multiple_choice(scores, np.full(4, 5), ks=(1, 5))
    assert res["R@1"] == 0.0 and res["R@5"] == 0.0 and res["MeanR"] == 6.0
    assert res["MRR"] == pytest.approx(1 / 6)


def test_groups_breakdown_equals_subset_calls():
    scores, positive, mask = tied_case(11, n=60)
    pos_tag = np.array(["noun", "verb", "adj"])[np.arange(60) % 3]
    res = multiple_choice(scores, positive, mask=mask, groups={"pos": pos_tag})
    for tag in ("noun", "verb", "adj"):
        sel = pos_tag == tag
        sub = multiple_choice(scores[sel], positive[sel], mask=mask[sel])
        for key, value in sub.aggregate.items():
            assert res.by_group["pos"][tag][key] == pytest.approx(value)


def test_results_serialise():
    scores, positive, mask = tied_case(2, n=6)
    res = multiple_choice(scores, positive, mask=mask, groups={"src": ["a", "b"] * 3})
    text = json.dumps(res.to_dict(per_example=True))
    assert '"tie_rate"' in text and '"per_example"' in text
    assert len(res.to_frame()) == 6
    assert set(res.to_frame(groups=True)["value"]) == {"a", "b", "all"}


def test_every_rule_is_accepted_and_reports_tie_rate():
    scores, positive, mask = tied_case(5)
    for rule in TIE_RULES:
        res = multiple_choice(scores, positive, mask=mask, ties=rule, seed=0)
        assert 0.0 < res["tie_rate"] <= 1.0
        assert res["n"] == scores.shape[0]


def test_many_candidates_use_the_general_paths():
    rng = np.random.default_rng(8)
    c = 2100  # beyond the byte-lane and the direct-table limits
    scores = rng.integers(0, 50, size=(5, c)).astype(np.float64)
    positive = rng.integers(0, c, 5)
    res = multiple_choice(scores, positive, ks=(1, 100))
    p = scores[np.arange(5), positive]
    h = (scores > p[:, None]).sum(1)
    t = (scores == p[:, None]).sum(1) - 1
    np.testing.assert_allclose(res.per_example["rank"], h + (t + 2) / 2)
    np.testing.assert_allclose(res.per_example["R@100"], np.clip((100 - h) / (t + 1), 0, 1))
    assert res["MedianR"] == pytest.approx(np.median(h + (t + 2) / 2))
    const = multiple_choice(np.zeros((3, c)), [0, 1, 2])
    assert const["MeanR"] == pytest.approx((c + 1) / 2) and const["R@1"] == pytest.approx(1 / c)


def test_pad_ragged_from_lists_and_arrow():
    import pyarrow as pa

    from hardneg.ranking import pad_ragged

    rows = [[0.1, 0.9, 0.3], [0.5, 0.2], [0.7, 0.7, 0.1, 0.0, 0.4]]
    for source in (rows, pa.array(rows, pa.list_(pa.float32())), pa.chunked_array([rows[:1], rows[1:]], pa.list_(pa.float32()))):
        scores, mask = pad_ragged(source)
        assert scores.shape == (3, 5)
        np.testing.assert_array_equal(mask.sum(1), [3, 2, 5])
        np.testing.assert_allclose(scores[2], rows[2], rtol=1e-6)
        res = multiple_choice(scores, [1, 0, 0], mask=mask, ks=(1,))
        np.testing.assert_allclose(res.per_example["rank"], [1.0, 1.0, 1.5])
    sliced = pa.array(rows, pa.list_(pa.float32())).slice(1)
    scores, mask = pad_ragged(sliced)
    np.testing.assert_array_equal(mask.sum(1), [2, 5])
    with pytest.raises(ValueError, match="row 1 has no candidates"):
        pad_ragged([[0.1], []])


def test_groups_with_missing_values_and_dataframe_input():
    import pandas as pd

    scores = np.array([[0.9, 0.1], [0.1, 0.9], [0.5, 0.5], [0.2, 0.3]])
    frame = pd.DataFrame({"pos": ["noun", None, "noun", "verb"], "source": ["a", "a", "b", "b"]})
    res = multiple_choice(scores, [0, 0, 0, 1], ks=(1,), groups=frame)
    assert res.by_group["pos"]["noun"]["R@1"] == pytest.approx((1 + 0.5) / 2)
    assert res.by_group["pos"]["missing"]["n"] == 1
    assert res.by_group["source"]["b"]["tie_rate"] == 0.5
