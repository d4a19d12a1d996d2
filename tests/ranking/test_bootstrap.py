"""Cluster bootstrap and paired test: reproducible, whole clusters, sensible widths."""

import numpy as np
import pytest

from hardneg.ranking import bootstrap_ci, paired_test


def clustered(seed, n_clusters=200, per=6):
    rng = np.random.default_rng(seed)
    cluster_effect = rng.random(n_clusters)
    clusters = np.repeat(np.arange(n_clusters), per)
    values = (rng.random(clusters.size) < cluster_effect[clusters]).astype(float)
    return values, clusters


def test_seeded_reproducible():
    values, clusters = clustered(0)
    a = bootstrap_ci(values, clusters, n_resamples=500, seed=3)
    b = bootstrap_ci(values, clusters, n_resamples=500, seed=3)
    c = bootstrap_ci(values, clusters, n_resamples=500, seed=4)
    assert a == b
    assert (a.low, a.high) != (c.low, c.high)


def test_interval_contains_estimate_and_shrinks_with_n():
    small = bootstrap_ci(*clustered(1, n_clusters=50), n_resamples=2000, seed=0)
    large = bootstrap_ci(*clustered(1, n_clusters=5000), n_resamples=2000, seed=0)
    for ci in (small, large):
        assert ci.low <= ci.estimate <= ci.high
    assert (large.high - large.low) < 0.3 * (small.high - small.low)  # ~ sqrt(100) narrower


def test_clusters_move_together():
    values, clusters = clustered(2)
    # duplicating every row inside its cluster changes nothing when whole clusters are resampled
    a = bootstrap_ci(values, clusters, n_resamples=1000, seed=0)
    b = bootstrap_ci(np.repeat(values, 2), np.repeat(clusters, 2), n_resamples=1000, seed=0)
    assert a.low == pytest.approx(b.low) and a.high == pytest.approx(b.high)
    # the cluster bootstrap's standard error matches the between-cluster spread,
    # and is wider than pretending the rows are independent
    means = np.bincount(clusters, weights=values) / np.bincount(clusters)
    want = means.std(ddof=1) / np.sqrt(means.size)
    assert a.std_error == pytest.approx(want, rel=0.12)
    rowwise = bootstrap_ci(values, None, n_resamples=1000, seed=0)
    assert rowwise.std_error < a.std_error


def test_cluster_labels_may_be_strings():
    values, clusters = clustered(3, n_clusters=20)
    names = np.array([f"video{c}" for c in clusters])
    a = bootstrap_ci(values, clusters, n_resamples=300, seed=1)
    b = bootstrap_ci(values, names, n_resamples=300, seed=1)
    assert a.n_clusters == b.n_clusters == 20
    assert a.estimate == b.estimate


def test_paired_test():
    values, clusters = clustered(4)
    same = paired_test(values, values, clusters, n_resamples=500)
    assert same.difference == 0.0 and same.p_value == 1.0
    better = np.clip(values + 0.3, 0, 1)
    diff = paired_test(better, values, clusters, n_resamples=2000, seed=1)
    assert diff.p_value < 0.01
    assert diff.low <= diff.difference <= diff.high and diff.low > 0
    rng = np.random.default_rng(9)
    noise = paired_test(values, rng.permutation(values), None, n_resamples=2000, seed=2)
    assert noise.p_value > 0.001
    assert paired_test(better, values, clusters, n_resamples=300, seed=5) == paired_test(
        better, values, clusters, n_resamples=300, seed=5
    )


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: bootstrap_ci([], None), "empty"),
        (lambda: bootstrap_ci([1.0, np.nan], None), "finite"),
        (lambda: bootstrap_ci([1.0, 2.0], [0]), "one label"),
        (lambda: bootstrap_ci([1.0], None, confidence=1.5), "confidence"),
        (lambda: paired_test([1.0, 2.0], [1.0], None), "same examples"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()
