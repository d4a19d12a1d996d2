"""Input checks with errors that name the argument, the problem and the fix."""

from __future__ import annotations

import numpy as np


def as_scores(scores, name: str = "scores", mask: np.ndarray | None = None) -> np.ndarray:
    """A 2-D float array with only finite values where ``mask`` is True."""
    arr = np.asarray(scores)
    if arr.dtype == object:
        raise ValueError(
            f"{name} must be a rectangular numeric array; got ragged/object data. "
            "Pad rows to the same length and pass mask= (True = a real candidate)"
        )
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (rows x candidates); got shape {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape}); pass at least one row and one candidate")
    if arr.dtype.kind not in "fiub":
        raise ValueError(f"{name} must hold numbers; got dtype {arr.dtype}")
    if arr.dtype.kind != "f":
        arr = arr.astype(np.float64)
    if np.isfinite(arr.sum()):  # one read pass; NaN/inf anywhere makes it non-finite (overflow falls through)
        return arr
    finite = np.isfinite(arr)
    if mask is not None:
        finite |= ~mask
    if not finite.all():
        rows, cols = np.nonzero(~finite)
        raise ValueError(
            f"{name} has {rows.size} NaN/inf value(s), first at row {rows[0]}, column {cols[0]} "
            f"({arr[rows[0], cols[0]]}); fix the model output or mark padding with mask=False"
        )
    return arr


def as_mask(mask, shape: tuple[int, int], name: str = "mask") -> np.ndarray | None:
    """None, or a bool array of ``shape`` with at least one True per row."""
    if mask is None:
        return None
    m = np.asarray(mask)
    if m.shape != shape:
        raise ValueError(f"{name} has shape {m.shape} but scores has shape {shape}; they must match")
    if m.dtype != bool:
        if m.dtype.kind not in "iub" or not np.isin(m, (0, 1)).all():
            raise ValueError(f"{name} must be boolean (True = real candidate, False = padding); got dtype {m.dtype}")
        m = m.astype(bool)
    empty = ~m.any(axis=1)
    if empty.any():
        raise ValueError(
            f"{name} row {int(np.argmax(empty))} has no candidate ({int(empty.sum())} such rows); "
            "every row needs at least its positive"
        )
    return m


def as_index(values, n_rows: int, n_cols: int, name: str, mask: np.ndarray | None = None) -> np.ndarray:
    """A (n_rows,) int64 array of column indices inside [0, n_cols) and inside the mask."""
    arr = np.asarray(values)
    if arr.ndim != 1 or arr.shape[0] != n_rows:
        raise ValueError(
            f"{name} must have one entry per row of scores ({n_rows}); got shape {arr.shape}"
        )
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
            raise ValueError(f"{name} must hold integer column indices; got non-integer floats")
    elif arr.dtype.kind not in "iu":
        raise ValueError(f"{name} must hold integer column indices; got dtype {arr.dtype}")
    arr = arr.astype(np.int64, copy=False)
    if arr.size and (arr.min() < 0 or arr.max() >= n_cols):  # two reductions; details only on error
        bad = (arr < 0) | (arr >= n_cols)
        i = int(np.argmax(bad))
        raise ValueError(
            f"{name}[{i}] = {arr[i]} is out of range for {n_cols} candidates ({int(bad.sum())} rows out of range); "
            f"indices must be in 0..{n_cols - 1}"
        )
    if mask is not None:
        off = ~mask[np.arange(n_rows), arr]
        if off.any():
            i = int(np.argmax(off))
            raise ValueError(
                f"{name}[{i}] = {arr[i]} points at a masked-out candidate (mask[{i}, {arr[i]}] is False); "
                "the positive must be a real candidate: fix the index or the mask"
            )
    return arr


def as_groups(groups, n_rows: int) -> dict[str, np.ndarray]:
    """``groups`` as name -> (n_rows,) array; accepts a dict or a pandas DataFrame."""
    if groups is None:
        return {}
    if hasattr(groups, "columns") and hasattr(groups, "__getitem__"):
        groups = {str(c): groups[c].to_numpy() for c in groups.columns}
    if not isinstance(groups, dict):
        raise ValueError("groups must be a dict {column name: values per row} or a pandas DataFrame")
    out = {}
    for key, values in groups.items():
        arr = np.asarray(values)
        if arr.ndim != 1 or arr.shape[0] != n_rows:
            raise ValueError(f"groups[{key!r}] must have one value per row ({n_rows}); got shape {arr.shape}")
        if arr.dtype == object:  # mixed types or missing values (None/NaN) become text; missing -> "missing"
            import pandas as pd

            missing = np.asarray(pd.isna(arr), dtype=bool)
            arr = np.where(missing, "missing", arr.astype(str))
        out[str(key)] = arr
    return out


def check_ids(ids, n_rows: int, name: str = "ids") -> np.ndarray | None:
    """None, or a (n_rows,) array of unique ids."""
    if ids is None:
        return None
    arr = np.asarray(ids)
    if arr.ndim != 1 or arr.shape[0] != n_rows:
        raise ValueError(f"{name} must have one id per row ({n_rows}); got shape {arr.shape}")
    uniq, counts = np.unique(arr, return_counts=True)
    if uniq.size != arr.size:
        dup = uniq[counts > 1]
        raise ValueError(
            f"{name} has {dup.size} duplicate id(s), e.g. {dup[0]!r}; each row must have its own id "
            "(drop or merge the repeated rows)"
        )
    return arr


def check_ks(ks) -> tuple[int, ...]:
    """Cut-offs as a tuple of positive ints."""
    if isinstance(ks, (int, np.integer)):
        ks = (ks,)
    out = tuple(int(k) for k in ks)
    if any(k < 1 for k in out) or any(float(k) != float(k0) for k, k0 in zip(out, ks)):
        raise ValueError(f"ks must be positive integers (cut-offs like 1, 5, 10); got {ks!r}")
    return out
