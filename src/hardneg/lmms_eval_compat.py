"""Run lmms-eval 0.7.3 beside this project's locked stack (the CPU torch 2.13 wheel, filelock 4), offline.

lmms-eval 0.7.3 declares `av<16` (the lock has av 18), so it is installed with `pip install --no-deps
lmms-eval==0.7.3` and the few packages it imports on the paths used here (the `lmms-eval` extra: docs/models.md,
"Running lmms-eval here"). Two start-up hooks, installed by .pth files beside the project (editable or wheel), make
lmms-eval's own command line run with no Python shim:

* torchvision (`src/_hardneg_torchvision.py`): PyPI's CUDA torchvision imports beside the CPU torch.
* filelock (`src/_hardneg_lmms_eval.py`): lmms-eval's evaluator patches `filelock._api.FileLockMeta` (filelock 3.x)
  to share locks across classes (`_enable_reentrant_filelocks`); filelock 4 has no `_api`, so the patch is marked
  done and skipped. It only matters for nested `load_dataset` calls on one lock file, which local task data does
  not make.

`install_shims()` applies the same for an interpreter started without site (`-S`). Never used by hardneg's own
scoring.
"""

from __future__ import annotations


def skip_filelock_patch() -> bool:
    """Mark lmms-eval's filelock 3.x patch done where filelock has no `_api` (filelock 4); True when it did."""
    import _hardneg_lmms_eval
    from lmms_eval import evaluator

    return _hardneg_lmms_eval.skip_filelock_patch(evaluator) or bool(
        getattr(evaluator._enable_reentrant_filelocks, "_patched", False))


def install_shims() -> dict[str, bool]:
    """The shims lmms-eval needs here; call before lmms-eval's models load. {"filelock": skipped}."""
    return {"filelock": skip_filelock_patch()}


__all__ = ["install_shims", "skip_filelock_patch"]
