"""Which verified tiny types run their per-type tests in the quick group: the issue's first wave (the types people
run most, issue 39); every other verified type runs the same tests in the slow group, so the quick suite stays
quick as types are added."""

from __future__ import annotations

import pytest

from hardneg.models.vlm.tiny import MODEL_TYPES

FIRST_WAVE = {"qwen2_vl", "qwen2_5_vl", "llava_onevision", "llava_next_video", "video_llava", "qwen3_vl", "qwen3_5",
              "internvl", "glm4v", "glm46v", "gemma4", "smolvlm", "video_llama_3", "perception_lm", "minicpmv4_6",
              "molmo2"}


def arch_params(archs) -> list:
    """`archs` (tiny architecture names) as pytest parameters, those outside the first wave marked slow."""
    return [a if MODEL_TYPES[a] in FIRST_WAVE else pytest.param(a, marks=pytest.mark.slow) for a in archs]
