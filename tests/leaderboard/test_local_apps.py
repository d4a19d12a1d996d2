"""Issue 27 §2, §3, §9: two boards and the demo on one machine, each with its own upload folder and port; a local
board takes `hardneg submit --space http://127.0.0.1:PORT` with no token.

The three apps run as the user starts them (`hardneg leaderboard serve`, `hardneg demo`), with no --port for the
second board and the demo: the board's default (7860) is then taken by the first board (or by anything else on
the machine), so they must say which free port they took instead of failing with Gradio's raw OSError.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from hardneg.apps import PortTaken, choose_port, free_port, port_is_free, private_upload_dir
from hardneg.cli import main

pytestmark = pytest.mark.slow
URL = re.compile(r"http://127\.0\.0\.1:(\d+)/")


def _env(tmp_path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "GRADIO_",
                                                                    "HARDNEG_GRADIO"))}
    env.update(HF_HOME=str(tmp_path / "hf-home"), HF_HUB_OFFLINE="1", GRADIO_TEMP_DIR=str(tmp_path / "gradio-tmp"),
               HARDNEG_CACHE=str(tmp_path / "cache"), GRADIO_ANALYTICS_ENABLED="False", MPLBACKEND="Agg")
    return env


def _start(args: list[str], log: Path, env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "hardneg", *args], stdout=log.open("w"), stderr=subprocess.STDOUT,
                            env=env, cwd=log.parent)


def _wait_for_url(proc: subprocess.Popen, log: Path, timeout: float = 240) -> str:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        m = URL.search(log.read_text(errors="replace"))
        if m:
            url = m.group(0)
            try:
                with urllib.request.urlopen(url, timeout=5) as r:
                    if r.status == 200:
                        return url
            except OSError:
                pass
        if proc.poll() is not None:
            pytest.fail(f"{log.name} exited {proc.returncode}:\n{log.read_text()[-3000:]}")
        time.sleep(0.5)
    pytest.fail(f"{log.name} did not serve within {timeout} s:\n{log.read_text()[-3000:]}")


def test_two_boards_and_the_demo_side_by_side(tmp_path):
    env = _env(tmp_path)
    (tmp_path / "gradio-tmp").mkdir()
    run = tmp_path / "run"
    assert main(["run", "--model", "constant", "--model-id", "local/const", "--benchmarks", "feint6k,contrast_sets",
                 "--out", str(run)]) == 0
    procs = []
    try:
        first_port = free_port()
        procs.append((_start(["leaderboard", "serve", "--data", "board-a", "--create", "--benchmarks", str(run / "data"),
                              "--port", str(first_port), "--resamples", "50"], tmp_path / "board-a.log", env),
                      tmp_path / "board-a.log"))
        url_a = _wait_for_url(*procs[0])
        assert url_a.endswith(f":{first_port}/")
        # the same explicit port again: one clear line, no Gradio OSError
        taken = subprocess.run([sys.executable, "-m", "hardneg", "leaderboard", "serve", "--data", "board-x", "--create",
                                "--benchmarks", str(run / "data"), "--port", str(first_port)], env=env,
                               capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert taken.returncode == 2 and f"port {first_port}" in taken.stderr and "Traceback" not in taken.stderr
        # no --port: the default if free, else a free one, said on the console
        for name, args in (("board-b", ["leaderboard", "serve", "--data", "board-b", "--create", "--benchmarks",
                                        str(run / "data"), "--resamples", "50"]),
                           ("demo", ["demo", "--models", "constant"])):
            procs.append((_start(args, tmp_path / f"{name}.log", env), tmp_path / f"{name}.log"))
        url_b, url_demo = (_wait_for_url(*p) for p in procs[1:])
        assert len({url_a, url_b, url_demo}) == 3
        for (proc, log), default in zip(procs[1:], (7860, 7861)):
            port = int(URL.search(log.read_text()).group(1))
            assert port == default or f"port {default} is in use; using the free port {port}" in log.read_text()

        # each app process made an upload folder of its own under the GRADIO_TEMP_DIR it was given
        folders = sorted(p.name.rsplit("-", 1)[0] for p in (tmp_path / "gradio-tmp").iterdir()
                         if p.name.startswith("hardneg-"))
        assert not [p for p in (tmp_path / "gradio-tmp").iterdir() if not p.name.startswith("hardneg-")]
        assert folders == ["hardneg-demo-uploads", "hardneg-leaderboard-uploads", "hardneg-leaderboard-uploads"]

        # both boards take a submission at the same moment, with no token: the board's local identity
        def submit(url):
            return subprocess.run([sys.executable, "-m", "hardneg", "submit", str(run), "--space", url,
                                   "--no-hub-card"], env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)

        with ThreadPoolExecutor(2) as pool:
            outs = list(pool.map(submit, [url_a, url_b]))
        for out in outs:
            assert out.returncode == 0, out.stdout + out.stderr[-3000:]
            assert "stored local/const v1" in out.stdout and "hf auth login" not in out.stderr
        for board in ("board-a", "board-b"):
            shown = subprocess.run([sys.executable, "-m", "hardneg", "leaderboard", "show", "--data", board],
                                   env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
            assert "local/const" in shown.stdout, shown.stdout + shown.stderr
    finally:
        for proc, _ in procs:
            proc.terminate()
        for proc, _ in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()


def test_choose_port_takes_the_default_a_free_one_or_says_why(capsys):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        busy = s.getsockname()[1]
        assert not port_is_free(busy)
        other = choose_port(None, busy, what="demo")
        assert other != busy and port_is_free(other)
        assert f"demo: port {busy} is in use; using the free port {other} instead" in capsys.readouterr().err
        with pytest.raises(PortTaken, match=f"port {busy} .* is in use"):
            choose_port(busy, 7861)
    free = free_port()
    assert choose_port(None, free) == free and choose_port(free, 7861) == free


def test_private_upload_dir_is_one_per_process(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path))
    for name in ("HARDNEG_GRADIO_TEMP_OWNER", "HARDNEG_GRADIO_TEMP_BASE"):  # recorded, so restored afterwards
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    mine = private_upload_dir("leaderboard")
    assert mine.parent == tmp_path and os.environ["GRADIO_TEMP_DIR"] == str(mine)
    assert private_upload_dir("demo") == mine  # the same process: Gradio reads one variable
    code = "from hardneg.apps import private_upload_dir; print(private_upload_dir('demo'))"
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    theirs = Path(child.stdout.strip())
    assert theirs.parent == tmp_path and theirs != mine and theirs.name.startswith("hardneg-demo-uploads-")
    assert not theirs.exists()  # removed when that process ended
