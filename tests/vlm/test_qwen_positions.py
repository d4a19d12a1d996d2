"""Qwen2-VL / Qwen2.5-VL 3-D positions (`hardneg.models.vlm.positions`) against a reference written separately,
in torch, in the shape of Qwen's own function (QwenLM/Qwen2.5-VL `qwen-vl-finetune/qwenvl/data/rope2d.py`,
`get_rope_index_25`; `get_rope_index_2` for Qwen2-VL): find each `<|vision_start|>`, lay the text before it out
from max + 1, the video grid after it, the trailing text from max + 1.

The module under test walks runs of video tokens with numpy; the reference walks vision-start markers with torch
tensors (float32 time products, `.long()`), so a shared mistake would have to be made twice in two ways."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from hardneg.models.vlm.positions import mrope_positions, next_delta

START, VIDEO, END = 900, 901, 902  # token ids of <|vision_start|>, <|video_pad|>, <|vision_end|>


def reference_rope_index(input_ids: torch.Tensor, video_grid_thw: torch.Tensor, merge: int,
                         second_per_grid_ts: torch.Tensor | None, tokens_per_second: int | None,
                         start_id: int = START, video_id: int = VIDEO):
    """(3, L) positions and the delta of one unpadded row, Qwen's way."""
    ids = input_ids
    starts = torch.argwhere(ids == start_id).squeeze(1)
    n_videos = int((ids[starts + 1] == video_id).sum())
    chunks: list[torch.Tensor] = []
    st = 0
    tokens = ids.tolist()
    for v in range(n_videos):
        ed = tokens.index(video_id, st)
        t, h, w = video_grid_thw[v].tolist()
        gt, gh, gw = t, h // merge, w // merge
        text_len = ed - st
        st_idx = int(chunks[-1].max()) + 1 if chunks else 0
        chunks.append(torch.arange(text_len).view(1, -1).expand(3, -1) + st_idx)
        rng = torch.arange(gt).view(-1, 1).expand(-1, gh * gw)
        if tokens_per_second is None:  # Qwen2-VL: get_rope_index_2
            t_index = rng.flatten()
        else:  # Qwen2.5-VL: multiply first (a float32 tensor), then .long()
            t_index = (rng * second_per_grid_ts[v] * tokens_per_second).long().flatten()
        h_index = torch.arange(gh).view(1, -1, 1).expand(gt, -1, gw).flatten()
        w_index = torch.arange(gw).view(1, 1, -1).expand(gt, gh, -1).flatten()
        chunks.append(torch.stack([t_index, h_index, w_index]) + text_len + st_idx)
        st = ed + gt * gh * gw
    if st < len(tokens):
        st_idx = int(chunks[-1].max()) + 1 if chunks else 0
        chunks.append(torch.arange(len(tokens) - st).view(1, -1).expand(3, -1) + st_idx)
    pos = torch.cat(chunks, dim=1)
    return pos, int(pos.max()) + 1 - len(tokens)


def _sequence(n_before: int, grid, merge: int, n_after: int) -> list[int]:
    n_video = grid[0] * (grid[1] // merge) * (grid[2] // merge)
    return list(range(10, 10 + n_before)) + [START] + [VIDEO] * n_video + [END] + list(range(20, 20 + n_after))


SPACINGS = [None, 0.5, 1.0, 0.7, 1.3333, 2.5, 4.0 / 3.0, 0.1]  # seconds per frame; None: Qwen2-VL


@pytest.mark.parametrize("frames", [1, 2, 3, 7, 8, 16, 31, 32, 64])
@pytest.mark.parametrize("spacing", SPACINGS)
@pytest.mark.parametrize("tps", [2, 4])
def test_positions_equal_qwens_rule(frames, spacing, tps):
    merge, temporal = 2, 2
    grid = (-(-frames // temporal), 8, 12)  # patches: 4 x 6 merged tokens per temporal step
    tokens_per_second = None if spacing is None else tps
    spg = None if spacing is None else [temporal * spacing]
    for before, after in [(0, 0), (5, 0), (0, 7), (14, 40), (3, 300)]:
        ids = _sequence(before, grid, merge, after)
        want, want_delta = reference_rope_index(
            torch.tensor(ids), torch.tensor([grid]), merge,
            None if spg is None else torch.tensor(spg, dtype=torch.float32), tokens_per_second)
        got = mrope_positions(ids, VIDEO, [grid], merge, spg, tokens_per_second)
        np.testing.assert_array_equal(got, want.numpy(), err_msg=f"{frames} frames, {spacing} s, {before}+{after}")
        assert next_delta(got) == want_delta


def test_the_rule_is_not_the_installed_librarys():
    """Qwen2.5-VL, 64 frames 2.5 s apart: the text after the video starts past the last temporal position (316 here), not at `start + max(h, w)` (5.24's get_rope_index); a fractional spacing is multiplied before truncating."""
    grid, merge = (32, 8, 12), 2
    ids = _sequence(3, grid, merge, 4)
    got = mrope_positions(ids, VIDEO, [grid], merge, [5.0], 2)
    first_text_after = len(ids) - 4
    video_start = 4  # 3 text tokens + vision_start
    assert got[0, first_text_after] == video_start + 31 * 10 + 1 + 1  # vision_end after the last time step
    # 0.7 s per grid at 2 tokens a second: 1.4 per step, int(3 * 1.4) = 4 (int(0.7) * 2 * 3 would be 0)
    got = mrope_positions(_sequence(0, (4, 2, 2), merge, 0), VIDEO, [(4, 2, 2)], merge, [0.7], 2)
    assert got[0, 1:5].tolist() == [1, 2, 3, 5]


def test_a_run_that_does_not_fit_its_grid_is_an_error():
    with pytest.raises(ValueError, match="video tokens"):
        mrope_positions([START] + [VIDEO] * 5 + [END], VIDEO, [(2, 4, 4)], 2)
    with pytest.raises(ValueError, match="more videos"):
        mrope_positions([START, VIDEO, END], VIDEO, [], 2)


@pytest.mark.parametrize("arch", ["tiny-vlm", "tiny-vlm:qwen2.5-vl"])
def test_the_engine_feeds_the_model_these_positions(arch):
    """The positions every forward receives (prefix, naive) are the reference's, for the real tiny checkpoints'
    token ids, grid and time spacing (3.0 s per frame: positions spaced by time, far past the text)."""
    from hardneg.models import load_model
    from hardneg.models.vlm.model import DEFAULT_PROMPTS

    m = load_model(arch, device="cpu")
    eng, fam = m.engine, m.engine.family
    frames = np.random.default_rng(0).integers(0, 256, (16, 40, 56, 3), dtype=np.uint8)
    video = fam.video_inputs(frames, eng.dtype, "cpu", timestamps=np.arange(16) * 3.0)
    seq = eng.sequences(DEFAULT_PROMPTS["choice-letter"], ["a dog runs", "a cat sits"], video.n_tokens)[0]
    ids = torch.tensor([seq.ids])
    got = fam.position_ids(ids, None, video)[:, 0]
    cfg = eng.model.config
    want, delta = reference_rope_index(ids[0], video.kwargs["video_grid_thw"], fam.merge,
                                       video.kwargs.get("second_per_grid_ts"),
                                       getattr(cfg.vision_config, "tokens_per_second", None),
                                       cfg.vision_start_token_id, cfg.video_token_id)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert int(eng.next_text_delta(seq.ids, video)) == delta
