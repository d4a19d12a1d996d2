"""Qwen3-VL, Qwen3.5 and Qwen4-Exp: the generic family with Qwen's published video layout.

Qwen's processor (the `Qwen3VLProcessor.__call__` Qwen contributed to transformers 4.57, `processing_qwen3_vl.py`;
the same code in Qwen's and lmms-eval's own wrappers) replaces the chat template's whole video region,
`<|vision_start|><|video_pad|><|vision_end|>`, by one block per temporal step: `<{t:.1f} seconds>` (the step's
mean frame time, `_calculate_timestamps`), then `<|vision_start|>`, the step's video tokens, `<|vision_end|>`.
The installed 5.24 processor (`replace_video_token`) replaces the video token alone, so the template's outer
`<|vision_start|>` and `<|vision_end|>` stay around the whole block: nested markers the model was not trained on.
This family keeps Qwen's layout: its processor is called on the bare video token, which gives exactly the
published block, and that block replaces the whole region (tests/vlm/test_qwen3_vl.py checks both facts). The
3-D positions are the model's own (`get_rope_index`: each frame's tokens on its own time step, the timestamp text
between them), checked against an independent port of Qwen's rule in the same test.
"""

from __future__ import annotations

from hardneg.models.vlm.generic import Generic, video_region


class Qwen3VL(Generic):
    """Generic, but the region is Qwen's `<|vision_start|><|video_pad|><|vision_end|>` and the processor expands
    the video token alone (the published replacement of the whole region)."""

    name = "qwen3-vl"
    #: Qwen4-Exp too: its processor is `Qwen3VLProcessor` and its model expects the same per-step layout
    #: (`modeling_qwen4_exp.py`, `get_rope_index` docstring: "<t1> <vision_start> <frame1> <vision_end> <t2> ...")
    model_types = ("qwen3_vl", "qwen3_vl_moe", "qwen3_5", "qwen3_5_moe", "qwen4_exp")

    def __init__(self, config, settings, processor, tokenizer, template: str):
        super().__init__(config, settings, processor, tokenizer, template)
        start = getattr(processor, "vision_start_token", "<|vision_start|>")
        end = getattr(processor, "vision_end_token", "<|vision_end|>")
        triple = start + self.video_token + end
        if video_region(tokenizer, template, self.video_token) != triple:
            raise ValueError(f"model_type {config.model_type!r}: the chat template does not render the video as "
                             f"{triple!r}; Qwen's layout cannot be applied")
        self.region = triple
        self.expand = self.video_token  # what the processor is given: its block replaces the whole region


__all__ = ["Qwen3VL"]
