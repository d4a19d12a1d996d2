"""Run lmms-eval 0.7.3 beside this project's locked stack (the CPU torch 2.13 wheel, filelock 4), offline.

lmms-eval 0.7.3 declares `av<16` (the lock has av 18), so it is installed with `pip install --no-deps
lmms-eval==0.7.3` and the few packages it imports on the paths used here (the `lmms-eval` extra: docs/models.md,
"Running lmms-eval here"). torchvision comes with the `models` extra and imports beside the CPU torch through the
start-up hook `src/_hardneg_torchvision.py`, so lmms-eval, qwen-vl-utils and transformers' processors run on
torchvision's own transforms. One shim remains, installed by `install_shims()` before lmms-eval loads a model:

* filelock: lmms-eval's evaluator patches `filelock._api.FileLockMeta` (filelock 3.x) to share locks across
  classes (`_enable_reentrant_filelocks`); filelock 4 has no `_api`, so the patch is marked done and skipped. It
  only matters for nested `load_dataset` calls on one lock file, which local task data does not make.

Never used by hardneg's own scoring: tests and `hardneg export lmms-eval` users call it.
"""

from __future__ import annotations

import importlib.util


def skip_filelock_patch() -> bool:
    """Mark lmms-eval's filelock 3.x patch done where filelock has no `_api` (filelock 4); True when it did."""
    if importlib.util.find_spec("filelock._api") is not None:
        return False
    from lmms_eval import evaluator

    evaluator._enable_reentrant_filelocks._patched = True
    return True


def install_shims() -> dict[str, bool]:
    """The shims lmms-eval needs here; call before lmms-eval's models load. {"filelock": skipped}."""
    return {"filelock": skip_filelock_patch()}


__all__ = ["install_shims", "skip_filelock_patch"]
