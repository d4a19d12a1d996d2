"""Input checks with errors that name the argument, the problem and the fix."""

from __future__ import annotations

import numbers

import numpy as np

#: float64 holds every integer of magnitude up to 2**53 exactly; beyond it neighbours merge into ties.
EXACT_INT_LIMIT = 2**53


def _where(shape: tuple[int, ...], pos: int) -> str:
    """'row i, column j' (2-D) or 'position i' of a flat position."""
    if len(shape) == 2 and shape[1]:
        return f"row {pos // shape[1]}, column {pos % shape[1]}"
    return f"position {pos}"


def integer_error(name: str, value, where: str) -> ValueError:
    """The error for an integer score that float64 would round (so distinct scores could tie)."""
    return ValueError(
        f"{name} holds the integer {value} ({where}), which float64 cannot hold exactly (integers are exact "
        f"only up to 2**53 = {EXACT_INT_LIMIT}), so distinct scores could become ties; subtract a common offset "
        "(e.g. scores - scores.min()) or divide by a common factor so they fit, or pass the ranks instead"
    )


def inexact_integers(values: np.ndarray) -> np.ndarray:
    """Flat positions of the integers in ``values`` (an int/uint array) that float64 cannot hold exactly.

    Two reductions in the usual case (everything within +-2**53); the exact round-trip check runs
    only on the larger values, some of which (multiples of a power of two) are still exact.
    """
    if values.dtype.kind not in "iu" or values.size == 0:
        return np.zeros(0, dtype=np.int64)
    if values.max() <= EXACT_INT_LIMIT and (values.dtype.kind == "u" or values.min() >= -EXACT_INT_LIMIT):
        return np.zeros(0, dtype=np.int64)
    flat = values.reshape(-1)
    big = np.flatnonzero(flat > EXACT_INT_LIMIT) if values.dtype.kind == "u" else np.flatnonzero(
        (flat > EXACT_INT_LIMIT) | (flat < -EXACT_INT_LIMIT))
    v = flat[big]
    f = v.astype(np.float64)
    top = 2.0**64 if values.dtype.kind == "u" else 2.0**63  # rounded up past the type's range: not exact
    over = f >= top
    back = np.where(over, 0, f).astype(values.dtype)
    return big[over | (back != v)]


def check_exact_integers(values: np.ndarray, name: str) -> None:
    """Raise ``integer_error`` for the first integer of ``values`` that float64 would round."""
    bad = inexact_integers(values)
    if bad.size:
        raise integer_error(name, values.reshape(-1)[bad[0]], _where(values.shape, int(bad[0])))


def _element(obj, index: tuple[int, ...]):
    for i in index:
        obj = obj[i]
    return obj


def check_python_integers(source, arr: np.ndarray, name: str) -> None:
    """``arr`` is ``np.asarray(source)`` with a float dtype: refuse Python ints NumPy rounded into it.

    NumPy turns ``[[2**53 + 1, 0.5]]`` or ``[[2**63, 1]]`` into float64 without a word. One
    reduction when every value is within +-2**53; only the larger ones are looked up in ``source``.
    """
    if arr.dtype.kind != "f" or arr.size == 0 or isinstance(source, np.ndarray):
        return
    with np.errstate(invalid="ignore"):
        big = np.flatnonzero(np.abs(arr.reshape(-1)) >= EXACT_INT_LIMIT)  # 2**53 + 1 rounds to 2**53
    for pos in big:
        try:
            x = _element(source, np.unravel_index(int(pos), arr.shape))
        except (TypeError, IndexError, KeyError):  # not an indexable sequence: nothing to look up
            return
        if isinstance(x, numbers.Integral) and not isinstance(x, bool) and int(x) != float(x):
            raise integer_error(name, int(x), _where(arr.shape, int(pos)))


def numbers_from_objects(arr: np.ndarray, name: str) -> np.ndarray | None:
    """An object array of Python numbers (ints beyond int64 make NumPy fall back to object) as float64;
    None when some element is not a real number. Integers float64 would round are refused."""
    flat = arr.reshape(-1)
    if not all(isinstance(x, numbers.Real) for x in flat):
        return None
    for pos, x in enumerate(flat):
        if isinstance(x, numbers.Integral) and not isinstance(x, bool) and int(x) != float(x):
            raise integer_error(name, int(x), _where(arr.shape, pos))
    try:
        return arr.astype(np.float64)
    except (OverflowError, TypeError, ValueError):  # pragma: no cover - a Real that does not convert
        return None


def _ragged_message(values, name: str) -> str:
    lengths = []
    try:
        for row in values:
            lengths.append(len(row) if hasattr(row, "__len__") and not isinstance(row, (str, bytes)) else None)
    except TypeError:
        lengths = []
    detail = ""
    if lengths and lengths[0] is not None:
        odd = next((i for i, n in enumerate(lengths) if n != lengths[0]), None)
        if odd is None:  # equal lengths: some value is itself a list
            return (f"{name} is not a rectangular array of numbers: some value is itself a list; "
                    "pass one flat list of numbers per row")
        got = "is not a list" if lengths[odd] is None else f"has {lengths[odd]}"
        detail = f" (row 0 has {lengths[0]} values, row {odd} {got})"
    return (
        f"{name} rows have different lengths{detail}; a score matrix must be rectangular: pad the rows "
        "and mark the padding, e.g. scores, mask = hardneg.ranking.pad_ragged(rows), then pass mask=mask"
    )


def as_array(values, name: str = "scores") -> np.ndarray:
    """``np.asarray(values)`` with the project's errors instead of NumPy's: ragged rows name the rows
    and the fix (``pad_ragged`` + ``mask=``); Python ints that float64 cannot hold exactly are refused
    (NumPy would round them silently); an object array of plain numbers becomes float64."""
    if isinstance(values, np.ndarray):
        arr = values
    else:
        try:
            arr = np.asarray(values)
        except (ValueError, TypeError):
            raise ValueError(_ragged_message(values, name)) from None
        check_python_integers(values, arr, name)
    if arr.dtype == object and arr.ndim == 2:
        converted = numbers_from_objects(arr, name)
        if converted is not None:
            return converted
    return arr


def _nested(values, name: str, expected: str) -> np.ndarray:
    """``np.asarray`` for the other inputs: nested lists of different lengths get a message, not NumPy's."""
    try:
        return np.asarray(values)
    except (ValueError, TypeError):
        raise ValueError(f"{name} holds nested lists of different lengths; {expected}") from None


def as_scores(scores, name: str = "scores", mask: np.ndarray | None = None) -> np.ndarray:
    """A 2-D float array with only finite values where ``mask`` is True.

    Integer scores are converted to float64 only when that is exact (``|x| <= 2**53``, or larger
    values float64 holds exactly); otherwise distinct scores could become ties, so they are refused.
    """
    arr = as_array(scores, name)
    if arr.dtype == object:
        bad = next(((i, x) for i, x in enumerate(arr.reshape(-1)) if not isinstance(x, numbers.Real)), None)
        what = f"; e.g. {bad[1]!r:.40} at {_where(arr.shape, bad[0])}" if bad is not None else ""
        raise ValueError(
            f"{name} must be a rectangular numeric array; got ragged/object data{what}. "
            "Pad rows to the same length and pass mask= (True = a real candidate)"
        )
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (rows x candidates); got shape {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape}); pass at least one row and one candidate")
    if arr.dtype.kind not in "fiub":
        raise ValueError(f"{name} must hold numbers; got dtype {arr.dtype}")
    if arr.dtype.kind != "f":
        check_exact_integers(arr, name)
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
    m = _nested(mask, name, f"it must be a bool array of the shape of scores {shape}")
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
    arr = _nested(values, name, f"give one column index per row of scores ({n_rows})")
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
        arr = _nested(values, f"groups[{key!r}]", f"give one value per row ({n_rows})")
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
    arr = _nested(ids, name, f"give one id per row ({n_rows})")
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
