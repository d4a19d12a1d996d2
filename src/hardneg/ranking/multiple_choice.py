"""Multiple choice: each row scores one positive against its negatives (Feint6K, contrast sets, PoSRank).

Every measure of a row is a function of two small integers: ``a`` (candidates ranked
above the positive: strictly higher ones, plus tied ones placed first by a fixed-order
rule) and ``t`` (other candidates tied with it). So the rows are reduced to one code
``a * C + t``; one ``bincount`` of the codes gives every aggregate and every group
breakdown exactly from small tables, and per-example arrays are table look-ups made on
first access.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .results import Aggregation, RankingResult, aggregate_counts
from .ties import (
    INDEX_ORDER_RULES,
    argsort_positions,
    check_tie_rule,
    expected_rank,
    expected_recall_at,
    expected_reciprocal_rank,
    harmonic_table,
)
from .validate import as_array, as_groups, as_index, as_mask, as_scores, check_ids, check_ks
from ..threads import default_threads, thread_map

_BYTE_SUM = np.uint64(0x0101010101010101)
_MAX_TABLE = 1 << 22  # codes a*C+t up to this many are tabulated directly


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


_BLOCK_ROWS = 1 << 16  # rows per block: a block's columns stay in cache between the compares


def _count_block(scores, positive, mask, row_starts, p_out, h_out, e_out, count_codes=False):
    """One block of rows: the positive's score, then candidates strictly above it and tied with it
    (and, with ``count_codes``, a bincount of the codes h * C + e - 1 over the block's rows).
    ``row_starts``: 0, C, 2C, ... (at least one per row), the flat index of each row's first score.

    The block is transposed (it fits in cache) so each column is contiguous; then one compare
    + one small-int add per column, all rows at a time. Ties are counted in total first; only
    when the block has one is the per-row tie count accumulated.
    """
    n, c = scores.shape
    cols = np.ascontiguousarray(scores.T)  # first: this streams the block into cache
    p = np.take(scores.reshape(-1), row_starts[:n] + positive, out=p_out)  # flat gather: no 2-D fancy index
    valid = None if mask is None else np.ascontiguousarray(mask.T)
    flags = np.empty(n, dtype=bool)
    as_int = flags.view(np.uint8)

    def compare(op, j):
        op(cols[j], p, out=flags)
        if valid is not None:
            np.logical_and(flags, valid[j], out=flags)
        return as_int

    n_equal = 0
    for j in range(c):  # a loop over the columns, each step vectorized over the block's rows
        h_out += compare(np.greater, j)
        n_equal += int(np.count_nonzero(compare(np.equal, j)))
    if n_equal == n:  # only each positive equals itself: no ties in this block
        e_out[:] = 1
        if not count_codes:
            return None
        counts = np.zeros(c * c, dtype=np.int64)  # e = 1: code h * C
        counts[::c] = np.bincount(h_out, minlength=c)
        return counts
    for j in range(c):
        e_out += compare(np.equal, j)
    if count_codes:  # how many rows have each code h * C + (e - 1), counted while the block is in cache
        code = h_out.astype(np.int32)
        code *= c
        code += e_out
        code -= 1
        return np.bincount(code, minlength=c * c)
    return None


def positive_above_and_tied(scores: np.ndarray, positive: np.ndarray, mask: np.ndarray | None,
                            count_codes: bool = False):
    """(p, h, e, counts): per row, the positive's score and the candidates scoring strictly above /
    exactly equal to it (e counts the positive itself); with ``count_codes`` (C <= 255 only),
    counts[h * C + e - 1] = rows with that (h, e), else None.

    Few columns (C <= 255, counts fit in a byte): blocks of rows, on threads when there are
    several (NumPy releases the GIL; the counts do not depend on the split). Many columns:
    whole-matrix compares into a word-padded buffer (``count_per_row``).
    """
    n, c = scores.shape
    if c > 255:
        p = np.take(scores.reshape(-1), np.arange(n) * c + positive)
        pc = p[:, None]

        def fill(op):
            def into(out):
                op(scores, pc, out=out)
                if mask is not None:
                    np.logical_and(out, mask, out=out)

            return into

        return p, count_per_row(fill(np.greater), n, c), count_per_row(fill(np.equal), n, c), None
    scores = np.ascontiguousarray(scores)
    p = np.empty(n, dtype=scores.dtype)
    h = np.zeros(n, dtype=np.uint8)
    e = np.zeros(n, dtype=np.uint8)
    step = max(1024, min(_BLOCK_ROWS * 8 // max(c, 8), -(-n // (2 * default_threads()))))  # >= 2 blocks per thread
    row_starts = np.arange(0, min(n, step) * c, c, dtype=np.int64)

    def block(lo: int):
        hi = min(n, lo + step)
        return _count_block(scores[lo:hi], positive[lo:hi], None if mask is None else mask[lo:hi], row_starts,
                            p[lo:hi], h[lo:hi], e[lo:hi], count_codes)

    per_block = thread_map(block, range(0, n, step))
    return p, h, e, (np.sum(per_block, axis=0) if count_codes else None)


def tied_before_index(scores, positive_score, positive, mask):
    """Per row, candidates tied with the positive that sit at a lower column index."""
    n, c = scores.shape

    def into(out):
        np.equal(scores, positive_score[:, None], out=out)
        out &= np.arange(c)[None, :] < positive[:, None]
        if mask is not None:
            out &= mask

    return count_per_row(into, n, c)


def tied_before_key(scores, positive_score, positive, mask, keys):
    """Per row, candidates tied with the positive whose tie-break key is lower than the positive's."""
    n, c = scores.shape
    own = np.take_along_axis(keys, positive[:, None], axis=1)

    def into(out):
        np.equal(scores, positive_score[:, None], out=out)
        out &= keys < own
        if mask is not None:
            out &= mask

    return count_per_row(into, n, c)


def places_above(h, t, ties, seed=None, index_tied_before=None):
    """``a``: candidates placed above the positive. For "expected" it is h (ties stay open)."""
    if ties in ("expected", "optimistic", "feint6k"):
        return h
    if ties in ("pessimistic", "posrank"):
        return h + t
    if index_tied_before is not None:  # "fire"/"argmax" (index order), "argsort" or "random" with given keys
        return h + index_tied_before
    if ties == "random":
        return h + np.random.default_rng(seed).integers(0, t + 1)
    raise ValueError(ties)  # pragma: no cover - checked by check_tie_rule


def rank_metrics(a, t, ks, ties):
    """Rank, R@k, RR and tie flag as functions of (a, t); exact expectations for "expected"."""
    a = np.asarray(a, dtype=np.int64)
    t = np.asarray(t, dtype=np.int64)
    out: dict[str, np.ndarray] = {}
    if ties == "expected":
        out["rank"] = expected_rank(a, t)
        for k in ks:
            out[f"R@{k}"] = expected_recall_at(k, a, t)
        out["RR"] = expected_reciprocal_rank(a, t, harmonic_table(int((a + t).max(initial=0)) + 1))
    else:
        rank = a + 1
        out["rank"] = rank.astype(np.float64)
        for k in ks:
            out[f"R@{k}"] = (rank <= k).astype(np.float64)
        out["RR"] = 1.0 / rank
    out["tied"] = (t > 0).astype(np.float64)
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


class LazyArray:
    """An array computed on the first call and then kept (per-example codes are only needed
    when someone asks for per-example values or group breakdowns)."""

    def __init__(self, make):
        self._make = make
        self._value = None

    def __call__(self) -> np.ndarray:
        if self._value is None:
            self._value = self._make()
            self._make = None
        return self._value


class TableLookup(Mapping):
    """Per-example arrays as ``table[key][code]``, built on first access and then kept."""

    def __init__(self, code: np.ndarray, tables: dict[str, np.ndarray], extra: dict):
        self._code = code
        self._tables = tables
        self._extra = extra  # name -> zero-argument function returning an array
        self._cache: dict[str, np.ndarray] = {}

    def __getitem__(self, key: str) -> np.ndarray:
        if key not in self._cache:
            if key in self._tables:
                self._cache[key] = self._tables[key][self._code()]
            elif key in self._extra:
                self._cache[key] = self._extra[key]()
            else:
                raise KeyError(key)
        return self._cache[key]

    def __iter__(self):
        yield from self._tables
        yield from self._extra

    def __len__(self) -> int:
        return len(self._tables) + len(self._extra)


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
    (or a DataFrame) for breakdowns, e.g. part of speech or negative type. ids: optional
    (N,) unique ids. Per example: rank, R@k, RR, tied, n_candidates.

    Under ``ties="expected"`` a constant scorer gets R@1 = 1/C and MeanR = (C+1)/2 exactly.
    ``MedianR`` is the median of the per-example (expected) ranks.
    """
    check_tie_rule(ties, seed)
    ks = check_ks(ks)
    scores_arr = as_array(scores, "scores")  # NumPy's own errors (ragged rows) reworded, big ints checked
    m = as_mask(mask, scores_arr.shape if scores_arr.ndim == 2 else (-1, -1))
    s = as_scores(scores_arr, "scores", m)
    n, c = s.shape
    pos = as_index(positive, n, c, "positive", m)
    group_cols = as_groups(groups, n)
    check_ids(ids, n)

    simple = ties in ("expected", "optimistic", "feint6k") and c < 256  # a = h, tables of C * C codes
    p, h, e, code_counts = positive_above_and_tied(s, pos, m, count_codes=simple)
    if simple:
        def code_of_rows():
            code = h.astype(np.int32)
            code *= c
            code += e
            code -= 1
            return code

        a_tab, t_tab = np.divmod(np.arange(c * c, dtype=np.int64), c)
        code = LazyArray(code_of_rows)
    else:
        h, t = h.astype(np.int64), e.astype(np.int64) - 1
        before = None
        if ties in INDEX_ORDER_RULES:
            before = tied_before_index(s, p, pos, m)
        elif ties == "argsort":
            before = tied_before_key(s, p, pos, m, argsort_positions(np.where(m, s, -np.inf) if m is not None else s))
        code = places_above(h, t, ties, seed, before) * c + t
        if c * c <= _MAX_TABLE:
            a_tab, t_tab = np.divmod(np.arange(c * c, dtype=np.int64), c)
        else:  # tabulate only the (a, t) pairs that occur
            uniq, code = np.unique(code, return_inverse=True)
            a_tab, t_tab = np.divmod(uniq, c)
        code_counts = np.bincount(code, minlength=a_tab.size)
        code = LazyArray(lambda rows_code=code: rows_code)
    tables = rank_metrics(a_tab, t_tab, ks, ties)
    spec = rank_spec(ks)
    n_table = a_tab.size
    agg = aggregate_counts(code_counts, tables, spec)
    by_group = {}
    for name, values in group_cols.items():
        labels, inverse = np.unique(values, return_inverse=True)
        counts = np.bincount(inverse.ravel() * n_table + code(), minlength=labels.size * n_table)
        counts = counts.reshape(labels.size, n_table)
        by_group[name] = {
            (v.item() if isinstance(v, np.generic) else v): aggregate_counts(counts[i], tables, spec)
            for i, v in enumerate(labels)
        }
    extra = {
        "n_candidates": (lambda: m.sum(axis=1).astype(np.int64)) if m is not None else (lambda: np.full(n, c, np.int64))
    }
    return RankingResult(
        per_example=TableLookup(code, tables, extra),
        aggregate=agg,
        by_group=by_group,
        ties=ties,
        task="multiple_choice",
        ks=ks,
    )
