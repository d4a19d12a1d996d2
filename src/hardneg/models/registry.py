"""Find the adapter class for a model name, a Hub id or a local folder.

`load_model("openai/clip-vit-base-patch32")`, `load_model("tiny-clip")`,
`load_model("st:sentence-transformers/clip-ViT-B-32")`, `load_model("blind-unigram")`,
`load_model("constant")`, `load_model("random:7")` (chance checks).
A new adapter registers itself with `@register("name", matches=...)`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from hardneg.models.base import VideoTextModel

#: name -> (loader class, one-line description)
_ADAPTERS: dict[str, tuple[type, str]] = {}
#: (predicate on the model string, adapter name), tried in order
_MATCHERS: list[tuple[Callable[[str], bool], str, int]] = []


def register(name: str, description: str, matches: Callable[[str], bool] | None = None, priority: int = 0):
    """Class decorator: make an adapter loadable by `name` (and by any id `matches` accepts).

    Matchers with a higher `priority` are tried first (e.g. "sentence-transformers/clip-..."
    must reach the sentence-transformers adapter before the CLIP one sees "clip").
    """

    def wrap(cls):
        _ADAPTERS[name] = (cls, description)
        if matches is not None:
            _MATCHERS.append((matches, name, priority))
            _MATCHERS.sort(key=lambda m: -m[2])
        return cls

    return wrap


def _ensure_builtin() -> None:
    # importing the adapter modules registers them
    from hardneg.models import blind, chance, clip, sentence_transformers_adapter, trained, xclip  # noqa: F401


def available_models() -> dict[str, str]:
    """Registered adapter names and what each loads."""
    _ensure_builtin()
    return {k: v[1] for k, v in sorted(_ADAPTERS.items())}


def _local_model_type(path: Path) -> str | None:
    if (path / "modules.json").is_file():
        return "sentence-transformers"
    cfg = path / "config.json"
    if cfg.is_file():
        try:
            return json.loads(cfg.read_text()).get("model_type")
        except (OSError, json.JSONDecodeError):
            return None
    return None


def resolve(model: str) -> tuple[str, str]:
    """(adapter name, model id) for what a user typed."""
    _ensure_builtin()
    if ":" in model and model.split(":", 1)[0] in _ADAPTERS and not Path(model).exists():
        name, model_id = model.split(":", 1)
        return name, model_id
    if model in _ADAPTERS:
        return model, ""
    path = Path(model)
    if "@" in model and not path.exists() and Path(model.rsplit("@", 1)[0]).is_dir():  # checkpoint@head
        path = Path(model.rsplit("@", 1)[0])
        if _local_model_type(path) == "hardneg-trained":
            return "trained", model
    if path.is_dir():
        kind = _local_model_type(path)
        mapping = {"clip": "clip", "xclip": "xclip", "sentence-transformers": "st", "hardneg-trained": "trained"}
        if kind in mapping:
            return mapping[kind], model
        raise ValueError(f"model folder {model} has model_type {kind!r}; supported: clip, xclip, sentence-transformers, hardneg-trained "
                         "(or prefix the path with an adapter name, e.g. clip:/path)")
    for pred, name, _ in _MATCHERS:
        if pred(model):
            return name, model
    raise ValueError(
        f"no adapter for model {model!r}; use a CLIP or X-CLIP Hub id, 'st:<sentence-transformers id>', "
        f"'blind-lm:<causal LM id>' or one of {sorted(_ADAPTERS)}"
    )


def load_model(model: str, device: str | None = None, fp16: bool = False, revision: str | None = None) -> VideoTextModel:
    """Load a model once (call this once per worker)."""
    name, model_id = resolve(model)
    cls = _ADAPTERS[name][0]
    return cls(model_id or None, device=device, fp16=fp16, revision=revision)
