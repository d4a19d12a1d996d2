"""The core works block by block, on threads: any split into blocks and any thread count gives
the same numbers as one block on one thread, for every tie rule, with and without masks."""

import importlib

import numpy as np
import pytest

from hardneg.ranking import TIE_RULES, Qrels, multiple_choice, retrieval

MC = importlib.import_module("hardneg.ranking.multiple_choice")
RET = importlib.import_module("hardneg.ranking.retrieval")


def tied_scores(rng, shape, levels=4):
    return rng.integers(0, levels, size=shape).astype(np.float32)


def results_equal(a, b):
    assert a.aggregate.keys() == b.aggregate.keys()
    for key, value in a.aggregate.items():
        assert value == pytest.approx(b.aggregate[key], rel=1e-12, abs=1e-12), key
    for key in a.per_example:
        np.testing.assert_allclose(a.per_example[key], b.per_example[key], rtol=1e-12, atol=1e-12, err_msg=key)
    assert a.by_group == b.by_group


def one_block(monkeypatch):
    monkeypatch.setenv("HARDNEG_THREADS", "1")
    monkeypatch.setattr(MC, "_BLOCK_ROWS", 1 << 30)
    monkeypatch.setattr(RET, "_BLOCK", 1 << 40)


def many_blocks(monkeypatch, threads):
    monkeypatch.setenv("HARDNEG_THREADS", str(threads))
    monkeypatch.setattr(MC, "_BLOCK_ROWS", 1)  # the floor: 1,024 rows per block
    monkeypatch.setattr(RET, "_BLOCK", 1)  # one row per block


@pytest.mark.parametrize("ties", sorted(TIE_RULES))
@pytest.mark.parametrize("masked", [False, True])
def test_multiple_choice_blocks_and_threads_agree(monkeypatch, ties, masked):
    rng = np.random.default_rng(7)
    n, c = 5_000, 6
    scores = tied_scores(rng, (n, c))
    positive = rng.integers(0, c, n)
    mask = None
    if masked:
        mask = rng.random((n, c)) < 0.8
        mask[np.arange(n), positive] = True
    groups = {"pos": rng.choice(["noun", "verb", "adj"], n)}
    kw = dict(mask=mask, ks=(1, 2, 3), ties=ties, seed=3, groups=groups)
    one_block(monkeypatch)
    reference = multiple_choice(scores, positive, **kw)
    for threads in (1, 3):
        many_blocks(monkeypatch, threads)
        results_equal(multiple_choice(scores, positive, **kw), reference)


@pytest.mark.parametrize("ties", sorted(TIE_RULES))
@pytest.mark.parametrize("masked", [False, True])
def test_retrieval_blocks_and_threads_agree(monkeypatch, ties, masked):
    rng = np.random.default_rng(11)
    n_q, n_v = 40, 30
    scores = tied_scores(rng, (n_q, n_v), levels=5)
    original = rng.integers(0, n_v, n_q)
    relevant = rng.random((n_q, n_v)) < 0.2
    relevant[np.arange(n_q), original] = True
    mask = None
    if masked:
        mask = rng.random((n_q, n_v)) < 0.8
        mask |= relevant
    q, d = np.nonzero(relevant)
    kw = dict(original=original, ks=(1, 5, 10), ties=ties, seed=5, mask=mask,
              groups={"len": rng.integers(0, 3, n_q)})
    one_block(monkeypatch)
    reference = retrieval(scores, Qrels(q, d), **kw)
    for threads in (1, 3):
        many_blocks(monkeypatch, threads)
        results_equal(retrieval(scores, Qrels(q, d), **kw), reference)


@pytest.mark.parametrize("levels", [6, None])  # many ties; none (random floats)
def test_block_counts_match_a_direct_count(levels):
    rng = np.random.default_rng(3)
    scores = tied_scores(rng, (3_000, 21), levels=6) if levels else rng.random((3_000, 21), dtype=np.float32)
    positive = rng.integers(0, 21, 3_000)
    p, h, e, counts = MC.positive_above_and_tied(scores, positive, None, count_codes=True)
    pos_score = scores[np.arange(3_000), positive]
    np.testing.assert_array_equal(p, pos_score)
    np.testing.assert_array_equal(h, (scores > pos_score[:, None]).sum(1))
    np.testing.assert_array_equal(e, (scores == pos_score[:, None]).sum(1))
    np.testing.assert_array_equal(counts, np.bincount(h.astype(int) * 21 + e - 1, minlength=21 * 21))
