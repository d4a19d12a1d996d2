"""Issue 27 §6: without PyAV (the `[metrics]` extra only) a run names the cause and the extra to install.

Before, every video counted as unreadable and `run_model` ended in `ValueError: scores is empty`.
PyAV is hidden from a child interpreter (`sys.modules["av"] = None`, what a missing package looks like).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from hardneg.cli import main

HIDE_AV = "import sys; sys.modules['av'] = None\n"


def _python(code: str, tmp_path) -> subprocess.CompletedProcess:
    import os

    env = dict(os.environ, HARDNEG_CACHE=str(tmp_path / "cache"))
    return subprocess.run([sys.executable, "-c", HIDE_AV + textwrap.dedent(code)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)


def test_run_model_without_pyav_names_the_models_extra(tmp_path):
    out = _python("""
        import hardneg
        from hardneg.video import DecoderUnavailable
        class MyModel:
            revision = "v1"
            def score(self, video, captions):
                return [0.0 for _ in captions]
        try:
            hardneg.run_model(MyModel(), benchmarks="feint6k", out="my-run")
        except DecoderUnavailable as exc:
            print("ERROR", exc)
        """, tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith("ERROR") and "PyAV" in out.stdout and "'.[models]'" in out.stdout, out.stdout
    assert "scores is empty" not in out.stdout + out.stderr


@pytest.mark.slow
def test_score_with_videos_on_disk_but_no_pyav_is_one_line(tmp_path):
    """Videos present (e.g. cached): they must not be counted as unreadable; the CLI says why in one line."""
    data = tmp_path / "feint6k"
    assert main(["build", "feint6k", "--sample", "--out", str(data)]) == 0
    videos = tmp_path / "v"
    videos.mkdir()
    for i in range(7010, 7015):
        (videos / f"video{i}.mp4").write_bytes(b"\x00" * 64)
    out = _python(f"""
        from hardneg.cli import main
        sys.exit(main(["score", "--model", "tiny-clip", "--dataset", {str(data)!r}, "--config", "msrvtt",
                       "--videos", {str(videos)!r}, "--out", "p.parquet", "--no-progress"]))
        """, tmp_path)
    assert out.returncode == 2, out.stderr[-2000:]
    assert "Traceback" not in out.stderr and out.stderr.strip().splitlines()[-1].startswith("hardneg score: error:")
    assert "PyAV" in out.stderr and "'.[models]'" in out.stderr and not (tmp_path / "p.parquet").exists()
