"""Any sentence-transformers model: its text embeddings, and its image tower when it has one.

Multimodal sentence-transformers models (e.g. `sentence-transformers/clip-ViT-B-32`) embed
frames too; frames are mean-pooled as for CLIP. A text-only model (e.g. all-MiniLM-L6-v2)
has no video side: use it as a blind baseline (`blind-st:<id>`), which scores each caption
by its similarity to the other candidates of the same item (how "typical" it looks).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from hardneg.models.base import VideoTextModel, hub_revision, l2_normalize, pick_device
from hardneg.models.registration import register


def _is_st_id(model: str) -> bool:
    return model.lower().startswith("sentence-transformers/")


def _load_st(model_id: str, device: str, fp16: bool, revision: str | None):
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(model_id, device=device, revision=revision)
    if fp16:
        st = st.half()
    return st


@register("st", "a sentence-transformers model: text tower, plus its image tower if it has one", matches=_is_st_id,
          priority=10)
class SentenceTransformerModel(VideoTextModel):
    adapter = "sentence-transformers"

    def __init__(self, model_id: str | None = None, device: str | None = None, fp16: bool = False,
                 revision: str | None = None):
        if not model_id:
            raise ValueError("name the sentence-transformers model: --model st:<hub id or folder>")
        self.model_id = model_id
        self.device = pick_device(device)
        if fp16 and not self.device.startswith("cuda"):
            raise ValueError("--fp16 needs a GPU (--device cuda)")
        self.dtype = "float16" if fp16 else "float32"
        self.st = _load_st(model_id, self.device, fp16, revision)
        self.revision = hub_revision(model_id, revision, self.st[0].auto_model if hasattr(self.st[0], "auto_model") else None)

    def text_context(self):
        """sentence-transformers cuts at `max_seq_length` with its own tokenizer."""
        tokenizer, context = getattr(self.st, "tokenizer", None), getattr(self.st, "max_seq_length", None)
        return (tokenizer, int(context)) if tokenizer is not None and context else None

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.st.encode(list(texts), convert_to_numpy=True, show_progress_bar=False), np.float32)

    def encode_video(self, videos: Sequence[np.ndarray]) -> np.ndarray:
        from PIL import Image

        out = []
        for v in videos:
            try:
                emb = self.st.encode([Image.fromarray(f) for f in np.asarray(v)], convert_to_numpy=True,
                                     show_progress_bar=False)
            except Exception as exc:  # text-only models reject images in many ways
                raise ValueError(
                    f"sentence-transformers model {self.model_id} cannot embed images ({type(exc).__name__}: {exc}); "
                    f"use a multimodal one (e.g. sentence-transformers/clip-ViT-B-32) or the blind baseline "
                    f"--model blind-st:{self.model_id}") from exc
            out.append(l2_normalize(np.asarray(emb, np.float32)).mean(0))
        return np.stack(out) if out else np.zeros((0, 0), np.float32)
