"""Find the adapter class for a model name, a Hub id or a local folder.

`load_model("openai/clip-vit-base-patch32")`, `load_model("tiny-clip")`,
`load_model("st:sentence-transformers/clip-ViT-B-32")`, `load_model("blind-unigram")`,
`load_model("constant")`, `load_model("random:7")` (chance checks).
A new adapter registers itself with `@register("name", matches=...)` from `hardneg.models.registration`
(which imports no adapter); built-in ones are found by `BUILTIN_ADAPTERS` (name -> module), others by
the entry-point group `hardneg.models`.
"""

from __future__ import annotations

import contextlib
import importlib
import json
from pathlib import Path

from hardneg.hub_access import ensure_loadable
from hardneg.models.base import VideoTextModel
from hardneg.models.registration import ADAPTERS as _ADAPTERS
from hardneg.models.registration import MATCHERS as _MATCHERS
from hardneg.models.registration import register

#: built-in adapter name -> the module that registers it (imported on first use, never at import time)
BUILTIN_ADAPTERS: dict[str, str] = {
    "blind-unigram": "hardneg.models.blind",
    "blind-lm": "hardneg.models.blind",
    "blind-st": "hardneg.models.blind",
    "constant": "hardneg.models.chance",
    "random": "hardneg.models.chance",
    "clip": "hardneg.models.clip",
    "tiny-clip": "hardneg.models.clip",
    "st": "hardneg.models.sentence_transformers_adapter",
    "xclip": "hardneg.models.xclip",
    "dual": "hardneg.models.dual",
    "trained": "hardneg.models.trained",
    "vlm": "hardneg.models.vlm.model",
    "tiny-vlm": "hardneg.models.vlm.model",
    "tiny-dual": "hardneg.models.tiny_dual",
}
#: entry-point group of adapters in other packages: each entry point names a module that calls `register`
ENTRY_POINT_GROUP = "hardneg.models"

_ALL_LOADED = False


def _load_builtin(name: str) -> None:
    """Import the module that registers built-in adapter `name` (nothing for other names)."""
    if name in BUILTIN_ADAPTERS and name not in _ADAPTERS:
        importlib.import_module(BUILTIN_ADAPTERS[name])


def _ensure_builtin() -> None:
    """Register every adapter: the built-in modules, then the `hardneg.models` entry points (needed before
    matching a Hub id or listing adapters)."""
    global _ALL_LOADED
    if _ALL_LOADED:
        return
    for module in dict.fromkeys(BUILTIN_ADAPTERS.values()):
        importlib.import_module(module)
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        ep.load()
    _ALL_LOADED = True


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


def _video_llm_types() -> list[str]:
    """model_type values of the video LLMs (`hardneg.models.vlm.support`: every type of the installed
    `transformers` with a video processor and an image-text-to-text model, and the hand-written families')."""
    from hardneg.models.vlm.support import table

    return [r.model_type for r in table() if r.supported]


def resolve(model: str) -> tuple[str, str]:
    """(adapter name, model id) for what a user typed."""
    head = model.split(":", 1)[0]
    _load_builtin(head)  # a built-in adapter named outright needs only its own module
    if head not in _ADAPTERS:
        _ensure_builtin()  # a Hub id or folder: every matcher must be registered
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
        from hardneg.models.dual_types import FRAME_MEAN_TYPES, VIDEO_NATIVE_TYPES

        kind = _local_model_type(path)
        mapping = {"clip": "clip", "xclip": "xclip", "sentence-transformers": "st", "hardneg-trained": "trained"}
        mapping.update({k: "dual" for k in (*FRAME_MEAN_TYPES, *VIDEO_NATIVE_TYPES) if k not in mapping})
        mapping.update(dict.fromkeys(_video_llm_types(), "vlm"))
        if kind in mapping:
            return mapping[kind], model
        raise ValueError(f"model folder {model} has model_type {kind!r}; supported: clip, xclip, sentence-transformers, "
                         f"hardneg-trained, dual encoders ({', '.join((*FRAME_MEAN_TYPES, *VIDEO_NATIVE_TYPES))}), "
                         f"video LLMs ({', '.join(_video_llm_types())}) "
                         "(or prefix the path with an adapter name, e.g. clip:/path)")
    for pred, name, _ in _MATCHERS:
        if pred(model):
            return name, model
    raise ValueError(
        f"no adapter for model {model!r}; use a CLIP or X-CLIP Hub id, 'st:<sentence-transformers id>', "
        f"'blind-lm:<causal LM id>' or one of {sorted(_ADAPTERS)}"
    )


def load_model(model: str, device: str | None = None, fp16: bool = False, revision: str | None = None) -> VideoTextModel:
    """Load a model once (call this once per worker).

    A Hub model that can be neither found locally nor downloaded fails at once with what to do
    (`hardneg.hub_access`), instead of after huggingface_hub's half a minute of retries.
    """
    name, model_id = resolve(model)
    cls = _ADAPTERS[name][0]
    if getattr(cls, "hub_model", False):  # adapters that call from_pretrained on a Hub id or folder
        ensure_loadable(model_id or getattr(cls, "default_model_id", None), revision)
    from hardneg.models.vlm import placement
    from hardneg.models.base import pick_device

    if device not in (None, "", "auto") and placement.parse(device) is None:  # a wrong --device is named first
        pick_device(device)
    with damaged_weights_refused(model_id or model):
        return cls(model_id or None, device=device, fp16=fp16, revision=revision)


#: weight files a model folder may hold, and how each is read without running code
_WEIGHT_GLOBS = ("*.safetensors", "*.bin", "*.pt", "*.pth")


def damaged_weight_file(folder: Path) -> tuple[Path, BaseException] | None:
    """The first weight file of `folder` that cannot be read, with the error; None when all can. A `.bin`/`.pt`
    file is read by `torch.load(weights_only=True)` only (no pickle code runs), a safetensors file by its header."""
    for pattern in _WEIGHT_GLOBS:
        for path in sorted(folder.glob(pattern)):
            try:
                if path.suffix == ".safetensors":
                    from safetensors import safe_open

                    with safe_open(str(path), framework="pt", device="cpu") as fh:
                        for key in fh.keys():
                            fh.get_slice(key)
                else:
                    import torch

                    torch.load(path, map_location="cpu", weights_only=True)
            except Exception as exc:  # noqa: BLE001 (any failure to read it is the file's damage)
                return path, exc
    return None


@contextlib.contextmanager
def damaged_weights_refused(model: str | None):
    """Around loading `model`: when it is a local folder and loading fails, a damaged weight file in it becomes a
    ValueError naming the file and the fix (an `error:` line) instead of torch's or pickle's traceback (issue 36
    N7: a damaged pytorch_model.bin raised UnpicklingError), and a folder with no weight file at all one naming
    what it holds (issue 48: transformers' OSError traceback). Any other failure is raised as it was."""
    try:
        yield
    except Exception as exc:
        folder = Path(str(model)).expanduser() if model else None
        if folder is None or not folder.is_dir():  # (a ValueError too: a UnicodeDecodeError from a damaged .bin)
            raise
        # issue 48: a folder without weights (transformers says so with an OSError; a clear refusal raised before
        # the weights are read, such as an image-only model's, stays as it was)
        if isinstance(exc, OSError) and not any(any(folder.glob(p)) for p in _WEIGHT_GLOBS):
            files = ", ".join(sorted(p.name for p in folder.iterdir())[:8]) or "nothing"
            raise ValueError(f"model folder {folder} holds no weights (no *.safetensors, *.bin, *.pt or *.pth file; "
                             f"it holds {files}): copy the checkpoint's weight files into it (e.g. `hf download "
                             "ORG/NAME --local-dir DIR`), or name the model's Hub id") from None
        bad = damaged_weight_file(folder)
        if bad is None:
            raise
        path, why = bad
        import pickle

        detail = ("not plain tensors: hardneg reads weights with torch.load(weights_only=True) and never runs a "
                  "pickle's code" if isinstance(why, pickle.UnpicklingError) else str(why).split(". ")[0][:100])
        raise ValueError(f"{path} cannot be read ({type(why).__name__}: {detail}): the model folder's weights are "
                         "damaged (an interrupted copy or download?); copy the model folder again") from None
