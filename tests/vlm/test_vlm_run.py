"""`hardneg run --model tiny-vlm` over every benchmark, its provenance, its board row, and the demo (issue 25).

One run of the CLI (module fixture, 4 frames, no bootstrap) feeds every check: each benchmark's configs are
scored by the protocol its declaration names, the predictions record that protocol, prompt and frames, a
`hardneg submit` of the folder shows on the local board as a generative model, and the demo offers the model
and names its score type on the chart.
"""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
import pyarrow.parquet as pq

from hardneg import benchmarks
from hardneg.cli import main as hardneg_main
from hardneg.datasets import sample_benchmarks
from hardneg.models.vlm.model import SCORE_NAMES
from hardneg.schema import read_predictions_metadata


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("vlmrun") / "R"
    cache = tmp_path_factory.mktemp("vlmcache")
    assert hardneg_main(["run", "--model", "tiny-vlm", "--model-id", "local/tiny-vlm", "--out", str(out),
                         "--frames", "4", "--resamples", "0", "--no-charts", "--no-progress", "--device", "cpu",
                         "--cache-dir", str(cache)]) == 0
    return out


@pytest.mark.slow
def test_every_benchmark_is_scored_by_its_declared_protocol(run_dir):
    results = json.loads((run_dir / "results.json").read_text())
    results = {k: v for k, v in results.items() if "/" in k}  # per config (benchmark keys hold the headline)
    assert {k.split("/")[0] for k in results} == set(sample_benchmarks())  # every benchmark with a sample
    for key, res in results.items():
        bench = key.split("/")[0]
        declared = benchmarks.get(bench).vlm
        model = res["run"]["model"]
        assert (model["protocol"], model["prompt"], model["prompt_version"]) == (declared.protocol, declared.prompt,
                                                                                 declared.version), key
        assert model["adapter"] == "video-llm" and model["model_type"] == "generative"
        assert model["score"] == SCORE_NAMES[declared.protocol]  # the score type, named in every result
        assert res["coverage"] == 1.0 and res["n"] > 0, key
        meta = read_predictions_metadata(pq.read_schema(run_dir / res["run"]["predictions"]))
        assert meta["model"]["protocol"] == declared.protocol and meta["frames"]["n_frames"] == 4
        assert meta["model"]["pixels"]["family"] == "qwen-vl"
        scores = pq.read_table(run_dir / res["run"]["predictions"]).column("scores").to_pylist()
        flat = np.concatenate([np.asarray(s, float) for s in scores])
        assert np.isfinite(flat).all()
        if declared.protocol == "yes-probability":
            assert ((flat >= 0) & (flat <= 1)).all()
        if declared.protocol == "caption-likelihood":
            assert (flat < 0).all()  # mean log-probabilities


@pytest.mark.slow
def test_a_submission_shows_on_the_board_as_a_generative_model(run_dir, tmp_path, capsys):
    store = tmp_path / "board"
    assert hardneg_main(["submit", str(run_dir), "--space", str(store), "--benchmarks", str(run_dir / "data"),
                         "--create"]) == 0
    capsys.readouterr()
    assert hardneg_main(["leaderboard", "show", "--data", str(store), "--csv", "-"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    mine = next(r for r in rows if r["model"] == "local/tiny-vlm")
    assert mine["model_type"] == "generative"
    from hardneg.leaderboard import Leaderboard

    board = Leaderboard(store, benchmarks_dir=run_dir / "data", compute_blind=False)
    assert {s.model_meta.get("model_type") for s in board.store.all_submissions()} == {"generative"}


def test_the_demo_offers_it_and_the_chart_names_the_score_type(monkeypatch, tmp_path):
    import sys
    from pathlib import Path

    demo = Path(__file__).resolve().parents[2] / "spaces" / "demo"
    monkeypatch.syspath_prepend(str(demo))
    import app
    import demo_logic as dl

    monkeypatch.delenv("HARDNEG_DEMO_MODELS", raising=False)
    assert "tiny-vlm" in app.default_models()
    pool = dl.ModelPool(device="cpu")
    from hardneg.video import write_synthetic_video

    video = tmp_path / "v.mp4"
    write_synthetic_video(video, "vlm-demo")
    captions = ["a man opens the door", "a man closes the door"]
    for bench, words in (("tempcompass", "option-letter logit"), ("videocon-atphard", "P(Yes)"),
                         ("vitatecs", "log-probability")):
        scores = app._score(pool, "tiny-vlm", str(video), captions, bench)
        assert np.asarray(scores).shape == (2,)
        name = pool.get("tiny-vlm").score_name
        assert words in name
        fig = dl.score_bar_chart(np.asarray(scores), captions, 0, [0, 1], "t", name)
        assert words in fig.axes[0].get_xlabel()
    assert "demo_logic" in sys.modules
