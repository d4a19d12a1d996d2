"""`hardneg evaluate` and `hardneg quickstart`: numbers against hand computation, files written."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest

from hardneg.cli import main
from hardneg.evaluation import evaluate_predictions
from hardneg.io import atomic_write_parquet
from hardneg.schema import PREDICTIONS_SCHEMA, predictions_metadata
from hardneg.scoring import load_benchmark


def _write_predictions(path, dataset, config, scores_by_row, ids):
    meta = predictions_metadata(task="multiple_choice", benchmark="feint6k", config=config, split="test",
                                data_revision="x", model_id="hand", model_revision="0", dataset=str(dataset),
                                frames={"n_frames": 1, "fps": None, "resize": None, "decoder": "pyav"},
                                hardneg_version="0")
    t = pa.table({"id": ids, "scores": [list(map(float, s)) for s in scores_by_row]}, schema=PREDICTIONS_SCHEMA)
    atomic_write_parquet(t.replace_schema_metadata(meta), path)


@pytest.fixture()
def hand_predictions(samples, tmp_path):
    items = load_benchmark(str(samples["feint6k"]), "msrvtt").items.to_pylist()
    assert len(items) == 5 and all(len(i["captions"]) == 6 for i in items)
    rows = []
    for k, it in enumerate(items):
        s = np.zeros(6)
        if k < 3:
            s[it["label"]] = 1.0  # rank 1
        elif k == 3:
            s[:] = 0.0
            s[it["label"]] = 0.5
            others = [j for j in range(6) if j != it["label"]]
            s[others[:2]] = 0.9  # rank 3, Δs +0.4 twice and -0.5 three times
        rows.append(s)  # k == 4: all tied
    path = tmp_path / "hand.parquet"
    _write_predictions(path, samples["feint6k"], "msrvtt", rows, [i["id"] for i in items])
    return path


def test_metrics_match_hand_computation(hand_predictions):
    r = evaluate_predictions(hand_predictions, n_resamples=200)
    o = r["metrics"]
    h6 = sum(1 / k for k in range(1, 7))
    assert o["R@1"]["value"] == pytest.approx((3 + 0 + 1 / 6) / 5)
    assert o["R@2"]["value"] == pytest.approx((3 + 0 + 2 / 6) / 5)
    assert o["MeanR"]["value"] == pytest.approx((1 + 1 + 1 + 3 + 3.5) / 5)
    assert o["MRR"]["value"] == pytest.approx((3 + 1 / 3 + h6 / 6) / 5)
    assert o["R@1"]["low"] <= o["R@1"]["value"] <= o["R@1"]["high"]
    assert r["chance"]["R@1"] == pytest.approx(1 / 6) and r["chance"]["MeanR"] == pytest.approx(3.5)
    assert r["n"] == r["n_items"] == 5
    assert r["by_negative_type"]["counterfactual"]["R@1"]["value"] == pytest.approx(o["R@1"]["value"])
    assert r["delta_s"]["action"]["mean"] == pytest.approx((-15 + 0.8 - 1.5) / 25)
    assert r["delta_s"]["action"]["n"] == 25


def test_partial_predictions_report_coverage(samples, hand_predictions, tmp_path):
    import pyarrow.parquet as pq

    t = pq.read_table(hand_predictions)
    part = tmp_path / "part.parquet"
    atomic_write_parquet(t.slice(0, 3), part)
    r = evaluate_predictions(part, n_resamples=100)
    assert (r["n"], r["n_items"], r["coverage"]) == (3, 5, 0.6)
    assert r["metrics"]["R@1"]["value"] == 1.0


def test_evaluate_rejects_mismatched_predictions(samples, tmp_path):
    items = load_benchmark(str(samples["feint6k"]), "msrvtt").items
    path = tmp_path / "bad.parquet"
    _write_predictions(path, samples["feint6k"], "msrvtt", [[0.1, 0.2]], [items["id"][0].as_py()])
    with pytest.raises(ValueError, match="2 scores but the item has 6 captions"):
        evaluate_predictions(path)
    _write_predictions(path, samples["feint6k"], "msrvtt", [[0.0] * 6], ["not-an-item"])
    with pytest.raises(ValueError, match="not-an-item"):
        evaluate_predictions(path)


def test_evaluate_cli_prints_and_writes_json_and_chart(hand_predictions, tmp_path, capsys):
    js, png = tmp_path / "r.json", tmp_path / "r.png"
    assert main(["evaluate", str(hand_predictions), "--json", str(js), "--plot", str(png), "--resamples", "100"]) == 0
    printed = capsys.readouterr().out
    assert "R@1 63.3 [" in printed and "vs counterfactual negatives only" in printed and "Δs action" in printed
    assert json.loads(js.read_text())["metrics"]["MeanR"]["value"] == pytest.approx(1.9)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    assert main(["evaluate", str(hand_predictions), "--json", str(js), "--plot", str(png)]) == 2  # no overwrite


def test_quickstart_runs_end_to_end(tmp_path, capsys):
    code = main(["quickstart", "--benchmarks", "contrast_sets", "--out", str(tmp_path / "qs"),
                 "--cache-dir", str(tmp_path / "cache"), "--resamples", "100", "--device", "cpu"])
    out = capsys.readouterr().out
    assert code == 0
    for config in ("verb_human", "verb_lm", "gender"):
        assert f"contrast_sets  {config}" in out
    results = json.loads((tmp_path / "qs" / "results.json").read_text())
    assert set(results) == {"contrast_sets/verb_human", "contrast_sets/verb_lm", "contrast_sets/gender"}
    assert all(r["model_id"] == "hardneg/tiny-clip" and r["n"] == r["n_items"] for r in results.values())


def test_quickstart_refuses_a_non_empty_folder(tmp_path, capsys):
    (tmp_path / "keep.txt").write_text("mine")
    assert main(["quickstart", "--out", str(tmp_path), "--benchmarks", "feint6k"]) == 2
    assert "--overwrite" in capsys.readouterr().err and (tmp_path / "keep.txt").read_text() == "mine"


def test_retrieval_chance_is_a_constant_scorer_on_the_labels(samples, tmp_path):
    """FIRE chance depends on each query's positives: C@1 of a scorer that ignores the input is the
    mean of (positives / videos); a constant-score predictions file lands exactly on it."""
    data = load_benchmark(str(samples["fire"]), "msrvtt")
    videos = data.videos["video_id"].to_pylist()
    queries = data.queries["query_id"].to_pylist()
    meta = predictions_metadata(task="retrieval", benchmark="fire", config="msrvtt", split="test",
                                data_revision=data.data_revision, model_id="constant", model_revision="0",
                                dataset=str(samples["fire"]), video_ids=videos,
                                frames={"n_frames": 1, "fps": None, "resize": None, "decoder": "pyav"},
                                hardneg_version="0")
    t = pa.table({"id": queries, "scores": [[0.0] * len(videos)] * len(queries)}, schema=PREDICTIONS_SCHEMA)
    path = tmp_path / "constant.parquet"
    atomic_write_parquet(t.replace_schema_metadata(meta), path)
    r = evaluate_predictions(path, n_resamples=0)  # 0: no intervals
    assert "low" not in r["metrics"]["C@1"]
    original = dict(zip(queries, data.queries["video_id"].to_pylist()))
    positives = {q: {original[q]} for q in queries}
    for q, v, label in zip(data.qrels["query_id"].to_pylist(), data.qrels["video_id"].to_pylist(),
                           data.qrels["label"].to_pylist()):
        if label == 1 and v in videos:
            positives[q].add(v)
    expected_c1 = np.mean([len(positives[q]) / len(videos) for q in queries])
    assert r["chance"]["C@1"] == pytest.approx(expected_c1)
    assert r["chance"]["R@1"] == pytest.approx(1 / len(videos))
    for name in ("C@1", "C@5", "mAP", "R@1", "MeanR"):
        assert r["metrics"][name]["value"] == pytest.approx(r["chance"][name]), name
