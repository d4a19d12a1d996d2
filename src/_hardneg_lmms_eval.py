"""Let lmms-eval 0.7.3's own command line (`lmms-eval --include_path ...`) run beside filelock 4.

Why: lmms-eval's evaluator calls `_enable_reentrant_filelocks()` before it evaluates; that function imports
`filelock._api` (filelock 3.x) to share file locks across two lock classes, and filelock 4 (the version locked
here) has no `_api`, so every lmms-eval run stopped with "No module named 'filelock._api'". The patch only matters
for nested `load_dataset` calls on one lock file, which local task data does not make, so it is marked done
(its own `_patched` flag, the one lmms-eval checks) right after `lmms_eval.evaluator` is imported, and only when
filelock has no `_api`. Where filelock 3 is installed, nothing is changed.

`install()` adds an import hook that imports nothing until something imports `lmms_eval.evaluator`. It runs at
interpreter start-up through `hardneg_lmms_eval.pth` (installed beside this module by the wheel, editable or not,
as `hardneg_torchvision.pth` is), so `lmms-eval` from its own console script needs no Python shim;
`hardneg.lmms_eval_compat.install_shims()` does the same for interpreters started without site (`-S`). This module
is top-level and imports nothing of hardneg, so that the start-up line never fails.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys

TARGET = "lmms_eval.evaluator"


def skip_filelock_patch(evaluator) -> bool:
    """Mark lmms-eval's filelock-3 patch done where filelock has no `_api`; True when it did."""
    try:
        has_api = importlib.util.find_spec("filelock._api") is not None
    except ModuleNotFoundError:  # no filelock at all: lmms-eval's own import fails first
        has_api = True
    patch = getattr(evaluator, "_enable_reentrant_filelocks", None)
    if has_api or patch is None:
        return False
    patch._patched = True
    return True


class _Loader(importlib.abc.Loader):
    """lmms-eval's own loader for `lmms_eval.evaluator`, then `skip_filelock_patch` on the module."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        skip_filelock_patch(module)


class _LmmsEvalHook(importlib.abc.MetaPathFinder):
    """Wraps the loader of the first `import lmms_eval.evaluator`, then steps aside."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != TARGET:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader)
        return spec


def install() -> None:
    """Put the hook in front of the import system once (applies the skip at once if the evaluator is imported)."""
    if TARGET in sys.modules:
        skip_filelock_patch(sys.modules[TARGET])
        return
    if not any(isinstance(f, _LmmsEvalHook) for f in sys.meta_path):
        sys.meta_path.insert(0, _LmmsEvalHook())
