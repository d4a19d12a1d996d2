"""Caption rows shorter than a chunk through a linear-attention model's recurrent kernel, not its chunked one (issue 52).

Linear attention by a delta rule (Qwen3.5's Gated DeltaNet, GLM-5 Next's Kimi Delta Attention) comes in `transformers`
as two kernels of one modeling module: a chunked one (`torch_chunk_gated_delta_rule`, `chunk_kimi_delta_attention`:
the sequence padded to chunks of `chunk_size` = 64 tokens, a 63-step loop inside each chunk over (rows, heads,
chunks, 64, 64, ...) tensors) for a call of several tokens, and a recurrent one (`torch_recurrent_gated_delta_rule`,
`recurrent_kimi_delta_attention`: one step per token on each row's state) that the model itself uses for a call of
one token (its cached decoding). Both compute the same rule from the same state; they sum in another order
(the scores move by float32 rounding: at most 2.4e-6 on the tiny types, tests/vlm/test_vlm_generic.py).

A caption forward continues every row from the prefix's state by a few tokens (a caption and the template's tail:
about 30 on the tiny types, always fewer than a chunk). The chunked kernel then pads each row to 64 tokens and
runs its whole in-chunk loop; its (rows, heads, 1, 64, 64, key dim) intermediates grow with the rows, so a
forward of many rows (several items' captions) cost more per row than one item's (`generic_batch.rows_kept_per_item`
kept them apart). The recurrent kernel runs one step per token on (rows, heads, key dim, value dim) states: on
the tiny GLM-5 Next, one item at a time took 353 ms against 822 ms for 3 items (thread time, whole scoring), the
tiny Qwen3.5 87 against 107, minicpm_ocr 114 against 135.

`continuation_kernels(model, width)`, around a caption forward of `width` tokens: where a modeling module of
`model` has a chunked delta-rule kernel (a function named `*chunk*delta*` with a `chunk_size` parameter) and its
recurrent counterpart (the same name with "chunk" replaced by "recurrent"), and `width` < the chunk size, the
module's chunked kernel is the recurrent one within the block (module globals: the layers look the kernel up at
call time). The prefix forwards (hundreds of tokens) keep the chunked kernel. A model without such a pair is
left as it is, and so is a model off the CPU (`recurrent_for`). The swap is process-wide while the block runs: no other thread should run a prefix forward of the
same model type meanwhile (`BatchScorer` and `Engine` run their forwards on one thread).
"""

from __future__ import annotations

import inspect
import re
import sys
import threading
from contextlib import contextmanager

#: a kernel of a modeling module that computes a chunked delta rule (also `generic_batch.has_chunked_delta_rule`)
CHUNKED_DELTA = re.compile(r"chunk\w*delta")

_LOCK = threading.RLock()


def modeling_modules(model):
    """The Python modules defining the classes of `model`'s layers, each once (their kernels are module globals)."""
    seen = set()
    for m in model.modules():
        name = type(m).__module__
        if name in seen:
            continue
        seen.add(name)
        mod = sys.modules.get(name)
        if mod is not None:
            yield mod


def recurrent_pairs(model) -> list[tuple]:
    """(modeling module, chunked kernel's name, its chunk size, recurrent kernel) of each modeling module of `model`'s
    layers that has a chunked delta-rule kernel with a recurrent counterpart (module docstring)."""
    out = []
    for mod in modeling_modules(model):
        for key, fn in list(vars(mod).items()):
            if not (CHUNKED_DELTA.search(key) and callable(fn)):
                continue
            recurrent = getattr(mod, key.replace("chunk", "recurrent"), None)
            try:
                size = inspect.signature(fn).parameters["chunk_size"].default
            except (KeyError, TypeError, ValueError):
                continue
            if callable(recurrent) and isinstance(size, int):
                out.append((mod, key, size, recurrent))
    return out


def recurrent_for(model, width: int) -> bool:
    """Whether a caption forward of `width` tokens runs `model`'s recurrent kernels (`continuation_kernels`): on
    the CPU only (on a GPU the chunked kernel may be a fused one, flash-linear-attention's; not measured there)."""
    pairs = _pairs(model)
    if not pairs or not all(width < size for _, _, size, _ in pairs):
        return False
    first = next(model.parameters(), None)
    return first is None or first.device.type == "cpu"


_CACHE: dict = {}


def _pairs(model) -> list[tuple]:
    key = type(model)
    if key not in _CACHE:
        _CACHE[key] = recurrent_pairs(model)
    return _CACHE[key]


@contextmanager
def continuation_kernels(model, width: int):
    """Within the block, `model`'s chunked delta-rule kernels are their recurrent counterparts when `width` (the
    caption forward's tokens per row) is shorter than their chunk (module docstring); else a no-op."""
    if not recurrent_for(model, width):
        yield False
        return
    pairs = _pairs(model)
    with _LOCK:
        saved = [(mod, key, getattr(mod, key)) for mod, key, _, _ in pairs]
        try:
            for mod, key, _, recurrent in pairs:
                setattr(mod, key, _without_chunk_size(recurrent))
            yield True
        finally:
            for mod, key, fn in saved:
                setattr(mod, key, fn)


def _without_chunk_size(recurrent):
    def kernel(*args, chunk_size=None, **kwargs):  # the chunked kernel's signature, its chunk size unused
        return recurrent(*args, **kwargs)

    kernel.recurrent = recurrent
    return kernel


__all__ = ["CHUNKED_DELTA", "continuation_kernels", "modeling_modules", "recurrent_for", "recurrent_pairs"]
