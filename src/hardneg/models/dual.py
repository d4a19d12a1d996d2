"""Any `transformers` video-text or image-text dual encoder on video, through its own processor: `dual:<id>`.

`load_model("dual:<Hub id or folder>")` reads the checkpoint's config and picks the path by its model type:

* frame-mean (`clip`, `siglip`, `siglip2`, and any other type whose model has `get_image_features` and
  `get_text_features`; `FrameMeanEncoder`): each sampled frame is embedded by `get_image_features` on the image processor's
  `pixel_values`, the frame embeddings are L2-normalised and averaged (the mean pooling of CLIP4Clip, Luo et al.
  2021, Sec. 3.3 "parameter-free type", which the contrast-set and Feint6K papers use for their CLIP baselines), and
  captions by `get_text_features` on the processor's text input (SigLIP's own `padding="max_length"`, as its model
  card says it was trained). The score is the cosine (SigLIP's sigmoid logit is an increasing function of it, so
  rankings are the same).
* video-native (`pe_video`, `videoprism`, `xclip`: `hardneg.models.dual_video`): the whole clip goes through the
  model's video processor and video tower, and the score is what the model's own `forward` computes (per type there).

A type with no text features, or no image or video features, is refused with its model type and what it lacks
(`hardneg.models.dual_types`, which also lists the types for `hardneg models --encoders` and the registry: a local
folder of one of these types loads here without `dual:`). X-CLIP keeps its hand-written adapter too
(`hardneg.models.xclip`, loaded by an X-CLIP Hub id): it equals this path to 1e-5 on frames at the model's input
size (tests/vlm/test_dual_encoders.py) and is faster (perf/bench_dual.py: its tensor pixel pipeline); frames it
must resize differ slightly (PIL's resize, against the checkpoint's VideoMAEImageProcessor's torchvision one).
Every type is tested on a tiny model (`hardneg.models.tiny_encoders`) against the model's own `forward`.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from hardneg.models.base import VideoTextModel, l2_normalize
from hardneg.models.dual_types import (FRAME_MEAN_TYPES, MAX_LENGTH_PADDING, VIDEO_NATIVE_TYPES, load_checkpoint,
                                       model_type_of)
from hardneg.models.dual_video import VIDEO_ENCODERS
from hardneg.models.registration import register


@register("dual", "any transformers dual encoder on video through its own processor: CLIP, SigLIP, SigLIP 2 "
          "(frame embeddings mean-pooled), PE video, VideoPrism, X-CLIP (their video towers)")
class DualEncoder:
    """`dual:<id>`: reads the checkpoint's model type and returns the encoder that type takes (`FrameMeanEncoder`
    or a `hardneg.models.dual_video` class), built with the same arguments."""

    hub_model = True
    default_model_id = None

    def __new__(cls, model_id: str | None = None, device: str | None = None, fp16: bool = False,
                revision: str | None = None, **kwargs):
        if not model_id:
            raise ValueError("give the dual encoder's Hub id or folder, e.g. "
                             "--model dual:google/siglip2-base-patch16-224")
        kind = model_type_of(model_id, revision)
        encoder = VIDEO_ENCODERS.get(kind, FrameMeanEncoder)
        return encoder(model_id, device=device, fp16=fp16, revision=revision, **kwargs)


class FrameMeanEncoder(VideoTextModel):
    """An image-text model on video: frame embeddings L2-normalised and averaged, the cosine with the caption's."""

    adapter = "dual-frame-mean"
    hub_model = True

    def __init__(self, model_id: str | None = None, device: str | None = None, fp16: bool = False,
                 revision: str | None = None, text_batch: int = 256, frame_batch: int = 256):
        import torch

        load_checkpoint(self, model_id, device, fp16, revision,
                        {"get_text_features": "text features", "get_image_features": "image features"})
        text_cfg = getattr(self.model.config, "text_config", None)
        self.max_length = int(getattr(text_cfg, "max_position_embeddings", 64))
        self.padding = "max_length" if self.model.config.model_type in MAX_LENGTH_PADDING else True
        self.text_batch, self.frame_batch = text_batch, frame_batch
        self._torch = torch

    @staticmethod
    def _features(out):
        return getattr(out, "pooler_output", out)

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        torch = self._torch
        out = []
        for i in range(0, len(texts), self.text_batch):
            enc = self.processor(text=list(texts[i:i + self.text_batch]), padding=self.padding, truncation=True,
                                 max_length=self.max_length, return_tensors="pt").to(self.device)
            with torch.inference_mode():
                emb = self._features(self.model.get_text_features(**{k: v for k, v in enc.items()
                                                                      if k in ("input_ids", "attention_mask")}))
            out.append(emb.float().cpu().numpy())
        return np.concatenate(out) if out else np.zeros((0, 0), np.float32)

    def _embed_frames(self, frames: list) -> np.ndarray:
        """(len(frames), D) embeddings of frames of one size, through the image processor itself: its saved
        settings (a processor's call can override them with its class defaults, e.g. Siglip2Processor's
        max_num_patches)."""
        torch = self._torch
        images = getattr(self.processor, "image_processor", self.processor)
        px = images(images=frames, return_tensors="pt")
        px = {k: (v.to(self.device, self.model.dtype) if v.is_floating_point() else v.to(self.device))
              for k, v in px.items() if k.startswith("pixel") or k in ("spatial_shapes", "pixel_attention_mask")}
        with torch.inference_mode():
            return self._features(self.model.get_image_features(**px)).float().cpu().numpy()

    def encode_video(self, videos: Sequence[np.ndarray]) -> np.ndarray:
        """Frames of several videos share a tower call (up to `frame_batch` frames of one size), then each video's
        L2-normalised frame embeddings are averaged."""
        flat, owner = [], []
        for j, video in enumerate(videos):
            frames = video.cpu().numpy() if hasattr(video, "cpu") else np.asarray(video)
            flat.extend(frames)
            owner.extend([j] * len(frames))
        embs, start = [], 0
        while start < len(flat):
            stop = start + 1
            while stop < len(flat) and stop - start < self.frame_batch and flat[stop].shape == flat[start].shape:
                stop += 1
            embs.append(self._embed_frames(flat[start:stop]))
            start = stop
        if not embs:
            return np.zeros((0, 0), np.float32)
        emb, owner = l2_normalize(np.concatenate(embs)), np.asarray(owner)
        return np.stack([emb[owner == j].mean(0) for j in range(len(videos))]).astype(np.float32)

    def identity(self):
        return {**super().identity(), "pooling": "mean of L2-normalised frame embeddings",
                "text_padding": str(self.padding)}


__all__ = ["DualEncoder", "FrameMeanEncoder", "FRAME_MEAN_TYPES", "VIDEO_NATIVE_TYPES", "model_type_of"]
