"""The processor's work for the next piece of items overlaps the model's forward on this one (issue 52).

Scoring a video LLM item by item alternates two kinds of work: the processor (pixels: resizing, normalising,
patching; the captions' tokenization) and the model's forwards. `prefetched` prepares piece k+1 on one worker
thread while the caller runs piece k, so on a GPU the card does not wait for the pixels, and on a CPU with a core
to spare the two run side by side. PyTorch's operators and the tokenizers release the GIL, so the worker's pixel
work runs while the forward runs.

When it is on (`prefetch_enabled`): on a GPU always (the forward runs on the card); on the CPU only when a core
is left over by the model's own threads (`torch.get_num_threads()` < the usable cores), never with
`HARDNEG_THREADS=1` (`hardneg.threads`): on a machine with no core to spare two kinds of work at once only take
turns, and the run would not be faster, only noisier. `HARDNEG_PREFETCH=0|1` forces it off or on.
Results do not depend on it: the same pieces, prepared the same way, in the same order.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterator, Sequence, TypeVar

from hardneg.threads import count_from_env, usable_cores

T = TypeVar("T")
R = TypeVar("R")


def prefetch_enabled(device: str) -> bool:
    """Whether to prepare the next piece on a worker thread (module docstring)."""
    forced = os.environ.get("HARDNEG_PREFETCH")
    if forced in ("0", "1"):
        return forced == "1"
    if forced:
        raise ValueError(f"HARDNEG_PREFETCH must be 0 or 1; got {forced!r}")
    if count_from_env("HARDNEG_THREADS", "threads") == 1:
        return False
    if str(device).startswith("cuda"):
        return True
    import torch

    return usable_cores() > torch.get_num_threads()


def prefetched(pieces: Sequence[T], prepare: Callable[[T], R], enabled: bool) -> Iterator[R]:
    """`prepare(p)` for each piece in order; with `enabled`, piece k+1 is prepared on a worker thread while the
    caller works on piece k (at most one piece ahead, so memory holds two prepared pieces at most). An exception
    in `prepare` is raised where its piece would have been yielded."""
    if not enabled or len(pieces) < 2:
        for p in pieces:
            yield prepare(p)
        return
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="hardneg-prefetch") as pool:
        nxt = pool.submit(prepare, pieces[0])
        for k in range(len(pieces)):
            got = nxt.result()
            if k + 1 < len(pieces):
                nxt = pool.submit(prepare, pieces[k + 1])
            yield got


__all__ = ["prefetch_enabled", "prefetched"]
