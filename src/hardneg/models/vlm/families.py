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

from hardneg.frame_recipes import smart_resize  # noqa: F401 (Qwen's frame size, one implementation)
from hardneg.video import UnscorableVideo

CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)


@dataclass
class VideoInputs:
    """One video as a model takes it: the forward's video keyword arguments and the number of video tokens;
    `expansion`: the token ids the template's video region becomes (the generic family, from the model's own
    processor), else None: `n_tokens` video tokens."""

    kwargs: dict[str, Any]
    n_tokens: int
    expansion: list[int] | None = None


def _resize(frames, height: int, width: int, torch, device="cpu", levels: bool = False):
    """(T, H, W, 3) uint8 -> (T, 3, height, width) float32 in [0, 1] on `device` (bicubic, antialiased, as PIL's
    resize), clamped and rounded to whole levels as a processor resizing uint8 frames gives them; made on the model's
    device, so a GPU does the resizing. `levels`: the values in 0..255 as a processor resizing *float* frames gives
    them (lmms-eval's wrappers hand it qwen-vl-utils' float tensors): not clamped, not rounded, not rescaled."""
    x = torch.as_tensor(np.ascontiguousarray(frames)).to(device).permute(0, 3, 1, 2).float()
    if x.shape[-2:] != (height, width):
        x = torch.nn.functional.interpolate(x, size=(height, width), mode="bicubic", antialias=True, align_corners=False)
    if levels:
        return x
    return (x.clamp(0, 255).round() / 255.0)


def _normalize_levels(x, mean, std, rescale_factor: float, torch):
    """Rescale and normalise 0..255 values in one step, as transformers' fast processors do
    (`_fuse_mean_std_and_rescale_factor`: mean and std times 1 / rescale_factor, then `(x - mean) / std`): the same
    float32 values, bit for bit."""
    m = (torch.tensor(mean) * (1.0 / rescale_factor)).to(x.device, x.dtype).view(1, 3, 1, 1)
    s = (torch.tensor(std) * (1.0 / rescale_factor)).to(x.device, x.dtype).view(1, 3, 1, 1)
    return (x - m) / s


def _normalize(x, mean, std, torch):
    m = torch.tensor(mean, dtype=x.dtype, device=x.device).view(1, 3, 1, 1)
    s = torch.tensor(std, dtype=x.dtype, device=x.device).view(1, 3, 1, 1)
    return (x - m) / s


class Family:
    """Base: `model_types` it serves, the video token, `video_inputs(frames)`; `mrope` for 3-D rotary positions."""

    name = "base"
    model_types: tuple[str, ...] = ()
    mrope = False  # True: positions are (3, B, L), given by `position_ids` / `next_text_delta` (Qwen2-VL)

    def __init__(self, config, settings: dict[str, Any]):
        self.config = config
        self.settings = settings
        self.mean = tuple(settings.get("image_mean") or self.default_mean)
        self.std = tuple(settings.get("image_std") or self.default_std)

    default_mean, default_std = CLIP_MEAN, CLIP_STD

    def video_inputs(self, frames, dtype, device, timestamps=None) -> VideoInputs:
        """`timestamps`: the sampled frames' times in seconds, when known (families that time their positions use
        them; the others ignore them)."""
        raise NotImplementedError

    def position_ids(self, ids, mask, video):
        """Explicit position ids for a forward over `ids` ((B, L) tensor; `mask` (B, L) or None) with `video`,
        or None: the model's own positions (1-D families)."""
        return None

    def next_text_delta(self, ids: list[int], video):
        """(1,) tensor: the next text token's position after `ids` minus its 1-D index, or None (1-D families)."""
        return None

    def identity(self) -> dict[str, Any]:
        """What fixes the pixels (recorded in the scores' provenance)."""
        return {"family": self.name, "mean": list(self.mean), "std": list(self.std), **self.size_identity()}

    def size_identity(self) -> dict[str, Any]:
        return {}


#: Qwen's default sampling rate, 2 frames per second (qwen-vl-utils `vision_process.py`, `FPS = 2.0`; the
#: `fps=2.0` default of transformers 4.5x's `Qwen2_5_VLProcessor.__call__`): 0.5 s between frames, so one
#: temporal grid step (2 frames) is 1 s, the value Qwen2.5-VL's `get_rope_index` also falls back to
DEFAULT_SECONDS_PER_FRAME = 0.5


def seconds_per_frame(timestamps) -> float | None:
    """The sampled frames' spacing in seconds as the model's own processor reckons it, or None (unknown: fewer than
    two distinct times). transformers' `VideoMetadata.sampled_fps` is frames sampled / total frames x the video's
    fps, i.e. frames / duration, so one frame stands for duration / frames seconds; for frames at the midpoints of
    uniform segments that is their spacing, (last - first) / (n - 1).

    A clip shorter than the request (fewer frames than asked, or too few left after `--fps`) comes back from the
    decoder with frames repeated (`hardneg.video.uniform_indices`): its times repeat. Its duration is then its k
    distinct frames times their spacing, and the n frames given stand for duration / n seconds each, the same
    frames / duration rule. Times that go back are an error."""
    if timestamps is None or len(timestamps) < 2:
        return None
    t = np.asarray(timestamps, np.float64).reshape(-1)
    if not (np.isfinite(t).all() and (np.diff(t) >= 0).all()):
        raise UnscorableVideo(f"frame timestamps must not go back (seconds, one per frame), got {t[:6].tolist()}")
    if (np.diff(t) > 0).all():
        return float((t[-1] - t[0]) / (len(t) - 1))
    distinct = np.unique(t)
    if len(distinct) < 2:
        return None
    duration = (distinct[-1] - distinct[0]) * len(distinct) / (len(distinct) - 1)
    return float(duration / len(t))


class QwenVL(Family):
    """Qwen2-VL / Qwen2.5-VL: frames resized by `smart_resize`, normalised, padded to a multiple of the temporal
    patch by repeating the last frame, and flattened into patches (transformers `models/qwen2_vl/
    video_processing_qwen2_vl.py`, `Qwen2VLVideoProcessor.patchify`); `video_grid_thw` gives the grid, and the
    prompt holds grid_t * grid_h * grid_w / merge_size**2 video tokens. Positions are 3-D (M-RoPE).

    Qwen2.5-VL also spaces its temporal positions by time: `second_per_grid_ts` = temporal_patch_size / the
    sampled frames' rate (transformers `models/qwen2_5_vl/processing_qwen2_5_vl.py`, `_process_videos`; read by
    `modeling_qwen2_5_vl.py`, `get_rope_index`, times `vision_config.tokens_per_second`). It is passed whenever
    the config has `tokens_per_second` (the model reads it): from the frames' timestamps when the caller gives
    them, else from `settings["seconds_per_frame"]`, else Qwen's default of 2 frames per second."""

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
        self.timed = getattr(vc, "tokens_per_second", None) is not None  # Qwen2.5-VL: positions spaced by time
        self.tokens_per_second = float(vc.tokens_per_second) if self.timed else None
        self.video_token_id = int(getattr(config, "video_token_id", None) or getattr(config, "video_token_index"))
        self.seconds_per_frame = float(settings.get("seconds_per_frame") or DEFAULT_SECONDS_PER_FRAME)
        #: "qwen" (Qwen's published rule, the default) or "transformers" (the installed transformers 5.24's
        #: Qwen2.5-VL `get_rope_index`; a protocol set's `positions`, lmms-eval's)
        self.position_rule = "qwen"
        if not self.seconds_per_frame > 0:
            raise ValueError(f"seconds_per_frame must be positive, got {self.seconds_per_frame!r}")

    def _positions(self, ids, video):
        from hardneg.models.vlm.positions import mrope_positions

        grids = video.kwargs["video_grid_thw"].tolist() if video is not None else []
        spg = video.kwargs.get("second_per_grid_ts") if video is not None else None
        if self.position_rule == "transformers":  # the lmms-eval protocol set: what lmms-eval's wrapper runs
            from hardneg.models.vlm.positions import transformers_positions

            return transformers_positions(ids, self.video_token_id, grids, self.merge,
                                          None if spg is None else spg.tolist(), self.tokens_per_second or 1.0)
        return mrope_positions(ids, self.video_token_id, grids, self.merge,
                               None if spg is None else spg.tolist(), self.tokens_per_second)

    def position_ids(self, ids, mask, video):
        """(3, B, L) positions by Qwen's rule (`hardneg.models.vlm.positions`), never the installed
        `get_rope_index`: each row holds one video (right padding, masked out, gets the positions after)."""
        import torch

        rows = ids.tolist()
        lengths = [len(r) for r in rows] if mask is None else mask.sum(1).tolist()
        out = torch.zeros((3, len(rows), ids.shape[1]), dtype=torch.long)
        for b, (row, n) in enumerate(zip(rows, lengths)):
            one = None if video is None else type(video)({k: v[b:b + 1] if k in ("video_grid_thw", "second_per_grid_ts")
                                                          else v for k, v in video.kwargs.items()}, video.n_tokens)
            pos = torch.as_tensor(self._positions(row[:n], one))
            out[:, b, :n] = pos
            if n < len(row):  # padding: continue past the real tokens (masked, never read)
                out[:, b, n:] = torch.arange(len(row) - n) + (int(pos.max()) + 1 if n else 0)
        return out.to(ids.device)

    def next_text_delta(self, ids, video):
        """Qwen's `mrope_position_deltas`: the text after `ids` continues at their largest position + 1."""
        import torch

        from hardneg.models.vlm.positions import next_delta

        return torch.tensor([next_delta(self._positions(list(ids), video))])

    def size_identity(self):
        got = {"min_pixels": self.min_pixels, "max_pixels": self.max_pixels, "patch": self.patch,
               "temporal_patch": self.temporal, "merge": self.merge}
        if self.position_rule != "qwen":
            got["position_rule"] = (f"{self.position_rule}: the installed transformers' get_rope_index (text after a "
                                    "video at start + max(h, w)), not Qwen's published rule")
        if self.timed:  # the default spacing, unless a video's own timestamps are given
            got["seconds_per_frame"] = self.seconds_per_frame
            got["tokens_per_second"] = self.tokens_per_second
            got["time_positions"] = ("second_per_grid_ts per video = temporal_patch x the mean spacing of the frame "
                                     "times hardneg.video.decode_frames sampled (seconds_per_frame when unknown)")
        return got

    def video_inputs(self, frames, dtype, device, timestamps=None):
        import torch

        t, h, w = len(frames), frames.shape[1], frames.shape[2]
        rh, rw = smart_resize(h, w, self.patch * self.merge, self.min_pixels, self.max_pixels)
        if getattr(self, "float_frames", False):
            # frames a qwen-vl-utils recipe made reach the processor as floats (lmms-eval's wrappers): a second resize
            # (not a multiple of this model's factor) and the normalisation as the processor makes them from floats
            x = _normalize_levels(_resize(frames, rh, rw, torch, device, levels=True), self.mean, self.std,
                                  float(self.settings.get("rescale_factor") or 1 / 255), torch)
        else:
            x = _normalize(_resize(frames, rh, rw, torch, device), self.mean, self.std, torch)  # (T, C, H, W)
        if pad := -t % self.temporal:
            x = torch.cat([x, x[-1:].expand(pad, -1, -1, -1)])
        gt, gh, gw = x.shape[0] // self.temporal, rh // self.patch, rw // self.patch
        p, m = self.patch, self.merge
        x = x.view(gt, self.temporal, 3, gh // m, m, p, gw // m, m, p)
        x = x.permute(0, 3, 6, 4, 7, 2, 1, 5, 8).reshape(gt * gh * gw, 3 * self.temporal * p * p)
        grid = torch.tensor([[gt, gh, gw]], dtype=torch.long, device=device)
        kwargs = {"pixel_values_videos": x.to(device, dtype), "video_grid_thw": grid}
        if timestamps is not None and len(timestamps) != t:
            raise ValueError(f"{len(timestamps)} frame timestamps for {t} frames: give one time (seconds) per frame")
        if self.timed:
            step = seconds_per_frame(timestamps) or self.seconds_per_frame
            kwargs["second_per_grid_ts"] = torch.tensor([self.temporal * step], dtype=torch.float32, device=device)
        return VideoInputs(kwargs, gt * gh * gw // (m * m))


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

    def video_inputs(self, frames, dtype, device, timestamps=None):
        import torch

        x = _normalize(_resize(frames, self.side, self.side, torch, device), self.mean, self.std, torch)
        per_side = self.side // self.patch
        pooled = math.ceil(per_side / 2) ** 2 if self.newline else (per_side * per_side) // 4
        n = len(frames) * pooled + (1 if self.newline else 0)
        return VideoInputs({"pixel_values_videos": x[None].to(device, dtype)}, n)


class VideoLlava(Family):
    """Video-LLaVA: every frame resized so that its shorter side is `size["shortest_edge"]` (the longer side
    int(S * long / short), bicubic), centre-cropped to the vision tower's square input (top = int((H - S) / 2)),
    normalised with CLIP's mean and std; `pixel_values_videos` is (1, T, 3, S, S) (transformers `models/
    video_llava/video_processing_video_llava.py`, `VideoLlavaVideoProcessor`: resize shortest edge, centre crop;
    the crop offsets as `image_processing_backends.py`, `center_crop`). Every frame's patch features *and* its
    CLS feature reach the LLM (`modeling_video_llava.py`, `get_video_features` drops no token, unlike images):
    T * ((S / P)**2 + 1) video tokens (`processing_video_llava.py`, `replace_video_token`, with
    `num_additional_image_tokens` = 1 for the CLIP tower's CLS)."""

    name = "video-llava"
    model_types = ("video_llava",)

    def __init__(self, config, settings):
        super().__init__(config, settings)
        vc = config.vision_config
        self.side = int(getattr(vc, "image_size", 224))  # the tower's position table fixes its input size
        self.patch = int(getattr(vc, "patch_size", 14))
        crop = settings.get("crop_size") or {}
        crop = crop if isinstance(crop, dict) else {"height": crop, "width": crop}
        if crop and (int(crop.get("height", self.side)), int(crop.get("width", self.side))) != (self.side, self.side):
            raise ValueError(f"the checkpoint's crop_size {crop} differs from its vision tower's image_size "
                             f"{self.side}; its video tower takes {self.side}x{self.side} frames only")
        size = settings.get("size") or {}
        self.shortest = int((size.get("shortest_edge") if isinstance(size, dict) else size) or self.side)
        if self.shortest < self.side:
            raise ValueError(f"the checkpoint's size.shortest_edge {self.shortest} is below its crop {self.side}")

    def size_identity(self):
        return {"shortest_edge": self.shortest, "crop": self.side, "patch": self.patch}

    def video_inputs(self, frames, dtype, device, timestamps=None):
        import torch

        h, w = frames.shape[1], frames.shape[2]
        if w <= h:
            rh, rw = int(self.shortest * h / w), self.shortest
        else:
            rh, rw = self.shortest, int(self.shortest * w / h)
        x = _resize(frames, rh, rw, torch, device)
        top, left = int((rh - self.side) / 2.0), int((rw - self.side) / 2.0)
        x = _normalize(x[:, :, top:top + self.side, left:left + self.side], self.mean, self.std, torch)
        n = len(frames) * ((self.side // self.patch) ** 2 + 1)
        return VideoInputs({"pixel_values_videos": x[None].to(device, dtype)}, n)


FAMILIES: tuple[type[Family], ...] = (QwenVL, LlavaVideo, VideoLlava)


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


__all__ = ["DEFAULT_SECONDS_PER_FRAME", "FAMILIES", "Family", "LlavaVideo", "QwenVL", "VideoInputs", "VideoLlava",
           "family_for", "processor_settings", "seconds_per_frame", "smart_resize", "supported_model_types"]
