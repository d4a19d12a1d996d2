"""Issue 41 item 2: the tests that build an environment of their own (the wheel's, the README clone's) see the
packages of the environment running them, whichever it is: a venv, a `.venv`, or the Python on PATH.

`python -m venv --system-site-packages` links the *base* interpreter's site-packages: run from inside a venv
(the README's first case), the wheel tests lacked gradio and pyarrow. `make_venv_over_running_env` adds the
running environment's site folders explicitly instead; the check below runs whatever the environment is."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from venv_helpers import make_venv_over_running_env, running_site_dirs


def test_a_venv_made_by_the_tests_sees_this_environments_packages(tmp_path):
    py = make_venv_over_running_env(tmp_path / "venv")
    names = [n for n in ("pytest", "numpy", "pyarrow", "gradio", "pip") if importlib.util.find_spec(n)]
    assert "pytest" in names and "pip" in names
    code = ("import importlib.util as u, sys; print(sys.prefix); "
            "print(' '.join(n for n in %r if u.find_spec(n)))" % (names,))
    out = subprocess.run([str(py), "-c", code], capture_output=True, text=True, check=True, timeout=120,
                         env={"PATH": "/usr/bin:/bin"}).stdout.split("\n")
    assert Path(out[0]) == tmp_path / "venv"  # its own environment, not this one
    assert out[1].split() == names, f"seen from {sys.prefix} ({running_site_dirs()}): {out[1]}"


def test_the_new_venvs_own_folder_comes_first(tmp_path):
    """A package installed into the new venv wins over the running environment's copy (the wheel over a checkout)."""
    py = make_venv_over_running_env(tmp_path / "venv")
    own = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    (Path(own) / "pytest.py").write_text("WHERE = 'the new venv'\n")
    out = subprocess.run([str(py), "-c", "import pytest; print(pytest.WHERE)"], capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin"}, timeout=120)
    assert out.stdout.strip() == "the new venv", out.stderr[-2000:]
