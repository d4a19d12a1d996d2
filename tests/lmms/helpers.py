"""lmms-eval 0.7.3 itself, as the reference: its task modules loaded from the installed package (never a copy of
ours). Tests skip with the reason when lmms-eval is not installed (docs/models.md, "lmms-eval")."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

LMMS_EVAL_VERSION = "0.7.3"


def lmms_eval_root() -> Path:
    """The installed lmms_eval package folder (skips the test when lmms-eval 0.7.3 is not installed)."""
    spec = importlib.util.find_spec("lmms_eval")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("lmms-eval is not installed: pip install --no-deps lmms-eval==0.7.3 (docs/models.md, 'lmms-eval')")
    from importlib.metadata import version

    if version("lmms_eval") != LMMS_EVAL_VERSION:
        pytest.skip(f"lmms-eval {version('lmms_eval')} is installed; these tests pin {LMMS_EVAL_VERSION}")
    return Path(list(spec.submodule_search_locations)[0])


def task_utils(task: str, hf_home: Path):
    """lmms-eval's own tasks/<task>/utils.py, loaded by its path (it reads $HF_HOME when imported)."""
    path = lmms_eval_root() / "tasks" / task / "utils.py"
    old = os.environ.get("HF_HOME")
    os.environ["HF_HOME"] = str(hf_home)
    try:
        spec = importlib.util.spec_from_file_location(f"lmms_eval_task_{task}_utils", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        if old is None:
            os.environ.pop("HF_HOME", None)
        else:
            os.environ["HF_HOME"] = old
    return module
