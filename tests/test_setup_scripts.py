"""Issue 27 §1: the set-up scripts say where they install, and test.sh and quickstart.sh use that same Python.

`scripts/python-env.sh` holds the rule (sourced by install.sh, test.sh and quickstart.sh); these tests run it
under each situation with fake interpreters, so nothing is installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _choose(tmp_path: Path, **env) -> tuple[str, str, str]:
    base = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "HARDNEG_VENV")}
    code = f'cd {tmp_path} && source {REPO}/scripts/python-env.sh && printf "%s\\n%s\\n%s\\n" "$PY" "$WHERE" "$MAKE_VENV"'
    out = subprocess.run(["bash", "-c", code], env={**base, **env}, capture_output=True, text=True, check=True)
    py, where, make = (out.stdout.split("\n") + ["", "", ""])[:3]
    return py, where, make


def _fake_venv(path: Path) -> Path:
    (path / "bin").mkdir(parents=True)
    (path / "bin" / "python").symlink_to(sys.executable)
    return path


def test_an_active_venv_is_used_and_named(tmp_path):
    venv = _fake_venv(tmp_path / "v")
    py, where, make = _choose(tmp_path, VIRTUAL_ENV=str(venv))
    assert py == f"{venv}/bin/python" and f"the active virtual environment {venv}" == where and not make


def test_hardneg_venv_is_made_when_missing(tmp_path):
    py, where, make = _choose(tmp_path, HARDNEG_VENV=str(tmp_path / "proj"))
    assert py == f"{tmp_path}/proj/bin/python" and make == str(tmp_path / "proj") and "source" in where


def test_without_a_venv_the_python_on_path_is_named_in_full(tmp_path):
    py, where, make = _choose(tmp_path)
    externally_managed = (Path(subprocess.run(["python3", "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"],
                                              capture_output=True, text=True).stdout.strip()) / "EXTERNALLY-MANAGED").exists()
    if externally_managed:  # e.g. Debian's own python3: the clone's .venv
        assert py == f"{tmp_path}/.venv/bin/python" and ".venv" in where
    else:
        assert Path(py).is_absolute() and "no virtual environment is active" in where and py in where and not make


def test_the_scripts_use_the_chosen_python():
    for name in ("install.sh", "test.sh", "quickstart.sh"):
        text = (REPO / "scripts" / name).read_text()
        assert "source scripts/python-env.sh" in text and '"$PY" -m' in text, name
        assert "python3 -m pip" not in text and "\nhardneg " not in text, name
    assert "installing into ${WHERE}" in (REPO / "scripts" / "install.sh").read_text()
    test_sh = (REPO / "scripts" / "test.sh").read_text()
    assert '-m "not slow"' in test_sh and "-m slow" in test_sh
