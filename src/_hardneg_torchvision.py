"""Let PyPI's torchvision import beside a CPU-only torch.

Why: transformers' video processors (`Qwen2VLVideoProcessor`, every `*VideoProcessor`) and its fast image
processors run on `torchvision.transforms.v2.functional`, so the model's own processor, our reference input
contract, needs torchvision. PyPI serves only the CUDA build of torchvision 0.28.0 (the release that pins
torch==2.13.0); its compiled ops `torchvision/_C.so` link `libc10_cuda.so` and cannot load beside the CPU
torch wheel used here. torchvision already tolerates that (`torchvision.extension._load_library` catches the
OSError and `_has_ops()` turns False, so every Python transform still runs on plain torch ops), except for two
fake-tensor registrations in `torchvision/_meta_registrations.py` (`register_fake("torchvision::nms")` and
`"torchvision::qnms"`) that are not guarded by `_has_ops()` and fail with "operator torchvision::nms does
not exist". We declare those two operator schemas (the same signatures `_C` declares) before torchvision
runs, and only when its `_C` cannot be loaded: the detection ops (`nms`, `roi_align`, ...) stay unavailable,
the transforms are torchvision's own code, unchanged. Where torchvision's `_C` loads (a matching build, a GPU
machine), this does nothing.

`install()` adds an import hook; it imports nothing until something imports torchvision, so start-up stays
light. It runs at interpreter start-up through `hardneg_torchvision.pth` (installed beside this module by the
wheel, editable or not), so `import datasets` or lmms-eval's own scripts, which import torchvision before any
hardneg code, work too; `hardneg/__init__.py` calls it again for interpreters started without site (`-S`).
This module is top-level, and imports nothing of hardneg, so that the start-up line never fails.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys

#: the schemas `torchvision/csrc/ops/nms.cpp` declares (`TORCH_LIBRARY_FRAGMENT(torchvision, m)`)
_SCHEMAS = ("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
            "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
_state = {"library": None, "checked": False}


def _compiled_ops_load(spec) -> bool:
    """Whether torchvision's own `_C` extension loads into this torch (it is then left to torchvision)."""
    import os

    import torch

    locations = list(spec.submodule_search_locations or [])
    for folder in locations:
        for name in os.listdir(folder):
            if name.startswith("_C.") and name.endswith((".so", ".pyd")):
                try:
                    torch.ops.load_library(os.path.join(folder, name))
                    return True
                except (OSError, RuntimeError):
                    return False
    return False


def declare_missing_ops(spec=None) -> bool:
    """Declare the two schemas torchvision's fake registrations need when its `_C` cannot load; True if done."""
    if _state["checked"]:
        return _state["library"] is not None
    _state["checked"] = True
    spec = spec or importlib.util.find_spec("torchvision")
    if spec is None or _compiled_ops_load(spec):
        return False
    import torch

    library = torch.library.Library("torchvision", "FRAGMENT")
    for schema in _SCHEMAS:
        try:
            library.define(schema)
        except RuntimeError:  # already declared (another copy of this hook ran first)
            pass
    _state["library"] = library  # a Library's definitions last as long as the object
    return True


class _TorchvisionHook(importlib.abc.MetaPathFinder):
    """Runs `declare_missing_ops` right before the first `import torchvision`, then steps aside."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torchvision":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("torchvision")
        if spec is not None:
            declare_missing_ops(spec)
        return spec


def install() -> None:
    """Put the hook in front of the import system once (no-op if torchvision is already imported)."""
    if "torchvision" in sys.modules or any(isinstance(f, _TorchvisionHook) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _TorchvisionHook())
