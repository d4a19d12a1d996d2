"""Slow plain-Python references written from the papers' definitions (no NumPy tricks).

A ranking is a list of item indices, best first. Rank = 1-based position.
R@K (Ma et al.): positive in the top K. MeanR/MRR: rank and 1/rank of the positive.
Correct@K (Rodriguez et al., Eq. 1): any relevant item in the top K.
AP (Rodriguez et al., Eq. 2): sum over ranks i holding a relevant item of
precision@i, divided by the number of relevant items of the query.
"""

from __future__ import annotations

import itertools
import math


def order_by(scores, tiebreak):
    """Items sorted by descending score; equal scores by ascending ``tiebreak[item]``."""
    return sorted(range(len(scores)), key=lambda j: (-scores[j], tiebreak[j]))


def rank_of(order, item):
    return order.index(item) + 1


def average_precision(order, relevant, cutoff=None, divide_by_hits=False):
    hits = 0
    total = 0.0
    for i, item in enumerate(order, start=1):
        if cutoff is not None and i > cutoff:
            break
        if item in relevant:
            hits += 1
            total += hits / i
    if divide_by_hits:
        return total / hits if hits else 0.0
    return total / len(relevant)


def correct_at(order, relevant, k):
    return float(any(item in relevant for item in order[:k]))


def first_relevant_rank(order, relevant):
    return min(order.index(item) for item in relevant) + 1


def all_orders(scores, candidates=None):
    """Every ranking consistent with the scores (all orders of each tie group)."""
    items = list(range(len(scores))) if candidates is None else list(candidates)
    values = sorted({scores[j] for j in items}, reverse=True)
    groups = [[j for j in items if scores[j] == v] for v in values]
    for parts in itertools.product(*(itertools.permutations(g) for g in groups)):
        yield [j for part in parts for j in part]


def single_metrics(order, positive, ks):
    rank = rank_of(order, positive)
    out = {"rank": rank, "RR": 1.0 / rank}
    for k in ks:
        out[f"R@{k}"] = float(rank <= k)
    return out


def retrieval_metrics(order, relevant, ks, fire=False):
    out = {
        "AP": average_precision(order, relevant, cutoff=20 if fire else None, divide_by_hits=fire),
        "rank_first": first_relevant_rank(order, relevant),
    }
    for k in ks:
        out[f"C@{k}"] = correct_at(order, relevant, k)
    return out


def mean_over_orders(scores, fn, candidates=None):
    """Average of fn(order) over all consistent orders: the exact tie-expected value."""
    total = None
    n = 0
    for order in all_orders(scores, candidates):
        m = fn(order)
        total = dict(m) if total is None else {k: total[k] + m[k] for k in m}
        n += 1
    return {k: v / n for k, v in total.items()}


def extremes_over_orders(scores, fn, candidates=None):
    lo, hi = {}, {}
    for order in all_orders(scores, candidates):
        for k, v in fn(order).items():
            lo[k] = min(lo.get(k, math.inf), v)
            hi[k] = max(hi.get(k, -math.inf), v)
    return lo, hi
