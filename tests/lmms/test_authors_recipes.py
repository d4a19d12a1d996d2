"""The `authors` protocol set takes the authors' recipe per model family where the release has a script for it
(issue 40, item 3): TempCompass's run_qwen2_vl.py (Qwen2-VL; borrowed for Qwen2.5-VL) and
run_video_llava/inference_dataset.py (Video-LLaVA: the llava_v1 system prompt, sampling at temperature 0.1); any
other family borrows run_qwen2_vl.py's prompt and greedy decoding and says so. Sampling is seeded and recorded."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from hardneg import benchmarks
from hardneg.video import decode_frames, write_video

#: conv_templates["llava_v1"].system, run_video_llava/llava/conversation.py (github llyx97/TempCompass), as read
LLAVA_V1 = ("A chat between a curious human and an artificial intelligence assistant. The assistant gives helpful, "
            "detailed, and polite answers to the human's questions.")


def _authors(model_type):
    return benchmarks.get("tempcompass").vlm_for("authors").for_model_type(model_type)


def test_each_family_takes_its_own_script_or_says_which_it_borrowed():
    qwen = _authors("qwen2_vl")
    assert qwen.source.startswith("TempCompass run_qwen2_vl.py inference_single_video")
    assert (qwen.system, qwen.temperature, qwen.dtype, qwen.max_new_tokens) == (None, 0.0, "bfloat16", 128)
    assert (qwen.frames.fps, qwen.frames.recipe, qwen.frames.pixels) == (1.0, "qwen-vl-utils", (128 * 28 * 28, 720 * 720))
    assert _authors("qwen2_5_vl").source.startswith("borrowed: TempCompass run_qwen2_vl.py")
    llava = _authors("video_llava")
    assert llava.source.startswith("TempCompass run_video_llava/inference_dataset.py inference_single_video")
    assert (llava.system, llava.temperature, llava.top_k, llava.seed) == (LLAVA_V1, 0.1, 50, 0)
    assert llava.prompt == "{video}\n{question}\nPlease directly give the best option:"  # '<video>\n' + inp
    assert llava.answers.strip and llava.answers.undecided == "wrong"
    assert "sampling: temperature 0.1, top_k 50" in llava.decoding()
    other = _authors("llava_onevision")
    assert other.source.startswith("borrowed (the release has no script for this model family)")
    assert (other.system, other.temperature, other.frames) == (None, 0.0, None)
    # the lmms-eval and default sets are not touched by the authors' recipes
    assert benchmarks.get("tempcompass").vlm_for("lmms-eval").for_model_type("video_llava").temperature == 0.0


def test_the_qwen_recipe_frames_are_qwen_vl_utils_at_one_frame_per_second(tmp_path):
    """run_qwen2_vl.py's video element {"max_pixels": 720*720, "fps": 1.0} through qwen-vl-utils' own fetch_video."""
    vp = pytest.importorskip("qwen_vl_utils.vision_process")
    import torch

    rng = np.random.default_rng(3)
    path = tmp_path / "c.mp4"
    write_video(path, [rng.integers(0, 255, (48, 64, 3), dtype=np.uint8) for _ in range(40)], fps=4)  # 10 s
    want, _ = vp.fetch_video({"video": str(path), "fps": 1.0, "max_pixels": 720 * 720}, return_video_sample_fps=True)
    got = np.asarray(decode_frames(path, _authors("qwen2_vl").frames))
    assert got.shape[0] == 10  # one frame a second
    assert np.array_equal(got, want.round().to(torch.uint8).permute(0, 2, 3, 1).numpy())


@pytest.mark.slow
def test_video_llava_answers_are_sampled_seeded_and_recorded():
    from hardneg.models import load_model

    m = load_model("tiny-vlm:video-llava", device="cpu")
    spec = m.use_protocol(benchmarks.get("tempcompass"), protocol_set="authors")
    assert spec.system == LLAVA_V1 and LLAVA_V1 in m.engine.render(spec).before_video
    frames = np.random.default_rng(0).integers(0, 255, (8, 32, 32, 3), dtype=np.uint8)
    question = "Which caption matches the video better?\nCaption A: A man runs left.\nCaption B: A man runs right."
    first, again = (m.engine.generate(frames, spec, question) for _ in range(2))
    assert first == again  # the same seed, the same answer, whatever ran before
    other = [m.engine.generate(frames, dataclasses.replace(spec, seed=s), question) for s in (1, 2)]
    greedy = m.engine.generate(frames, dataclasses.replace(spec, temperature=0.0), question)
    assert any(o != first for o in other + [greedy])  # the answer depends on the seed (and is not the greedy one)
    ident = m.identity()
    assert (ident["temperature"], ident["top_k"], ident["seed"]) == (0.1, 50, 0)
    assert ident["decoding"] == spec.decoding() and ident["prompt_source"] == spec.source
