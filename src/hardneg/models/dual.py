"""Any `transformers` image-text dual encoder on video, through its own processor: CLIP, SigLIP, SigLIP 2.

`load_model("dual:<Hub id or folder>")`: the checkpoint's `AutoModel` and `AutoProcessor`. Each sampled frame is
embedded by `get_image_features` on the processor's `pixel_values`, the frame embeddings are L2-normalised and
averaged (the mean pooling of CLIP4Clip, Luo et al. 2021, Sec. 3.3 "parameter-free type", which the contrast-set
and Feint6K papers use for their CLIP baselines), and captions by `get_text_features` on the processor's text
input (SigLIP's own `padding="max_length"`, as its model card says it was trained). The score is the cosine
(SigLIP's sigmoid logit is an increasing function of it, so rankings are the same). Video-native encoders
(`pe_video`, `videoprism`) are not covered yet; X-CLIP has its own adapter (`hardneg.models.xclip`).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from hardneg.models.base import VideoTextModel, hub_revision, l2_normalize, pick_device, torch_dtype
from hardneg.models.registration import register

#: model types whose processor pads text to the training length (their model cards: `padding="max_length"`)
MAX_LENGTH_PADDING = ("siglip", "siglip2")


@register("dual", "any transformers image-text dual encoder (CLIP, SigLIP, SigLIP 2) on video: frame embeddings "
          "mean-pooled, through its own processor")
class DualEncoder(VideoTextModel):
    hub_model = True
    default_model_id = None
    adapter = "dual-frame-mean"

    def __init__(self, model_id: str | None = None, device: str | None = None, fp16: bool = False,
                 revision: str | None = None, text_batch: int = 256, frame_batch: int = 256):
        import torch
        from transformers import AutoModel, AutoProcessor

        if not model_id:
            raise ValueError("give the dual encoder's Hub id or folder, e.g. --model dual:google/siglip2-base-patch16-224")
        self.model_id = model_id
        self.device = pick_device(device)
        dt = torch_dtype(self.device, fp16)
        self.dtype = str(dt).replace("torch.", "")
        kw = {"revision": revision} if revision else {}
        self.model = AutoModel.from_pretrained(model_id, dtype=dt, **kw).to(self.device).eval()
        if not (hasattr(self.model, "get_image_features") and hasattr(self.model, "get_text_features")):
            raise ValueError(f"model {model_id} (model_type {self.model.config.model_type!r}) has no "
                             "get_image_features / get_text_features: not an image-text dual encoder")
        self.processor = AutoProcessor.from_pretrained(model_id, **kw)
        self.tokenizer = getattr(self.processor, "tokenizer", None)
        text_cfg = getattr(self.model.config, "text_config", None)
        self.max_length = int(getattr(text_cfg, "max_position_embeddings", 64))
        self.padding = "max_length" if self.model.config.model_type in MAX_LENGTH_PADDING else True
        self.revision = hub_revision(model_id, revision, self.model)
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

    def encode_video(self, videos: Sequence[np.ndarray]) -> np.ndarray:
        torch = self._torch
        rows = []
        for video in videos:
            frames = video.cpu().numpy() if hasattr(video, "cpu") else np.asarray(video)
            embs = []
            for i in range(0, len(frames), self.frame_batch):
                # the image processor itself: its saved settings (a processor's call can override them with its
                # class defaults, e.g. Siglip2Processor's max_num_patches)
                images = getattr(self.processor, "image_processor", self.processor)
                px = images(images=list(frames[i:i + self.frame_batch]), return_tensors="pt")
                px = {k: (v.to(self.device, self.model.dtype) if v.is_floating_point() else v.to(self.device))
                      for k, v in px.items() if k.startswith("pixel") or k in ("spatial_shapes", "pixel_attention_mask")}
                with torch.inference_mode():
                    embs.append(self._features(self.model.get_image_features(**px)).float().cpu().numpy())
            rows.append(l2_normalize(np.concatenate(embs)).mean(0))
        return np.stack(rows).astype(np.float32) if rows else np.zeros((0, 0), np.float32)

    def identity(self):
        return {**super().identity(), "pooling": "mean of L2-normalised frame embeddings",
                "text_padding": str(self.padding)}


__all__ = ["DualEncoder"]
