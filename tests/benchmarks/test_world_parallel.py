"""The world written by a pool of processes is the serial world byte for byte, and a build killed at
any moment never looks complete (then resumes to the same bytes)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hardneg.world import WorldConfig, generate_world, load_scenes, video_path

SMALL = WorldConfig(width=32, height=32, n_frames=8, fps=8)
N_TRAIN, N_TEST, SEED = 14, 6, 5


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def serial(tmp_path_factory) -> dict[str, bytes]:
    out = generate_world(tmp_path_factory.mktemp("serial") / "w", N_TRAIN, N_TEST, seed=SEED, config=SMALL, workers=1)
    return _files(out)


def test_parallel_world_equals_serial_world_byte_for_byte(serial, tmp_path):
    for workers in (2, 3):
        out = generate_world(tmp_path / f"w{workers}", N_TRAIN, N_TEST, seed=SEED, config=SMALL, workers=workers)
        got = _files(out)
        assert sorted(got) == sorted(serial)
        assert len([n for n in got if n.endswith(".mp4")]) == N_TRAIN + N_TEST
        different = [n for n in serial if got[n] != serial[n]]
        assert not different, different


def _complete_or_absent(out: Path, serial: dict[str, bytes]) -> bool:
    """True when `out` is absent; a present `out` must be the whole world."""
    if not out.exists():
        return True
    assert _files(out) == serial, "a world folder appeared before it was complete"
    scenes = load_scenes(out)
    assert all(video_path(out, s.id).is_file() for s in scenes)
    return False


def test_a_killed_parallel_build_never_looks_complete_and_resumes_to_the_same_bytes(serial, tmp_path):
    out = tmp_path / "w"
    src = Path(__file__).resolve().parents[2] / "src"
    code = (f"from hardneg.world import WorldConfig, generate_world\n"
            f"generate_world({str(out)!r}, {N_TRAIN}, {N_TEST}, seed={SEED}, config=WorldConfig(32, 32, 8, 8), workers=2)\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")])}
    partial = tmp_path / ".w.partial"
    states = []
    for delay in (0.6, 1.0, 1.4, 1.8):  # after start-up: while the workers write videos, or later
        proc = subprocess.Popen([sys.executable, "-c", code], env=env)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if not _complete_or_absent(out, serial):
            states.append("complete")
            break  # it finished before the kill
        states.append(len(list((partial / "videos").glob("[!.]*.mp4"))) if (partial / "videos").exists() else "none")
        if (partial / "videos").exists():  # a video under its final name is whole (temporary files are hidden)
            for p in (partial / "videos").iterdir():
                if not p.name.startswith("."):
                    assert p.read_bytes() == serial[f"videos/{p.name}"], p.name
    time.sleep(0.3)  # workers of a killed build stop when their parent's socket closes
    if not out.exists():
        generate_world(out, N_TRAIN, N_TEST, seed=SEED, config=SMALL, workers=2)
    assert _files(out) == serial
    assert not partial.exists()
    assert json.loads((out / "world.json").read_text())["n_train"] == N_TRAIN
    print("videos written when killed:", states)


def test_the_workers_sample_the_scenes_and_the_pool_starts_before_any(serial, tmp_path, monkeypatch):
    """Issue 35: a parallel build does no per-scene work in this process (sampling every scene first was serial
    time that all workers waited on), and its pool is started before the first scene is handed out."""
    import hardneg.pool as hpool
    import hardneg.world.release as release

    def refuse(*a, **k):
        raise AssertionError("a scene was sampled in the parent process")

    monkeypatch.setattr(release, "sample_scene", refuse)  # the workers are fresh interpreters: unaffected
    started = []
    real_start, real_imap = hpool.WorkerPool.start, hpool.WorkerPool.imap
    monkeypatch.setattr(hpool.WorkerPool, "start", lambda self: started.append("start") or real_start(self))
    monkeypatch.setattr(hpool.WorkerPool, "imap",
                        lambda self, *a, **k: started.append("imap") or real_imap(self, *a, **k))
    out = generate_world(tmp_path / "w", N_TRAIN, N_TEST, seed=SEED, config=SMALL, workers=2)
    assert _files(out) == serial
    assert started[:2] == ["start", "imap"]
