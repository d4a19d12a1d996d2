"""Bootstrap sample sizes: deviations shrink like 1/sqrt(N), seeded, and zero for a constant score."""

from __future__ import annotations

import numpy as np
import pytest

from hardneg.analysis import judgment_budget
from hardneg.analysis.fire_judgment_budget import resample_deviations


def test_deviation_quantile_shrinks_with_n_like_the_normal_approximation(artifacts_dir):
    rng = np.random.default_rng(0)
    values = (rng.random(5000) < 0.4).astype(float)  # a C@1 of 0.4 over 5,000 queries
    r = judgment_budget({"C@1": values}, sizes=(100, 400, 1600), n_resamples=10_000, seed=0)
    p95 = {row["N"]: row["p95_abs_dev"] for row in r.rows}
    assert p95[100] > p95[400] > p95[1600]
    sd = values.std()
    for n in (100, 400, 1600):  # |mean - full| ~ |Normal(0, sd / sqrt(N))|: 95th percentile = 1.96 sd / sqrt(N)
        assert p95[n] == pytest.approx(1.96 * sd / np.sqrt(n), rel=0.08)
    assert p95[100] / p95[1600] == pytest.approx(4.0, rel=0.15)
    r.plot(artifacts_dir / "analysis_judgment_budget.png")


def test_seeded_and_constant():
    v = np.random.default_rng(1).random(300)
    a = judgment_budget({"AP": v}, sizes=(50,), n_resamples=500, seed=3)
    b = judgment_budget({"AP": v}, sizes=(50,), n_resamples=500, seed=3)
    assert a.rows == b.rows
    c = judgment_budget({"C@1": np.ones(100)}, sizes=(10,), n_resamples=200)
    assert c.rows[0]["p95_abs_dev"] == 0.0


def test_chunked_resampling_equals_direct_draws():
    v = np.arange(10, dtype=float)
    d = resample_deviations(v, 3, 7, np.random.default_rng(5))
    idx = np.random.default_rng(5).integers(0, 10, size=(7, 3))
    assert np.allclose(d, np.abs(v[idx].mean(axis=1) - v.mean()))


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="'C@1'"):
        judgment_budget({"C@1": np.array([np.nan, 1.0])})
    with pytest.raises(ValueError, match="quantile"):
        judgment_budget({"C@1": np.ones(3)}, quantile=95)
