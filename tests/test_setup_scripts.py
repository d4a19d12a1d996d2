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


# ------------------------------------------------------------------ issue 33: the lock and the extras


def _extras() -> dict[str, list[str]]:
    import tomllib

    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]


def _requirement_names(extra: str, extras: dict[str, list[str]], seen: set[str] | None = None) -> set[str]:
    """Every distribution an extra names, following `video-hardneg[...]` self-references."""
    import re

    seen = set() if seen is None else seen
    names: set[str] = set()
    for req in extras[extra]:
        name = re.split(r"[\[<>=!~; ]", req, maxsplit=1)[0].lower().replace("_", "-")
        if name == "video-hardneg":
            for sub in req.split("[", 1)[1].split("]", 1)[0].split(","):
                if sub.strip() not in seen:
                    seen.add(sub.strip())
                    names |= _requirement_names(sub.strip(), extras, seen)
        else:
            names.add(name)
    return names


def _lock() -> dict[str, str]:
    pins = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"constraints.txt: {line!r} is not a name==version pin"
            pins[name.strip()] = version.strip()
    return pins


def test_install_uses_the_lock_and_the_lock_pins_everything_the_dev_extra_names():
    install = (REPO / "scripts" / "install.sh").read_text()
    assert "-c constraints.txt" in install and "LOCK[@]" in install and '--no-deps "rbo==0.1.3"' in install
    pins = _lock()
    missing = sorted(_requirement_names("dev", _extras()) - set(pins))
    assert not missing, f"constraints.txt lacks {missing}: run bash scripts/lock.sh"
    # the packages that change numbers, and torch as the local CPU wheel's release (not a CUDA download)
    assert pins["torch"] == "2.13.0" and pins["rbo"] == "0.1.3"
    for name in ("transformers", "tokenizers", "av", "numpy"):
        assert name in pins
    assert "bash scripts/lock.sh" in (REPO / "docs" / "install.md").read_text()
    assert (REPO / "scripts" / "lock.sh").is_file() and "--dry-run" in (REPO / "scripts" / "lock.sh").read_text()


def test_lock_from_report_writes_sorted_pins_without_the_project(tmp_path):
    import json

    report = {"pip_version": "23.2.1", "environment": {"python_version": "3.11", "sys_platform": "linux",
                                                         "platform_machine": "x86_64"},
              "install": [{"metadata": {"name": "Torch", "version": "2.13.0+cpu"}},
                          {"metadata": {"name": "video-hardneg", "version": "0.1.0"}},
                          {"metadata": {"name": "typing_extensions", "version": "4.15.0"}}]}
    (tmp_path / "r.json").write_text(json.dumps(report))
    subprocess.run([sys.executable, str(REPO / "scripts" / "lock_from_report.py"), str(tmp_path / "r.json"),
                    str(tmp_path / "c.txt")], check=True)
    pins = [ln for ln in (tmp_path / "c.txt").read_text().splitlines() if not ln.startswith("#")]
    assert pins == ["lmms-eval==0.7.3", "rbo==0.1.3", "torch==2.13.0", "typing-extensions==4.15.0"]


def test_the_demo_extra_brings_evaluate_for_the_wheel_recipe():
    """docs/install.md installs the wheel with `[demo]` alone; evaluate.load of a shipped module must then run."""
    names = _requirement_names("demo", _extras())
    assert {"evaluate", "gradio", "torch", "av"} <= names


def test_install_waits_for_the_dpkg_lock_on_every_apt_call():
    """Issue 47 §6: unattended upgrades hold the dpkg lock at a cloud machine's first boot; every apt-get call waits
    for it (apt's DPkg::Lock::Timeout) instead of failing at once."""
    import re

    install = (REPO / "scripts" / "install.sh").read_text()
    assert re.search(r'APT_WAIT=\(-o "DPkg::Lock::Timeout=\$\{HARDNEG_APT_LOCK_TIMEOUT:-600\}"\)', install)
    calls = [line for line in install.splitlines() if re.search(r"\bapt-get\b", line) and not line.lstrip().startswith(("#", "echo"))]
    assert len(calls) == 2 and all('apt-get "${APT_WAIT[@]}"' in line for line in calls), calls
