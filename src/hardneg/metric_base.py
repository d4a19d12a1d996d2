"""The `evaluate.Metric` base class the five metric modules in `metrics/` share.

Why it exists: `evaluate` 0.4.6 encodes every example through Python
(`Features.encode_batch` loops over rows) and, for list features, hands `_compute`
Python lists again. On a 1,000,000 x 6 score matrix that is ~200x slower than
the ranking itself. This base keeps evaluate's own machinery (cache file,
`add_batch` streaming, distributed gathering, `compute`) but

* encodes a whole batch at once: inputs become Arrow arrays built from NumPy
  buffers (one flat float64 buffer + offsets), validated with vectorized checks,
  and are written with `ArrowWriter.write_table`;
* reads the columns back as Arrow (zero copy) instead of Python lists.

The ranking math lives in `hardneg.ranking`; modules only convert and select.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import datasets
import evaluate
import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401 - registers pa.compute

from hardneg.ranking.bootstrap import Stat, joint_intervals  # noqa: F401 - the one bootstrap; Stat re-exported for modules
from hardneg.ranking.validate import check_python_integers, inexact_integers, integer_error, numbers_from_objects

__all__ = [
    "HardnegMetric",
    "ScoreRows",
    "TIES_DOC",
    "COMMON_KWARGS_DOC",
    "RETRIEVAL_INPUTS_DOC",
]

TIES_DOC = """\
    ties (`str`, default `"expected"`): how tied scores are ordered.
        `"expected"`: exact expected value over a uniformly random order of tied items (closed form;
        a constant scorer lands exactly at chance). `"pessimistic"`: ties go against the positive.
        `"optimistic"`: ties go for the positive. `"random"`: one seeded random order (`seed`).
        Benchmarks' original rules, to reproduce published numbers: `"feint6k"` (Feint6K's
        eval_rcad.py: the positive wins every tie), `"posrank"` (PoSRank's script: ties count
        against the positive), `"fire"` (FIRE's code: argsort order; AP divided by hits in the top 20),
        `"argmax"` (np.argmax: the first candidate wins a tie; ViLMA, VideoCon ATP-Hard), `"argsort"`
        (VideoCon calc_ssv2.py: NumPy's default unstable argsort order).
"""

COMMON_KWARGS_DOC = """\
    video_ids (`list[str]`, optional, streamed like the inputs): the video each example belongs to.
        Bootstrap intervals resample whole videos (a video's examples move together). Without it every
        example is its own cluster.
    return_per_example (`bool`, default `False`): also return `per_example`, a dict of lists
        (one value per example, in input order; JSON-ready like every other output).
    n_resamples (`int`, default 1000): bootstrap resamples for the intervals; 0 turns intervals off.
    confidence_level (`float`, default 0.95): coverage of the `<score>_ci` intervals. An interval is the
        percentile interval of a cluster bootstrap (whole videos drawn with replacement `n_resamples`
        times, the score recomputed on each draw), clamped to contain the reported score.
    seed (`int`, default 0): seeds the bootstrap and `ties="random"`.
"""


RETRIEVAL_INPUTS_DOC = """\
    predictions (`list[list[float]]` or 2-D array, Q x V): the model's score of every video for each query
        caption (higher = better match); every query scores the same V videos.
    references (`list[list[int]]`, Q): indices (0..V-1) of the videos relevant to each query (at least one).
    original (`list[int]`, optional, streamed): index of each query's original positive (its own video);
        it counts as relevant even when references omits it. Scores counting only it are reported next to
        the full ones.
"""


class ScoreRows:
    """A decoded score column: a dense (N, C) float64 matrix plus a validity mask for ragged rows."""

    __slots__ = ("scores", "mask", "lengths")

    def __init__(self, scores: np.ndarray, mask: np.ndarray | None, lengths: np.ndarray):
        self.scores = scores
        self.mask = mask
        self.lengths = lengths


# --------------------------------------------------------------------------------------------
# batch encoding: user input -> validated Arrow arrays (vectorized, no loop over examples)
# --------------------------------------------------------------------------------------------


def _as_numpy(obj: Any) -> Any:
    """Tensors (torch, tf, jax) and pandas objects to NumPy; leave lists alone."""
    if isinstance(obj, np.ndarray):
        return obj
    if hasattr(obj, "detach") and hasattr(obj, "cpu"):  # torch
        return obj.detach().cpu().numpy()
    if hasattr(obj, "to_numpy") and not isinstance(obj, (pa.Array, pa.ChunkedArray)):  # pandas / polars
        return obj.to_numpy()
    if hasattr(obj, "numpy") and not isinstance(obj, (list, tuple)):  # tensorflow
        return obj.numpy()
    return obj


def _ragged_to_arrow(rows: Any, value_type: pa.DataType, name: str) -> pa.LargeListArray:
    """A sequence of rows (lists, tuples or 1-D arrays, possibly of different lengths) to a large_list array."""
    rows = _as_numpy(rows)
    if isinstance(rows, (pa.Array, pa.ChunkedArray)):
        arr = rows.combine_chunks() if isinstance(rows, pa.ChunkedArray) else rows
        if not (pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type) or pa.types.is_fixed_size_list(arr.type)):
            raise ValueError(f"{name}: expected one list per example, got an Arrow array of type {arr.type}")
        try:
            return arr.cast(pa.large_list(value_type))
        except pa.ArrowInvalid as exc:  # e.g. an int64 score float64 cannot hold exactly
            raise ValueError(f"{name}: {exc}; float64 holds integers exactly only up to 2**53: subtract a common "
                             "offset or divide by a common factor so they fit, or pass the ranks instead") from None
    if isinstance(rows, np.ndarray):
        if rows.ndim != 2:
            raise ValueError(
                f"{name}: expected a 2-D array (examples x candidates), got shape {rows.shape}; "
                "pass one row of scores per example"
            )
        n, c = rows.shape
        flat = _numeric(rows.reshape(-1), value_type, name, lambda pos: f"row {pos // c}, column {pos % c}")
        offsets = np.arange(0, (n + 1) * c, c, dtype=np.int64) if n else np.zeros(1, dtype=np.int64)
        return pa.LargeListArray.from_arrays(pa.array(offsets), pa.array(flat))
    if isinstance(rows, (str, bytes)) or not isinstance(rows, Sequence | Iterable):
        raise ValueError(f"{name}: expected one list of values per example, got {type(rows).__name__}")
    rows = list(rows)
    # Fast path: equal-length rows of plain numbers become one NumPy matrix.
    try:
        dense = np.asarray(rows)
    except (ValueError, TypeError):  # ragged rows
        dense = None
    if dense is not None and dense.ndim == 2 and dense.dtype == object:  # e.g. Python ints beyond int64
        dense = numbers_from_objects(dense, name)
    if dense is not None and dense.ndim == 2 and dense.dtype != object:
        check_python_integers(rows, dense, name)  # NumPy rounds [[2**53 + 1, 0.5]] into float64 silently
        return _ragged_to_arrow(dense, value_type, name)
    if dense is not None and dense.ndim == 1 and dense.dtype != object and len(rows):
        raise ValueError(
            f"{name}: expected one list of values per example, got a flat list of {len(rows)} numbers; "
            "wrap each example's values in a list"
        )
    lengths = np.empty(len(rows), dtype=np.int64)
    parts = []
    for i, row in enumerate(rows):  # only ragged input reaches this loop
        row = _as_numpy(row)
        try:
            arr = None if row is None or isinstance(row, (str, bytes)) else np.asarray(row)
        except (ValueError, TypeError):  # NumPy's "inhomogeneous shape": a value is itself a list
            arr = None
        if arr is None or arr.ndim != 1:
            raise ValueError(f"{name}[{i}]: expected a flat list of numbers, got {row!r:.80}")
        if arr.dtype == object:
            arr = numbers_from_objects(arr, f"{name}[{i}]")
            if arr is None:
                raise ValueError(f"{name}[{i}]: expected a flat list of numbers, got {row!r:.80}")
        check_python_integers(row, arr, f"{name}[{i}]")
        lengths[i] = arr.shape[0]
        parts.append(arr)
    flat = np.concatenate(parts) if parts else np.zeros(0)
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])

    def locate(pos: int) -> str:
        row = int(_row_of_flat(offsets, np.array([pos]))[0])
        return f"row {row}, column {pos - int(offsets[row])}"

    flat = _numeric(flat, value_type, name, locate)
    return pa.LargeListArray.from_arrays(pa.array(offsets), pa.array(flat))


def _numeric(values: np.ndarray, value_type: pa.DataType, name: str, locate=None) -> np.ndarray:
    """Check dtype (numbers, not strings/objects) and convert exactly to the Arrow column's NumPy type.

    ``locate(flat position) -> "row i, column j"`` names where a refused value sits. Integer scores
    that float64 cannot hold exactly (beyond 2**53) are refused: rounding could turn distinct
    scores into ties.
    """
    if values.dtype == object or values.dtype.kind not in "biuf":
        raise ValueError(f"{name}: expected numbers, got values of dtype {values.dtype}")
    if pa.types.is_floating(value_type):  # widening (float32 -> float64) is exact: no new ties
        bad = inexact_integers(values)
        if bad.size:
            pos = int(bad[0])
            raise integer_error(name, values[pos], locate(pos) if locate else f"flat position {pos}")
        return values.astype(value_type.to_pandas_dtype(), copy=False)
    if values.dtype.kind == "f":
        if not np.all(np.isfinite(values)) or np.any(values != np.round(values)):
            bad = int(np.flatnonzero(~np.isfinite(values) | (values != np.round(values)))[0])
            raise ValueError(f"{name}: expected integer indices, got {values[bad]!r} (flat position {bad})")
    return values.astype(np.int64, copy=False)


def _flat_values(arr: pa.LargeListArray) -> np.ndarray:
    """The values of a large_list array as NumPy, respecting a sliced array's offsets (zero copy when possible)."""
    return arr.flatten().to_numpy(zero_copy_only=False)


def _offsets(arr: pa.LargeListArray) -> np.ndarray:
    off = arr.offsets.to_numpy()
    return off - off[0]


def _row_of_flat(offsets: np.ndarray, flat_positions: np.ndarray) -> np.ndarray:
    return np.searchsorted(offsets, flat_positions, side="right") - 1


def _first_non_finite(flat: np.ndarray) -> int | None:
    """Flat position of the first NaN/inf, or None; one summing pass when all are finite."""
    if np.isfinite(flat.sum()):  # NaN/inf anywhere makes the sum non-finite (overflow falls through)
        return None
    bad = np.flatnonzero(~np.isfinite(flat))
    return int(bad[0]) if bad.size else None


def encode_scores(predictions: Any, name: str = "predictions",
                  keep_float32: bool = False) -> tuple[pa.LargeListArray, np.ndarray]:
    """Scores per example -> (large_list<double>, candidates per row); every row non-empty and
    every score finite. With ``keep_float32`` a float32 score matrix stays float32 (exact, and half
    the bytes to write and read back)."""
    dense = _as_numpy(predictions)
    if isinstance(dense, np.ndarray) and dense.ndim == 2 and dense.dtype.kind in "biuf":
        # the common case (a score matrix): every row has the same length, checked in one pass
        n, c = dense.shape
        if n and c == 0:
            raise ValueError(f"{name}[0] has no scores; every example needs at least one candidate")
        pos = _first_non_finite(dense.reshape(-1)) if dense.dtype.kind == "f" else None
        if pos is not None:
            row, col = divmod(pos, c)
            raise ValueError(
                f"{name}[{row}] contains {float(dense[row, col])}: scores must be finite numbers (no NaN or inf); "
                "check the model's outputs for that example"
            )
        value_type = pa.float32() if keep_float32 and dense.dtype == np.float32 else pa.float64()
        return _ragged_to_arrow(dense, value_type, name), np.broadcast_to(np.int64(c), (n,))
    arr = _ragged_to_arrow(predictions, pa.float64(), name)
    if arr.null_count:
        raise ValueError(f"{name}[{int(np.flatnonzero(arr.is_null().to_numpy(zero_copy_only=False))[0])}] is None")
    offsets = _offsets(arr)
    lengths = np.diff(offsets)
    if lengths.size and lengths.min() == 0:
        raise ValueError(f"{name}[{int(np.argmin(lengths))}] has no scores; every example needs at least one candidate")
    flat = _flat_values(arr)
    pos = _first_non_finite(flat)
    if pos is not None:
        row = int(_row_of_flat(offsets, np.array([pos]))[0])
        raise ValueError(
            f"{name}[{row}] contains {float(flat[pos])}: scores must be finite numbers (no NaN or inf); "
            "check the model's outputs for that example"
        )
    return arr, lengths


def encode_positive_index(references: Any, lengths: np.ndarray, name: str = "references") -> pa.Array:
    """Index of the positive candidate per example -> int64, checked against each row's number of candidates."""
    refs = _as_numpy(references)
    if isinstance(refs, (pa.Array, pa.ChunkedArray)):
        refs = refs.to_numpy(zero_copy_only=False)
    try:
        refs = np.asarray(refs)
    except (ValueError, TypeError):  # NumPy's "inhomogeneous shape": nested lists of different lengths
        raise ValueError(f"{name}: expected one positive index (an integer) per example, got nested lists; "
                         "multiple choice has one positive per example (several relevant items: correct_at_k)") from None
    if refs.ndim != 1:
        raise ValueError(f"{name}: expected one positive index per example (1-D), got shape {refs.shape}")
    if refs.size and (refs.dtype == object or refs.dtype.kind not in "biuf"):
        raise ValueError(f"{name}: expected integer positive indices, got dtype {refs.dtype}")
    refs = _numeric(refs, pa.int64(), name) if refs.size else refs.astype(np.int64)
    if refs.shape[0] != lengths.shape[0]:
        raise ValueError(f"predictions has {lengths.shape[0]} rows but {name} has {refs.shape[0]}; give one per example")
    if refs.size and (refs.min() < 0 or (refs >= lengths).any()):
        bad = (refs < 0) | (refs >= lengths)
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name}[{i}] = {int(refs[i])} is out of range: example {i} has {int(lengths[i])} candidates "
            f"(valid positive indices 0..{int(lengths[i]) - 1})"
        )
    return pa.array(refs, type=pa.int64())


def encode_relevant_lists(references: Any, n_items: np.ndarray, name: str = "references") -> pa.LargeListArray:
    """Relevant item indices per query -> large_list<int64>; non-empty, in range, no duplicates."""
    arr = _ragged_to_arrow(references, pa.int64(), name)
    if arr.null_count:
        raise ValueError(f"{name}[{int(np.flatnonzero(arr.is_null().to_numpy(zero_copy_only=False))[0])}] is None")
    if len(arr) != len(n_items):
        raise ValueError(f"predictions has {len(n_items)} rows but {name} has {len(arr)}; give one list per query")
    off = _offsets(arr)
    counts = np.diff(off)
    if counts.size and counts.min() == 0:
        i = int(np.argmin(counts))
        raise ValueError(f"{name}[{i}] is empty: every query needs at least one relevant item")
    flat = _flat_values(arr).astype(np.int64, copy=False)
    row = np.repeat(np.arange(len(arr), dtype=np.int64), counts)
    bad = (flat < 0) | (flat >= n_items[row])
    if bad.any():
        p = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name}[{int(row[p])}] contains {int(flat[p])}, out of range for a query scored over "
            f"{int(n_items[row[p]])} items (valid 0..{int(n_items[row[p]]) - 1})"
        )
    if flat.size:
        key = row * (int(n_items.max()) + 1) + flat
        uniq, first, cnt = np.unique(key, return_index=True, return_counts=True)
        if (cnt > 1).any():
            p = int(first[np.flatnonzero(cnt > 1)[0]])
            raise ValueError(f"{name}[{int(row[p])}] lists item {int(flat[p])} twice; give each relevant item once")
    return arr


def encode_original(original: Any, n_items: np.ndarray, name: str = "original") -> pa.Array:
    """Index of each query's original positive -> int64 (the core counts it as relevant even if not listed)."""
    orig = _as_numpy(original)
    if isinstance(orig, (pa.Array, pa.ChunkedArray)):
        orig = orig.to_numpy(zero_copy_only=False)
    try:
        orig = np.asarray(orig)
    except (ValueError, TypeError):  # NumPy's "inhomogeneous shape": nested lists of different lengths
        raise ValueError(f"{name}: expected one item index (an integer) per query, got nested lists; "
                         "give each query's original positive once (other relevant items go in references)") from None
    n = len(n_items)
    if orig.ndim != 1 or orig.shape[0] != n:
        raise ValueError(f"predictions has {n} rows but {name} has shape {orig.shape}; give one index per query")
    if orig.size and (orig.dtype == object or orig.dtype.kind not in "biuf"):
        raise ValueError(f"{name}: expected integer item indices, got dtype {orig.dtype}")
    orig = _numeric(orig, pa.int64(), name) if orig.size else orig.astype(np.int64)
    bad = (orig < 0) | (orig >= n_items)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}[{i}] = {int(orig[i])} is out of range for {int(n_items[i])} items")
    return pa.array(orig, type=pa.int64())


def encode_strings(values: Any, n: int, name: str) -> pa.Array:
    """One id/label per example -> string array (numbers are turned into their decimal text)."""
    values = _as_numpy(values)
    if isinstance(values, (str, bytes)):
        raise ValueError(f"{name}: expected one value per example, got a single string")
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, np.ndarray) and values.ndim != 1:
        raise ValueError(f"{name}: expected one value per example (1-D), got an array of shape {values.shape}")
    if isinstance(values, np.ndarray) and values.dtype.kind in "US":
        arr = pa.array(values.astype(str, copy=False), type=pa.string())  # vectorized
    elif isinstance(values, np.ndarray) and values.dtype.kind in "biuf":
        arr = pa.array(values.astype(str), type=pa.string())
    elif isinstance(values, pa.Array):
        arr = values.cast(pa.string())
    else:
        values = list(values)
        try:
            arr = pa.array(values, type=pa.string())
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed or numeric ids
            nested = next((i for i, v in enumerate(values) if isinstance(v, (list, tuple, dict, set, np.ndarray))), None)
            if nested is not None:  # a list is not an id: str() would silently make one up
                raise ValueError(f"{name}[{nested}]: expected one id or label per example, got {values[nested]!r:.60}")
            arr = pa.array([v if v is None or isinstance(v, str) else str(v) for v in values], type=pa.string())
    if len(arr) != n:
        raise ValueError(f"predictions has {n} rows but {name} has {len(arr)}; give one per example")
    if arr.null_count:
        raise ValueError(f"{name}[{int(np.flatnonzero(arr.is_null().to_numpy(zero_copy_only=False))[0])}] is None")
    return arr


# --------------------------------------------------------------------------------------------
# decoding: Arrow columns read back by evaluate -> NumPy
# --------------------------------------------------------------------------------------------


def _combine(col: Any) -> pa.Array:
    if isinstance(col, pa.ChunkedArray):
        return col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    if isinstance(col, pa.Array):
        return col
    raise TypeError(f"expected an Arrow column, got {type(col).__name__}")


def _list_parts(col: Any) -> tuple[np.ndarray, np.ndarray]:
    """(row lengths, flat values) of a list column, chunk by chunk: streamed input arrives as one
    chunk per add_batch call, and concatenating NumPy views is cheaper than Arrow's combine_chunks."""
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [_combine(col)]
    chunks = [c for c in chunks if len(c)] or chunks[:1]
    if not chunks:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    lengths = [np.diff(_offsets(c)) for c in chunks]
    values = [_flat_values(c) for c in chunks]
    if len(chunks) == 1:
        return lengths[0], values[0]
    return np.concatenate(lengths), np.concatenate(values)


def decode_scores(col: Any) -> ScoreRows:
    """large_list<double> -> dense (N, C) matrix; ragged rows are padded (with 0) and masked."""
    lengths, flat = _list_parts(col)
    n = lengths.shape[0]
    if n == 0:
        return ScoreRows(np.zeros((0, 0)), None, lengths)
    c = int(lengths.max())
    if int(lengths.min()) == c:
        return ScoreRows(flat.reshape(n, c), None, lengths)
    off = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=off[1:])
    col_idx = np.arange(flat.shape[0], dtype=np.int64) - np.repeat(off[:-1], lengths)
    row_idx = np.repeat(np.arange(n, dtype=np.int64), lengths)
    scores = np.zeros((n, c), dtype=np.float64)
    mask = np.zeros((n, c), dtype=bool)
    scores[row_idx, col_idx] = flat
    mask[row_idx, col_idx] = True
    return ScoreRows(scores, mask, lengths)


def decode_ints(col: Any) -> np.ndarray:
    """An int64 column -> NumPy (chunks concatenated)."""
    arr = col if isinstance(col, pa.ChunkedArray) else _combine(col)
    return arr.to_numpy().astype(np.int64, copy=False)


def decode_optional(col: Any, name: str) -> np.ndarray | None:
    """A streamed optional column: all null -> None; partly null -> error (given for some batches only)."""
    if col is None:
        return None
    arr = _combine(col)
    if arr.null_count == len(arr):
        return None
    if arr.null_count:
        raise ValueError(
            f"{name} was given for some batches but not for others ({arr.null_count} of {len(arr)} examples "
            f"lack it); pass {name} with every add_batch call or with none"
        )
    return arr.to_numpy(zero_copy_only=False)


def decode_labels(col: Any, name: str) -> tuple[np.ndarray, np.ndarray] | None:
    """A streamed string column as (codes, labels) with labels sorted, so codes match `np.unique`'s;
    None when the column was not given. Encoding in Arrow avoids sorting N Python strings."""
    if col is None:
        return None
    arr = _combine(col)
    if arr.null_count == len(arr):
        return None
    decode_optional(arr, name)  # the partly-given check
    encoded = arr.dictionary_encode()
    labels = encoded.dictionary
    order = np.asarray(pa.compute.array_sort_indices(labels))
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    codes = rank[encoded.indices.to_numpy(zero_copy_only=False)]
    return codes.astype(np.int64, copy=False), np.asarray(labels.to_pylist(), dtype=object)[order]


def decode_relevant(col: Any) -> tuple[np.ndarray, np.ndarray]:
    """large_list<int64> -> (query index, item index) pairs, in query order."""
    counts, items = _list_parts(col)
    queries = np.repeat(np.arange(counts.shape[0], dtype=np.int64), counts)
    return queries, items.astype(np.int64, copy=False)


# --------------------------------------------------------------------------------------------
# the base class
# --------------------------------------------------------------------------------------------


class HardnegMetric(evaluate.Metric, metaclass=abc.ABCMeta):
    """evaluate.Metric with whole-batch Arrow encoding and optional streamed columns.

    Abstract, so that `evaluate.load`, which takes the first concrete Metric class it finds in a
    module script, skips this imported base and picks the module's own class.

    Subclasses define `_info()` via `self._make_info(...)`, `INPUT_KIND` (`"multiple_choice"`
    or `"retrieval"`), `OPTIONAL_INPUTS` (streamed columns a user may leave out) and `_compute`.
    """

    INPUT_KIND: str = "multiple_choice"
    OPTIONAL_INPUTS: tuple[str, ...] = ("video_ids",)
    STRING_INPUTS: tuple[str, ...] = ("video_ids",)
    _keep_float32: bool = False  # set by compute() for the duration of a single-call computation

    # --- info -------------------------------------------------------------------------------
    def _make_info(self, *, description: str, citation: str, inputs_description: str,
                   extra_features: Mapping[str, Any] | None = None, reference_urls: list[str] | None = None):
        feats: dict[str, Any] = {"predictions": datasets.LargeList(datasets.Value("float64"))}
        if self.INPUT_KIND == "multiple_choice":
            feats["references"] = datasets.Value("int64")
        elif self.INPUT_KIND == "retrieval":
            feats["references"] = datasets.LargeList(datasets.Value("int64"))
        else:  # pragma: no cover - programming error
            raise ValueError(f"unknown INPUT_KIND {self.INPUT_KIND!r}")
        feats.update(extra_features or {})
        info = evaluate.MetricInfo(
            description=description,
            citation=citation,
            inputs_description=inputs_description,
            features=datasets.Features(feats),
            reference_urls=reference_urls or [],
        )
        # evaluate only lets `format` be set for flat features ("numpy"); the Arrow read-back is
        # zero copy for nested ones too, so set it after the dataclass check.
        info.format = "arrow"
        return info

    # --- streaming --------------------------------------------------------------------------
    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add a batch of examples (encoded and validated as a whole, then appended to evaluate's cache).

        Args:
            predictions: one row of candidate scores per example (2-D array or list of lists).
            references: see the module's inputs description.
        """
        names = self._feature_names()
        bad = [k for k in kwargs if k not in names]
        if bad:
            raise ValueError(f"Bad inputs for evaluation module: {bad}. All inputs are {names}")
        if predictions is None:
            raise ValueError("predictions is missing: pass one row of scores per example")
        if references is None:
            raise ValueError("references is missing: pass the positive(s) of every example")
        table = self._encode_batch({"predictions": predictions, "references": references, **kwargs})
        if self.writer is None:
            self.selected_feature_format = self.features
            if table.schema.field("predictions").type.value_type == pa.float32():
                self.selected_feature_format = datasets.Features(
                    {**self.features, "predictions": datasets.LargeList(datasets.Value("float32"))})
            # one Arrow record batch per add_batch call instead of one per 1,000 rows
            self.writer_batch_size = max(len(table), 1)
            self._init_writer()
        self.writer.write_table(table)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Add one example (see `add_batch`)."""
        return self.add_batch(
            predictions=[prediction] if prediction is not None else None,
            references=[reference] if reference is not None else None,
            **{k: [v] for k, v in kwargs.items()},
        )

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Compute the metric over everything added so far plus the given inputs.

        Optional streamed inputs (e.g. `video_ids`) may be left out. The options (`ties`, `ks`,
        `n_resamples`, ...) are checked before anything is read: `evaluate` empties its cache of
        streamed batches as soon as it computes, so a typo must fail while the batches are still there
        (fix the option and call `compute()` again).
        """
        self._check_options(kwargs)
        if predictions is not None or references is not None:
            for name in self.OPTIONAL_INPUTS:
                kwargs.setdefault(name, None)
        # all the data in this one call: a float32 score matrix can be stored as it is (exact); a
        # streamed float32 batch is widened, since a later batch may hold float64 scores
        self._keep_float32 = self.writer is None
        try:
            out = evaluate.Metric.compute(self, predictions=predictions, references=references, **kwargs)
        finally:
            self._keep_float32 = False
        if isinstance(out, dict) and isinstance(out.get("per_example"), dict):
            # plain lists, so that `json.dumps(output)` works like on every other output value
            out["per_example"] = {k: np.asarray(v).tolist() for k, v in out["per_example"].items()}
        return out

    def _check_options(self, kwargs: Mapping[str, Any]) -> None:
        """Validate `compute()`'s options against `_compute`'s signature: unknown names, and the values of
        the shared ones (defaults filled in), raising a ValueError before any streamed data is consumed."""
        import inspect

        from hardneg.ranking.ties import check_tie_rule

        params = {name: p.default for name, p in inspect.signature(self._compute).parameters.items()
                  if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        inputs = set(self._feature_names())
        options = {name: default for name, default in params.items() if name not in inputs}
        unknown = sorted(k for k in kwargs if k not in inputs and k not in options)
        if unknown:
            raise ValueError(
                f"{self.name}.compute() got unknown option(s) {unknown}; its options are {sorted(options)} "
                "(nothing added so far was used or lost: fix the name and call compute() again)"
            )
        given = {**options, **{k: v for k, v in kwargs.items() if k in options}}
        if "n_resamples" in given or "confidence_level" in given:
            check_resampling(given.get("n_resamples", 0), given.get("confidence_level", 0.95))
        if "ks" in given:
            check_ks(given["ks"])
        seed = given.get("seed")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
            raise ValueError(f"seed must be a non-negative integer (it seeds the bootstrap and ties='random'), got {seed!r}")
        if "ties" in given:
            if not isinstance(given["ties"], str):
                raise ValueError(f"ties must be the name of a tie rule, e.g. 'expected'; got {given['ties']!r}")
            check_tie_rule(given["ties"], seed)
        flag = given.get("return_per_example", False)
        if not isinstance(flag, (bool, np.bool_)):
            raise ValueError(f"return_per_example must be True or False, got {flag!r}")

    @abc.abstractmethod
    def _info(self):
        """The module's `evaluate.MetricInfo` (build it with `self._make_info`)."""

    @abc.abstractmethod
    def _compute(self, *, predictions, references, **kwargs):
        """Decode the Arrow columns, call `hardneg.ranking`, return the scores."""

    def _encode_batch(self, batch: dict[str, Any]) -> pa.Table:
        scores, lengths = encode_scores(batch["predictions"], keep_float32=self._keep_float32)
        n = len(scores)
        columns: dict[str, pa.Array] = {"predictions": scores}
        if self.INPUT_KIND == "multiple_choice":
            columns["references"] = encode_positive_index(batch["references"], lengths)
        else:
            columns["references"] = encode_relevant_lists(batch["references"], lengths)
        for name in self._feature_names():
            if name in columns:
                continue
            value = batch.get(name)
            if value is None:
                if name not in self.OPTIONAL_INPUTS:
                    raise ValueError(f"{name} is missing: this module needs one {name} value per example")
                columns[name] = pa.nulls(n, type=self.features.arrow_schema.field(name).type)
            elif name in self.STRING_INPUTS:
                columns[name] = encode_strings(value, n, name)
            else:
                columns[name] = self._encode_extra(name, value, columns)
        return pa.table({k: columns[k] for k in self._feature_names()})

    def _encode_extra(self, name: str, value: Any, columns: dict[str, pa.Array]) -> pa.Array:
        if name == "original" and self.INPUT_KIND == "retrieval":
            return encode_original(value, np.diff(_offsets(columns["predictions"])))
        raise ValueError(f"{self.name}: no encoder for input {name!r}")  # pragma: no cover


# --------------------------------------------------------------------------------------------
# results: scores, intervals next to them, per-example values on request
# --------------------------------------------------------------------------------------------


def check_resampling(n_resamples: Any, confidence_level: Any) -> tuple[int, float]:
    """Validate the bootstrap settings shared by every module."""
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 0:
        raise ValueError(f"n_resamples must be a non-negative integer (0 turns intervals off), got {n_resamples!r}")
    if not isinstance(confidence_level, (float, int)) or not 0.0 < float(confidence_level) < 1.0:
        raise ValueError(f"confidence_level must be between 0 and 1 (e.g. 0.95), got {confidence_level!r}")
    return int(n_resamples), float(confidence_level)


def check_ks(ks: Any, name: str = "ks") -> tuple[int, ...]:
    if isinstance(ks, (int, np.integer)):
        ks = (int(ks),)
    try:
        out = tuple(int(k) for k in ks)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a list of positive integers, e.g. [1, 5, 10]; got {ks!r}") from None
    if not out or any(k < 1 for k in out):
        raise ValueError(f"{name} must be a non-empty list of positive integers, got {ks!r}")
    return out


def cluster_ids(videos: tuple[np.ndarray, np.ndarray] | np.ndarray | None, n: int) -> np.ndarray:
    """Integer cluster per example for the bootstrap: one per distinct video id, else one per example.

    Accepts `decode_labels` output (codes in sorted-label order, the same numbering as `np.unique`,
    so intervals equal `hardneg.ranking.bootstrap_ci(values, video_ids)`) or raw ids.
    """
    if videos is None:
        return np.arange(n, dtype=np.int64)
    if isinstance(videos, tuple):
        return videos[0]
    _, inverse = np.unique(videos, return_inverse=True)
    return inverse.astype(np.int64, copy=False)


def scores_with_intervals(aggregate: Mapping[str, float], per_example: Mapping[str, np.ndarray],
                          keys: Sequence[tuple[str, ...]], clusters: np.ndarray, n_resamples: int,
                          confidence_level: float, seed: int,
                          extra: Mapping[str, tuple[float, Stat]] | None = None) -> dict[str, Any]:
    """`{out_key: score, out_key_ci: [lo, hi]}` for each key, in order, all from one set of resamples.

    A key is `(output name, aggregate name)` or `(output name, aggregate name, per-example name)`
    when the core names the per-example column differently (e.g. `mAP` is the mean of `AP`).
    `extra` adds `{output name: (score, Stat)}` for statistics the core aggregates differently
    (medians, per-group means).

    Each interval is the percentile interval of a cluster bootstrap (whole videos drawn with
    replacement; `joint_intervals`), clamped to contain the score it is reported with: the score
    comes from the core's aggregate, which can differ from the bootstrap's own mean in the last bit,
    and a percentile interval can miss its point estimate (medians, very skewed or tiny samples).
    So `score_ci[0] <= score <= score_ci[1]` always holds.
    """
    out: dict[str, Any] = {}
    stats: dict[str, Stat] = {}
    for key in keys:
        out_key, agg_key = key[0], key[1]
        out[out_key] = float(aggregate[agg_key])
        if n_resamples:  # per-example values are only needed for the intervals
            stats[out_key] = Stat("mean", per_example[key[2] if len(key) > 2 else agg_key])
    for out_key, (score, st) in (extra or {}).items():
        out[out_key] = float(score)
        stats[out_key] = st
    if not n_resamples:
        return out
    cis = joint_intervals(stats, clusters, n_resamples, confidence_level, seed)
    ordered: dict[str, Any] = {}
    for key, value in out.items():
        lo, hi = cis[key]
        ordered[key] = value
        ordered[f"{key}_ci"] = [min(float(lo), value), max(float(hi), value)] if value == value else [lo, hi]
    return ordered


def retrieval_result(predictions: Any, references: Any, original: Any, video_ids: Any, ks: tuple[int, ...],
                     ties: str, seed: int):
    """Decode retrieval columns and run the core: (result, bootstrap clusters, whether `original` was given)."""
    from hardneg.ranking import Qrels, retrieval

    rows = decode_scores(predictions)
    if rows.mask is not None:
        raise ValueError(
            "predictions rows have different lengths; in retrieval every query must score the same "
            f"videos (lengths seen: {sorted(set(rows.lengths.tolist()))[:5]})"
        )
    queries, items = decode_relevant(references)
    orig = decode_optional(original, "original")
    videos = decode_labels(video_ids, "video_ids")
    result = retrieval(rows.scores, Qrels(queries, items), original=orig, ks=ks, ties=ties, seed=seed)
    return result, cluster_ids(videos, rows.scores.shape[0]), orig is not None
