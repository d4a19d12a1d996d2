"""CLIP-family image-text models on video: embed each sampled frame, average, normalise.

This is the "CLIP zero-shot" baseline of the contrast-set and Feint6K papers. Any
`transformers` CLIP checkpoint works (default `openai/clip-vit-base-patch32`); `tiny-clip`
is the random-weight model shipped in the package for offline runs and tests.

Frames are preprocessed as tensors on the model's device (`hardneg.models.preprocess`), with
the same pixel values as the checkpoint's PIL image processor; `preprocess_frames` (the
processor itself, on threads) remains for processor settings that path does not reproduce.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from hardneg.models.base import VideoTextModel, hub_revision, l2_normalize, pick_device, torch_dtype
from hardneg.models.preprocess import PixelPipeline
from hardneg.models.registration import register
from hardneg.threads import chunks, thread_map

DEFAULT_CLIP = "openai/clip-vit-base-patch32"


def preprocess_frames(processor, frames: np.ndarray, per_thread: int = 16):
    """The processor's `pixel_values` for `frames`, in pieces on threads (PIL releases the GIL);
    the same tensor as one call on all frames."""
    import torch

    pieces = thread_map(lambda f: processor(images=list(f), return_tensors="pt")["pixel_values"], chunks(frames, per_thread))
    return torch.cat(pieces) if len(pieces) > 1 else pieces[0]


def as_numpy_frames(video) -> np.ndarray:
    """(T, H, W, 3) uint8 frames as numpy (a torch tensor, e.g. from the torchcodec decoder, is copied to the CPU)."""
    return video.cpu().numpy() if hasattr(video, "cpu") else np.asarray(video)


def _is_clip_id(model: str) -> bool:
    low = model.lower()
    return "clip" in low and "xclip" not in low and "x-clip" not in low


@register("clip", f"CLIP image-text model, frame embeddings mean-pooled (default {DEFAULT_CLIP})", matches=_is_clip_id)
class CLIPVideoModel(VideoTextModel):
    default_model_id = DEFAULT_CLIP  # the Hub id loaded when none is given
    hub_model = True  # loads from_pretrained: checked before loading (hardneg.hub_access)
    adapter = "clip-mean-pool"
    model_type = "contrastive"

    def __init__(self, model_id: str | None = None, device: str | None = None, fp16: bool = False,
                 revision: str | None = None, text_batch: int = 256, frame_batch: int = 256):
        import torch
        from transformers import AutoTokenizer, CLIPImageProcessorPil, CLIPModel

        self.model_id = model_id or DEFAULT_CLIP
        self.device = pick_device(device)
        dt = torch_dtype(self.device, fp16)
        self.dtype = str(dt).replace("torch.", "")
        kw = {"revision": revision} if revision else {}
        self.model = CLIPModel.from_pretrained(self.model_id, dtype=dt, **kw).to(self.device).eval()
        self.tokenizer = AutoTokenizer.from_pretrained(self.model_id, **kw)
        self.processor = CLIPImageProcessorPil.from_pretrained(self.model_id, **kw)
        self.pixels = PixelPipeline.for_processor(self.processor)  # None: settings it does not reproduce
        self.revision = hub_revision(self.model_id, revision, self.model)
        self.max_length = int(self.model.config.text_config.max_position_embeddings)
        self.text_batch, self.frame_batch = text_batch, frame_batch
        self._torch = torch

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        torch = self._torch
        out = []
        for i in range(0, len(texts), self.text_batch):
            tok = self.tokenizer(list(texts[i:i + self.text_batch]), padding=True, truncation=True,
                                 max_length=self.max_length, return_tensors="pt").to(self.device)
            with torch.inference_mode():
                emb = self.model.get_text_features(input_ids=tok["input_ids"], attention_mask=tok["attention_mask"])
            emb = getattr(emb, "pooler_output", emb)
            out.append(emb.float().cpu().numpy())
        dim = self.model.config.projection_dim
        return np.concatenate(out) if out else np.zeros((0, dim), np.float32)

    def _pixel_batches(self, videos):
        """Pixel values of all frames of `videos`, `frame_batch` frames at a time, on the model's device."""
        if self.pixels is None:
            frames = np.concatenate([as_numpy_frames(v) for v in videos])
            for i in range(0, len(frames), self.frame_batch):
                yield preprocess_frames(self.processor, frames[i:i + self.frame_batch]).to(self.device, self.model.dtype)
            return
        # cropped uint8 frames of every video (different sizes are fine), then values batch by batch
        frames = self._torch.cat([self.pixels.crop_video(v, self.device) for v in videos])
        for i in range(0, len(frames), self.frame_batch):
            yield self.pixels.normalize(frames[i:i + self.frame_batch], self.model.dtype)

    def _frame_embeddings(self, videos) -> np.ndarray:
        torch = self._torch
        out = []
        for pix in self._pixel_batches(videos):
            with torch.inference_mode():
                emb = self.model.get_image_features(pixel_values=pix)
            emb = getattr(emb, "pooler_output", emb)
            out.append(emb.float().cpu().numpy())
        return np.concatenate(out)

    def encode_video(self, videos: Sequence[np.ndarray]) -> np.ndarray:
        if not len(videos):
            return np.zeros((0, self.model.config.projection_dim), np.float32)
        counts = [len(v) for v in videos]
        emb = l2_normalize(self._frame_embeddings(videos))
        bounds = np.cumsum([0, *counts])
        return np.stack([emb[a:b].mean(0) for a, b in zip(bounds[:-1], bounds[1:])]).astype(np.float32)


@register("tiny-clip", "built-in tiny random-weight CLIP (offline quickstart, tests, demo default)")
class TinyCLIPVideoModel(CLIPVideoModel):
    default_model_id = None  # built in: nothing to download
    hub_model = False
    adapter = "clip-mean-pool"
    license = "apache-2.0"  # random weights made here: the project's license

    def __init__(self, model_id: str | None = None, device: str | None = None, fp16: bool = False,
                 revision: str | None = None):
        from hardneg.models.tiny_clip import tiny_clip_path

        super().__init__(str(tiny_clip_path()), device=device, fp16=fp16)
        self.model_id = "hardneg/tiny-clip"
