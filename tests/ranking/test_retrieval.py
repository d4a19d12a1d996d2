"""retrieval against brute force over tie orders, plain-Python references, and IR libraries."""

import numpy as np
import pytest

from hardneg.ranking import Qrels, retrieval

from . import reference as ref

KS = (1, 2, 4)


def tied_case(seed, q=25, v=6, levels=3, dtype=np.float32):
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, levels, size=(q, v)).astype(dtype)
    relevant = rng.random((q, v)) < 0.3
    original = rng.integers(0, v, q)
    relevant[np.arange(q), original] = True
    return scores, relevant, original


def rel_set(relevant, i):
    return set(np.nonzero(relevant[i])[0].tolist())


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_expected_equals_average_over_all_tie_orders(seed, dtype):
    scores, relevant, original = tied_case(seed, dtype=dtype)
    if dtype == np.float64:  # values float32 cannot hold, to exercise the binary-search path
        scores = scores + 1e-12 * (scores == 2)
    res = retrieval(scores, Qrels.from_dense(relevant), original=original, ks=KS)
    for i in range(scores.shape[0]):
        rel = rel_set(relevant, i)
        want = ref.mean_over_orders(list(scores[i]), lambda o: ref.retrieval_metrics(o, rel, KS))
        want_orig = ref.mean_over_orders(list(scores[i]), lambda o: ref.single_metrics(o, original[i], KS))
        for key, value in want.items():
            assert res.per_example[key][i] == pytest.approx(value, abs=1e-12), (i, key)
        assert res.per_example["rank_original"][i] == pytest.approx(want_orig["rank"], abs=1e-12)
        assert res.per_example["RR_original"][i] == pytest.approx(want_orig["RR"], abs=1e-12)
        for k in KS:
            assert res.per_example[f"R@{k}"][i] == pytest.approx(want_orig[f"R@{k}"], abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_pessimistic_and_optimistic_are_the_extremes(seed):
    scores, relevant, original = tied_case(seed)
    worst = retrieval(scores, relevant, original=original, ks=KS, ties="pessimistic")
    best = retrieval(scores, relevant, original=original, ks=KS, ties="optimistic")
    for i in range(scores.shape[0]):
        rel = rel_set(relevant, i)
        lo, hi = ref.extremes_over_orders(list(scores[i]), lambda o: ref.retrieval_metrics(o, rel, KS))
        assert worst.per_example["AP"][i] == pytest.approx(lo["AP"], abs=1e-12)
        assert best.per_example["AP"][i] == pytest.approx(hi["AP"], abs=1e-12)
        assert worst.per_example["rank_first"][i] == hi["rank_first"]
        assert best.per_example["rank_first"][i] == lo["rank_first"]
        for k in KS:
            assert worst.per_example[f"C@{k}"][i] == lo[f"C@{k}"]
            assert best.per_example[f"C@{k}"][i] == hi[f"C@{k}"]


def test_fire_rule_matches_index_order_reference_with_top20_ap():
    scores, relevant, original = tied_case(9, q=30, v=40, levels=4)
    res = retrieval(scores, relevant, original=original, ks=(1, 5, 10, 30), ties="fire")
    for i in range(scores.shape[0]):
        order = list(np.argsort(-scores[i], kind="stable"))
        rel = rel_set(relevant, i)
        assert order == ref.order_by(list(scores[i]), list(range(40)))
        want = ref.retrieval_metrics(order, rel, (1, 5, 10, 30), fire=True)
        for key, value in want.items():
            assert res.per_example[key][i] == pytest.approx(value, abs=1e-12), (i, key)
        assert res.per_example["rank_original"][i] == order.index(original[i]) + 1


def test_random_rule_is_seeded_bounded_and_averages_to_expected():
    scores, relevant, original = tied_case(4, q=8, v=6, levels=2)
    worst = retrieval(scores, relevant, original=original, ties="pessimistic")
    best = retrieval(scores, relevant, original=original, ties="optimistic")
    exp = retrieval(scores, relevant, original=original, ties="expected")
    runs = [retrieval(scores, relevant, original=original, ties="random", seed=s) for s in range(400)]
    again = retrieval(scores, relevant, original=original, ties="random", seed=0)
    assert again.aggregate == runs[0].aggregate
    for key in ("AP", "C@1", "rank_first", "rank_original"):
        stack = np.stack([r.per_example[key] for r in runs])
        lo = np.minimum(worst.per_example[key], best.per_example[key])
        hi = np.maximum(worst.per_example[key], best.per_example[key])
        assert ((stack >= lo - 1e-12) & (stack <= hi + 1e-12)).all()
        spread = (hi - lo).max()
        assert np.abs(stack.mean(0) - exp.per_example[key]).max() < 0.25 * spread + 1e-12, key


def test_constant_scorer_is_chance():
    q, v = 5, 10
    scores = np.zeros((q, v), np.float32)
    relevant = np.zeros((q, v), bool)
    relevant[:, :3] = True  # 3 relevant of 10
    res = retrieval(scores, relevant, original=np.zeros(q, int), ks=(1, 10))
    assert res["R@1"] == pytest.approx(1 / v)
    assert res["MeanR"] == pytest.approx((v + 1) / 2)
    assert res["C@1"] == pytest.approx(3 / 10)
    assert res["C@10"] == pytest.approx(1.0)
    assert res["MeanR_first"] == pytest.approx((v + 1) / (3 + 1))
    assert res["tie_rate"] == 1.0


def test_all_items_relevant_and_single_item():
    scores = np.random.default_rng(0).random((4, 5))
    res = retrieval(scores, np.ones((4, 5), bool), ks=(1,))
    assert res["mAP"] == pytest.approx(1.0) and res["C@1"] == 1.0
    one = retrieval(np.array([[0.2], [0.7]]), original=[0, 0], ks=(1, 3))
    assert one["R@1"] == 1.0 and one["mAP"] == 1.0 and one["MeanR"] == 1.0


def test_no_relevant_in_top_k():
    scores = np.tile(np.arange(10, 0, -1, dtype=np.float32), (3, 1))
    relevant = np.zeros((3, 10), bool)
    relevant[:, 8:] = True
    res = retrieval(scores, relevant, ks=(1, 5))
    assert res["C@1"] == 0.0 and res["C@5"] == 0.0
    assert res["mAP"] == pytest.approx((1 / 9 + 2 / 10) / 2)
    fire = retrieval(np.tile(np.arange(30, 0, -1, dtype=np.float32), (1, 1)), relevant=np.eye(1, 30, 25, dtype=bool), ties="fire")
    assert fire["mAP"] == 0.0  # the only hit is below the top 20


def random_float_case(seed, q=40, v=60):
    rng = np.random.default_rng(seed)
    scores = rng.random((q, v))
    n_pos = rng.integers(1, 8, q)
    relevant = np.zeros((q, v), bool)
    for i in range(q):
        relevant[i, rng.choice(v, n_pos[i], replace=False)] = True
    return scores, relevant


def test_matches_scikit_learn_tie_free():
    from sklearn.metrics import average_precision_score, label_ranking_average_precision_score

    scores, relevant = random_float_case(0)
    res = retrieval(scores, relevant, ks=(1,))
    assert res["mAP"] == pytest.approx(label_ranking_average_precision_score(relevant, scores), abs=1e-12)
    per_query = [average_precision_score(relevant[i], scores[i]) for i in range(len(scores))]
    np.testing.assert_allclose(res.per_example["AP"], per_query, atol=1e-12)


def _run_dict(scores, docno):
    return {f"q{i}": {docno(j): float(scores[i, j]) for j in range(scores.shape[1])} for i in range(scores.shape[0])}


def _qrels_dict(relevant, docno):
    return {f"q{i}": {docno(j): 1 for j in np.nonzero(relevant[i])[0]} for i in range(relevant.shape[0])}


def test_matches_pytrec_eval_tie_free_and_with_ties():
    pytrec_eval = pytest.importorskip("pytrec_eval")

    def docno(j):  # trec_eval breaks ties by descending docno: make that ascending item index
        return f"d{999999 - j:06d}"

    for scores, relevant, rule in (
        (*random_float_case(1), "expected"),
        (tied_case(2, q=30, v=40, levels=3)[0], tied_case(2, q=30, v=40, levels=3)[1], "fire"),
    ):
        res = retrieval(scores, relevant, ks=(1, 5, 10), ties=rule)
        ev = pytrec_eval.RelevanceEvaluator(_qrels_dict(relevant, docno), {"map", "recip_rank", "success"})
        out = ev.evaluate(_run_dict(scores, docno))
        got_rr = [out[f"q{i}"]["recip_rank"] for i in range(len(scores))]
        np.testing.assert_allclose(1.0 / res.per_example["rank_first"], got_rr, atol=1e-12)
        for k in (1, 5, 10):
            got = [out[f"q{i}"][f"success_{k}"] for i in range(len(scores))]
            np.testing.assert_allclose(res.per_example[f"C@{k}"], got, atol=1e-12)
        if rule == "expected":  # no ties: every rule gives trec_eval's AP (divided by all relevant)
            got = [out[f"q{i}"]["map"] for i in range(len(scores))]
            np.testing.assert_allclose(res.per_example["AP"], got, atol=1e-12)


def test_matches_ranx_and_ir_measures_tie_free():
    ranx = pytest.importorskip("ranx")
    ir_measures = pytest.importorskip("ir_measures")
    scores, relevant = random_float_case(3)
    res = retrieval(scores, relevant, ks=(1, 5, 10))

    def docno(j):
        return f"d{j}"

    qrels, run = _qrels_dict(relevant, docno), _run_dict(scores, docno)
    got = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), ["map", "mrr", "hit_rate@1", "hit_rate@5", "hit_rate@10"])
    assert res["mAP"] == pytest.approx(got["map"], abs=1e-9)
    assert float(np.mean(1 / res.per_example["rank_first"])) == pytest.approx(got["mrr"], abs=1e-9)
    for k in (1, 5, 10):
        assert res[f"C@{k}"] == pytest.approx(got[f"hit_rate@{k}"], abs=1e-9)
    from ir_measures import AP, RR, Success

    agg = ir_measures.calc_aggregate([AP, RR, Success @ 5], qrels, run)
    assert res["mAP"] == pytest.approx(agg[AP], abs=1e-9)
    assert res["C@5"] == pytest.approx(agg[Success @ 5], abs=1e-9)


def test_original_kept_apart_from_extra_positives():
    scores = np.array([[0.9, 0.8, 0.1, 0.5]], np.float32)
    extra = Qrels([0], [0])  # item 0 is an extra positive, item 3 the original
    res = retrieval(scores, extra, original=[3], ks=(1, 3))
    assert res["R@1"] == 0.0 and res["R@3"] == 1.0 and res["MeanR"] == 3.0
    assert res["C@1"] == 1.0
    assert res["mAP"] == pytest.approx((1 / 1 + 2 / 3) / 2)
    assert res["mAP_original"] == pytest.approx(1 / 3)


def test_mask_excludes_items():
    rng = np.random.default_rng(5)
    scores = rng.random((6, 8))
    relevant = np.zeros((6, 8), bool)
    relevant[:, 0] = True
    mask = np.ones((6, 8), bool)
    mask[:, 5:] = False
    a = retrieval(scores, relevant, mask=mask, ks=(1, 2))
    b = retrieval(scores[:, :5], relevant[:, :5], ks=(1, 2))
    for key in ("AP", "C@1", "C@2", "rank_first"):
        np.testing.assert_allclose(a.per_example[key], b.per_example[key])


def test_signed_zero_ties():
    scores = np.array([[0.0, -0.0, 1.0]], np.float32)
    res = retrieval(scores, original=[1], ks=(2,))
    assert res["MeanR"] == 2.5 and res["tie_rate"] == 1.0
