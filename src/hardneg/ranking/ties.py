"""Tie rules and the exact closed forms behind ``ties="expected"``.

Every measure here is a function of where the relevant items land in the ranked
list. When scores tie, that position is not defined by the scores alone, so the
rule that breaks ties is a parameter. ``expected`` gives the exact mean over all
orders of the tied items (closed form, no sampling); the other rules pick one order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

@dataclass(frozen=True)
class TieRule:
    """One accepted value of ``ties=``: what it means, which one order it fixes (None: ``expected``, the mean over
    every order), and AP's cut-off where the rule's original code averages precision only over the relevant items
    found within it. Adding a rule touches its record here (and the code that ranks by its order, if the order is
    new); the tables below are views of the records."""

    name: str
    meaning: str
    #: which way tied items go relative to the relevant one(s): "pessimistic", "optimistic", "index" (lower item
    #: index first), "argsort" (the position NumPy's default argsort of the negated scores gives each item) or
    #: "random" (keys drawn from ``seed``)
    order: str | None = None
    ap_cutoff: int | None = None


RULES: tuple[TieRule, ...] = (
    TieRule("expected", "exact expected value over a uniformly random order of tied items (closed form; default)"),
    TieRule("pessimistic", "every tied item is ranked above the relevant item(s)", "pessimistic"),
    TieRule("optimistic", "the relevant item(s) are ranked above every tied item", "optimistic"),
    TieRule("random", "one uniformly random order of tied items, drawn from `seed`", "random"),
    TieRule("feint6k", "Feint6K eval_rcad.py: the positive wins every tie (same order as 'optimistic')", "optimistic"),
    TieRule("posrank", "PoSRank script: ties count against the positive (same order as 'pessimistic')",
            "pessimistic"),
    TieRule("fire", "FIRE code: stable descending argsort by score, so tied items keep item-index order; "
            "AP divided by the relevant items found in the top 20", "index", ap_cutoff=20),
    TieRule("argmax", "np.argmax (ViLMA bin/eval.py, VideoCon src/eval_atphard.py): the lowest candidate index wins a "
            "tie, so tied items keep item-index order; AP over every relevant item", "index"),
    TieRule("argsort", "VideoCon src/calc_ssv2.py: np.argsort(-scores) with NumPy's default (unstable) sort, so tied "
            "items keep the order that sort leaves them in (NumPy-version dependent); AP over every relevant item",
            "argsort"),
)

#: Every accepted value of ``ties=`` and what it means.
TIE_RULES: dict[str, str] = {r.name: r.meaning for r in RULES}

#: Rules that fix one order: which way tied items go relative to the relevant one(s).
ORDER_OF_RULE = {r.name: r.order for r in RULES if r.order is not None}

#: Rules that break ties by item index (lower index first) or by the position NumPy's default
#: argsort of the negated scores gives each item.
INDEX_ORDER_RULES = tuple(r.name for r in RULES if r.order == "index")
KEYED_ORDER_RULES = tuple(r.name for r in RULES if r.order in ("random", "argsort"))

#: Rules whose AP averages precision only over the relevant items found within a cut-off
#: (FIRE's original code: the top 20); every other rule averages over every relevant item.
AP_CUTOFF_OF_RULE = {r.name: r.ap_cutoff for r in RULES if r.ap_cutoff is not None}


def check_tie_rule(ties: str, seed) -> str:
    """Return ``ties`` if it is a known rule, else raise a ValueError that lists them."""
    if ties not in TIE_RULES:
        raise ValueError(
            f"ties={ties!r} is not a tie rule; use one of {sorted(TIE_RULES)} "
            "('expected' is the exact default)"
        )
    if ties == "random" and seed is None:
        raise ValueError("ties='random' needs seed=<int> so the result is reproducible; pass seed=0 or another int")
    return ties


def argsort_positions(scores: np.ndarray) -> np.ndarray:
    """Per row, each item's position in ``np.argsort(-row)`` (NumPy's default, unstable sort).

    VideoCon's ``src/calc_ssv2.py`` (``main``) ranks a query's videos with ``np.argsort(-pred)``;
    tied videos come out in whatever order that sort leaves them. Sorting each row of the
    matrix along axis 1 gives the same order as sorting the row alone (checked in the tests
    against the authors' one-row-at-a-time loop). A lower position means ranked first, so the
    result is a tie-break key (as the random keys of ``ties="random"``).
    """
    s = np.asarray(scores)
    order = np.argsort(-s, axis=1)
    keys = np.empty(order.shape, dtype=np.int64)
    np.put_along_axis(keys, order, np.arange(s.shape[1], dtype=np.int64)[None, :], axis=1)
    return keys


def harmonic_table(n: int) -> np.ndarray:
    """H[i] = 1 + 1/2 + ... + 1/i for i = 0..n (H[0] = 0), in float64."""
    out = np.zeros(n + 1, dtype=np.float64)
    if n > 0:
        np.cumsum(1.0 / np.arange(1, n + 1, dtype=np.float64), out=out[1:])
    return out


def log_factorial_table(n: int) -> np.ndarray:
    """L[i] = log(i!) for i = 0..n, in float64."""
    out = np.zeros(n + 1, dtype=np.float64)
    if n > 0:
        np.cumsum(np.log(np.arange(1, n + 1, dtype=np.float64)), out=out[1:])
    return out


# --- single relevant item: h items strictly above it, t others tied with it -------------

def expected_rank(h: np.ndarray, t: np.ndarray) -> np.ndarray:
    """E[rank] when the rank is uniform over {h+1, ..., h+t+1}: h + (t+2)/2."""
    return h + (t + 2) / 2.0


def expected_recall_at(k: int, h: np.ndarray, t: np.ndarray) -> np.ndarray:
    """P(rank <= k) for rank uniform over {h+1..h+t+1}: clip((k-h)/(t+1), 0, 1)."""
    return np.clip((k - h) / (t + 1.0), 0.0, 1.0)


def expected_reciprocal_rank(h: np.ndarray, t: np.ndarray, harmonic: np.ndarray | None = None) -> np.ndarray:
    """E[1/rank] for rank uniform over {h+1..h+t+1}: (H(h+t+1) - H(h)) / (t+1)."""
    h = np.asarray(h, dtype=np.int64)
    t = np.asarray(t, dtype=np.int64)
    if harmonic is None:
        harmonic = harmonic_table(int((h + t + 1).max(initial=0)))
    return (harmonic[h + t + 1] - harmonic[h]) / (t + 1.0)


# --- several relevant items: tie group of g items, r of them relevant -----------------

def hypergeometric_miss(g: np.ndarray, r: np.ndarray, m: np.ndarray, logfact: np.ndarray) -> np.ndarray:
    """P(none of r relevant items among the first m of g randomly ordered items).

    = C(g-r, m) / C(g, m), with m clipped to [0, g]; 1 when m <= 0, 0 when m > g - r.
    """
    g = np.asarray(g, dtype=np.int64)
    r = np.asarray(r, dtype=np.int64)
    m = np.asarray(m, dtype=np.int64)
    if g.size and g.max() == 1:  # no ties (the usual case): missed exactly when no place is left
        return (m <= 0).astype(np.float64)
    m = np.clip(m, 0, g)
    free = g - r
    ok = m <= free
    mm = np.where(ok, m, 0)
    log_ratio = logfact[free] - logfact[np.where(ok, free - mm, 0)] - logfact[g] + logfact[g - mm]
    return np.where(ok, np.exp(log_ratio), 0.0)


def expected_precision_terms(
    h: np.ndarray, g: np.ndarray, r: np.ndarray, r_before: np.ndarray, harmonic: np.ndarray
) -> np.ndarray:
    """E[precision at a relevant item's rank], averaged over all orders of its tie group.

    The item sits in a tie group of ``g`` items (``r`` relevant, itself included) that
    follows ``h`` items, ``r_before`` of which are relevant. Its position in the group is
    uniform over 1..g and, given position j, the expected number of other relevant items
    of the group above it is (j-1)(r-1)/(g-1). Summing over j gives

        B + (r_before + 1 - B - B*h) * (H(h+g) - H(h)) / g,   B = (r-1)/(g-1),

    which is McSherry & Najork's (ECIR 2008) tie-aware average precision term; summing
    it over the relevant items and dividing by their number gives the expected AP.
    """
    h = np.asarray(h, dtype=np.int64)
    g = np.asarray(g, dtype=np.int64)
    r_before = np.asarray(r_before, dtype=np.float64)
    out = (r_before + 1.0) / (h + 1.0)  # untied items (g == 1): plain precision at rank h+1
    tied = np.nonzero(g > 1)[0]
    if tied.size:
        ht, gt, rb = h[tied], g[tied], r_before[tied]
        b = (np.asarray(r, dtype=np.float64)[tied] - 1.0) / (gt - 1)
        out[tied] = b + (rb + 1.0 - b - b * ht) * (harmonic[ht + gt] - harmonic[ht]) / gt
    return out
