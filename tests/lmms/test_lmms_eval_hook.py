"""The start-up hook src/_hardneg_lmms_eval.py: lmms-eval 0.7.3's evaluator runs its filelock-3 patch beside
filelock 4 (the lock's) without a Python shim; without the hook the same call fails as users saw it."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import lmms_eval_root

SRC = Path(__file__).resolve().parents[2] / "src"
_CALL = "from lmms_eval import evaluator; evaluator._enable_reentrant_filelocks(); print('ran')"


def _python(code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture(scope="module")
def filelock4():
    lmms_eval_root()
    if importlib.util.find_spec("filelock._api") is not None:
        pytest.skip("filelock 3 is installed: lmms-eval's patch runs as written, no hook is needed")


@pytest.mark.slow  # fresh interpreters importing lmms-eval (about 8 s each): the slow group
def test_the_hook_lets_lmms_eval_patch_step_aside(filelock4):
    done = _python("import _hardneg_lmms_eval; _hardneg_lmms_eval.install(); " + _CALL)
    assert done.returncode == 0 and done.stdout.strip().endswith("ran"), done.stderr[-2000:]


@pytest.mark.slow
def test_without_the_hook_lmms_eval_fails_on_filelock_4(filelock4):
    code = ("import sys; [sys.meta_path.remove(f) for f in list(sys.meta_path) "
            "if type(f).__name__ == '_LmmsEvalHook']; " + _CALL)
    done = _python(code)
    assert done.returncode != 0 and "filelock._api" in done.stderr


def test_the_pth_line_is_shipped_and_installs_the_hook():
    line = (SRC / "hardneg_lmms_eval.pth").read_text().strip()
    assert line == "import _hardneg_lmms_eval; _hardneg_lmms_eval.install()"
    import tomllib

    pyproject = tomllib.loads((SRC.parent / "pyproject.toml").read_text())
    include = pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    assert include["src/hardneg_lmms_eval.pth"] == "hardneg_lmms_eval.pth"
    assert include["src/_hardneg_lmms_eval.py"] == "_hardneg_lmms_eval.py"
    eps = pyproject["project"]["entry-points"]["lmms_eval.models"]
    assert eps == {"hardneg_vlm": "hardneg.lmms_export.entry:manifest"}
