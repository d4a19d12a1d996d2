"""Run lmms-eval 0.7.3 beside this project's locked stack (the CPU torch 2.13 wheel, filelock 4), offline.

lmms-eval 0.7.3 declares `torchvision` (whose wheels pin another torch) and `av<16`, so it is installed with
`pip install --no-deps lmms-eval==0.7.3` and the few packages it imports on the paths used here (the `lmms-eval`
extra: docs/models.md, "lmms-eval"). Two shims, installed by `install_shims()` before lmms-eval is imported:

* torchvision: where it is not installed, a small module stands in for the calls that qwen-vl-utils
  (`vision_process.py`, `fetch_video`) and transformers' Qwen2-VL video processor make: `resize` of a (T, C, H, W)
  tensor, bicubic with antialiasing as torchvision computes it on tensors (float `interpolate`, then for uint8
  input rounded and clamped to 0..255), `normalize`, `to_dtype`, `grayscale_to_rgb`, `InterpolationMode`. Nothing else: a call outside
  them raises, naming the shim.
* filelock: lmms-eval's evaluator patches `filelock._api.FileLockMeta` (filelock 3.x) to share locks across
  classes (`_enable_reentrant_filelocks`); filelock 4 has no `_api`, so the patch is marked done and skipped. It
  only matters for nested `load_dataset` calls on one lock file, which local task data does not make.

Never used by hardneg's own scoring: tests and `hardneg export lmms-eval` users call it.
"""

from __future__ import annotations

import enum
import importlib.machinery
import importlib.util
import sys
import types

SHIM_VERSION = "0.0.0+hardneg.shim"


class InterpolationMode(enum.Enum):
    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


def resize(img, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
    """torchvision's tensor `resize` (transforms/functional.py -> _functional_tensor.resize; v2 `resize_image`):
    `torch.nn.functional.interpolate` in float; uint8 input is rounded (bicubic: clamped first) and cast back."""
    import torch

    if not isinstance(img, torch.Tensor):
        raise TypeError(f"the hardneg torchvision shim resizes tensors only, got {type(img).__name__}")
    mode = getattr(interpolation, "value", interpolation)
    if mode not in ("bilinear", "bicubic", "nearest", "nearest-exact"):
        raise NotImplementedError(f"the hardneg torchvision shim has no {mode!r} resize")
    if isinstance(size, int):
        size = [size, size]
    h, w = int(size[0]), int(size[1])
    shape = img.shape
    x = img.reshape(-1, *shape[-3:])
    dtype = x.dtype
    x = x.float() if not x.is_floating_point() else x
    kw = {"align_corners": False, "antialias": bool(antialias)} if mode in ("bilinear", "bicubic") else {}
    out = torch.nn.functional.interpolate(x, size=[h, w], mode=mode, **kw)
    if dtype == torch.uint8:
        if mode == "bicubic":
            out = out.clamp(0, 255)
        out = out.round().to(dtype)
    return out.reshape(*shape[:-2], h, w)


def normalize(tensor, mean, std, inplace=False):
    import torch

    mean = torch.as_tensor(mean, dtype=tensor.dtype, device=tensor.device).view(-1, 1, 1)
    std = torch.as_tensor(std, dtype=tensor.dtype, device=tensor.device).view(-1, 1, 1)
    return (tensor.sub_(mean).div_(std)) if inplace else (tensor - mean) / std


def to_dtype(inpt, dtype=None, scale=False):
    import torch

    dtype = dtype or torch.float32
    if not scale:
        return inpt.to(dtype)
    if inpt.dtype == torch.uint8 and dtype.is_floating_point:
        return inpt.to(dtype) / 255.0
    raise NotImplementedError("the hardneg torchvision shim scales uint8 to float only")


def grayscale_to_rgb(image):
    """torchvision v2 `grayscale_to_rgb`: one channel repeated to three; three channels returned as they are."""
    if image.shape[-3] >= 3:
        return image
    return image.repeat_interleave(3, dim=-3) if image.shape[-3] == 1 else image


def _unsupported(name: str):
    def fail(*_a, **_k):
        raise NotImplementedError(f"torchvision.{name} is not in hardneg's torchvision shim "
                                  "(hardneg.lmms_eval_compat); install a torchvision that matches your torch")
    return fail


def _module(name: str, **attrs) -> types.ModuleType:
    mod = types.ModuleType(name)
    mod.__spec__ = importlib.machinery.ModuleSpec(name, loader=None, is_package=True)
    mod.__path__ = []  # a package: submodules import
    for k, v in attrs.items():
        setattr(mod, k, v)
    sys.modules[name] = mod
    return mod


def install_torchvision_shim() -> bool:
    """Put the shim in `sys.modules` where torchvision is not installed; True when it did."""
    if "torchvision" in sys.modules or importlib.util.find_spec("torchvision") is not None:
        return False
    funcs = {"resize": resize, "normalize": normalize, "to_dtype": to_dtype, "InterpolationMode": InterpolationMode,
             "pad": _unsupported("pad"), "crop": _unsupported("crop"), "center_crop": _unsupported("center_crop"),
             "grayscale_to_rgb": grayscale_to_rgb, "to_tensor": _unsupported("to_tensor"),
             "pil_to_tensor": _unsupported("pil_to_tensor")}
    tv = _module("torchvision", __version__=SHIM_VERSION)
    tv.io = _module("torchvision.io", read_video=_unsupported("io.read_video"))
    f = _module("torchvision.transforms.functional", **funcs)
    v2f = _module("torchvision.transforms.v2.functional", **funcs)
    v2 = _module("torchvision.transforms.v2", functional=v2f, InterpolationMode=InterpolationMode)
    tv.transforms = _module("torchvision.transforms", functional=f, v2=v2, InterpolationMode=InterpolationMode,
                            Resize=_unsupported("transforms.Resize"))
    return True


def skip_filelock_patch() -> bool:
    """Mark lmms-eval's filelock 3.x patch done where filelock has no `_api` (filelock 4); True when it did."""
    if importlib.util.find_spec("filelock._api") is not None:
        return False
    from lmms_eval import evaluator

    evaluator._enable_reentrant_filelocks._patched = True
    return True


def install_shims() -> dict[str, bool]:
    """Both shims; call before lmms-eval's models load. {"torchvision": installed, "filelock": skipped}."""
    tv = install_torchvision_shim()
    return {"torchvision": tv, "filelock": skip_filelock_patch()}


__all__ = ["InterpolationMode", "SHIM_VERSION", "install_shims", "install_torchvision_shim", "normalize", "resize",
           "skip_filelock_patch", "to_dtype"]
