"""`hardneg world generate` when its video-writing workers die (issue 36 N6): an `error:` line that names the scene,
says the worker died and how to resume (exit code 2), not a RuntimeError traceback."""

from __future__ import annotations

import os

import pytest

import world_fns
from hardneg.cli import main
from hardneg.world import release

pytestmark = pytest.mark.skipif(os.name == "nt", reason="the pool's workers need pass_fds")


def test_world_generate_prints_an_error_line_when_its_workers_die(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(release, "_scene_task", world_fns.die)
    out = tmp_path / "w"
    rc = main(["world", "generate", str(out), "--train", "2", "--test", "0", "--width", "32", "--height", "32",
               "--frames", "8", "--fps", "8", "--workers", "2", "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "hardneg world: error: writing the world's videos failed" in err
    assert "died" in err and "twice" in err and "rerun the same command" in err
    assert "Traceback" not in err and not out.exists()
