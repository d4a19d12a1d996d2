"""One model over several devices: accelerate's placement (`device_map="auto"`, `max_memory`), for video LLMs too
large for one GPU (a 72B model in bf16 is about 145 GB of weights).

The placement travels as the device string, so every place that loads a model by name (the scorer, the local and
Ray runners' workers) places it the same way without a new argument: `map:auto`, or `map:auto|0=70GiB,1=70GiB,
cpu=200GiB` with a cap per device (GPU index, "cpu"; what does not fit goes to disk, in a temporary folder).
`hardneg run/score --device-map auto --max-memory 0=70GiB,cpu=200GiB` writes it (`device_string`).
"""

from __future__ import annotations

import re

PREFIX = "map:"
_SIZE = re.compile(r"^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KIB|MIB|GIB|TIB)?$", re.I)


def parse_max_memory(text: str | None) -> dict | None:
    """"0=70GiB,1=70GiB,cpu=200GiB" -> {0: "70GiB", 1: "70GiB", "cpu": "200GiB"} (a clear error otherwise)."""
    if not text:
        return None
    out: dict = {}
    for part in text.split(","):
        key, sep, size = part.strip().partition("=")
        key, size = key.strip(), size.strip()
        if not sep or not (key.isdigit() or key in ("cpu", "mps")) or not _SIZE.match(size):
            raise ValueError(f"--max-memory {text!r}: give DEVICE=SIZE pairs separated by commas, DEVICE a GPU index "
                             "or cpu, SIZE like 70GiB or 500MB, e.g. --max-memory 0=70GiB,1=70GiB,cpu=200GiB")
        out[int(key) if key.isdigit() else key] = size
    return out


def device_string(device_map: str | None, max_memory: str | None, device: str | None = None) -> str | None:
    """The device string that carries a placement (or `device` when there is none)."""
    if not device_map:
        if max_memory:
            raise ValueError("--max-memory caps the devices of a placed model: give --device-map auto with it")
        return device
    if device:
        raise ValueError("give either --device (one device) or --device-map (the model over several devices), not both")
    if device_map not in ("auto", "balanced", "balanced_low_0", "sequential"):
        raise ValueError(f"--device-map {device_map!r}: use auto (or balanced, balanced_low_0, sequential: accelerate's "
                         "placements)")
    parse_max_memory(max_memory)  # the error now, not in a worker
    return PREFIX + device_map + (f"|{max_memory}" if max_memory else "")


def parse(device: str | None) -> tuple[str, dict | None] | None:
    """(device_map, max_memory) of a placement device string, else None."""
    if not device or not str(device).startswith(PREFIX):
        return None
    body = str(device)[len(PREFIX):]
    device_map, _, memory = body.partition("|")
    return device_map, parse_max_memory(memory or None)


def plan_device_map(model_id: str, dtype, kw: dict, device_map: str, max_memory: dict | None) -> dict:
    """accelerate's placement of the model's modules (balanced over the GPUs for "auto"/"balanced", as transformers
    does), with the parameters that sit directly on a parent module (LLaVA-OneVision's `image_newline`) kept on the
    main device: accelerate's hooks move a module's inputs and weights, not a parent's loose parameter, so one left
    offloaded stays on the meta device (transformers 5.24, accelerate 1.15)."""
    from accelerate import infer_auto_device_map, init_empty_weights
    from accelerate.utils import get_balanced_memory
    from transformers import AutoConfig, AutoModelForImageTextToText

    config = AutoConfig.from_pretrained(model_id, **kw)
    with init_empty_weights():
        empty = AutoModelForImageTextToText.from_config(config, dtype=dtype)
    no_split = list(getattr(empty, "_no_split_modules", None) or [])
    if device_map != "sequential":
        max_memory = get_balanced_memory(empty, max_memory=max_memory, no_split_module_classes=no_split, dtype=dtype,
                                         low_zero=device_map == "balanced_low_0")
    plan = infer_auto_device_map(empty, max_memory=max_memory, no_split_module_classes=no_split, dtype=dtype)
    import torch

    modules = dict(empty.named_modules())
    placed = [d for d in plan.values() if d not in ("disk", "cpu")]
    main = min(placed, key=str) if placed else "cpu"

    def on_main(key: str) -> bool:
        # a loose parameter; or torch's MultiheadAttention (SigLIP's pooling head), which reads its out_proj's
        # weight without calling out_proj, so an offloaded out_proj would stay on the meta device
        return key not in modules or any(isinstance(m, torch.nn.MultiheadAttention) for m in modules[key].modules())

    return {k: (main if on_main(k) else v) for k, v in plan.items()}


def main_device(model) -> str:
    """Where a placed model takes its inputs: its first GPU, else the CPU (disk-offloaded layers run there)."""
    placed = set(getattr(model, "hf_device_map", {}).values())
    gpus = sorted(d for d in placed if isinstance(d, int))
    gpus += sorted(int(str(d).split(":")[1]) for d in placed if str(d).startswith("cuda:"))
    return f"cuda:{min(gpus)}" if gpus else "cpu"


__all__ = ["PREFIX", "device_string", "main_device", "parse", "parse_max_memory", "plan_device_map"]
