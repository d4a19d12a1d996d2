"""Frames as another harness takes them, so a protocol set can reproduce it (`FrameSettings.recipe`).

"qwen-vl-utils": what lmms-eval 0.7.3's Qwen2-VL wrapper gives the model (lmms_eval/models/simple/qwen2_vl.py,
`generate_until`: `process_vision_info`, then at most `max_num_frames` frames by `np.linspace(..., dtype=int)` and
`np.unique`). qwen-vl-utils 0.0.14 (`vision_process.py`): `smart_nframes` takes `fps` (2.0) frames per second of the
clip, at least `FPS_MIN_FRAMES` (4) and at most the clip's frames, floored to an even count; `_read_video_decord`
takes the frames at `round(linspace(0, total - 1, n))`; `fetch_video` resizes each to `smart_resize(h, w, 28,
min_pixels, max_pixels)` (the wrapper's 3,136 and 602,112) with bicubic antialiasing on uint8 (torchvision: rounded
and clamped). Written from reading that code; tests/lmms/test_lmms_eval_parity.py compares the frames with the ones
lmms-eval itself took.
"""

from __future__ import annotations

import math

import numpy as np

QWEN_FPS = 2.0
QWEN_MIN_FRAMES = 4
QWEN_FRAME_FACTOR = 2
QWEN_IMAGE_FACTOR = 28  # image_patch_size 14 x SPATIAL_MERGE_SIZE 2 (fetch_video's default)
QWEN_VIDEO_MAX_TOKENS = 768  # qwen-vl-utils VIDEO_MAX_TOKEN_NUM
QWEN_MODEL_SEQ_LEN = 128000  # qwen-vl-utils MODEL_SEQ_LEN (the default total_pixels budget)
LMMS_EVAL_MIN_PIXELS = 3136
LMMS_EVAL_MAX_PIXELS = 602112


def smart_resize(height: int, width: int, factor: int, min_pixels: int, max_pixels: int) -> tuple[int, int]:
    """Qwen2-VL's frame size: multiples of `factor`, the area within [min_pixels, max_pixels], aspect kept
    (transformers `models/qwen2_vl/image_processing_qwen2_vl.py`, `smart_resize`)."""
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def _video_fps(times: np.ndarray) -> float:
    """The clip's frame rate from its frames' presentation times (decord's average rate for a constant-rate clip)."""
    if len(times) < 2:
        return 1.0
    step = float(np.median(np.diff(times)))
    # rounded: 1 / (1/30) is 30.000000000000007 in floats, which would drop a frame at qwen-vl-utils' floor
    return round(1.0 / step, 6) if step > 0 else 1.0


def qwen_vl_utils_positions(times, settings) -> np.ndarray:
    """Positions of the frames qwen-vl-utils reads, then the wrapper's cap of `settings.n_frames`.

    recipe "qwen-vl-utils-nframes": lmms-eval 0.7.3's Qwen2.5-VL chat wrapper (models/chat/qwen2_5_vl.py,
    `generate_until`): it counts the clip's frames (decord) and asks qwen-vl-utils for nframes = min(max_num_frames,
    total), floored to an even count, at least 2; `smart_nframes` keeps that count and `_read_video_decord` reads
    `round(linspace(0, total - 1, nframes))`. No further cap."""
    times = np.asarray(times, np.float64)
    total = len(times)
    if settings.recipe == "qwen-vl-utils-nframes":
        n = max(QWEN_FRAME_FACTOR, min(settings.n_frames, total) // QWEN_FRAME_FACTOR * QWEN_FRAME_FACTOR)
        if n > total:  # qwen-vl-utils: "nframes should in interval [2, total]"; hardneg.video: UnscorableVideo
            raise ValueError(f"qwen-vl-utils takes {n} frames of a {total}-frame clip (it needs 2 to {total})")
        return np.round(np.linspace(0, total - 1, n)).astype(np.int64)
    fps = settings.fps or QWEN_FPS
    min_frames = math.ceil(QWEN_MIN_FRAMES / QWEN_FRAME_FACTOR) * QWEN_FRAME_FACTOR
    max_frames = math.floor(min(768, total) / QWEN_FRAME_FACTOR) * QWEN_FRAME_FACTOR
    n = total / _video_fps(times) * fps
    n = min(min(max(n, min_frames), max_frames), total)
    n = math.floor(n / QWEN_FRAME_FACTOR) * QWEN_FRAME_FACTOR
    if not QWEN_FRAME_FACTOR <= n <= total:  # hardneg.video reports it as UnscorableVideo
        raise ValueError(f"qwen-vl-utils takes {n} frames of a {total}-frame clip (it needs 2 to {total})")
    idx = np.round(np.linspace(0, total - 1, n)).astype(np.int64)
    keep = np.unique(np.linspace(0, n - 1, settings.n_frames, dtype=int))
    return idx[keep]


#: the seed of ViLMA's offsets (run_blip2.py, main: np.random.seed(0))
VILMA_SEED = 0


def vilma_consecutive_positions(total: int, n: int, seed: int = VILMA_SEED) -> np.ndarray:
    """ViLMA's authors' frames (models/image/run_blip2.py, `sample_frame_indices(clip_len=8, frame_sample_rate=1,
    seg_len)`, called when the clip has more than clip_len frames; otherwise every frame): end = randint(n, total),
    start = end - n, the positions clip(linspace(start, end, n), start, end - 1) as integers, i.e. n consecutive
    frames from a random offset. Their offsets come from one global NumPy stream seeded 0 and drawn in their items'
    order; here each clip draws from its own generator seeded by (seed, its frame count), so a clip's frames do not
    depend on which clips were decoded before it (a departure: the same offsets only by chance)."""
    if total <= n:
        return np.arange(total, dtype=np.int64)
    end = int(np.random.default_rng([seed, total]).integers(n, total))
    start = end - n
    return np.clip(np.linspace(start, end, num=n), start, end - 1).astype(np.int64)


def qwen_vl_utils_resize(frames: np.ndarray, min_pixels: int = LMMS_EVAL_MIN_PIXELS,
                         max_pixels: int = LMMS_EVAL_MAX_PIXELS) -> np.ndarray:
    """(T, H, W, 3) uint8 resized as `fetch_video` does: `smart_resize` to multiples of 28 within the pixel limits,
    bicubic with antialiasing in float, rounded and clamped to uint8. The upper limit is the given one or
    qwen-vl-utils' own cap, whichever is lower (`fetch_video`: max(min(VIDEO_MAX_TOKEN_NUM x 28^2, total_pixels /
    nframes x 2), 1.05 x min_pixels); "The given max_pixels ... exceeds limit" when the given one is higher)."""
    import torch

    h, w = frames.shape[1], frames.shape[2]
    cap = max(min(QWEN_VIDEO_MAX_TOKENS * QWEN_IMAGE_FACTOR ** 2,
                  QWEN_MODEL_SEQ_LEN * QWEN_IMAGE_FACTOR ** 2 * 0.9 / len(frames) * QWEN_FRAME_FACTOR),
              int(min_pixels * 1.05))
    rh, rw = smart_resize(h, w, QWEN_IMAGE_FACTOR, min_pixels, min(max_pixels, cap))
    x = torch.as_tensor(np.ascontiguousarray(frames)).permute(0, 3, 1, 2).float()
    if (rh, rw) != (h, w):
        x = torch.nn.functional.interpolate(x, size=(rh, rw), mode="bicubic", antialias=True, align_corners=False)
    x = x.clamp(0, 255).round().to(torch.uint8)
    return x.permute(0, 2, 3, 1).contiguous().numpy()


__all__ = ["LMMS_EVAL_MAX_PIXELS", "LMMS_EVAL_MIN_PIXELS", "VILMA_SEED", "qwen_vl_utils_positions",
           "qwen_vl_utils_resize", "smart_resize", "vilma_consecutive_positions"]
