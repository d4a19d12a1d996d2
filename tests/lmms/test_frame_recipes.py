"""The qwen-vl-utils frame recipe against qwen-vl-utils itself (its `smart_nframes`, `smart_resize` and the
`round(linspace)` of `_read_video_decord`), for clips of many lengths and rates; lmms-eval's wrapper cap of 32."""

from __future__ import annotations

import numpy as np
import pytest

from hardneg.frame_recipes import qwen_vl_utils_positions, qwen_vl_utils_resize
from hardneg.video import FrameSettings, UnscorableVideo, sample_positions


@pytest.fixture(scope="module")
def vp():
    return pytest.importorskip("qwen_vl_utils.vision_process")


@pytest.mark.parametrize("total, video_fps", [(16, 8.0), (3, 8.0), (4, 30.0), (90, 30.0), (301, 29.97), (20, 2.0),
                                              (2000, 25.0), (7, 1.0), (1, 8.0)])
def test_positions_are_qwen_vl_utils_then_the_wrappers_cap(vp, total, video_fps):
    import torch

    times = np.arange(total) / video_fps
    settings = FrameSettings(n_frames=32, resize=None, recipe="qwen-vl-utils")
    try:
        n = vp.smart_nframes({"fps": 2.0}, total_frames=total, video_fps=video_fps)
    except ValueError:
        with pytest.raises(UnscorableVideo):  # reported for that video; the run goes on
            sample_positions(times, settings)
        return
    idx = torch.linspace(0, total - 1, n).round().long().numpy()
    keep = np.unique(np.linspace(0, n - 1, 32, dtype=int))  # lmms-eval's Qwen2_VL.generate_until
    assert qwen_vl_utils_positions(times, settings).tolist() == idx[keep].tolist()


@pytest.mark.parametrize("h, w", [(48, 64), (240, 320), (1080, 1920), (30, 30), (17, 400)])
def test_resize_is_qwen_vl_utils_smart_resize_and_torch_bicubic(vp, h, w):
    frames = np.random.default_rng(h * w).integers(0, 256, (2, h, w, 3), dtype=np.uint8)
    got = qwen_vl_utils_resize(frames)
    rh, rw = vp.smart_resize(h, w, factor=28, min_pixels=3136, max_pixels=602112)
    assert got.shape == (2, rh, rw, 3) and got.dtype == np.uint8
    import torch

    x = torch.as_tensor(frames).permute(0, 3, 1, 2)
    want = vp.transforms.functional.resize(x, [rh, rw], interpolation=vp.InterpolationMode.BICUBIC, antialias=True)
    assert np.array_equal(got, want.permute(0, 2, 3, 1).numpy())


@pytest.mark.parametrize("total, fps, pixels", [(40, 10, (200704, 1605632)), (3, 8, (3136, 602112))])
def test_nframes_recipe_is_fetch_video_as_lmms_eval_qwen2_5_vl_calls_it(vp, tmp_path, total, fps, pixels):
    """The "qwen-vl-utils-nframes" recipe against qwen-vl-utils' own `fetch_video` on the file, called as lmms-eval
    0.7.3's Qwen2.5-VL chat wrapper calls it (models/chat/qwen2_5_vl.py, `generate_until`: nframes = min(32, the
    clip's frames) floored to even, at least 2; its min_pixels and max_pixels in the video element)."""
    import torch

    from hardneg.video import decode_frames, write_video

    rng = np.random.default_rng(total)
    path = tmp_path / "c.mp4"
    write_video(path, [rng.integers(0, 255, (48, 64, 3), dtype=np.uint8) for _ in range(total)], fps=fps)
    nframes = max(2, min(32, total) // 2 * 2)
    want, _ = vp.fetch_video({"video": str(path), "nframes": nframes, "min_pixels": pixels[0], "max_pixels": pixels[1]},
                             return_video_sample_fps=True)
    settings = FrameSettings(n_frames=32, resize=None, recipe="qwen-vl-utils-nframes", pixels=pixels)
    got = np.asarray(decode_frames(path, settings))
    assert got.shape == tuple(want.permute(0, 2, 3, 1).shape)
    assert np.array_equal(got, want.round().to(torch.uint8).permute(0, 2, 3, 1).numpy())


def _authors_sample_frame_indices(clip_len, frame_sample_rate, seg_len):
    """ViLMA models/image/run_blip2.py, `sample_frame_indices`, as released (github ilkerkesen/ViLMA)."""
    converted_len = int(clip_len * frame_sample_rate)
    if seg_len > converted_len:
        end_idx = np.random.randint(converted_len, seg_len)
    else:
        end_idx = min(converted_len, seg_len) - 1
    start_idx = end_idx - converted_len
    indices = np.linspace(start_idx, end_idx, num=clip_len)
    indices = np.clip(indices, start_idx, end_idx - 1).astype(np.int64)
    return indices


@pytest.mark.parametrize("total", [1, 5, 8, 9, 16, 100, 2001])
def test_vilma_consecutive_frames_are_the_authors_sample_frame_indices(total, monkeypatch):
    """ViLMA's authors set takes 8 consecutive frames from a random offset (their main calls sample_frame_indices
    only for a clip of more than 8 frames and takes every frame otherwise); the offset here comes from a generator
    seeded by (0, the frame count): the authors' function, given the same draw, gives the same frames."""
    settings = benchmarks_vilma_frames()
    got = sample_positions(np.arange(total) / 25.0, settings)
    if total <= 8:
        assert got.tolist() == list(range(total))
        return
    drawn = []

    def randint(lo, hi):
        drawn.append((lo, hi))
        return int(got[-1]) + 1  # the end our generator drew

    monkeypatch.setattr(np.random, "randint", randint)
    assert got.tolist() == _authors_sample_frame_indices(8, 1, total).tolist()
    assert drawn == [(8, total)] and 8 <= got[-1] + 1 < total  # a legal draw of theirs
    assert sample_positions(np.arange(total) / 25.0, settings).tolist() == got.tolist()  # seeded: the same again


def benchmarks_vilma_frames():
    from hardneg import benchmarks

    frames = benchmarks.get("vilma").vlm_for("authors").frames
    assert (frames.n_frames, frames.recipe) == (8, "vilma-consecutive")
    return frames
