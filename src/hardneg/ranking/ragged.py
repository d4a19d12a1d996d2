"""Ragged candidate lists (rows with different numbers of candidates) to a padded matrix + mask."""

from __future__ import annotations

import numpy as np


def pad_ragged(rows, fill: float = 0.0, dtype=np.float32) -> tuple[np.ndarray, np.ndarray]:
    """(scores (N, C_max), mask (N, C_max)) from variable-length rows.

    ``rows``: a list of sequences, or a pyarrow ``ListArray``/``ChunkedArray`` of lists
    (the ``scores`` column of a predictions file), which is converted without a Python
    loop over rows. ``mask`` is True for real candidates.
    """
    if hasattr(rows, "combine_chunks"):  # pyarrow.ChunkedArray
        rows = rows.combine_chunks()
    if hasattr(rows, "offsets") and hasattr(rows, "flatten"):  # pyarrow ListArray
        if rows.null_count:
            raise ValueError("scores has null rows; every row needs a list of candidate scores")
        offsets = np.asarray(rows.offsets, dtype=np.int64)
        values = np.asarray(rows.flatten().to_numpy(zero_copy_only=False), dtype=dtype)
        offsets = offsets - offsets[0]
    else:
        arrays = [np.asarray(r, dtype=dtype).ravel() for r in rows]
        lengths = np.fromiter((a.size for a in arrays), dtype=np.int64, count=len(arrays))
        offsets = np.r_[0, np.cumsum(lengths)]
        values = np.concatenate(arrays) if arrays else np.zeros(0, dtype)
    lengths = np.diff(offsets)
    if lengths.size == 0:
        raise ValueError("scores is empty; pass at least one row of candidate scores")
    if (lengths == 0).any():
        i = int(np.argmax(lengths == 0))
        raise ValueError(f"scores row {i} has no candidates; every row needs at least its positive")
    n, c = lengths.size, int(lengths.max())
    row = np.repeat(np.arange(n), lengths)
    col = np.arange(values.size) - np.repeat(offsets[:-1], lengths)
    scores = np.full((n, c), fill, dtype=dtype)
    mask = np.zeros((n, c), dtype=bool)
    scores[row, col] = values
    mask[row, col] = True
    return scores, mask
