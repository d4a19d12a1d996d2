"""The Qwen2.5-VL and Video-LLaVA families: their inputs as their `transformers` processors make them, their time
positions, and a `save_pretrained` folder of each loaded by path.

(cached prefix == one forward per caption for every protocol, and the readouts, run on both in
tests/vlm/test_vlm_scoring.py, whose architectures include `tiny-vlm:qwen2.5-vl` and `tiny-vlm:video-llava`.)
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from hardneg.models import load_model, resolve
from hardneg.models.vlm.model import DEFAULT_PROMPTS, VideoLLM
from hardneg.models.vlm.families import DEFAULT_SECONDS_PER_FRAME, seconds_per_frame

CAPTIONS = ["a man opens the door", "a man closes the door slowly", "the dog runs across the park"]


@pytest.fixture(scope="module")
def frames():
    return np.random.default_rng(1).integers(0, 256, (8, 40, 56, 3), dtype=np.uint8)


@pytest.fixture(scope="module")
def qwen25():
    return load_model("tiny-vlm:qwen2.5-vl", device="cpu")


@pytest.fixture(scope="module")
def video_llava():
    return load_model("tiny-vlm:video-llava", device="cpu")


# ------------------------------------------------------------------ Qwen2.5-VL: positions spaced by time


def test_qwen25_gets_seconds_per_grid_from_the_timestamps_and_qwen2_gets_none(qwen25, frames):
    fam = qwen25.engine.family
    assert fam.timed and qwen25.engine.model.config.vision_config.tokens_per_second == 4
    default = fam.video_inputs(frames, qwen25.engine.dtype, "cpu")
    assert float(default.kwargs["second_per_grid_ts"][0]) == fam.temporal * DEFAULT_SECONDS_PER_FRAME
    timed = fam.video_inputs(frames, qwen25.engine.dtype, "cpu", timestamps=np.arange(8) * 1.5 + 0.75)
    assert float(timed.kwargs["second_per_grid_ts"][0]) == pytest.approx(fam.temporal * 1.5)
    qwen2 = load_model("tiny-vlm", device="cpu").engine.family  # Qwen2-VL's positions take no time
    assert not qwen2.timed and "second_per_grid_ts" not in qwen2.video_inputs(frames, qwen25.engine.dtype, "cpu").kwargs


def test_the_model_reads_the_frames_spacing(qwen25, frames):
    """The model takes the spacing: it moves the scores; the default equals 2 frames a second given outright."""
    qwen25.spec = DEFAULT_PROMPTS["caption-likelihood"]
    default = qwen25.score(frames, CAPTIONS)
    np.testing.assert_allclose(qwen25.score(frames, CAPTIONS, timestamps=np.arange(8) * 0.5), default, atol=1e-6)
    slow = qwen25.score(frames, CAPTIONS, timestamps=np.arange(8) * 3.0)
    assert np.abs(slow - default).max() > 1e-3


@pytest.mark.parametrize("protocol", list(DEFAULT_PROMPTS))
def test_qwen25_cached_prefix_equals_naive_with_the_videos_own_timing(qwen25, frames, protocol):
    qwen25.spec = DEFAULT_PROMPTS[protocol]
    times = np.arange(8) * 2.5 + 1.25  # 5 s per temporal step: the time positions run far past the text's
    cached = qwen25.score(frames, CAPTIONS, timestamps=times)
    np.testing.assert_allclose(cached, qwen25.score(frames, CAPTIONS, naive=True, timestamps=times), rtol=0, atol=1e-4)


@pytest.mark.parametrize("arch", ["tiny-vlm", "tiny-vlm:qwen2.5-vl"])
def test_many_frames_continue_from_the_texts_position_not_the_rope_deltas(arch):
    """64 frames: 32 temporal steps on a 4x4 merged grid, so the video's temporal positions run past the prompt
    text after it, where the model's `rope_deltas` (max + 1 - length) no longer gives the next text position."""
    m = load_model(arch, device="cpu")
    m.spec = DEFAULT_PROMPTS["choice-letter"]
    many = np.random.default_rng(3).integers(0, 256, (64, 40, 56, 3), dtype=np.uint8)
    np.testing.assert_allclose(m.score(many, CAPTIONS), m.score(many, CAPTIONS, naive=True), rtol=0, atol=1e-4)


def test_qwen25_without_the_rope_delta_is_caught(frames, likelihood_model_without_rope_delta):
    m = likelihood_model_without_rope_delta("tiny-vlm:qwen2.5-vl")
    times = np.arange(8) * 2.0
    got = m.score(frames, CAPTIONS, timestamps=times)
    assert np.abs(got - m.score(frames, CAPTIONS, naive=True, timestamps=times)).max() > 1e-3


def test_seconds_per_frame_is_a_setting_in_the_provenance(frames):
    from hardneg.models.vlm.tiny import tiny_vlm_path

    m = VideoLLM(str(tiny_vlm_path("qwen2.5-vl")), device="cpu", seconds_per_frame=2.0)
    assert m.identity()["pixels"]["seconds_per_frame"] == 2.0
    m.spec = DEFAULT_PROMPTS["yes-probability"]
    np.testing.assert_allclose(m.score(frames, CAPTIONS), m.score(frames, CAPTIONS, timestamps=np.arange(8) * 2.0),
                               atol=1e-6)
    assert "seconds_per_frame" not in load_model("tiny-vlm", device="cpu").identity()["pixels"]


@pytest.mark.parametrize("times, words", [([0.0, 1.0, 1.0, 0.5], "must not go back"), ([3.0, 2.0], "must not go back")])
def test_bad_timestamps_are_a_clear_error(times, words):
    with pytest.raises(ValueError, match=words):
        seconds_per_frame(times)
    assert seconds_per_frame([4.0]) is None and seconds_per_frame(None) is None


def test_timestamps_must_be_one_per_frame(qwen25, frames):
    qwen25.spec = DEFAULT_PROMPTS["yes-probability"]
    with pytest.raises(ValueError, match="7 frame timestamps for 8 frames"):
        qwen25.score(frames, CAPTIONS, timestamps=np.arange(7) * 0.5)


# ------------------------------------------------------------------ Video-LLaVA: shorter side, centre crop, CLS kept


def test_video_llava_pixels_are_the_centre_crop_of_the_shorter_side_resize(video_llava):
    """Frames whose shorter side already is `shortest_edge` (20) are only cropped: rows int((20-16)/2) = 2 on,
    columns int((30-16)/2) = 7 on, then CLIP-normalised (VideoLlavaVideoProcessor's resize, crop, rescale,
    normalise)."""
    fam = video_llava.engine.family
    assert (fam.shortest, fam.side, fam.patch) == (20, 16, 4)
    clip = np.random.default_rng(2).integers(0, 256, (3, 20, 30, 3), dtype=np.uint8)
    got = fam.video_inputs(clip, video_llava.engine.dtype, "cpu")
    x = got.kwargs["pixel_values_videos"].numpy()
    assert x.shape == (1, 3, 3, 16, 16)
    mean, std = np.array(fam.mean).reshape(1, 3, 1, 1), np.array(fam.std).reshape(1, 3, 1, 1)
    want = (clip[:, 2:18, 7:23].transpose(0, 3, 1, 2) / 255.0 - mean) / std
    np.testing.assert_allclose(x[0], want, atol=1e-5)
    tall = fam.video_inputs(clip.transpose(0, 2, 1, 3).copy(), video_llava.engine.dtype, "cpu")  # 30x20: rows cropped
    want_tall = (clip.transpose(0, 2, 1, 3)[:, 7:23, 2:18].transpose(0, 3, 1, 2) / 255.0 - mean) / std
    np.testing.assert_allclose(tall.kwargs["pixel_values_videos"].numpy()[0], want_tall, atol=1e-5)
    assert got.n_tokens == 3 * ((16 // 4) ** 2 + 1)  # every frame's patches and its CLS


def test_video_llava_token_count_is_what_the_model_fills(video_llava, frames):
    """One video token fewer and the model refuses: the count is the model's own, not a guess that fits."""
    eng = video_llava.engine
    video = eng.family.video_inputs(frames, eng.dtype, "cpu")
    seq = eng.sequences(DEFAULT_PROMPTS["yes-probability"], CAPTIONS[:1], video.n_tokens - 1)[0]
    import torch

    with pytest.raises(Exception, match="do not match"):
        eng._forward(torch.tensor([seq.ids]), video)


def test_video_llava_refuses_a_crop_its_tower_cannot_take(video_llava):
    from hardneg.models.vlm.families import VideoLlava

    with pytest.raises(ValueError, match="crop_size"):
        VideoLlava(video_llava.engine.model.config, {"crop_size": {"height": 224, "width": 224}})


# ------------------------------------------------------------------ both: a save_pretrained folder, by path


@pytest.mark.parametrize("arch, model_type, hub_id", [
    ("qwen2.5-vl", "qwen2_5_vl", "Qwen/Qwen2.5-VL-7B-Instruct"),
    ("video-llava", "video_llava", "LanguageBind/Video-LLaVA-7B-hf"),
])
def test_a_save_pretrained_folder_loads_by_path_through_the_registry(tmp_path, frames, arch, model_type, hub_id):
    from hardneg.models.vlm.tiny import build_tiny_vlm

    folder = build_tiny_vlm(tmp_path / f"my-{arch}", arch)  # save_pretrained of the model and the tokenizer
    assert json.loads((folder / "config.json").read_text())["model_type"] == model_type
    assert resolve(str(folder)) == ("vlm", str(folder)) and resolve(hub_id)[0] == "vlm"
    mine, builtin = load_model(str(folder), device="cpu"), load_model(f"tiny-vlm:{arch}", device="cpu")
    assert mine.adapter == "video-llm" and mine.revision == builtin.revision
    for m in (mine, builtin):
        m.spec = DEFAULT_PROMPTS["caption-likelihood"]
    np.testing.assert_allclose(mine.score(frames, CAPTIONS), builtin.score(frames, CAPTIONS), atol=1e-6)


# ------------------------------------------------------------------ the decoder's frame times reach the model


def test_the_decoders_frame_times_set_second_per_grid_ts_through_the_scorer(tmp_path):
    """A 16 s clip (16 frames at 1 fps) sampled at 8 frames: the frames are 2 s apart, not Qwen's default 0.5 s.
    The times ride on the decoded array (through the decoding pool's pickles) into the video LLM, whose scores
    then equal those of the right spacing given outright and differ from the default spacing's."""
    import pickle

    from hardneg.scoring import encode_videos
    from hardneg.video import FrameSettings, Frames, VideoFolder, VideoReport, decode_frames, write_synthetic_video

    write_synthetic_video(tmp_path / "clip.mp4", "spacing", n_frames=16, size=48, fps=1)
    settings = FrameSettings(n_frames=8, resize=None)
    frames = decode_frames(tmp_path / "clip.mp4", settings)
    assert isinstance(frames, Frames) and np.diff(frames.times) == pytest.approx([2.0] * 7)
    assert pickle.loads(pickle.dumps(frames)).times.tolist() == frames.times.tolist()

    m = load_model("tiny-vlm:qwen2.5-vl", device="cpu")
    m.spec = DEFAULT_PROMPTS["caption-likelihood"]
    report = VideoReport()
    emb, status, _ = encode_videos(m, VideoFolder(tmp_path), ["clip"], settings, None, report)
    assert status["clip"] == "ok"
    keys = m.encode_text(CAPTIONS)
    got = m.similarity(np.stack([emb["clip"]]), keys)[0]
    plain = np.asarray(frames)  # the pixels alone: no times
    right = m.score(plain, CAPTIONS, timestamps=frames.times)
    default = m.score(plain, CAPTIONS)
    np.testing.assert_allclose(got, right, atol=1e-5)
    assert np.abs(right - default).max() > 1e-3  # the spacing matters: a dropped time would be caught here
    assert m.identity()["pixels"]["time_positions"].startswith("second_per_grid_ts per video")
