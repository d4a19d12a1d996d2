"""Hypothesis property tests: bounds, permutation invariance, chance level, closed form = brute force."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from hardneg.ranking import multiple_choice, retrieval

from . import reference as ref

SETTINGS = settings(max_examples=60, deadline=None)


@st.composite
def mc_case(draw, max_c=6):
    n = draw(st.integers(1, 8))
    c = draw(st.integers(1, max_c))
    scores = draw(arrays(np.float64, (n, c), elements=st.sampled_from([0.0, 0.5, 1.0, 2.0])))
    positive = draw(arrays(np.int64, (n,), elements=st.integers(0, c - 1)))
    return scores, positive


@st.composite
def retrieval_case(draw, max_v=6):
    q = draw(st.integers(1, 5))
    v = draw(st.integers(1, max_v))
    scores = draw(arrays(np.float32, (q, v), elements=st.sampled_from([0.0, 0.25, 1.0])))
    relevant = draw(arrays(np.bool_, (q, v)))
    original = draw(arrays(np.int64, (q,), elements=st.integers(0, v - 1)))
    relevant[np.arange(q), original] = True
    return scores, relevant, original


@SETTINGS
@given(mc_case())
def test_mc_expected_between_extremes(case):
    scores, positive = case
    exp = multiple_choice(scores, positive, ks=(1, 2))
    worst = multiple_choice(scores, positive, ks=(1, 2), ties="pessimistic")
    best = multiple_choice(scores, positive, ks=(1, 2), ties="optimistic")
    for key in ("R@1", "R@2", "RR"):
        assert (worst.per_example[key] <= exp.per_example[key] + 1e-12).all()
        assert (exp.per_example[key] <= best.per_example[key] + 1e-12).all()
    assert (best.per_example["rank"] <= exp.per_example["rank"]).all()
    assert (exp.per_example["rank"] <= worst.per_example["rank"]).all()


@SETTINGS
@given(mc_case(), st.randoms(use_true_random=False))
def test_mc_invariant_to_candidate_order(case, rnd):
    scores, positive = case
    perm = list(range(scores.shape[1]))
    rnd.shuffle(perm)
    perm = np.array(perm)
    inverse = np.argsort(perm)
    a = multiple_choice(scores, positive, ks=(1, 3))
    b = multiple_choice(scores[:, perm], inverse[positive], ks=(1, 3))
    for key in ("rank", "R@1", "R@3", "RR", "tied"):
        np.testing.assert_allclose(a.per_example[key], b.per_example[key], atol=1e-12)


@SETTINGS
@given(st.integers(1, 30), st.integers(1, 20), st.floats(-1e6, 1e6, allow_nan=False))
def test_mc_constant_scorer_is_chance(c, n, value):
    res = multiple_choice(np.full((n, c), value), np.arange(n) % c, ks=(1,))
    assert abs(res["R@1"] - 1 / c) < 1e-12
    assert abs(res["MeanR"] - (c + 1) / 2) < 1e-12


@SETTINGS
@given(mc_case(max_c=5))
def test_mc_closed_form_equals_brute_force(case):
    scores, positive = case
    res = multiple_choice(scores, positive, ks=(1, 2))
    for i in range(scores.shape[0]):
        want = ref.mean_over_orders(list(scores[i]), lambda o: ref.single_metrics(o, positive[i], (1, 2)))
        for key, value in want.items():
            assert abs(res.per_example[key][i] - value) < 1e-12


@SETTINGS
@given(retrieval_case())
def test_retrieval_closed_form_equals_brute_force_and_lies_between_extremes(case):
    scores, relevant, original = case
    exp = retrieval(scores, relevant, original=original, ks=(1, 2))
    worst = retrieval(scores, relevant, original=original, ks=(1, 2), ties="pessimistic")
    best = retrieval(scores, relevant, original=original, ks=(1, 2), ties="optimistic")
    for key in ("AP", "C@1", "C@2", "R@1", "AP_original"):
        assert (worst.per_example[key] <= exp.per_example[key] + 1e-12).all()
        assert (exp.per_example[key] <= best.per_example[key] + 1e-12).all()
    for i in range(scores.shape[0]):
        rel = set(np.nonzero(relevant[i])[0].tolist())
        want = ref.mean_over_orders(list(scores[i]), lambda o: ref.retrieval_metrics(o, rel, (1, 2)))
        for key, value in want.items():
            assert abs(exp.per_example[key][i] - value) < 1e-12, key


@SETTINGS
@given(retrieval_case(), st.randoms(use_true_random=False))
def test_retrieval_invariant_to_item_order(case, rnd):
    scores, relevant, original = case
    perm = list(range(scores.shape[1]))
    rnd.shuffle(perm)
    perm = np.array(perm)
    inverse = np.argsort(perm)
    a = retrieval(scores, relevant, original=original, ks=(1, 3))
    b = retrieval(scores[:, perm], relevant[:, perm], original=inverse[original], ks=(1, 3))
    for key in ("AP", "C@1", "C@3", "rank_first", "rank_original", "tied"):
        np.testing.assert_allclose(a.per_example[key], b.per_example[key], atol=1e-12)
