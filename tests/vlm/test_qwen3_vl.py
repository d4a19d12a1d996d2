"""Qwen3-VL / Qwen3.5 (`hardneg.models.vlm.qwen3`): Qwen's published video layout and its 3-D positions.

Qwen's processor (transformers 4.57 `processing_qwen3_vl.py`, `Qwen3VLProcessor.__call__`, contributed by Qwen)
replaces the template's whole `<|vision_start|><|video_pad|><|vision_end|>` by, per temporal step,
`<{t:.1f} seconds><|vision_start|>` + the step's video tokens + `<|vision_end|>`, t the mean time of the step's
frames (`_calculate_timestamps`: the frame times, padded by repeating the last, averaged over each
`temporal_patch_size` pair). Both facts are tested: the installed 5.24 processor departs from it (it keeps the
outer markers), and our ids follow the published layout, built here from the frame times and the grid alone,
tokenised in one call on the whole conversation. The positions the model's language model receives equal an
independent port of Qwen's rule (text one step per token; each frame's h x w merged tokens at (s, s + row,
s + col) with s the next text position; text after a frame at the frame's largest position + 1).
"""

from __future__ import annotations

import numpy as np
import pytest

from hardneg.models.vlm.model import DEFAULT_PROMPTS, VideoLLM
from hardneg.models.vlm.tiny import tiny_vlm_path
from waves import arch_params

ARCHS = ("qwen3-vl", "qwen3.5", "qwen3-vl-moe", "qwen3.5-moe", "qwen4-exp")
_LOADED: dict = {}


def model(arch):
    if arch not in _LOADED:
        _LOADED[arch] = VideoLLM(str(tiny_vlm_path(arch)), device="cpu")
    return _LOADED[arch]


def published_block(times, grid_hw: int, temporal: int = 2) -> str:
    """Qwen's placeholder for one video: written from the description above (not from our code)."""
    t = list(times) + [times[-1]] * (-len(times) % temporal)
    steps = [(t[i] + t[i + temporal - 1]) / 2 for i in range(0, len(t), temporal)]
    return "".join(f"<{s:.1f} seconds><|vision_start|>" + "<|video_pad|>" * grid_hw + "<|vision_end|>" for s in steps)


def port_positions(ids, video_pad: int, h: int, w: int) -> np.ndarray:
    """(3, L) Qwen3-VL positions for ids holding frames of h x w merged video tokens."""
    out, nxt, i = [], 0, 0
    while i < len(ids):
        if ids[i] == video_pad:
            for r in range(h):
                for c in range(w):
                    out.append((nxt, nxt + r, nxt + c))
            nxt += max(h, w)
            i += h * w
        else:
            out.append((nxt, nxt, nxt))
            nxt += 1
            i += 1
    return np.asarray(out).T


@pytest.fixture(scope="module")
def frames():
    return np.random.default_rng(4).integers(0, 256, (8, 40, 56, 3), dtype=np.uint8)


TIMES = [0.1, 0.7, 1.1, 1.7, 2.1, 2.7, 3.1, 3.7]  # steps' mean times 0.4, 1.4, 2.4, 3.4


@pytest.mark.parametrize("arch", arch_params(ARCHS))
def test_ids_follow_qwens_published_layout(arch, frames):
    m = model(arch)
    eng = m.engine
    video = eng.family.video_inputs(frames, eng.dtype, "cpu", timestamps=TIMES)
    grid = video.kwargs["video_grid_thw"][0].tolist()
    per_frame = grid[1] * grid[2] // 4
    spec = DEFAULT_PROMPTS["yes-probability"]
    seq = eng.sequences(spec, ["a man opens the door."], video.n_tokens, video)[0]
    msgs = [{"role": "user", "content": [{"type": "video"}, {"type": "text", "text": spec.prompt.split("{video}")[1]
                                                                     .replace("{caption}", "a man opens the door.")}]}]
    text = eng.tok.apply_chat_template(msgs, chat_template=eng.template, tokenize=False, add_generation_prompt=True)
    text = text.replace("<|vision_start|><|video_pad|><|vision_end|>", published_block(TIMES, per_frame))
    assert "<0.4 seconds>" in text and "<3.4 seconds>" in text
    assert seq.ids == eng.tok(text, add_special_tokens=False)["input_ids"]


@pytest.mark.parametrize("arch", arch_params(ARCHS))
def test_the_installed_processor_nests_the_markers(arch, frames):
    """The departure, as a fact: 5.24's processor on the template's region keeps the outer markers. (The metadata as
    a user builds it: TIMES are frames 1, 7, 11, ... of a 10 fps stream.)"""
    from transformers.video_utils import VideoMetadata

    proc = model(arch).engine.family.processor
    user = VideoMetadata(total_num_frames=40, fps=10.0, frames_indices=[round(t * 10) for t in TIMES], duration=4.0)
    out = proc(text=["<|vision_start|><|video_pad|><|vision_end|>"], videos=[frames],
               video_metadata=[user], do_sample_frames=False, return_tensors="pt")
    toks = proc.tokenizer.convert_ids_to_tokens(out["input_ids"][0].tolist())
    assert toks[0] == "<|vision_start|>" and toks[1] != "<|vision_start|>" and toks[-1] == "<|vision_end|>"
    assert toks.count("<|vision_start|>") == 4 + 1  # 4 temporal steps, plus the template's own, nested


@pytest.mark.parametrize("arch", arch_params(ARCHS))
def test_positions_equal_a_port_of_qwens_rule(arch, frames):
    import torch

    m = model(arch)
    eng = m.engine
    video = eng.family.video_inputs(frames, eng.dtype, "cpu", timestamps=TIMES)
    grid = video.kwargs["video_grid_thw"][0].tolist()
    spec = DEFAULT_PROMPTS["caption-likelihood"]
    seq = eng.sequences(spec, ["a man opens the door."], video.n_tokens, video)[0]
    seen = {}
    lm = eng.model.model.language_model
    hook = lm.register_forward_pre_hook(lambda mod, a, kw: seen.update(pos=kw.get("position_ids")), with_kwargs=True)
    try:
        t = torch.tensor([seq.ids])
        eng._forward(t, video, attention_mask=torch.ones_like(t))
    finally:
        hook.remove()
    got = seen["pos"][-3:, 0].numpy()
    want = port_positions(seq.ids, eng.video_token_id, grid[1] // 2, grid[2] // 2)
    np.testing.assert_array_equal(got, want)
    # and the cached path continues from there: its scores equal the naive forward's
    np.testing.assert_allclose(eng.score(frames, ["a man", "the dog runs"], spec, timestamps=TIMES),
                               eng.score(frames, ["a man", "the dog runs"], spec, timestamps=TIMES, naive=True),
                               rtol=0, atol=1e-5)
