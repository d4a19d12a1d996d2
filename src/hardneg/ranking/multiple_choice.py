"""Multiple choice: each row scores one positive against its negatives (Feint6K, contrast sets, PoSRank)."""

from __future__ import annotations

import numpy as np

from .results import Aggregation, RankingResult, aggregate, breakdown
from .ties import (
    check_tie_rule,
    expected_rank,
    expected_recall_at,
    expected_reciprocal_rank,
    harmonic_table,
)
from .validate import as_groups, as_index, as_mask, as_scores, check_ids, check_ks


_BYTE_SUM = np.uint64(0x0101010101010101)


def count_per_row(flags_into, n: int, c: int) -> np.ndarray:
    """Row sums of an (n, c) bool matrix, written by ``flags_into(out)`` into a padded buffer.

    The buffer pads each row to whole 8-byte words; adding a row's words and multiplying
    by 0x0101...01 sums its bytes in one pass (a row's byte lanes stay below 256).
    """
    words = (c + 7) // 8
    if words > 255:  # lanes could overflow: plain reduction
        flags = np.zeros((n, c), dtype=bool)
        flags_into(flags)
        return np.count_nonzero(flags, axis=1).astype(np.int64)
    buf = np.zeros((n, 8 * words), dtype=bool)
    flags_into(buf[:, :c])
    packed = buf.view(np.uint64)
    total = packed[:, 0] if words == 1 else packed.sum(axis=1, dtype=np.uint64)
    return ((total * _BYTE_SUM) >> np.uint64(56)).astype(np.int64)


def count_above_and_tied(scores: np.ndarray, positive_score: np.ndarray, mask: np.ndarray | None):
    """(h, e): per row, candidates scoring strictly above / exactly equal to ``positive_score``."""
    n, c = scores.shape
    p = positive_score[:, None]

    def fill(op):
        def into(out):
            op(scores, p, out=out)
            if mask is not None:
                np.logical_and(out, mask, out=out)
        return into

    return count_per_row(fill(np.greater), n, c), count_per_row(fill(np.equal), n, c)


def tied_before_index(scores, positive_score, positive, mask):
    """Per row, candidates tied with the positive that sit at a lower column index."""
    n, c = scores.shape
    out = np.zeros(n, dtype=np.int64)
    for j in range(c):
        eq = (scores[:, j] == positive_score) & (positive > j)
        if mask is not None:
            eq &= mask[:, j]
        out += eq
    return out


def rank_metrics(h, t, ks, ties, seed=None, index_tied_before=None):
    """Per-example rank, R@k and RR of one positive with h candidates above and t tied.

    ``ties="expected"`` returns exact expectations (floats); the other rules fix one order.
    """
    out: dict[str, np.ndarray] = {}
    if ties == "expected":
        out["rank"] = expected_rank(h, t)
        for k in ks:
            out[f"R@{k}"] = expected_recall_at(k, h, t)
        out["RR"] = expected_reciprocal_rank(h, t, harmonic_table(int((h + t).max(initial=0)) + 1))
        return out
    if ties in ("pessimistic", "posrank"):
        rank = h + t + 1
    elif ties in ("optimistic", "feint6k"):
        rank = h + 1
    elif index_tied_before is not None:  # "fire" (index order) or "random" with given keys
        rank = h + 1 + index_tied_before
    elif ties == "random":
        rank = h + 1 + np.random.default_rng(seed).integers(0, t + 1)
    else:  # pragma: no cover - checked by check_tie_rule
        raise ValueError(ties)
    out["rank"] = rank.astype(np.float64)
    for k in ks:
        out[f"R@{k}"] = (rank <= k).astype(np.float64)
    out["RR"] = 1.0 / rank
    return out


def rank_spec(ks) -> list[Aggregation]:
    """Aggregates of a single-positive ranking: R@k, MeanR, MedianR, MRR, tie rate."""
    spec = [Aggregation(f"R@{k}", f"R@{k}") for k in ks]
    spec += [
        Aggregation("MeanR", "rank"),
        Aggregation("MedianR", "rank", "median"),
        Aggregation("MRR", "RR"),
        Aggregation("tie_rate", "tied"),
    ]
    return spec


def multiple_choice(
    scores,
    positive,
    mask=None,
    ks=(1, 2),
    ties: str = "expected",
    seed: int | None = None,
    groups=None,
    ids=None,
) -> RankingResult:
    """Rank metrics for N rows of C candidates, one positive per row.

    scores: (N, C) floats, higher = more likely the positive. positive: (N,) column index.
    mask: optional (N, C) bool, False for padding (rows with fewer candidates).
    ks: cut-offs for R@k. ties: a rule from ``TIE_RULES``. groups: {column: (N,) values}
    for breakdowns (e.g. part of speech, negative type). ids: optional (N,) unique ids.

    Under ``ties="expected"`` a constant scorer gets R@1 = 1/C and MeanR = (C+1)/2 exactly.
    ``MedianR`` is the median of the per-example (expected) ranks.
    """
    check_tie_rule(ties, seed)
    ks = check_ks(ks)
    scores_arr = np.asarray(scores)
    m = as_mask(mask, scores_arr.shape if scores_arr.ndim == 2 else (-1, -1))
    s = as_scores(scores_arr, "scores", m)
    n, c = s.shape
    pos = as_index(positive, n, c, "positive", m)
    group_cols = as_groups(groups, n)
    check_ids(ids, n)

    p = s[np.arange(n), pos]
    h, e = count_above_and_tied(s, p, m)
    t = e - 1
    before = tied_before_index(s, p, pos, m) if ties == "fire" else None
    per = rank_metrics(h, t, ks, ties, seed, before)
    per["tied"] = (t > 0).astype(np.float64)
    per["n_candidates"] = (m.sum(axis=1) if m is not None else np.full(n, c)).astype(np.int64)
    spec = rank_spec(ks)
    return RankingResult(
        per_example=per,
        aggregate=aggregate(per, spec),
        by_group=breakdown(per, spec, group_cols),
        ties=ties,
        task="multiple_choice",
        ks=ks,
    )
