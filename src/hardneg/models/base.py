"""The one interface every scored model implements, and the helpers adapters share.

A model turns captions into text embeddings and a video's frames into a video embedding,
and scores a (video, caption) pair from the two. Keeping the two encoders separate is what
lets the scorer cache video embeddings across runs and benchmarks. Adding a model is one
small subclass registered by name (see `hardneg.models.registry`).
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, Sequence

import numpy as np


def pick_device(device: str | None) -> str:
    """`device` as given, else "cuda" when a GPU is visible, else "cpu"."""
    import torch

    if device in (None, "", "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    if str(device).startswith("map:"):  # hardneg.models.vlm.placement: a video LLM over several devices
        raise ValueError("--device-map places a video LLM over several devices; this model loads on one device: "
                         "use --device cpu, cuda or cuda:N")
    try:
        torch.device(device)
    except (RuntimeError, TypeError, ValueError):
        raise ValueError(f"--device {str(device)[:60]!r} is not a device; use cpu, cuda or cuda:N (a GPU's index), "
                         "or leave it out to pick a GPU when one is visible") from None
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"--device {device} asked for a GPU but none is visible; use --device cpu")
    return device


def torch_dtype(device: str, fp16: bool):
    import torch

    if fp16 and not device.startswith("cuda"):
        raise ValueError("--fp16 needs a GPU (--device cuda); on the CPU models run in float32")
    return torch.float16 if fp16 else torch.float32


def local_revision(path: str | Path) -> str:
    """Content hash of a local model folder (weights + configs): its revision when not from the Hub."""
    h = hashlib.sha256()
    for p in sorted(Path(path).rglob("*")):
        if p.is_file():
            h.update(p.relative_to(path).as_posix().encode())
            h.update(hashlib.sha256(p.read_bytes()).digest())
    return "sha256:" + h.hexdigest()[:16]


def hub_revision(model_id: str, revision: str | None, loaded: Any) -> str:
    """The exact revision of a loaded Hub model (commit hash when known), else a local content hash."""
    if Path(model_id).is_dir():
        return local_revision(model_id)
    commit = getattr(getattr(loaded, "config", None), "_commit_hash", None)
    return commit or revision or "main"


def l2_normalize(x: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.maximum(norm, 1e-12)


class VideoTextModel(ABC):
    """A video-text model behind the scorer, the demo and the analyses.

    Subclasses set `model_id`, `revision` and `adapter` and implement `encode_text` and
    `encode_video`; `similarity` defaults to the cosine of L2-normalised embeddings.
    `uses_video=False` marks a blind (text-only) baseline: its video embedding is empty.
    """

    adapter: str = "base"
    uses_video: bool = True
    #: what the board shows for the model when no Hub card or flag says (`board_meta`; issue 41: the built-in
    #: models showed Type "unknown" and no License): how it scores captions, and the license of its weights
    model_type: str | None = None
    license: str | None = None
    #: what a score is, for people reading one (the demo's chart axis): the default `similarity` is a cosine
    score_name: str = "cosine similarity"
    model_id: str = ""
    revision: str = ""
    device: str = "cpu"
    dtype: str = "float32"

    @abstractmethod
    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), D) float32 text embeddings."""

    @abstractmethod
    def encode_video(self, videos: Sequence[np.ndarray]) -> np.ndarray:
        """(len(videos), D_v) float32 video embeddings; each video is (T, H, W, 3) uint8 frames."""

    def similarity(self, video_embeddings: np.ndarray, text_embeddings: np.ndarray) -> np.ndarray:
        """(V, T) scores of every video against every text (cosine by default)."""
        return l2_normalize(np.asarray(video_embeddings, np.float32)) @ l2_normalize(
            np.asarray(text_embeddings, np.float32)).T

    def score(self, video: np.ndarray | None, captions: Sequence[str]) -> np.ndarray:
        """(len(captions),) scores of the captions for one video (frames (T, H, W, 3))."""
        v = self.encode_video([video]) if self.uses_video else np.zeros((1, 0), np.float32)
        return self.similarity(v, self.encode_text(list(captions)))[0]

    def text_context(self) -> tuple[Any, int] | None:
        """(tokenizer, context length) of the text tower, as `encode_text` calls it (`truncation=True,
        max_length=context`), so that scoring can count the captions it cuts (`hardneg.truncation`).

        Default: the `tokenizer` and `max_length` of this object, or of the network or user object it wraps
        (`net`, `obj`); None when there are none (the model does not cut, or does not say)."""
        for holder in (self, getattr(self, "net", None), getattr(self, "obj", None)):
            tokenizer, context = getattr(holder, "tokenizer", None), getattr(holder, "max_length", None)
            if tokenizer is not None and callable(tokenizer) and isinstance(context, int) and context > 0:
                return tokenizer, context
        return None

    def board_meta(self) -> dict[str, str]:
        """`model_meta` a predictions file carries for the board (`hardneg submit`: a Hub card and flags win)."""
        return {k: v for k in ("model_type", "license") if isinstance(v := getattr(self, k, None), str) and v}

    def identity(self) -> dict[str, Any]:
        """What makes this model's scores what they are (goes into predictions and cache keys)."""
        return {"model_id": self.model_id, "model_revision": self.revision, "adapter": self.adapter,
                "dtype": self.dtype}

    def cache_key(self) -> str:
        ident = {k: v for k, v in self.identity().items()}
        return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:20]
