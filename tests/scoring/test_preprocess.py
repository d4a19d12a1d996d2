"""Tensor preprocessing against the Hugging Face PIL image processor, and scores against the old path.

Numpy frames must give the processor's pixel values bit for bit (so the default decoder's scores
do not move); torch frames are resized with torch and must stay within the stated tolerance.
"""

from __future__ import annotations

import numpy as np
import pytest

from hardneg.models.preprocess import PixelPipeline, resize_to
from hardneg.video import FrameSettings, decode_frames, write_synthetic_video

#: torch's antialiased bicubic (two passes, bytes between them) vs PIL's: at most 2 levels of 255
RESIZE_LEVELS = 2
CAPTIONS = ["a red ball rolls", "a blue square slides", "two shapes meet", "nothing moves", "a circle grows"]


def _natural(rng, n, h, w):
    from PIL import Image

    return np.stack([np.asarray(Image.fromarray(rng.integers(0, 256, (max(2, h // 16), max(2, w // 16), 3), np.uint8))
                                .resize((w, h), Image.BICUBIC)) for _ in range(n)])


def _processor(shortest_edge=None):
    from transformers import CLIPImageProcessorPil

    from hardneg.models.tiny_clip import tiny_clip_path

    kw = {} if shortest_edge is None else {"size": {"shortest_edge": shortest_edge},
                                           "crop_size": {"height": shortest_edge, "width": shortest_edge}}
    return CLIPImageProcessorPil.from_pretrained(str(tiny_clip_path()), **kw)


@pytest.mark.parametrize("edge", [None, 224])
def test_numpy_frames_give_the_processors_pixel_values_bit_for_bit(edge):
    import torch

    proc = _processor(edge)
    pipe = PixelPipeline(proc)
    rng = np.random.default_rng(0)
    shapes = [(3, 224, 398, 3), (2, 240, 320, 3), (2, 32, 40, 3), (2, 17, 13, 3), (1, 400, 200, 3)]
    for shape in shapes:
        for frames in (rng.integers(0, 256, shape, dtype=np.uint8), _natural(rng, *shape[:3])):
            want = proc(images=list(frames), return_tensors="pt")["pixel_values"]
            got = pipe([frames])
            assert got.dtype == want.dtype and got.shape == want.shape, shape
            assert torch.equal(got, want), shape
    # videos of different sizes go through in one call (each cropped before they are joined)
    a, b = rng.integers(0, 256, (2, 224, 398, 3), np.uint8), rng.integers(0, 256, (3, 224, 298, 3), np.uint8)
    assert torch.equal(pipe([a, b]), proc(images=list(a) + list(b), return_tensors="pt")["pixel_values"])


def test_gpu_lookup_equals_the_cpu_lookup():
    """The GPU's gather (run here on CPU tensors: CI has no GPU) gives the same values, also in half precision."""
    import torch

    pipe = PixelPipeline(_processor())
    frames = torch.from_numpy(np.random.default_rng(5).integers(0, 256, (70, 3, 32, 32), dtype=np.uint8))
    want = pipe.normalize(frames)
    assert torch.equal(pipe._normalize_torch(frames, step=16), want)
    assert torch.equal(pipe._normalize_torch(frames, torch.float16), want.to(torch.float16))


def test_torch_resize_is_within_two_levels_of_pil():
    import torch
    from PIL import Image

    rng = np.random.default_rng(1)
    worst = 0
    for (h, w), (th, tw) in [((1080, 1920), (224, 398)), ((240, 320), (224, 298)), ((32, 40), (224, 280)),
                             ((360, 640), (32, 56))]:
        frames = np.concatenate([rng.integers(0, 256, (2, h, w, 3), np.uint8), _natural(rng, 2, h, w)])
        want = np.stack([np.asarray(Image.fromarray(f).resize((tw, th), resample=3)) for f in frames])
        got = resize_to(torch.from_numpy(frames).permute(0, 3, 1, 2), th, tw).permute(0, 2, 3, 1).numpy()
        worst = max(worst, int(np.abs(got.astype(int) - want.astype(int)).max()))
    assert worst <= RESIZE_LEVELS, worst


def test_torch_frames_pixel_values_and_scores_within_tolerance(tiny_clip, tmp_path):
    import torch

    path = write_synthetic_video(tmp_path / "v.mp4", "tolerance", n_frames=16, size=96)
    frames = decode_frames(path, FrameSettings(n_frames=4, resize=None))  # 96 px: the 32 px processor resizes
    pipe = tiny_clip.pixels
    exact, approx = pipe([frames]), pipe([torch.from_numpy(frames)])
    std = min(tiny_clip.processor.image_std)
    assert (approx - exact).abs().max().item() <= RESIZE_LEVELS / 255 / std + 1e-6
    text = tiny_clip.encode_text(CAPTIONS)
    s_exact = tiny_clip.similarity(tiny_clip.encode_video([frames]), text)
    s_approx = tiny_clip.similarity(tiny_clip.encode_video([torch.from_numpy(frames)]), text)
    assert np.abs(s_exact - s_approx).max() < 1e-3


def _old_encode_video(model, videos):
    """CLIPVideoModel.encode_video as it was: PIL processor on all frames, fixed frame batches."""
    import torch

    from hardneg.models.base import l2_normalize
    from hardneg.models.clip import preprocess_frames

    frames = np.concatenate([np.asarray(v) for v in videos])
    out = []
    for i in range(0, len(frames), model.frame_batch):
        pix = preprocess_frames(model.processor, frames[i:i + model.frame_batch])
        with torch.inference_mode():
            emb = model.model.get_image_features(pixel_values=pix.to(model.device, model.model.dtype))
        out.append(getattr(emb, "pooler_output", emb).float().cpu().numpy())
    emb = l2_normalize(np.concatenate(out))
    bounds = np.cumsum([0, *[len(v) for v in videos]])
    return np.stack([emb[a:b].mean(0) for a, b in zip(bounds[:-1], bounds[1:])]).astype(np.float32)


@pytest.mark.parametrize("resize", [224, 32, None])
def test_default_decoder_scores_are_identical_to_the_previous_path(tiny_clip, tmp_path, resize):
    """Old decoder (all frames) + old preprocessing vs the new path: the same scores, exactly."""
    from test_video_sampling import old_decode_frames

    paths = [write_synthetic_video(tmp_path / f"v{i}.mp4", f"same{i}", n_frames=24, size=64) for i in range(3)]
    settings = FrameSettings(n_frames=8, resize=resize)
    old_frames = [old_decode_frames(p, settings)[0] for p in paths]
    new_frames = [decode_frames(p, settings) for p in paths]
    text = tiny_clip.encode_text(CAPTIONS)
    old = tiny_clip.similarity(_old_encode_video(tiny_clip, old_frames), text)
    new = tiny_clip.similarity(tiny_clip.encode_video(new_frames), text)
    assert np.array_equal(old, new)


def test_unsupported_processor_settings_fall_back_to_the_processor():
    proc = _processor()
    proc.do_pad = True
    assert PixelPipeline.for_processor(proc) is None
    proc = _processor()
    proc.size = {"shortest_edge": 32, "longest_edge": 64}
    assert PixelPipeline.for_processor(proc) is None


def test_torchcodec_decoder_takes_the_same_frames(tmp_path):
    """Only where torchcodec is installed and loads (it needs FFmpeg's shared libraries)."""
    try:
        from torchcodec.decoders import VideoDecoder  # noqa: F401
    except Exception as exc:  # not installed, or its FFmpeg libraries are missing
        pytest.skip(f"torchcodec unavailable: {exc}")
    from test_video_sampling import _write

    from hardneg.video import DecodeStats

    rng = np.random.default_rng(2)
    for name, kw in [("bf.mp4", {"options": {"bf": "3"}}), ("vfr.mkv", {"pts_ms": np.cumsum(rng.integers(20, 300, 40))})]:
        path = _write(tmp_path / name, **kw)
        for settings in (FrameSettings(n_frames=5, resize=None), FrameSettings(n_frames=4, fps=2.0, resize=None)):
            stats = DecodeStats()
            tc = decode_frames(path, FrameSettings(settings.n_frames, settings.fps, None, decoder="torchcodec"), stats=stats)
            av_frames = decode_frames(path, settings)
            assert stats.method == "torchcodec" and tc.shape == av_frames.shape
            assert np.abs(tc.astype(int) - av_frames.astype(int)).max() <= 1, (name, settings)  # same frames
        resized = decode_frames(path, FrameSettings(n_frames=3, resize=24, decoder="torchcodec"))
        assert np.abs(resized.astype(int) - decode_frames(path, FrameSettings(n_frames=3, resize=24)).astype(int)).max() <= RESIZE_LEVELS
