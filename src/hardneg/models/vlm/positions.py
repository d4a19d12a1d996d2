"""Qwen2-VL / Qwen2.5-VL 3-D rotary positions (M-RoPE) by the rule the models were trained with.

Why here and not `model.get_rope_index`: the installed `transformers` decides what that function does, and 5.x
releases disagree with Qwen's rule (5.24 starts the text after a video at `start + max(h, w) // merge`, ignoring
time, while its own `generate` continues from `rope_deltas`; 5.3 moved Qwen2.5-VL's video positions; fractional
`second_per_grid_ts` was truncated to an integer before the multiplication for a while). The same checkpoint
must score the same on every machine, so the scorer computes the positions itself and passes them as
`position_ids` to every forward (prefix, continuation, naive and full-batch references alike).

The rule, written from Qwen's own code (QwenLM/Qwen2.5-VL, `qwen-vl-finetune/qwenvl/data/rope2d.py`,
`get_rope_index_25` and `get_rope_index_2`; the same function Qwen contributed to transformers 4.49,
`modeling_qwen2_5_vl.py`, `Qwen2_5_VLForConditionalGeneration.get_rope_index`):

* text: all three components equal, one step per token, starting at 0, or at (the largest position so far) + 1;
* a video of grid (t, h, w) (in patches; h and w merged by `spatial_merge_size`) starting after text whose next
  position is s: token (g, i, j) sits at (s + T(g), s + i, s + j), where T(g) = g for Qwen2-VL and, for
  Qwen2.5-VL, T(g) = int(g * second_per_grid_t * tokens_per_second): the product is formed first (in float32,
  as the reference's tensors are) and only then truncated to an integer;
* the text after a video starts at the video's largest position + 1 (whichever of time, height, width is larger);
* the next token after a sequence (the cached continuation) sits at max + 1, i.e. its 1-D index + `delta`,
  delta = max + 1 - length (the reference's `mrope_position_deltas`).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def temporal_index(grid_t: int, second_per_grid_t: float | None = None,
                   tokens_per_second: float | None = None) -> np.ndarray:
    """(grid_t,) int64 temporal positions of the temporal grid steps (relative to the video's start).

    None for `tokens_per_second`: Qwen2-VL (one position per grid step). Otherwise Qwen2.5-VL: the grid index
    times the seconds per grid step times tokens per second, multiplied in float32 and then truncated."""
    g = np.arange(int(grid_t), dtype=np.int64)
    if tokens_per_second is None:
        return g
    spg = np.float32(1.0 if second_per_grid_t is None else second_per_grid_t)
    scaled = (g.astype(np.float32) * spg) * np.float32(tokens_per_second)
    return scaled.astype(np.int64)  # truncation toward zero; the values are never negative


def video_positions(start: int, grid: Sequence[int], merge: int, second_per_grid_t: float | None = None,
                    tokens_per_second: float | None = None) -> np.ndarray:
    """(3, t*h*w/merge**2) positions of one video's tokens, in the order the vision tower emits them
    (time, then rows, then columns of merged patches), offset by `start`."""
    t, h, w = int(grid[0]), int(grid[1]) // merge, int(grid[2]) // merge
    ti = np.repeat(temporal_index(t, second_per_grid_t, tokens_per_second), h * w)
    hi = np.tile(np.repeat(np.arange(h, dtype=np.int64), w), t)
    wi = np.tile(np.arange(w, dtype=np.int64), t * h)
    return np.stack([ti, hi, wi]) + int(start)


def _walk(ids: Sequence[int], video_token_id: int, n_grids: int, place) -> np.ndarray:
    """(3, len(ids)) positions: text tokens count up from the next free position; each run of `video_token_id` is
    placed by `place(v, start) -> (positions of video v, next free position)`, the one thing the two rules below
    differ in. A run must hold exactly the video's tokens, or this raises."""
    ids = np.asarray(ids, dtype=np.int64).reshape(-1)
    out = np.zeros((3, len(ids)), np.int64)
    is_video = ids == int(video_token_id)
    nxt, k, v = 0, 0, 0  # next free position, token index, video index
    while k < len(ids):
        if not is_video[k]:
            end = k
            while end < len(ids) and not is_video[end]:
                end += 1
            out[:, k:end] = np.arange(nxt, nxt + end - k, dtype=np.int64)
            nxt += end - k
            k = end
            continue
        if v >= n_grids:
            raise ValueError(f"the token sequence holds more videos than the {n_grids} grid(s) given")
        pos, after = place(v, nxt)
        n = pos.shape[1]
        if k + n > len(ids) or not is_video[k:k + n].all():
            raise ValueError(f"video {v}: its grid makes {n} video tokens but the sequence holds a run of "
                             f"{int(np.argmin(np.append(is_video[k:], False)))} at index {k}")
        out[:, k:k + n] = pos
        nxt = after
        k += n
        v += 1
    return out


def mrope_positions(ids: Sequence[int], video_token_id: int, grids: Sequence[Sequence[int]], merge: int,
                    seconds_per_grid: Sequence[float] | None = None,
                    tokens_per_second: float | None = None) -> np.ndarray:
    """(3, len(ids)) positions of a token sequence whose videos are runs of `video_token_id` (one run per video,
    in the order of `grids`; each run holds exactly t*h*w/merge**2 tokens, or this raises)."""
    def place(v: int, start: int):
        spg = None if seconds_per_grid is None else float(seconds_per_grid[v])
        pos = video_positions(start, grids[v], merge, spg, tokens_per_second)
        return pos, int(pos.max()) + 1

    return _walk(ids, video_token_id, len(grids), place)


def transformers_positions(ids: Sequence[int], video_token_id: int, grids: Sequence[Sequence[int]], merge: int,
                           seconds_per_grid: Sequence[float] | None = None,
                           tokens_per_second: float = 1.0) -> np.ndarray:
    """(3, len(ids)) positions as the installed transformers 5.24 gives Qwen2.5-VL, which departs from Qwen's rule
    (`mrope_positions`): only the lmms-eval protocol set uses it, to reproduce what lmms-eval's wrapper runs.

    Written from reading transformers 5.24 `models/qwen2_5_vl/modeling_qwen2_5_vl.py`,
    `Qwen2_5_VLModel.get_rope_index` and `get_vision_position_ids` (tests/lmms compares it with that function's
    output on lmms-eval's own inputs):

    * a video's token (g, i, j) sits at (s + int(g * (tokens_per_second * second_per_grid_t)), s + i, s + j): the
      interval is formed first, in float32 (a float32 `second_per_grid_ts` tensor), then multiplied and truncated;
    * the text after a video starts at s + max(h, w) (merged patches), whatever the video's time extent, where
      Qwen's rule starts it after the video's largest position; so a video whose time positions reach past its
      height and width overlaps the text after it;
    * the continuation: the largest position + 1 (`rope_deltas`, `next_delta`), as in Qwen's rule.
    """
    def place(v: int, start: int):
        t, h, w = int(grids[v][0]), int(grids[v][1]) // merge, int(grids[v][2]) // merge
        spg = np.float32(1.0 if seconds_per_grid is None else seconds_per_grid[v])
        interval = np.float32(np.float32(tokens_per_second) * spg)
        ti = (np.arange(t, dtype=np.float32) * interval).astype(np.int64)
        pos = np.stack([np.repeat(ti, h * w), np.tile(np.repeat(np.arange(h, dtype=np.int64), w), t),
                        np.tile(np.arange(w, dtype=np.int64), t * h)]) + start
        return pos, start + max(h, w)

    return _walk(ids, video_token_id, len(grids), place)


def next_delta(positions: np.ndarray) -> int:
    """Offset of the next token's position from its 1-D index: max + 1 - length (0 for an empty sequence)."""
    if positions.shape[-1] == 0:
        return 0
    return int(positions.max()) + 1 - int(positions.shape[-1])


__all__ = ["mrope_positions", "next_delta", "temporal_index", "transformers_positions", "video_positions"]
