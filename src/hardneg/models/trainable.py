"""Video-text networks that `hardneg train` can train, and their checkpoint folder.

Two architectures:
* ``tiny-temporal``: a small video-text model built here. Each frame goes through a small CNN
  that keeps the spatial layout (a 4x4 grid, so "above"/"left of" stay visible), then a
  transformer runs over time with a position per frame. The built-in ``tiny-clip`` embeds
  frames and mean-pools them: a mean over frames is the same for a video and its reverse, so
  it can never tell "moves left" from "moves right" or "A then B" from "B then A" however it
  is trained. Training against direction and order negatives needs a model that sees order.
  Text: whole-word tokens (vocabulary from the training captions) and a small transformer.
* ``clip``: a `transformers` CLIP checkpoint (``tiny-clip``, a Hub id or a folder); frames
  through the vision tower, frame embeddings L2-normalised and averaged (as the scoring
  adapter does), text through the text tower.

Fine-grained prompting (PoSRank Sec. 6.4): with ``prompt=True`` one learnable token is added
to the video transformer's input (after CLS: the temporal transformer of ``tiny-temporal``, the
vision tower of ``clip``); its output, projected like CLS, is the "fine" video embedding that
L_fine trains while the CLS output keeps L_coarse.

A checkpoint folder holds ``config.json`` (``model_type: "hardneg-trained"``, the architecture
and its settings, the provenance), ``model.safetensors`` (every weight) and, for ``clip``,
``backbone/`` (the CLIP config, tokenizer and image processor). The ``trained`` adapter
(`hardneg.models.trained`) scores it by path.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

MODEL_TYPE = "hardneg-trained"
CONFIG = "config.json"
WEIGHTS = "model.safetensors"
SPECIALS = ("<pad>", "<unk>", "<cls>")
_WORD = re.compile(r"[a-z0-9]+|[^\sa-z0-9]")


def words(text: str) -> list[str]:
    """Lower-case whole words and punctuation marks: the tiny-temporal tokenizer."""
    return _WORD.findall(text.lower())


def build_vocabulary(texts: Sequence[str]) -> list[str]:
    """Specials, then every word of `texts` in sorted order (deterministic)."""
    return list(SPECIALS) + sorted({w for t in texts for w in words(t)} - set(SPECIALS))


class TrainableVideoText(nn.Module):
    """Common interface: `forward(frames, texts) -> (video_cls, video_prompt | None, text)` embeddings.

    `frames`: (B, T, H, W, 3) uint8 tensor. Embeddings are unnormalised (the losses normalise).
    `logit_scale` is log(1/tau), learned, as in CLIP."""

    architecture = "base"

    def __init__(self) -> None:
        super().__init__()
        self.logit_scale = nn.Parameter(torch.tensor(float(np.log(1 / 0.07))))

    def temperature(self) -> torch.Tensor:
        return 1.0 / self.logit_scale.clamp(max=float(np.log(100.0))).exp()

    @property
    def has_prompt(self) -> bool:
        return getattr(self, "prompt", None) is not None

    def config(self) -> dict[str, Any]:
        raise NotImplementedError

    def encode_text(self, texts: Sequence[str]) -> torch.Tensor:
        raise NotImplementedError

    def encode_video(self, frames: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        raise NotImplementedError

    def forward(self, frames: torch.Tensor, texts: Sequence[str]):
        cls, prompt = self.encode_video(frames)
        return cls, prompt, self.encode_text(texts)

    def save_extra(self, folder: Path) -> None:
        """Files besides the weights and config (a backbone's tokenizer, ...)."""


# ------------------------------------------------------------------------------ tiny-temporal


class TinyTemporal(TrainableVideoText):
    architecture = "tiny-temporal"

    def __init__(self, vocabulary: Sequence[str], dim: int = 64, image_size: int = 32, n_frames: int = 8,
                 layers: int = 2, heads: int = 4, max_words: int = 40, prompt: bool = False) -> None:
        super().__init__()
        self.vocabulary = list(vocabulary)
        self.index = {w: i for i, w in enumerate(self.vocabulary)}
        self.dim, self.image_size, self.n_frames = int(dim), int(image_size), int(n_frames)
        self.layers, self.heads, self.max_words = int(layers), int(heads), int(max_words)

        def encoder():
            layer = nn.TransformerEncoderLayer(dim, heads, 2 * dim, dropout=0.0, batch_first=True, norm_first=True)
            return nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

        self.word = nn.Embedding(len(self.vocabulary), dim, padding_idx=0)
        self.word_pos = nn.Parameter(torch.randn(max_words + 1, dim) * 0.02)
        self.text_encoder = encoder()
        self.text_norm = nn.LayerNorm(dim)
        self.text_proj = nn.Linear(dim, dim, bias=False)
        # stride-2 convolutions down to a 4x4 grid: the layout survives, the linear layer stays small
        if image_size < 8 or image_size & (image_size - 1):
            raise ValueError(f"image_size must be a power of two of at least 8, got {image_size}")
        convs, ch = [], 3
        for i in range(int(np.log2(image_size // 4))):
            out_ch = 16 if i == 0 else 32
            convs += [nn.Conv2d(ch, out_ch, 3, 2, 1), nn.GELU()]
            ch = out_ch
        self.frame_cnn = nn.Sequential(*convs, nn.Flatten(), nn.Linear(ch * 16, dim))
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.prompt = None
        self.time_pos = nn.Parameter(torch.randn(n_frames, dim) * 0.02)
        self.video_encoder = encoder()
        self.video_norm = nn.LayerNorm(dim)
        self.video_proj = nn.Linear(dim, dim, bias=False)
        if prompt:  # drawn last: with or without it, every other weight starts the same at a seed
            self.prompt = nn.Parameter(torch.randn(1, 1, dim) * 0.02)

    def config(self) -> dict[str, Any]:
        return {"architecture": self.architecture, "vocabulary": self.vocabulary, "dim": self.dim,
                "image_size": self.image_size, "n_frames": self.n_frames, "layers": self.layers,
                "heads": self.heads, "max_words": self.max_words, "prompt": self.has_prompt}

    @classmethod
    def from_config(cls, cfg: dict[str, Any], folder: Path | None = None) -> "TinyTemporal":
        keys = ("dim", "image_size", "n_frames", "layers", "heads", "max_words", "prompt")
        return cls(cfg["vocabulary"], **{k: cfg[k] for k in keys if k in cfg})

    def tokenize(self, texts: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
        unk = self.index["<unk>"]
        ids = [[self.index["<cls>"]] + [self.index.get(w, unk) for w in words(t)][: self.max_words] for t in texts]
        width = max((len(i) for i in ids), default=1)
        out = torch.zeros(len(ids), width, dtype=torch.long)
        for r, row in enumerate(ids):
            out[r, : len(row)] = torch.tensor(row)
        return out, out == 0

    def encode_text(self, texts: Sequence[str]) -> torch.Tensor:
        ids, pad = self.tokenize(texts)
        return self.encode_tokens(ids.to(self.word.weight.device), pad.to(self.word.weight.device))

    def encode_tokens(self, ids: torch.Tensor, pad: torch.Tensor) -> torch.Tensor:
        """Text embeddings of already tokenized texts (`tokenize`): experiments tokenize once, not per step."""
        x = self.word(ids) + self.word_pos[: ids.shape[1]]
        x = self.text_encoder(x, src_key_padding_mask=pad)
        keep = (~pad).unsqueeze(-1).to(x.dtype)  # mean over the words: the CLS output alone starts the same for all
        return self.text_proj(self.text_norm((x * keep).sum(1) / keep.sum(1)))

    def encode_video(self, frames: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        return self.encode_prepared(self.prepare_frames(frames))

    def prepare_frames(self, frames: torch.Tensor) -> torch.Tensor:
        """(B, T, H, W, 3) uint8 -> (B, T, 3, S, S) float: resized to the model's input size and standardised.

        It depends on the frames alone (no weight), so an experiment that trains many steps on the same
        videos prepares them once (issue 43: resizing at every step cost more than the step)."""
        b, t = frames.shape[:2]
        if t != self.n_frames:
            raise ValueError(f"tiny-temporal was built for {self.n_frames} frames per video, got {t}: "
                             f"sample {self.n_frames} frames (--frames {self.n_frames})")
        x = frames.to(self.cls.device).reshape(b * t, *frames.shape[2:]).permute(0, 3, 1, 2).float() / 255.0
        if x.shape[-2:] != (self.image_size, self.image_size):
            x = F.interpolate(x, size=(self.image_size, self.image_size), mode="bilinear", antialias=True,
                              align_corners=False)
        # each frame standardised per channel: a plain background becomes 0 and the objects carry the
        # signal (unstandardised, every video starts with the same embedding and training stalls)
        x = (x - x.mean(dim=(2, 3), keepdim=True)) / (x.std(dim=(2, 3), keepdim=True) + 0.05)
        return x.view(b, t, *x.shape[1:])

    def encode_prepared(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Video embeddings (CLS, prompt) of frames from `prepare_frames`."""
        b, t = x.shape[:2]
        f = self.frame_cnn(x.reshape(b * t, *x.shape[2:])).view(b, t, self.dim) + self.time_pos
        lead = [self.cls.expand(b, -1, -1)] + ([self.prompt.expand(b, -1, -1)] if self.has_prompt else [])
        h = self.video_encoder(torch.cat(lead + [f], dim=1))
        cls = self.video_proj(self.video_norm(h[:, 0]))
        prompt = self.video_proj(self.video_norm(h[:, 1])) if self.has_prompt else None
        return cls, prompt


# --------------------------------------------------------------------------------------- clip


class CLIPTowers(TrainableVideoText):
    """A `transformers` CLIPModel's two towers, frames mean-pooled, optional visual prompt token."""

    architecture = "clip"

    def __init__(self, backbone: Any, tokenizer: Any, processor: Any, source: str, prompt: bool = False) -> None:
        super().__init__()
        from hardneg.models.preprocess import PixelPipeline

        self.backbone, self.tokenizer, self.processor, self.source = backbone, tokenizer, processor, source
        self.pixels = PixelPipeline.for_processor(processor)
        if self.pixels is None:
            raise ValueError(f"the image processor of {source} has settings the tensor pipeline does not reproduce")
        with torch.no_grad():
            self.logit_scale.copy_(backbone.logit_scale.detach().float())
        hidden = backbone.config.vision_config.hidden_size
        if prompt:  # starts as the CLS embedding plus noise: begins where the coarse output is
            cls = backbone.vision_model.embeddings.class_embedding.detach().clone()
            self.prompt = nn.Parameter((cls + torch.randn(hidden) * 0.02).view(1, 1, hidden))
        else:
            self.prompt = None
        self.max_length = int(backbone.config.text_config.max_position_embeddings)

    @classmethod
    def from_pretrained(cls, model_id: str, prompt: bool = False, revision: str | None = None) -> "CLIPTowers":
        from transformers import AutoTokenizer, CLIPImageProcessorPil, CLIPModel

        kw = {"revision": revision} if revision else {}
        backbone = CLIPModel.from_pretrained(model_id, **kw)
        return cls(backbone, AutoTokenizer.from_pretrained(model_id, **kw),
                   CLIPImageProcessorPil.from_pretrained(model_id, **kw), model_id, prompt)

    @classmethod
    def from_config(cls, cfg: dict[str, Any], folder: Path) -> "CLIPTowers":
        from transformers import AutoTokenizer, CLIPConfig, CLIPImageProcessorPil, CLIPModel

        sub = folder / "backbone"
        backbone = CLIPModel(CLIPConfig.from_pretrained(sub))
        return cls(backbone, AutoTokenizer.from_pretrained(sub), CLIPImageProcessorPil.from_pretrained(sub),
                   cfg.get("source", ""), bool(cfg.get("prompt")))

    def config(self) -> dict[str, Any]:
        return {"architecture": self.architecture, "source": self.source, "prompt": self.has_prompt}

    def save_extra(self, folder: Path) -> None:
        sub = folder / "backbone"
        self.backbone.config.save_pretrained(sub)
        self.tokenizer.save_pretrained(sub)
        self.processor.save_pretrained(sub)

    def encode_text(self, texts: Sequence[str]) -> torch.Tensor:
        dev = self.logit_scale.device
        tok = self.tokenizer(list(texts), padding=True, truncation=True, max_length=self.max_length, return_tensors="pt")
        out = self.backbone.get_text_features(input_ids=tok["input_ids"].to(dev), attention_mask=tok["attention_mask"].to(dev))
        return getattr(out, "pooler_output", out)

    def encode_video(self, frames: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        b, t = frames.shape[:2]
        vm = self.backbone.vision_model
        dev = self.logit_scale.device
        pix = self.pixels([frames[i] for i in range(b)], str(dev), self.backbone.dtype)
        h = vm.embeddings(pix)
        if self.has_prompt:
            h = torch.cat([h[:, :1], self.prompt.expand(len(h), -1, -1).to(h.dtype), h[:, 1:]], dim=1)
        h = vm.encoder(inputs_embeds=vm.pre_layrnorm(h)).last_hidden_state

        def head(x):
            e = F.normalize(self.backbone.visual_projection(vm.post_layernorm(x)), dim=-1)
            return e.view(b, t, -1).mean(dim=1)

        return head(h[:, 0]), (head(h[:, 1]) if self.has_prompt else None)


ARCHITECTURES = {"tiny-temporal": TinyTemporal, "clip": CLIPTowers}


# --------------------------------------------------------------------------------- checkpoint


def save_checkpoint(net: TrainableVideoText, folder: str | Path, extra: dict[str, Any] | None = None) -> Path:
    """Write `config.json` + `model.safetensors` (+ backbone files) into `folder`, each file atomically."""
    from safetensors.torch import save

    from hardneg.io import atomic_write_bytes, atomic_write_text

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    net.save_extra(folder)
    state = {k: v.detach().cpu().contiguous().clone() for k, v in net.state_dict().items()}
    atomic_write_bytes(folder / WEIGHTS, save(state, metadata={"format": "pt"}))
    cfg = {"model_type": MODEL_TYPE, **net.config(), **(extra or {})}
    atomic_write_text(folder / CONFIG, json.dumps(cfg, indent=1, sort_keys=True) + "\n")
    return folder


def read_config(folder: str | Path) -> dict[str, Any]:
    path = Path(folder) / CONFIG
    if not path.is_file():
        raise FileNotFoundError(f"{folder} has no {CONFIG}: not a checkpoint written by `hardneg train`")
    cfg = json.loads(path.read_text())
    if cfg.get("model_type") != MODEL_TYPE:
        raise ValueError(f"{path}: model_type {cfg.get('model_type')!r} is not {MODEL_TYPE!r}")
    if cfg.get("architecture") not in ARCHITECTURES:
        raise ValueError(f"{path}: architecture {cfg.get('architecture')!r}; known: {sorted(ARCHITECTURES)}")
    return cfg


def load_checkpoint(folder: str | Path) -> TrainableVideoText:
    """The network saved in `folder` by `save_checkpoint` (on the CPU)."""
    from safetensors.torch import load_file

    folder = Path(folder)
    cfg = read_config(folder)
    net = ARCHITECTURES[cfg["architecture"]].from_config(cfg, folder)
    weights = folder / WEIGHTS
    if not weights.is_file():
        raise FileNotFoundError(f"{folder} has no {WEIGHTS} (an interrupted save?): resume the run with --resume")
    try:
        state = load_file(str(weights))
    except Exception as exc:  # noqa: BLE001 (safetensors raises its own types for truncated or random bytes)
        raise ValueError(f"{weights} cannot be read ({type(exc).__name__}: {str(exc)[:120]}): the file is damaged "
                         "(an interrupted copy?); copy the checkpoint again, or rerun `hardneg train` with --resume "
                         "in its folder") from None
    try:
        net.load_state_dict(state)
    except RuntimeError as exc:
        raise ValueError(f"{weights} does not hold the weights {CONFIG} describes ({str(exc)[:160]}); copy the "
                         "checkpoint again") from None
    return net.eval()


def build_network(model: str, vocabulary_texts: Sequence[str], prompt: bool = False, n_frames: int = 8,
                  revision: str | None = None, **tiny: Any) -> TrainableVideoText:
    """A fresh network for `model`: "tiny-temporal", "tiny-clip", a CLIP Hub id / folder, or a checkpoint folder."""
    from hardneg.models.registry import resolve

    if model == "tiny-temporal":
        return TinyTemporal(build_vocabulary(vocabulary_texts), n_frames=n_frames, prompt=prompt, **tiny)
    path = Path(model)
    if path.is_dir() and (path / CONFIG).is_file() and json.loads((path / CONFIG).read_text()).get("model_type") == MODEL_TYPE:
        net = load_checkpoint(path)
        if prompt and not net.has_prompt:
            raise ValueError(f"{model} was trained without a prompt token; fine-grained prompting needs a fresh start "
                             "from its base model")
        return net.train()
    if model == "tiny-clip":
        from hardneg.models.tiny_clip import tiny_clip_path

        return CLIPTowers.from_pretrained(str(tiny_clip_path()), prompt=prompt)
    name, model_id = resolve(model)
    if name == "clip":
        from hardneg.models.registry import damaged_weights_refused

        with damaged_weights_refused(model_id or model):
            return CLIPTowers.from_pretrained(model_id or model, prompt=prompt, revision=revision)
    if name in ("blind-unigram", "blind-lm", "constant", "random", "st"):
        raise ValueError(f"model {model!r} ({name}) has nothing to train here: train tiny-temporal, tiny-clip, "
                         "a CLIP checkpoint (Hub id or folder) or continue a `hardneg train` checkpoint")
    raise ValueError(f"model {model!r} ({name}) cannot be trained yet: train tiny-temporal, tiny-clip, a CLIP "
                     "checkpoint (Hub id or folder) or continue a `hardneg train` checkpoint")
