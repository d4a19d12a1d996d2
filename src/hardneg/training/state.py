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
            if not isinstance(value["__float__"], str) or len(value["__float__"]) > 40:
                raise ValueError("__float__")
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


#: bounds of a resume state's header (hardneg writes a few kB, 4 levels deep)
MAX_HEADER_BYTES = 1 << 20
MAX_HEADER_DEPTH = 12
#: the largest step a state may record (far above any run; an int the trainer can count to)
MAX_STEP = 10**12
#: optimizer hyperparameters that must be finite non-negative numbers when present (AdamW's and SGD's)
_GROUP_NUMBERS = ("lr", "weight_decay", "eps", "momentum", "dampening", "initial_lr")
#: optimizer state tensors that can only be non-negative (a negative second moment makes every update NaN)
_NON_NEGATIVE = ("exp_avg_sq", "max_exp_avg_sq", "step")


def _checked_info(raw: Any, field: str) -> dict:
    """The header's JSON through the guards (`hardneg.guards`): size and nesting measured before parsing (no
    RecursionError), then every field typed and bounded (no OverflowError or TypeError later); GuardError else."""
    from hardneg import guards

    info = guards.json_text(raw if isinstance(raw, (str, bytes)) else b"", field, max_bytes=MAX_HEADER_BYTES,
                            max_depth=MAX_HEADER_DEPTH, fix="restore the file, or pass --overwrite to start again")
    if not isinstance(info, dict):
        raise guards.GuardError(field, "is not a JSON object", "restore the file, or pass --overwrite")
    fix = "restore the file, or pass --overwrite to start again"
    try:
        info = _from_json(info)
    except (TypeError, ValueError, OverflowError):  # a '__float__' that is not a float's text
        raise guards.GuardError(field, "holds a malformed number", fix) from None
    if info.get("format") != FORMAT:
        raise guards.GuardError(f"{field}.format", f"is {guards.shown(info.get('format'))}, not {FORMAT!r}", fix)
    out = {"step": guards.whole(info.get("step"), f"{field}.step", lo=0, hi=MAX_STEP, fix=fix),
           "settings_key": guards.text(info.get("settings_key"), f"{field}.settings_key", max_len=200, fix=fix),
           "status": guards.optional_text(info.get("status"), f"{field}.status", max_len=200, fix=fix)}
    if not isinstance(info.get("settings"), dict):
        raise guards.GuardError(f"{field}.settings", "is not an object", fix)
    out["settings"] = info["settings"]
    loss = info.get("last_loss")
    if loss is not None and (isinstance(loss, bool) or not isinstance(loss, (int, float))):
        raise guards.GuardError(f"{field}.last_loss", f"is {guards.shown(loss)}, not a number", fix)
    out["last_loss"] = None if loss is None else float(loss)  # NaN allowed: a run stopped on a non-finite loss
    params = info.get("optimizer_params")
    if not isinstance(params, list):
        raise guards.GuardError(f"{field}.optimizer_params", "is not a list", fix)
    out["optimizer_params"] = [guards.whole(i, f"{field}.optimizer_params", lo=0, hi=10**7, fix=fix) for i in params]
    scalars = info.get("optimizer_scalars")
    if not isinstance(scalars, dict) or not all(isinstance(v, dict) for v in scalars.values()):
        raise guards.GuardError(f"{field}.optimizer_scalars", "is not an object of objects", fix)
    for idx, per in scalars.items():
        for key, v in per.items():
            guards.number(v, f"{field}.optimizer_scalars.{idx}.{key}",
                          lo=0 if key in _NON_NEGATIVE else None, fix=fix)
    out["optimizer_scalars"] = scalars
    groups = info.get("param_groups")
    if not isinstance(groups, list) or not groups or not all(isinstance(g, dict) for g in groups):
        raise guards.GuardError(f"{field}.param_groups", "is not a list of objects", fix)
    for k, g in enumerate(groups):
        where = f"{field}.param_groups[{k}]"
        if not isinstance(g.get("params"), list):
            raise guards.GuardError(f"{where}.params", "is not a list", fix)
        g["params"] = [guards.whole(i, f"{where}.params", lo=0, hi=10**7, fix=fix) for i in g["params"]]
        for key in _GROUP_NUMBERS:
            if g.get(key) is not None:
                g[key] = guards.number(g[key], f"{where}.{key}", lo=0, fix=fix)
        if g.get("betas") is not None:
            betas = g["betas"]
            if not isinstance(betas, list) or len(betas) != 2:
                raise guards.GuardError(f"{where}.betas", f"is {guards.shown(betas)}, not two numbers", fix)
            g["betas"] = [guards.number(b, f"{where}.betas", lo=0, hi=1, fix=fix) for b in betas]
    out["param_groups"] = groups
    return out


def load_state(path: Path) -> dict:
    """{"step", "settings", "settings_key", "status", "last_loss", "model", "optimizer"} read from `path`
    without running anything; a StateError (naming the file, the field and the fix) when it cannot be read or
    holds anything a run could not resume from: the header passes the guards (`_checked_info`), every tensor
    name is one hardneg writes, and every floating tensor is finite (a crafted state once resumed and wrote a
    checkpoint of NaNs, issue 36 N4)."""
    from safetensors import safe_open

    from hardneg import guards

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
            names = list(fh.keys())
            if len(names) > 100_000:
                raise ValueError(f"{len(names):,} tensors")
            tensors = {k: fh.get_tensor(k) for k in names}
    except Exception as exc:  # noqa: BLE001 (safetensors raises its own error types for truncated or random bytes)
        raise StateError(f"{path} is not a readable trainer state ({type(exc).__name__}: {str(exc)[:120]}); "
                         f"{fix}") from None
    if _KEY not in meta:
        raise StateError(f"{path} holds tensors but not the state `hardneg train` writes (no {_KEY!r} header); {fix}")
    try:
        info = _checked_info(meta[_KEY], "its header")
        optimizer_state: dict[int, dict] = {}
        for idx in info["optimizer_params"]:
            optimizer_state[idx] = dict(info["optimizer_scalars"].get(str(idx), {}))
        model = {}
        for name, t in tensors.items():
            kind, _, rest = name.partition(".")
            if kind == "optim":
                idx, _, key = rest.partition(".")
                idx = guards.whole(idx, f"tensor {guards.shown(name)}", lo=0, hi=10**7, fix=fix)
                key = guards.text(key, f"tensor {guards.shown(name)}", fix=fix)
                optimizer_state.setdefault(idx, {})[key] = t
            elif kind == "model" and rest:
                model[rest] = t
            else:
                raise guards.GuardError(f"tensor {guards.shown(name)}", "is not one `hardneg train` writes", fix)
            if t.is_floating_point() or t.is_complex():
                if not bool(t.isfinite().all()):
                    raise guards.GuardError(f"tensor {guards.shown(name)}", "holds NaN or infinite values", fix)
                if kind == "optim" and key in _NON_NEGATIVE and t.numel() and bool((t < 0).any()):
                    raise guards.GuardError(f"tensor {guards.shown(name)}", "holds negative values", fix)
        if not model:
            raise guards.GuardError("its tensors", "hold no model weights", fix)
    except guards.GuardError as exc:
        raise StateError(f"{path} holds tensors but not a state `hardneg train` can resume from: {exc}") from None
    return {"step": info["step"], "settings": info["settings"], "settings_key": info["settings_key"],
            "status": info["status"], "last_loss": info["last_loss"], "model": model,
            "optimizer": {"state": optimizer_state, "param_groups": info["param_groups"]}}


def apply_state(saved: dict, net, optimizer, path: Path) -> None:
    """Load the saved weights and optimizer state into this run's network and optimizer; a StateError when they
    do not fit (another model or objective)."""
    try:
        net.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        params = [p for g in optimizer.param_groups for p in g["params"]]
        for p, per in ((p, optimizer.state.get(p, {})) for p in params):
            for key, t in per.items():  # a moment of another shape or an integer dtype fails only mid-step
                if key != "step" and hasattr(t, "shape") and (t.shape != p.shape or not t.is_floating_point()):
                    raise ValueError(f"optimizer state {key!r} has shape {tuple(t.shape)} and dtype {t.dtype}; "
                                     f"its parameter has shape {tuple(p.shape)}")
    except (RuntimeError, ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        raise StateError(f"{path} does not fit this run's model ({type(exc).__name__}: {str(exc)[:160]}); resume "
                         "with the settings it was trained with, or pass --overwrite to start again") from None


__all__ = ["LEGACY_STATE", "STATE", "StateError", "apply_state", "load_state", "state_bytes"]
