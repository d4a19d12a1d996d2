"""Checkpoints written by `hardneg train`, scored by path like any other model.

`load_model("runs/word")` (a folder whose config.json has `model_type: "hardneg-trained"`) or
`load_model("trained:runs/word")`. A checkpoint trained with fine-grained prompting has two
video outputs: CLS (trained with L_coarse) and the prompt token (trained with L_fine). Scores
use the head its config names (`score_head`); `PATH@cls` or `PATH@prompt` picks one.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Sequence

import numpy as np

from hardneg.models.base import VideoTextModel, pick_device
from hardneg.models.registration import register

HEADS = ("cls", "prompt")


def split_head(model_id: str) -> tuple[str, str | None]:
    """("folder", head or None) from "folder" or "folder@head"."""
    if "@" in model_id and not Path(model_id).exists():
        path, head = model_id.rsplit("@", 1)
        if head not in HEADS:
            raise ValueError(f"{model_id}: head {head!r} unknown; use {Path(path).name}@cls or @prompt")
        return path, head
    return model_id, None


def checkpoint_revision(folder: Path) -> str:
    """Content hash of the weights and config (what makes the scores what they are)."""
    h = hashlib.sha256()
    for name in ("config.json", "model.safetensors"):
        h.update(name.encode())
        h.update(hashlib.sha256((folder / name).read_bytes()).digest())
    return "sha256:" + h.hexdigest()[:16]


@register("trained", "a checkpoint folder written by `hardneg train` (PATH, PATH@cls, PATH@prompt)")
class TrainedVideoModel(VideoTextModel):
    adapter = "hardneg-trained"

    def __init__(self, model_id: str | None = None, device: str | None = None, fp16: bool = False,
                 revision: str | None = None):
        import torch

        from hardneg.models.trainable import load_checkpoint, read_config

        if not model_id:
            raise ValueError("the trained adapter needs a checkpoint folder: trained:PATH")
        path, head = split_head(model_id)
        folder = Path(path).expanduser()
        if fp16:
            raise ValueError("--fp16 is not supported for `hardneg train` checkpoints; score them in float32")
        self.config = read_config(folder)
        self.device = pick_device(device)
        self.net = load_checkpoint(folder).to(self.device).eval()
        self.head = head or self.config.get("score_head", "cls")
        if self.head == "prompt" and not self.net.has_prompt:
            raise ValueError(f"{folder} has no prompt token (trained without fine-grained prompting): use @cls")
        self.model_id = str(folder) + (f"@{head}" if head else "")
        self.revision = checkpoint_revision(folder)
        self.n_frames = getattr(self.net, "n_frames", None)
        self._torch = torch

    def identity(self) -> dict:
        return {**super().identity(), "head": self.head}

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        out = []
        with self._torch.inference_mode():
            for i in range(0, len(texts), 256):
                out.append(self.net.encode_text(list(texts[i:i + 256])).float().cpu().numpy())
        return np.concatenate(out) if out else np.zeros((0, 1), np.float32)

    def encode_video(self, videos: Sequence[np.ndarray]) -> np.ndarray:
        torch = self._torch
        out = []
        with torch.inference_mode():
            for v in videos:
                frames = torch.as_tensor(np.asarray(v.cpu() if hasattr(v, "cpu") else v))[None]
                cls, prompt = self.net.encode_video(frames)
                out.append((prompt if self.head == "prompt" else cls).float().cpu().numpy())
        return np.concatenate(out) if out else np.zeros((0, 1), np.float32)
