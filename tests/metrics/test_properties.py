"""Property tests: any split into add_batch calls equals one compute, which equals the core."""

from __future__ import annotations

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from hardneg.ranking import multiple_choice  # noqa: E402


@st.composite
def mc_inputs(draw):
    n = draw(st.integers(1, 12))
    c = draw(st.integers(1, 7))
    levels = draw(st.sampled_from([1, 2, 3, 1000]))  # 1 level = a constant scorer
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    scores = np.floor(rng.random((n, c)) * levels) / levels
    positive = rng.integers(0, c, n)
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=3)))
    ties = draw(st.sampled_from(["expected", "pessimistic", "optimistic", "feint6k", "posrank", "fire"]))
    return scores, positive, cuts, ties


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mc_inputs())
def test_any_batching_equals_core(load, data):
    scores, positive, cuts, ties = data
    module = load("mean_rank")
    bounds = [0, *cuts, len(positive)]
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        if hi > lo:
            module.add_batch(predictions=scores[lo:hi], references=positive[lo:hi])
    out = module.compute(ties=ties, n_resamples=0)
    core = multiple_choice(scores, positive, ties=ties)
    assert out["MeanR"] == core.aggregate["MeanR"]
    assert out["MedianR"] == core.aggregate["MedianR"]
    assert out["tie_rate"] == core.aggregate["tie_rate"]
    assert 1.0 <= out["MeanR"] <= scores.shape[1]
