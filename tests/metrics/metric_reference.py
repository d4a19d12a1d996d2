"""Slow plain-Python references written from the papers' definitions (no hardneg code).

Ties are handled by brute force: every order of the tied items is enumerated and the
measure averaged, which is what ``ties="expected"`` must equal in closed form.
"""

from __future__ import annotations

import itertools
import statistics


def _orders(scores):
    """Every ranking (list of item indices, best first) consistent with the scores, equally likely."""
    n = len(scores)
    seen = set()
    for perm in itertools.permutations(range(n)):
        key = {item: pos for pos, item in enumerate(perm)}
        order = tuple(sorted(range(n), key=lambda i: (-scores[i], key[i])))
        if order not in seen:  # each distinct ranking once: all are equally likely
            seen.add(order)
            yield order


def expected_rank_measures(scores, positive, ks):
    """E[rank], E[R@k], E[1/rank] of `positive` over all orders of tied candidates."""
    orders = list(_orders(scores))
    ranks = [order.index(positive) + 1 for order in orders]
    out = {"rank": statistics.fmean(ranks), "RR": statistics.fmean(1 / r for r in ranks)}
    for k in ks:
        out[f"R@{k}"] = statistics.fmean(r <= k for r in ranks)
    return out


def average_precision(order, relevant):
    """FIRE Eq. 2: sum of precision at each relevant item's rank, divided by the number of relevant items."""
    hits, total = 0, 0.0
    for rank, item in enumerate(order, start=1):
        if item in relevant:
            hits += 1
            total += hits / rank
    return total / len(relevant)


def expected_retrieval_measures(scores, relevant, ks):
    """E[C@k] and E[AP] over all orders of tied items."""
    relevant = set(relevant)
    orders = list(_orders(scores))
    out = {"AP": statistics.fmean(average_precision(o, relevant) for o in orders)}
    for k in ks:
        out[f"C@{k}"] = statistics.fmean(any(i in relevant for i in o[:k]) for o in orders)
    return out


def fire_code_measures(scores, relevant, ks, cutoff=20):
    """FIRE's released code as described: stable descending argsort (ties keep index order);
    AP averaged over the relevant items found in the top `cutoff`."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])  # Python's sort is stable
    relevant = set(relevant)
    hits, total = 0, 0.0
    for rank, item in enumerate(order[:cutoff], start=1):
        if item in relevant:
            hits += 1
            total += hits / rank
    out = {"AP": total / hits if hits else 0.0}
    for k in ks:
        out[f"C@{k}"] = float(any(i in relevant for i in order[:k]))
    return out


def rank_with_rule(scores, positive, rule):
    """Rank of the positive: 'feint6k' = it wins ties (1 + strictly higher); 'posrank' = ties count against it."""
    s = scores[positive]
    higher = sum(x > s for x in scores)
    tied_others = sum(x == s for x in scores) - 1
    return 1 + higher if rule == "feint6k" else 1 + higher + tied_others
