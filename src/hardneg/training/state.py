"""A training run's resume state as one safetensors file: tensors, plus the rest as JSON in its header.

Why not `torch.save`: loading a pickle runs whatever code the file names, and `hardneg train --resume`
reads this file from a folder anyone may have written into (issue 29: a crafted `trainer_state.pt`
in `--out` ran its code). A safetensors file holds only named tensors and a string-to-string header,
so reading it runs nothing. The weights and the optimizer's tensors are stored under
`model.<name>` and `optim.<param index>.<key>`; the step, the settings, the optimizer's
param groups and its non-tensor state are JSON under one header key (one key: the header's order
cannot vary, so two runs that end in the same state write the same bytes).

A folder holding the old `trainer_state.pt` is never read: it is refused as a run of an older
hardneg, to be replaced with --overwrite.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

STATE = "trainer_state.safetensors"
#: the pickle an older hardneg wrote; never loaded
LEGACY_STATE = "trainer_state.pt"
FORMAT = "hardneg-trainer-state/1"
_KEY = "hardneg_state"


class StateError(ValueError):
    """The resume state cannot be read or does not fit this run: the message says which file and the fix."""


def _json_safe(value: Any) -> Any:
    """Non-finite floats as strings (JSON has no Infinity), everything else as is."""
    if isinstance(value, float) and not math.isfinite(value):
        return {"__float__": repr(value)}
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return value


def _from_json(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"__float__"}:
            return float(value["__float__"])
        return {k: _from_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_json(v) for v in value]
    return value


def state_bytes(*, step: int, settings: dict, settings_key: str, model: dict, optimizer: dict, status: str,
                last_loss: float | None) -> bytes:
    """The state file's bytes: `model` a state_dict, `optimizer` an optimizer's state_dict."""
    import torch
    from safetensors.torch import save

    tensors: dict[str, torch.Tensor] = {}
    for name, t in model.items():
        tensors[f"model.{name}"] = t.detach().cpu().contiguous().clone()
    scalars: dict[str, dict[str, Any]] = {}
    for idx, per_param in optimizer["state"].items():
        for key, v in per_param.items():
            if isinstance(v, torch.Tensor):
                tensors[f"optim.{idx}.{key}"] = v.detach().cpu().contiguous().clone()
            else:
                scalars.setdefault(str(idx), {})[key] = v
    info = {"format": FORMAT, "step": int(step), "settings": settings, "settings_key": settings_key,
            "status": status, "last_loss": last_loss, "param_groups": optimizer["param_groups"],
            "optimizer_params": sorted(int(i) for i in optimizer["state"]), "optimizer_scalars": scalars}
    header = json.dumps(_json_safe(info), sort_keys=True, default=str)
    return save(tensors, metadata={_KEY: header})


def load_state(path: Path) -> dict:
    """{"step", "settings", "settings_key", "status", "last_loss", "model", "optimizer"} read from `path`
    without running anything; a StateError (naming the file and the fix) when it cannot be read."""
    from safetensors import safe_open

    fix = (f"the file is damaged (an interrupted copy?); restore it, or pass --overwrite instead of --resume to "
           f"start the run again")
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise StateError(f"{path} cannot be read ({type(exc).__name__}); {fix}") from None
    if size == 0:
        raise StateError(f"{path} is empty; {fix}")
    try:
        with safe_open(str(path), framework="pt", device="cpu") as fh:
            meta = fh.metadata() or {}
            tensors = {k: fh.get_tensor(k) for k in fh.keys()}
    except Exception as exc:  # noqa: BLE001 (safetensors raises its own error types for truncated or random bytes)
        raise StateError(f"{path} is not a readable trainer state ({type(exc).__name__}: {str(exc)[:120]}); "
                         f"{fix}") from None
    try:
        info = _from_json(json.loads(meta[_KEY]))
        if info.get("format") != FORMAT:
            raise KeyError("format")
        step = int(info["step"])
        optimizer_state: dict[int, dict] = {}
        for idx in info["optimizer_params"]:
            optimizer_state[int(idx)] = dict(info["optimizer_scalars"].get(str(idx), {}))
        for name, t in tensors.items():
            if name.startswith("optim."):
                _, idx, key = name.split(".", 2)
                optimizer_state.setdefault(int(idx), {})[key] = t
        model = {name[len("model."):]: t for name, t in tensors.items() if name.startswith("model.")}
        return {"step": step, "settings": dict(info["settings"]), "settings_key": str(info["settings_key"]),
                "status": info.get("status"), "last_loss": info.get("last_loss"), "model": model,
                "optimizer": {"state": optimizer_state, "param_groups": info["param_groups"]}}
    except (KeyError, ValueError, TypeError, AttributeError) as exc:
        raise StateError(f"{path} holds tensors but not the state `hardneg train` writes (missing or malformed "
                         f"{str(exc)[:80]}); {fix}") from None


def apply_state(saved: dict, net, optimizer, path: Path) -> None:
    """Load the saved weights and optimizer state into this run's network and optimizer; a StateError when they
    do not fit (another model or objective)."""
    try:
        net.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
    except (RuntimeError, ValueError, KeyError, IndexError) as exc:
        raise StateError(f"{path} does not fit this run's model ({type(exc).__name__}: {str(exc)[:160]}); resume "
                         "with the settings it was trained with, or pass --overwrite to start again") from None


__all__ = ["LEGACY_STATE", "STATE", "StateError", "apply_state", "load_state", "state_bytes"]
