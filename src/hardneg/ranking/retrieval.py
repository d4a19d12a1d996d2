"""Retrieval: each query ranks every item (FIRE-style text-to-video with extra positives).

The original single positive and the extra positives are scored apart: ``R@k``, ``MeanR``,
``MedianR``, ``MRR`` and ``AP_original`` use the original positive only (the benchmark's
own numbers), ``C@k``, ``AP`` and ``rank_first`` use every relevant item (original plus
extra positives), so both can be reported side by side as in FIRE's "A (B + C)".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .multiple_choice import places_above, rank_metrics, rank_spec
from .qrels import Qrels
from .results import Aggregation, RankingResult, aggregate, breakdown
from .ties import (
    AP_CUTOFF_OF_RULE,
    INDEX_ORDER_RULES,
    KEYED_ORDER_RULES,
    argsort_positions,
    check_tie_rule,
    expected_precision_terms,
    harmonic_table,
    hypergeometric_miss,
    log_factorial_table,
)
from .validate import as_array, as_groups, as_index, as_mask, as_scores, check_ids, check_ks
from ..threads import default_threads, thread_map

_CHUNK = 1 << 22  # elements per block when comparing tied items against whole rows
_BLOCK = 1 << 19  # scores per block of rows sorted, searched and scored together (2 MB of float32)


# --- counting candidates above / tied with a given score, for many (row, score) pairs ------

def _count_at_most(flat: np.ndarray, n_cols: int, rows: np.ndarray, values: np.ndarray, strict: bool = False):
    """Per pair: items of its row of the row-sorted ``flat`` with score <= value (< value when ``strict``).

    Branchless binary search (Khuong & Morin): every row has the same length, so the
    remaining length is one Python int shared by all pairs and no index leaves its row.
    """
    first = rows * n_cols
    base = first.copy()
    length = n_cols
    below = np.less if strict else np.less_equal
    while length > 1:
        half = length >> 1
        base += below(flat[base + half], values) * half
        length -= half
    return base - first + below(flat[base], values)


def _above_and_tied_block(block: np.ndarray, rows: np.ndarray, values: np.ndarray):
    """(h, e) for pairs whose rows index ``block``; see ``above_and_tied``."""
    n_cols = block.shape[1]
    flat = np.sort(block, axis=1).ravel()
    at_most = _count_at_most(flat, n_cols, rows, values)
    below = at_most - 1  # the value itself sits at sorted index at_most - 1
    maybe = np.nonzero(below > 0)[0]
    tied_below = maybe[flat[rows[maybe] * n_cols + below[maybe] - 1] == values[maybe]]
    if tied_below.size:
        below[tied_below] = _count_at_most(flat, n_cols, rows[tied_below], values[tied_below], strict=True)
    return n_cols - at_most, at_most - below


def map_row_blocks(n_rows: int, n_cols: int, rows: np.ndarray, fn) -> list:
    """``[fn(lo, hi, a, b), ...]`` over blocks of rows ``lo:hi`` holding about ``_BLOCK`` scores,
    where ``a:b`` is the slice of the sorted ``rows`` (one entry per pair) that falls in the block.

    A block's sorted rows and its pairs stay in cache while they are worked on, and blocks run on
    threads (NumPy releases the GIL in sorts and ufuncs; results do not depend on the split).
    """
    step = max(1, min(_BLOCK // n_cols, -(-n_rows // (2 * default_threads()))))  # >= 2 blocks per thread
    starts = np.arange(0, n_rows, step)
    cuts = np.searchsorted(rows, np.append(starts, n_rows))
    return thread_map(lambda i: fn(int(starts[i]), min(n_rows, int(starts[i]) + step), int(cuts[i]), int(cuts[i + 1])),
                      range(starts.size))


def tied_before(scores, rows, cols, values, tiebreak) -> np.ndarray:
    """Per (row, col) pair: items tied with it that come first under ``tiebreak``.

    ``tiebreak`` is None for item-index order (stable argsort) or a (Q, V) array of
    random keys (lower key first). Compares whole rows, in blocks, only for tied pairs.
    """
    out = np.zeros(rows.shape, dtype=np.int64)
    n_cols = scores.shape[1]
    step = max(1, _CHUNK // n_cols)
    arange = np.arange(n_cols)
    for start in range(0, rows.size, step):
        r = rows[start : start + step]
        c = cols[start : start + step]
        eq = scores[r] == values[start : start + step, None]
        if tiebreak is None:
            first = arange[None, :] < c[:, None]
        else:
            first = tiebreak[r] < tiebreak[r, c][:, None]
        out[start : start + step] = np.count_nonzero(eq & first, axis=1)
    return out


# --- validation of relevance judgements -------------------------------------------------

def relevant_pairs(relevant, original, shape, mask):
    """Relevant (query, item) pairs sorted by query then item; the original positive is always relevant."""
    n_q, n_v = shape
    if relevant is None:
        if original is None:
            raise ValueError("retrieval needs relevant= (Qrels or a (Q, V) bool matrix) and/or original=")
        q = np.arange(n_q, dtype=np.int64)
        d = np.asarray(original, dtype=np.int64)
    else:
        if not isinstance(relevant, Qrels):
            arr = np.asarray(relevant)
            if arr.shape != shape:
                raise ValueError(
                    f"relevant has shape {arr.shape} but scores has shape {shape}; pass a Qrels "
                    "or a (Q, V) bool matrix of the same shape"
                )
            relevant = Qrels.from_dense(arr)
        keep = relevant.relevance > 0
        q, d = (relevant.query, relevant.item) if keep.all() else (relevant.query[keep], relevant.item[keep])
        for name, arr, n in (("query", q, n_q), ("item", d, n_v)):
            if arr.size and (arr.min() < 0 or arr.max() >= n):  # two reductions; details only on error
                bad = (arr < 0) | (arr >= n)
                i = int(np.argmax(bad))
                raise ValueError(
                    f"relevant.{name} has index {arr[i]} out of range 0..{n - 1} ({int(bad.sum())} such pairs); "
                    f"{name} indices must address rows/columns of scores"
                )
        flat = q * n_v + d
        if flat.size and np.all(flat[1:] > flat[:-1]):  # already sorted and unique (the usual case)
            uniq = flat
        else:
            uniq, counts = np.unique(flat, return_counts=True)
        if uniq.size != flat.size:
            dup = uniq[counts > 1][0]
            raise ValueError(
                f"relevant lists (query {dup // n_v}, item {dup % n_v}) more than once; "
                "each relevant pair must appear once (deduplicate the qrels)"
            )
        if original is not None:
            orig_flat = np.arange(n_q, dtype=np.int64) * n_v + original
            at = np.minimum(np.searchsorted(uniq, orig_flat), max(uniq.size - 1, 0))
            if not uniq.size or not np.array_equal(uniq[at], orig_flat):  # some originals are not listed: add them
                uniq = np.union1d(uniq, orig_flat)
                flat = None
        if flat is not uniq:  # the pairs were reordered or extended
            q, d = np.divmod(uniq, n_v)
    n_rel = np.bincount(q, minlength=n_q)
    if (n_rel == 0).any():
        i = int(np.argmax(n_rel == 0))
        raise ValueError(
            f"query {i} has no relevant item ({int((n_rel == 0).sum())} such queries); "
            "add its positive to relevant= or pass original=, or drop the query"
        )
    if mask is not None:
        off = ~mask[q, d]
        if off.any():
            i = int(np.argmax(off))
            raise ValueError(
                f"relevant item {d[i]} of query {q[i]} is masked out (mask[{q[i]}, {d[i]}] is False); "
                "a relevant item must be a real candidate: fix the qrels or the mask"
            )
    return q, d, n_rel


# --- the measures over a set of relevant items --------------------------------------------

@dataclass(frozen=True)
class RelevantPairs:
    """The relevant (query, item) pairs of a block, sorted by query: q, d (their indices), s (their scores),
    h / e (items above / tied, itself included, from ``above_and_tied``), and n_rel (relevant items per query)."""

    q: np.ndarray
    d: np.ndarray
    s: np.ndarray
    h: np.ndarray
    e: np.ndarray
    n_rel: np.ndarray


def score_relevant(scores, pairs: RelevantPairs, ks, ties, tiebreak, logfact, harmonic):
    """Per query: C@k, AP, first relevant rank, tie flag, for the relevant `pairs` of `scores`' rows."""
    q, d, s, h, e, n_rel = pairs.q, pairs.d, pairs.s, pairs.h, pairs.e, pairs.n_rel
    n_q, n_v = scores.shape
    # relevant items of a query in descending score order; runs of equal score = tie groups.
    # Within a row, equal h <=> equal score, and higher score <=> smaller h. The pairs come
    # grouped by query, and sorting by (q, h) keeps q as it is.
    order = np.argsort(q * (n_v + 1) + h, kind="stable")
    h, e = h[order], e[order]
    if ties in INDEX_ORDER_RULES + KEYED_ORDER_RULES:
        d, s = d[order], s[order]
    idx = np.arange(q.size)
    new_query = np.r_[True, q[1:] != q[:-1]]
    new_group = new_query | np.r_[True, h[1:] != h[:-1]]
    query_start = np.maximum.accumulate(np.where(new_query, idx, 0))
    group_start = np.maximum.accumulate(np.where(new_group, idx, 0))
    group_id = np.cumsum(new_group) - 1
    r = np.bincount(group_id)[group_id]
    r_before = group_start - query_start
    within = idx - group_start  # index among the relevant items of the tie group
    per: dict[str, np.ndarray] = {}
    tied = np.bincount(q, weights=(e > 1), minlength=n_q) > 0
    first = new_query  # the first relevant of each query is in its top tie group
    h0, g0, r0 = h[first], e[first], r[first]
    if ties == "expected":
        for k in ks:
            per[f"C@{k}"] = 1.0 - hypergeometric_miss(g0, r0, k - h0, logfact)
        per["rank_first"] = h0 + (g0 + 1.0) / (r0 + 1.0)
        terms = expected_precision_terms(h, e, r, r_before, harmonic)
        per["AP"] = np.bincount(q, weights=terms, minlength=n_q) / n_rel
        per["tied"] = tied.astype(np.float64)
        return per
    if ties in ("optimistic", "feint6k"):
        pos = h + 1 + within
    elif ties in ("pessimistic", "posrank"):
        pos = h + (e - r) + 1 + within
    else:  # "fire"/"argmax" (index order), "random" (random keys) or "argsort" (NumPy's argsort positions)
        pos = h + 1
        sel = np.nonzero(e > 1)[0]
        if sel.size:
            pos = pos.copy()
            pos[sel] += tied_before(scores, q[sel], d[sel], s[sel], tiebreak)
    # precision at each relevant item: (its place among the query's relevant items) / position
    pos_sorted = pos[np.argsort(q * (n_v + 1) + pos, kind="stable")]
    hit_number = idx - query_start + 1  # q is already grouped, so query_start is unchanged by the sort
    first_pos = pos_sorted[first]
    for k in ks:
        per[f"C@{k}"] = (first_pos <= k).astype(np.float64)
    per["rank_first"] = first_pos.astype(np.float64)
    precision = hit_number / pos_sorted
    ap_cutoff = AP_CUTOFF_OF_RULE.get(ties)
    if ap_cutoff is not None:
        in_top = pos_sorted <= ap_cutoff
        hits = np.bincount(q, weights=in_top, minlength=n_q)
        total = np.bincount(q, weights=np.where(in_top, precision, 0.0), minlength=n_q)
        per["AP"] = total / np.maximum(hits, 1)
    else:
        per["AP"] = np.bincount(q, weights=precision, minlength=n_q) / n_rel
    per["tied"] = tied.astype(np.float64)
    return per


def retrieval(
    scores,
    relevant=None,
    original=None,
    ks=(1, 5, 10),
    ties: str = "expected",
    seed: int | None = None,
    mask=None,
    groups=None,
    ids=None,
) -> RankingResult:
    """Retrieval metrics for Q queries over V items.

    scores: (Q, V) floats. relevant: ``Qrels`` (sparse triplets) or (Q, V) bool matrix.
    original: optional (Q,) index of each query's original positive; it is always counted
    as relevant, and the original-only measures (R@k, MeanR, MedianR, MRR, AP_original)
    are reported next to the all-positives ones (C@k, mAP, MeanR_first).
    mask: optional (Q, V) bool, False = item not a candidate for that query.
    """
    check_tie_rule(ties, seed)
    ks = check_ks(ks)
    scores_arr = as_array(scores, "scores")  # NumPy's own errors (ragged rows) reworded, big ints checked
    m = as_mask(mask, scores_arr.shape if scores_arr.ndim == 2 else (-1, -1))
    s = as_scores(scores_arr, "scores", m)
    n_q, n_v = s.shape
    orig = None if original is None else as_index(original, n_q, n_v, "original", m)
    group_cols = as_groups(groups, n_q)
    check_ids(ids, n_q, "ids")
    q, d, n_rel = relevant_pairs(relevant, orig, s.shape, m)
    if m is not None:
        s = np.where(m, s, -np.inf).astype(s.dtype, copy=False)

    tiebreak = None  # index order for "fire" / "argmax"
    if ties == "random":
        tiebreak = np.random.default_rng(seed).random(s.shape)
    elif ties == "argsort":
        tiebreak = argsort_positions(s)
    logfact = log_factorial_table(n_v)
    harmonic = harmonic_table(n_v + 1)
    flat = q * n_v + d  # sorted: relevant_pairs orders the pairs by query, then item
    s_rel = np.take(s.reshape(-1), flat)
    h_rel = np.empty(q.size, dtype=np.int64)
    e_rel = np.empty(q.size, dtype=np.int64)

    def block(lo: int, hi: int, a: int, b: int) -> dict[str, np.ndarray]:
        """Count, then score, the relevant items of queries lo:hi (pairs a:b), in local indices."""
        sb, ql = s[lo:hi], q[a:b] - lo
        h_rel[a:b], e_rel[a:b] = _above_and_tied_block(sb, ql, s_rel[a:b])
        pairs = RelevantPairs(ql, d[a:b], s_rel[a:b], h_rel[a:b], e_rel[a:b], n_rel[lo:hi])
        return score_relevant(sb, pairs, ks, ties, None if tiebreak is None else tiebreak[lo:hi], logfact, harmonic)

    parts = map_row_blocks(n_q, n_v, q, block)
    per = {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
    per["n_relevant"] = n_rel.astype(np.int64)
    spec = [Aggregation(f"C@{k}", f"C@{k}") for k in ks]
    spec += [Aggregation("mAP", "AP"), Aggregation("MeanR_first", "rank_first")]
    spec += [Aggregation("MedianR_first", "rank_first", "median")]
    if orig is not None:
        rows = np.arange(n_q, dtype=np.int64)
        at = np.searchsorted(flat, rows * n_v + orig)  # the original is one of the relevant pairs
        h, e = h_rel[at], e_rel[at]
        orig_only = score_relevant(
            s, RelevantPairs(rows, orig, s_rel[at], h, e, np.ones(n_q)), (), ties, tiebreak, logfact, harmonic
        )
        per["AP_original"] = orig_only["AP"]
        before = None
        if ties in INDEX_ORDER_RULES + KEYED_ORDER_RULES:
            before = np.zeros(n_q, dtype=np.int64)
            sel = np.nonzero(e > 1)[0]
            if sel.size:
                before[sel] = tied_before(s, sel, orig[sel], s[sel, orig[sel]], tiebreak)
        single = rank_metrics(places_above(h, e - 1, ties, seed, before), e - 1, ks, ties)
        single.pop("tied")  # the all-positives tie flag already covers the original
        per["rank_original"] = single.pop("rank")
        per["RR_original"] = single.pop("RR")
        per.update(single)
        spec += [
            Aggregation(a.name, {"rank": "rank_original", "RR": "RR_original"}.get(a.source, a.source), a.how)
            for a in rank_spec(ks)
            if a.name != "tie_rate"
        ]
        spec += [Aggregation("mAP_original", "AP_original")]
    spec += [Aggregation("tie_rate", "tied")]
    return RankingResult(
        per_example=per,
        aggregate=aggregate(per, spec),
        by_group=breakdown(per, spec, group_cols),
        ties=ties,
        task="retrieval",
        ks=ks,
    )
