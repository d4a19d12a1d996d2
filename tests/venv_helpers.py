"""A virtual environment for a test's subprocesses that sees the running environment's packages (issue 41).

`python -m venv --system-site-packages` links the *base* interpreter's site-packages, not the running one's: run
from inside a venv (what `scripts/install.sh` installs into when one is active), a test's own venv lacked the
packages (gradio, pyarrow), and an offline `pip install -e .` could not find hatchling. Here the running
environment's site folders (a venv's own, its base's when it has --system-site-packages, a `.venv`'s, or the
Python on PATH's) are added by a .pth file with `site.addsitedir`, so their own .pth files (pip's, editable
installs') work too; they come after the new venv's own folder, so what a test installs there wins.
"""

from __future__ import annotations

import site
import subprocess
import sys
import sysconfig
from pathlib import Path


def running_site_dirs() -> list[str]:
    """The site-packages folders of the environment running the tests."""
    dirs = [*site.getsitepackages(), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    return list(dict.fromkeys(d for d in dirs if Path(d).is_dir()))


def add_running_env(venv: Path) -> None:
    """Make the venv at `venv` see the running environment's site folders, after its own."""
    own = subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    lines = "".join(f"import site; site.addsitedir({d!r})\n" for d in running_site_dirs())
    (Path(own) / "zz_hardneg_tests_outer_env.pth").write_text(lines)


def make_venv_over_running_env(venv: Path) -> Path:
    """A new venv (no pip of its own: the running environment's is seen) over the running environment; its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    add_running_env(venv)
    return venv / "bin" / "python"
