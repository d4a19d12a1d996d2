"""`hardneg train` on a tiny synthetic world, end to end through the CLI: build, train, score, evaluate."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

pytest.importorskip("torch")

from hardneg.cli import main  # noqa: E402


@pytest.fixture(scope="module")
def tiny_world(tmp_path_factory):
    from hardneg.world import WorldConfig, generate_world

    root = tmp_path_factory.mktemp("world")
    raw = generate_world(root / "raw", n_train=12, n_test=4, seed=1, config=WorldConfig(width=32, height=32, n_frames=8))
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["build", "world", "--raw", str(raw), "--out", str(root / "built")]) == 0
    return root / "built", raw / "videos"


def test_train_score_evaluate_on_a_tiny_world(tiny_world, tmp_path):
    built, videos = tiny_world
    out = tmp_path / "run"
    assert main(["train", "--data", str(built), "--videos", str(videos), "--out", str(out), "--objective", "word",
                 "--negatives-set", 'tiers=["vocabulary"]', "--steps", "2", "--batch-size", "4", "--n-negatives", "2",
                 "--no-progress"]) == 0
    prov = json.loads((out / "config.json").read_text())["provenance"]
    assert prov["data"]["benchmark"] == "world" and prov["data"]["configs"] == ["pairs"]
    assert prov["data"]["n_pairs"] == 12  # the train split only
    assert prov["negatives"]["generator"] == "posrank" and prov["negatives"]["settings"] == {"tiers": ["vocabulary"]}
    pred = tmp_path / "p.parquet"
    assert main(["score", "--model", str(out), "--dataset", str(built), "--config", "posrank", "--videos", str(videos),
                 "--out", str(pred), "--cache-dir", str(tmp_path / "cache")]) == 0
    assert main(["evaluate", str(pred), "--dataset", str(built), "--json", str(tmp_path / "r.json")]) == 0
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["n"] == result["n_items"] > 0 and 0 <= result["metrics"]["PoSRank"]["value"] <= 1
