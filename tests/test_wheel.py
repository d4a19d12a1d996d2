"""Issue 27 §4: from an installed wheel (no checkout), `hardneg leaderboard serve` serves and the demo loads.

The wheel is built as docs/install.md says (`python -m pip wheel --no-deps -w dist .`; offline here, so without
build isolation), installed with no dependencies into a virtual environment that reuses the packages of the
environment running the tests (a venv, a `.venv`, or the Python on PATH: `make_venv_over_running_env`),
and run from a folder outside the repository with no PYTHONPATH: the Spaces must come from
`hardneg/_shipped/spaces/` inside the installed package.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from venv_helpers import make_venv_over_running_env

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel_env(tmp_path_factory):
    root = tmp_path_factory.mktemp("wheel")
    dist = root / "dist"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                            "-q", "-w", str(dist), str(REPO)], capture_output=True, text=True, timeout=600)
    if built.returncode != 0 and "hatchling" in built.stderr:
        pytest.skip("hatchling (the build backend) is not installed here and the index cannot be reached")
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = dist.glob("video_hardneg-*.whl")
    venv = root / "venv"
    py = make_venv_over_running_env(venv)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", VIRTUAL_ENV=str(venv), PIP_NO_INDEX="1",
               HF_HUB_OFFLINE="1", HARDNEG_CACHE=str(root / "cache"), MPLBACKEND="Agg", GRADIO_ANALYTICS_ENABLED="False")
    inst = subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "-q", str(wheel)], env=env, cwd=root,
                          capture_output=True, text=True, timeout=600)
    assert inst.returncode == 0, inst.stderr[-3000:]
    work = root / "elsewhere"
    work.mkdir()
    return py, env, work


def test_the_wheel_holds_both_spaces_and_uses_them(wheel_env):
    py, env, work = wheel_env
    code = ("import hardneg; from hardneg.apps import space_app_path, load_space_app\n"
            "print(hardneg.__file__); print(space_app_path('leaderboard')); print(space_app_path('demo'))\n"
            "m = load_space_app('demo'); print(callable(m.main) and callable(m.build_app))")
    out = subprocess.run([str(py), "-c", code], env=env, cwd=work, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    package, board, demo, loaded = out.stdout.split("\n")[:4]
    site = Path(package).parent
    assert str(REPO) not in package, f"the checkout's package was imported, not the wheel's: {package}"
    assert Path(board) == site / "_shipped" / "spaces" / "leaderboard" / "app.py"
    assert Path(demo) == site / "_shipped" / "spaces" / "demo" / "app.py" and loaded == "True"


def test_leaderboard_serve_runs_from_the_wheel(wheel_env):
    py, env, work = wheel_env
    log = work / "serve.log"
    hardneg = Path(py).parent / "hardneg"
    proc = subprocess.Popen([str(hardneg), "leaderboard", "serve", "--data", "board", "--create", "--resamples", "20"],
                            stdout=log.open("w"), stderr=subprocess.STDOUT, env=env, cwd=work)
    try:
        end = time.monotonic() + 240
        while time.monotonic() < end:
            m = re.search(r"http://127\.0\.0\.1:\d+/", log.read_text(errors="replace"))
            if m:
                try:
                    with urllib.request.urlopen(m.group(0), timeout=5) as r:
                        assert r.status == 200
                        break
                except OSError:
                    pass
            assert proc.poll() is None, log.read_text()[-3000:]
            time.sleep(0.5)
        else:
            pytest.fail(f"no board within 240 s:\n{log.read_text()[-3000:]}")
        assert "runs the Space app of a clone" not in log.read_text()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
