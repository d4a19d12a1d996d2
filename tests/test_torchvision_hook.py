"""PyPI's torchvision (a CUDA build) beside the CPU torch wheel: its transforms import and run in any interpreter
of the environment, whatever is imported first (src/_hardneg_torchvision.py says why)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torchvision") is None,
                                reason="torchvision is not installed (the `models` extra installs it)")

_FIRST_IMPORT = """
import torchvision, torch
import torchvision.transforms.v2.functional as F
assert F.resize(torch.rand(3, 64, 48), [32, 24]).shape == (3, 32, 24)
from transformers.models.qwen2_vl.video_processing_qwen2_vl import Qwen2VLVideoProcessor
import numpy as np
out = Qwen2VLVideoProcessor()(videos=[np.zeros((4, 56, 56, 3), dtype=np.uint8)], return_tensors="pt")
print(tuple(out["video_grid_thw"][0].tolist()))
"""


@pytest.mark.slow
def test_torchvision_imports_first_in_a_fresh_interpreter():
    """The start-up line (hardneg_torchvision.pth) runs before user code: `import torchvision` as the first line
    works, and transformers' video processor runs on it."""
    done = subprocess.run([sys.executable, "-c", _FIRST_IMPORT], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1].startswith("(2, ")  # 4 frames, 2 per temporal patch


def test_without_the_hook_the_cuda_build_fails_here():
    """The hook is what makes it work: without site start-up (`-S`) and without hardneg, the CUDA build of
    torchvision fails to import beside the CPU torch (skipped where torchvision's compiled ops load)."""
    import _hardneg_torchvision

    spec = importlib.util.find_spec("torchvision")
    if _hardneg_torchvision._compiled_ops_load(spec):
        pytest.skip("torchvision's compiled ops load into this torch: no hook is needed")
    paths = [p for p in sys.path if p]
    code = f"import sys; sys.path[:0] = {paths!r}; import torchvision"
    done = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode != 0 and "torchvision::nms" in done.stderr


@pytest.mark.slow
def test_import_hardneg_installs_the_hook_without_site():
    """`import hardneg` installs the same hook, for interpreters started without site (`-S`)."""
    paths = [p for p in sys.path if p]
    code = f"import sys; sys.path[:0] = {paths!r}; import hardneg, torchvision; print(torchvision.__version__)"
    done = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
