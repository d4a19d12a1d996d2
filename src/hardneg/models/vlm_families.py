"""What differs between video-LLM architectures: frames -> pixel tensors, video-token count, extra inputs.

A *family* turns the project's own decoded frames ((T, H, W, 3) uint8, `hardneg.video.FrameSettings`)
into the inputs its `transformers` model class takes for a video, as that class's video processor
lays them out, and says how many video tokens the prompt holds. The pixels are made here, in torch,
rather than by the processor's video processor, for two reasons: `transformers` video processors
need torchvision (not a dependency of this package), and their defaults change between releases
(Qwen2-VL's frame cap, LLaVA's crops), while scores must not. What each family reproduces is named
in its docstring (the `transformers` file and function); docs/models.md says how to add a family.

The prompt text, the chat template and the tokenizer are always the checkpoint's own.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)


@dataclass
class VideoInputs:
    """One video as a model takes it: the forward's video keyword arguments and the number of video tokens."""

    kwargs: dict[str, Any]
    n_tokens: int


def _resize(frames, height: int, width: int, torch, device="cpu"):
    """(T, H, W, 3) uint8 -> (T, 3, height, width) float32 in [0, 1] on `device` (bicubic, antialiased, as PIL's
    resize); made on the model's device, so a GPU does the resizing."""
    x = torch.as_tensor(np.ascontiguousarray(frames)).to(device).permute(0, 3, 1, 2).float()
    if x.shape[-2:] != (height, width):
        x = torch.nn.functional.interpolate(x, size=(height, width), mode="bicubic", antialias=True, align_corners=False)
    return (x.clamp(0, 255).round() / 255.0)


def _normalize(x, mean, std, torch):
    m = torch.tensor(mean, dtype=x.dtype, device=x.device).view(1, 3, 1, 1)
    s = torch.tensor(std, dtype=x.dtype, device=x.device).view(1, 3, 1, 1)
    return (x - m) / s


class Family:
    """Base: `model_types` it serves, the video token, `video_inputs(frames)`; `mrope` for 3-D rotary positions."""

    name = "base"
    model_types: tuple[str, ...] = ()
    mrope = False  # True: positions are (3, B, L) and continue from the model's rope_deltas (Qwen2-VL)

    def __init__(self, config, settings: dict[str, Any]):
        self.config = config
        self.settings = settings
        self.mean = tuple(settings.get("image_mean") or self.default_mean)
        self.std = tuple(settings.get("image_std") or self.default_std)

    default_mean, default_std = CLIP_MEAN, CLIP_STD

    def video_inputs(self, frames, dtype, device) -> VideoInputs:
        raise NotImplementedError

    def identity(self) -> dict[str, Any]:
        """What fixes the pixels (recorded in the scores' provenance)."""
        return {"family": self.name, "mean": list(self.mean), "std": list(self.std), **self.size_identity()}

    def size_identity(self) -> dict[str, Any]:
        return {}


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


class QwenVL(Family):
    """Qwen2-VL / Qwen2.5-VL: frames resized by `smart_resize`, normalised, padded to a multiple of the temporal
    patch by repeating the last frame, and flattened into patches (transformers `models/qwen2_vl/
    video_processing_qwen2_vl.py`, `Qwen2VLVideoProcessor.patchify`); `video_grid_thw` gives the grid, and the
    prompt holds grid_t * grid_h * grid_w / merge_size**2 video tokens. Positions are 3-D (M-RoPE)."""

    name = "qwen-vl"
    model_types = ("qwen2_vl", "qwen2_5_vl")
    mrope = True

    def __init__(self, config, settings):
        super().__init__(config, settings)
        vc = config.vision_config
        self.patch = int(getattr(vc, "patch_size", 14))
        self.temporal = int(getattr(vc, "temporal_patch_size", 2))
        self.merge = int(getattr(vc, "spatial_merge_size", 2))
        size = settings.get("size") or {}
        self.min_pixels = int(settings.get("min_pixels") or size.get("shortest_edge") or 128 * 28 * 28)
        self.max_pixels = int(settings.get("max_pixels") or size.get("longest_edge") or 768 * 28 * 28)

    def size_identity(self):
        return {"min_pixels": self.min_pixels, "max_pixels": self.max_pixels, "patch": self.patch,
                "temporal_patch": self.temporal, "merge": self.merge}

    def video_inputs(self, frames, dtype, device):
        import torch

        t, h, w = len(frames), frames.shape[1], frames.shape[2]
        rh, rw = smart_resize(h, w, self.patch * self.merge, self.min_pixels, self.max_pixels)
        x = _normalize(_resize(frames, rh, rw, torch, device), self.mean, self.std, torch)  # (T, C, H, W)
        if pad := -t % self.temporal:
            x = torch.cat([x, x[-1:].expand(pad, -1, -1, -1)])
        gt, gh, gw = x.shape[0] // self.temporal, rh // self.patch, rw // self.patch
        p, m = self.patch, self.merge
        x = x.view(gt, self.temporal, 3, gh // m, m, p, gw // m, m, p)
        x = x.permute(0, 3, 6, 4, 7, 2, 1, 5, 8).reshape(gt * gh * gw, 3 * self.temporal * p * p)
        grid = torch.tensor([[gt, gh, gw]], dtype=torch.long, device=device)
        return VideoInputs({"pixel_values_videos": x.to(device, dtype), "video_grid_thw": grid},
                           gt * gh * gw // (m * m))


class LlavaVideo(Family):
    """LLaVA-OneVision and LLaVA-NeXT-Video: every frame resized to the vision tower's square input and
    normalised; `pixel_values_videos` is (1, T, 3, S, S). The video features are pooled 2x2 per frame:
    T * ceil(P/2)**2 tokens, plus one newline token for OneVision (transformers `models/llava_onevision/
    processing_llava_onevision.py` and `models/llava_next_video/processing_llava_next_video.py`,
    `replace_video_token`)."""

    name = "llava-video"
    model_types = ("llava_onevision", "llava_next_video")

    def __init__(self, config, settings):
        super().__init__(config, settings)
        vc = config.vision_config
        self.side = int(getattr(vc, "image_size", 384))
        self.patch = int(getattr(vc, "patch_size", 14))
        self.newline = config.model_type == "llava_onevision"
        if config.model_type == "llava_onevision" and not settings.get("image_mean"):
            self.mean, self.std = (0.5, 0.5, 0.5), (0.5, 0.5, 0.5)  # SigLIP's, as the OneVision checkpoints' configs

    def size_identity(self):
        return {"side": self.side, "patch": self.patch}

    def video_inputs(self, frames, dtype, device):
        import torch

        x = _normalize(_resize(frames, self.side, self.side, torch, device), self.mean, self.std, torch)
        per_side = self.side // self.patch
        pooled = math.ceil(per_side / 2) ** 2 if self.newline else (per_side * per_side) // 4
        n = len(frames) * pooled + (1 if self.newline else 0)
        return VideoInputs({"pixel_values_videos": x[None].to(device, dtype)}, n)


FAMILIES: tuple[type[Family], ...] = (QwenVL, LlavaVideo)


def family_for(config) -> type[Family] | None:
    """The family serving `config.model_type`, or None."""
    for fam in FAMILIES:
        if config.model_type in fam.model_types:
            return fam
    return None


def supported_model_types() -> list[str]:
    return [t for fam in FAMILIES for t in fam.model_types]


def processor_settings(model_id: str, revision: str | None = None) -> dict[str, Any]:
    """The checkpoint's video (else image) preprocessor settings: mean, std, size, pixel bounds ({} if none)."""
    from transformers.utils import cached_file

    for name in ("video_preprocessor_config.json", "preprocessor_config.json"):
        try:
            path = cached_file(model_id, name, revision=revision, _raise_exceptions_for_missing_entries=False)
        except Exception:  # no such file, or offline: the family's defaults
            path = None
        if path:
            with open(path, encoding="utf-8") as f:
                return json.load(f)
    return {}


__all__ = ["FAMILIES", "Family", "LlavaVideo", "QwenVL", "VideoInputs", "family_for", "processor_settings",
           "smart_resize", "supported_model_types"]
