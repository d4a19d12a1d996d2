"""`hardneg.models.vlm.positions.transformers_positions` (the lmms-eval set's positions) against the installed
transformers' own `get_rope_index` (Qwen2-VL and Qwen2.5-VL), on prompts with a video whose time extent is shorter
and longer than its height and width, at fractional `second_per_grid_ts`; and against Qwen's rule, where it must
differ exactly when the video's time positions reach past its height and width."""

from __future__ import annotations

import types

import numpy as np
import pytest

from hardneg.models.vlm.positions import mrope_positions, next_delta, transformers_positions

VIDEO = 99
CASES = [((2, 8, 8), 0.25), ((8, 4, 6), 1.0), ((16, 2, 2), 0.5), ((3, 6, 4), 0.3333333), ((1, 2, 2), 2.0),
         ((12, 10, 4), 0.125)]


def _installed(model_cls, config, ids, grid, spg):
    import torch

    fake = types.SimpleNamespace(config=config)
    fake.get_vision_position_ids = types.MethodType(model_cls.get_vision_position_ids, fake)
    ids_t = torch.tensor([ids])
    kw = {"mm_token_type_ids": (ids_t == VIDEO).int() * 2, "video_grid_thw": torch.tensor([grid])}
    if spg is not None:
        kw["second_per_grid_ts"] = torch.tensor([spg], dtype=torch.float32)
    pos, delta = model_cls.get_rope_index(fake, ids_t, **kw)
    return pos[:, 0].numpy(), int(delta.reshape(-1)[0])


@pytest.mark.parametrize("arch", ["qwen2-vl", "qwen2.5-vl"])
def test_transformers_positions_equal_the_installed_get_rope_index(arch):
    from transformers import AutoConfig
    from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import Qwen2_5_VLModel
    from transformers.models.qwen2_vl.modeling_qwen2_vl import Qwen2VLModel

    from hardneg.models.vlm.tiny import tiny_vlm_path

    config = AutoConfig.from_pretrained(tiny_vlm_path(arch))
    timed = arch == "qwen2.5-vl"
    cls = Qwen2_5_VLModel if timed else Qwen2VLModel
    tps = float(config.vision_config.tokens_per_second) if timed else 1.0
    differ = 0
    for grid, spg in CASES:
        n = grid[0] * grid[1] * grid[2] // 4
        ids = [1, 2, 3] + [VIDEO] * n + [4, 5, 6, 7]
        want, want_delta = _installed(cls, config, ids, grid, spg if timed else None)
        got = transformers_positions(ids, VIDEO, [grid], 2, [spg] if timed else None, tps)
        assert np.array_equal(got, want), (grid, spg)
        assert next_delta(got) == want_delta
        qwen = mrope_positions(ids, VIDEO, [grid], 2, [spg] if timed else None, tps if timed else None)
        reach = qwen[0, 3:3 + n].max() - 3  # the video's time extent past its start
        past = reach >= max(grid[1], grid[2]) // 2  # its time positions reach past height and width
        assert (not np.array_equal(got, qwen)) == bool(past), (grid, spg)
        differ += bool(past)
    assert 0 < differ < len(CASES)  # both kinds of video were tried
