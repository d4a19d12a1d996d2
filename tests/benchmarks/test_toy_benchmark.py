"""A new benchmark is one declaration file: build, score, evaluate, leaderboard, demo picker and `hardneg list`
pick it up with no other file changed (the declaration and its sample live in tests/benchmarks/ only)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hardneg import benchmarks

TOY = Path(__file__).with_name("toy_benchmark.py")
SPACES = Path(__file__).resolve().parents[2] / "spaces"


@pytest.fixture(scope="module")
def toy():
    before = dict(benchmarks.all_benchmarks())  # after discovery, so restoring it never empties the registry
    benchmarks.load_file(TOY)
    yield benchmarks.get("toy")
    benchmarks._REGISTRY.clear()
    benchmarks._REGISTRY.update(before)


def test_toy_builds_scores_evaluates_and_reaches_the_board_and_demo(toy, tmp_path):
    from hardneg.datasets import build_samples
    from hardneg.evaluation import evaluate_predictions
    from hardneg.items import load_item_sets
    from hardneg.leaderboard import Leaderboard
    from hardneg.scoring import score_benchmark

    built = build_samples(tmp_path / "data", benchmarks=("toy",))["toy"]
    card = (built / "README.md").read_text()
    assert "Toy benchmark" in card and "cc0-1.0" in card and "## Limitations" in card
    pred = tmp_path / "toy.parquet"
    score_benchmark("constant", str(built), "main", pred, progress=False)
    result = evaluate_predictions(pred, n_resamples=50)
    assert result["benchmark"] == "toy" and result["headline"] == ["R@1"]
    assert result["metrics"]["R@1"]["value"] == pytest.approx(1 / 3) == result["chance"]["R@1"]
    json.dumps(result)

    board = Leaderboard(tmp_path / "lb", load_item_sets(built, "toy"), n_resamples=20, compute_blind=False)
    assert board.benchmarks == ["toy"]
    assert [c.name for c in board.columns("toy")] == ["R@1 · main"]
    table = board.table("toy")
    assert "random (exact chance)" in set(table["Model"]) and table["R@1 · main (%)"].iloc[0].startswith("33.3")

    sys.path.insert(0, str(SPACES / "demo"))
    try:
        import demo_logic
    finally:
        sys.path.remove(str(SPACES / "demo"))
    store = demo_logic.ExampleStore.load(tmp_path / "data")
    assert store.benchmarks() == ["toy"] and store.configs("toy") == ["main"]


def test_toy_shows_up_in_hardneg_list_and_build_help():
    env = dict(os.environ, HARDNEG_BENCHMARKS=str(TOY))
    out = subprocess.run([sys.executable, "-m", "hardneg", "list", "--json", "--no-samples"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "toy" in out.stdout and "example/toy" in out.stdout
    help_ = subprocess.run([sys.executable, "-m", "hardneg", "build", "--help"], env=env, capture_output=True,
                           text=True, timeout=120)
    assert "toy.jsonl" in help_.stdout


def test_unknown_benchmark_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown benchmark 'nope'; known benchmarks: feint6k"):
        benchmarks.get("nope")


def test_evaluate_works_from_another_folder(toy, tmp_path, monkeypatch):
    """Predictions record the dataset folder as an absolute path (never published), so a relative build path
    scored in one folder evaluates from any other."""
    from hardneg.datasets import build_samples
    from hardneg.evaluation import evaluate_predictions
    from hardneg.scoring import score_benchmark

    monkeypatch.chdir(tmp_path)
    build_samples("data", benchmarks=("toy",))
    score_benchmark("constant", "data/toy", "main", "p.parquet", progress=False)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert evaluate_predictions("../p.parquet", n_resamples=0)["n"] == 3


def test_a_metric_limited_to_configs_must_name_configs_of_its_benchmark():
    """`Metric.configs` names the configs a metric is computed on; a name the declaration does not describe is
    an error at import, with the fix; `metrics_for` leaves the metric out elsewhere."""
    import dataclasses

    world = benchmarks.get("world")
    posrank = world.metric("PoSRank")
    assert [m.key for m in world.metrics_for("temporal")] == ["Accuracy"]
    assert [m.key for m in world.metrics_for("noun")] == ["Accuracy", "PoSRank"]
    assert world.headline_for(None) == world.headline == ["Accuracy", "PoSRank"]
    bad = dataclasses.replace(posrank, configs=("nouns",))
    with pytest.raises(ValueError, match=r"metric PoSRank has configs=\('nouns',\); name configs of this benchmark"):
        dataclasses.replace(world, metrics=(world.metric("Accuracy"), bad))
