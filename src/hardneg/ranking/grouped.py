"""Scores of groups of rows: a group counts as right only when every row of it is right.

ViLMA scores an item by two multiple-choice rows, its main test and its proficiency test, and its
combined score counts an item only when both are right (`bin/multi_eval.py`, `main`). Given each
row's value from the core (e.g. `R@1`: 0/1, or the exact expected value under `ties="expected"`),
a group's value is the product over its rows: 1 when all are right, and under a tie-aware rule the
chance that all are right, since each row's ties break independently.
"""

from __future__ import annotations

import numpy as np


def _codes(groups) -> np.ndarray:
    """Integer group of each row; an empty label ("" or None) is a group of its own."""
    g = np.asarray(["" if x is None else str(x) for x in np.asarray(groups, dtype=object).ravel()], dtype=object)
    alone = g == ""
    g[alone] = [f"\x1frow{i}" for i in np.flatnonzero(alone)]
    return np.unique(g.astype(str), return_inverse=True)[1].ravel()


def all_right(values, groups) -> np.ndarray:
    """Per row, the product of the values of every row in its group (1 when all of them are right).

    groups: (N,) labels; rows with equal labels form a group.
    """
    codes = _codes(groups)
    product = np.ones(int(codes.max()) + 1 if codes.size else 0)
    np.multiply.at(product, codes, np.asarray(values, dtype=np.float64))
    return product[codes]


def first_of_group(groups, keep=None) -> np.ndarray:
    """(N,) bool: the first row of each group among the rows in `keep` (all rows when None), so a
    mean over the marked rows counts each group once."""
    codes = _codes(groups)
    rows = np.flatnonzero(keep) if keep is not None else np.arange(codes.size)
    _, first = np.unique(codes[rows], return_index=True)
    out = np.zeros(codes.size, dtype=bool)
    out[rows[first]] = True
    return out
