"""Users reach the modules by path (relative, absolute), by `metric_path`, by the CLI, and from a wheel."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import evaluate
import pytest

from hardneg.cli import main
from hardneg.metric_modules import METRIC_NAMES, load_metric, metric_path

REPO = Path(__file__).resolve().parents[2]


def test_metric_path_points_at_the_checkout():
    for name in METRIC_NAMES:
        path = Path(metric_path(name))
        assert path.is_absolute() and path == REPO / "metrics" / name
    assert metric_path("correct-at-k") == metric_path("correct_at_k")


def test_unknown_name_lists_valid_ones():
    with pytest.raises(ValueError, match="valid names: rcad_accuracy, mean_rank"):
        metric_path("acuracy")


def test_load_by_relative_and_absolute_path(monkeypatch):
    monkeypatch.chdir(REPO)
    rel = evaluate.load("metrics/rcad_accuracy", experiment_id="rel")
    absolute = evaluate.load(str(REPO / "metrics" / "rcad_accuracy"), experiment_id="abs")
    kw = {"predictions": [[0.2, 0.1], [0.1, 0.2]], "references": [0, 0], "n_resamples": 0}
    assert rel.compute(**kw) == absolute.compute(**kw) == {"R@1": 0.5, "R@2": 1.0, "tie_rate": 0.0, "n": 2,
                                                           "ties": "expected"}
    assert rel.name == "rcad_accuracy"


def test_load_metric_is_offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_EVALUATE_OFFLINE", "1")
    module = load_metric("posrank", experiment_id="offline")
    out = module.compute(predictions=[[0.9, 0.1]], references=[0], pos=["noun"], n_resamples=0)
    assert out["PoSRank_noun"] == 1.0


def test_cli_metric_path(capsys):
    assert main(["metric-path", "mean_rank"]) == 0
    assert capsys.readouterr().out.strip() == metric_path("mean_rank")
    assert main(["metric-path", "--all"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split("\t")[0] for line in lines] == list(METRIC_NAMES)
    assert main(["metric-path", "nope"]) == 2
    assert "valid names" in capsys.readouterr().err


@pytest.mark.slow
def test_wheel_ships_the_modules(tmp_path):
    """`pip wheel` of the project contains every module folder under hardneg/_shipped/metrics."""
    pytest.importorskip("hatchling")
    env = {**os.environ, "PIP_NO_INDEX": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path),
         str(REPO)],
        capture_output=True, text=True, env=env, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    wheel = next(tmp_path.glob("video_hardneg-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "hardneg/metric_modules.py" in names and "hardneg/metric_base.py" in names
    for name in METRIC_NAMES:
        for filename in (f"{name}.py", "README.md", "requirements.txt", "app.py"):
            assert f"hardneg/_shipped/metrics/{name}/{filename}" in names


def test_shipped_copy_is_found_without_a_checkout(tmp_path, monkeypatch):
    """Outside a checkout, metric_path falls back to hardneg/_shipped/metrics (simulated install layout)."""
    import shutil

    import hardneg.metric_modules as mm

    pkg = tmp_path / "site-packages" / "hardneg"
    shutil.copytree(REPO / "metrics", pkg / "_shipped" / "metrics")
    monkeypatch.setattr(mm, "_PACKAGE_DIR", pkg)
    path = Path(mm.metric_path("correct_at_k"))
    assert path == pkg / "_shipped" / "metrics" / "correct_at_k"
    module = evaluate.load(str(path), experiment_id="shipped")
    assert module.compute(predictions=[[0.1, 0.9]], references=[[1]], ks=[1], n_resamples=0)["C@1"] == 1.0
    shutil.rmtree(pkg / "_shipped")
    with pytest.raises(FileNotFoundError, match="metric modules were not found"):
        mm.metric_path("correct_at_k")
