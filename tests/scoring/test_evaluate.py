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
    assert "R@1 (%) 63.3 [" in printed and "vs counterfactual negatives only" in printed and "Δs action" in printed
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
    assert set(results) == {"contrast_sets/verb_human", "contrast_sets/verb_lm", "contrast_sets/gender", "contrast_sets"}
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
    assert r["chance"]["C@1_original"] == pytest.approx(1 / len(videos))  # FIRE's original rule: not also R@1
    assert not [k for k in r["metrics"] if k.startswith("R@")]
    for name in ("C@1", "C@5", "mAP", "C@1_original", "MeanR"):
        assert r["metrics"][name]["value"] == pytest.approx(r["chance"][name]), name


# --- chance scorers end to end, result files written together with normal modes, bad files ------------


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The built-in samples, built the way a user builds them (`hardneg build <b> --sample`)."""
    root = tmp_path_factory.mktemp("built")
    for b in ("feint6k", "contrast_sets", "posrank", "fire"):
        assert main(["build", b, "--sample", "--out", str(root / b)]) == 0
    return root


def _score_and_evaluate(built, tmp_path, bench, config, model="constant", resamples="200"):
    pred = tmp_path / f"{bench}-{config}.parquet"
    assert main(["score", "--model", model, "--dataset", str(built / bench), "--config", config,
                 "--out", str(pred), "--no-progress"]) == 0  # no --videos: nothing is decoded
    js, png = tmp_path / "r.json", tmp_path / "r.png"
    assert main(["evaluate", str(pred), "--json", str(js), "--plot", str(png), "--resamples", resamples]) == 0
    return pred, json.loads(js.read_text()), png


@pytest.mark.parametrize(("bench", "config"), [("feint6k", "msrvtt"), ("contrast_sets", "gender"),
                                               ("posrank", "vln_uvo")])
def test_constant_scorer_end_to_end_is_exactly_chance(built, tmp_path, bench, config):
    """`hardneg score --model constant` then `hardneg evaluate`: every metric is exactly its chance level
    (R@K = mean K/C, MeanR = mean (C+1)/2, MRR = mean H_C/C), every interval is that one point, and the
    chart is written (the plot used to crash on a bound 1 ulp past its value)."""
    _, r, png = _score_and_evaluate(built, tmp_path, bench, config)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    items = load_benchmark(str(built / bench), config).items
    c = np.array([len(x) for x in items["captions"].to_pylist()], dtype=np.float64)
    harmonic = np.array([np.sum(1.0 / np.arange(1, n + 1)) for n in c.astype(int)])
    top1 = "Accuracy" if bench == "contrast_sets" else "R@1"  # a 5-way choice is Accuracy (hardneg.vocabulary)
    independent = {top1: np.mean(1 / c), "MeanR": np.mean((c + 1) / 2), "MedianR": np.median((c + 1) / 2),
                   "MRR": np.mean(harmonic / c)}
    if bench == "feint6k":
        independent["R@2"] = np.mean(np.minimum(2, c) / c)
    assert r["model_id"] == "constant" and r["n"] == r["n_items"] == len(c) and r["tie_rate"] == 1.0
    for key, expected in independent.items():
        assert r["metrics"][key]["value"] == pytest.approx(expected, rel=1e-12), key
    compared = 0
    for key, entry in r["metrics"].items():
        if r["chance"].get(key) is not None:
            assert entry["value"] == r["chance"][key], key  # exactly: the same core, the same tie rule
            assert entry["low"] <= entry["value"] <= entry["high"], key
            compared += 1
    assert compared >= len(independent)


def test_constant_scorer_end_to_end_is_exactly_chance_on_retrieval(built, tmp_path):
    _, r, png = _score_and_evaluate(built, tmp_path, "fire", "msrvtt")
    assert png.is_file()
    for key in ("C@1", "C@5", "mAP", "C@1_original", "MeanR", "MRR"):
        assert r["metrics"][key]["value"] == r["chance"][key], key


def test_random_scorer_is_seeded_recorded_and_needs_no_video(built, tmp_path):
    import pyarrow.parquet as pq

    from hardneg.models import load_model

    runs = {}
    for name, model in (("a", "random:5"), ("b", "random:5"), ("c", "random:6"), ("d", "random")):
        out = tmp_path / f"{name}.parquet"
        assert main(["score", "--model", model, "--dataset", str(built / "feint6k"), "--config", "msrvtt",
                     "--out", str(out), "--no-progress", "--batch-size", "2"]) == 0
        t = pq.read_table(out)
        runs[name] = (t["scores"].to_pylist(), json.loads(t.schema.metadata[b"hardneg"]))
    assert runs["a"][0] == runs["b"][0] != runs["c"][0]
    assert runs["a"][1]["model"]["seed"] == 5 and runs["a"][1]["model_id"] == "random:5"
    assert runs["d"][1]["model"]["seed"] == 0
    flat = np.concatenate([np.asarray(s) for s in runs["a"][0]])
    assert flat.min() >= 0.0 and flat.max() < 1.0 and len(set(flat.tolist())) == flat.size
    # retrieval: every (video, caption) pair gets its own score, the same on every call
    m = load_model("random:5")
    s = m.similarity(np.zeros((50, 0)), m.encode_text(["a dog runs", "a cat sleeps"]))
    assert s.shape == (50, 2) and len(set(s[:, 0].tolist())) == 50
    np.testing.assert_array_equal(s, m.similarity(np.zeros((50, 0)), m.encode_text(["a dog runs", "a cat sleeps"])))
    assert not m.uses_video and not load_model("constant").uses_video
    with pytest.raises(ValueError, match="seed must be an integer"):
        load_model("random:x")
    with pytest.raises(ValueError, match="takes no argument"):
        load_model("constant:3")


def test_chart_never_gets_negative_error_bars(hand_predictions, tmp_path):
    """Float rounding can put a bound past its value (0.20000000000000054 above 0.19999999999999998);
    matplotlib refuses negative yerr, which used to crash `hardneg evaluate` after the JSON was written."""
    from hardneg.evaluation import plot_result

    r = evaluate_predictions(hand_predictions, n_resamples=50)
    for entry in r["metrics"].values():
        if "low" in entry and entry["value"] is not None:
            entry["low"] = entry["value"] + 6e-16
            entry["high"] = entry["value"] - 6e-16
    path = plot_result(r, tmp_path / "chart.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_json_and_chart_are_written_together_or_not_at_all(hand_predictions, tmp_path, monkeypatch):
    import hardneg.evaluation

    js, png = tmp_path / "r.json", tmp_path / "r.png"
    args = ["evaluate", str(hand_predictions), "--json", str(js), "--plot", str(png), "--resamples", "20"]

    def broken_chart(result):
        raise RuntimeError("matplotlib failed")

    with monkeypatch.context() as mp:
        mp.setattr(hardneg.evaluation, "render_chart", broken_chart)
        with pytest.raises(RuntimeError, match="matplotlib failed"):
            main(args)
    assert not js.exists() and not png.exists()  # before: the JSON was there, and a rerun was refused
    assert main(args) == 0 and js.is_file() and png.is_file()  # so the rerun needs no --overwrite
    old_json, old_png = js.read_bytes(), png.read_bytes()

    # a failure while the second file is moved into place puts the first one back
    import os

    real_replace = os.replace

    def failing_replace(src, dst):
        if str(dst) == str(png):
            raise OSError("disk full")
        return real_replace(src, dst)

    with monkeypatch.context() as mp:
        mp.setattr(os, "replace", failing_replace)
        with pytest.raises(OSError, match="disk full"):
            main(args[:-2] + ["--resamples", "30", "--overwrite"])
    assert js.read_bytes() == old_json and png.read_bytes() == old_png
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no staged files left
    assert main(args) == 2  # existing results are still refused without --overwrite


@pytest.mark.parametrize("umask", [0o022, 0o027], ids=["umask-022", "umask-027"])
def test_result_files_get_the_mode_open_would_give(hand_predictions, tmp_path, umask):
    """Before: mkstemp's 0600 for the JSON and the chart (and every other atomic write)."""
    js, png = tmp_path / "r.json", tmp_path / "r.png"
    old = os_umask(umask)
    try:
        assert main(["evaluate", str(hand_predictions), "--json", str(js), "--plot", str(png),
                     "--resamples", "20"]) == 0
    finally:
        os_umask(old)
    for path in (js, png):
        assert path.stat().st_mode & 0o777 == 0o666 & ~umask, (path, oct(path.stat().st_mode))


def os_umask(mask: int) -> int:
    import os

    return os.umask(mask)


def _bad_predictions(path, meta: bytes | None, ids=("a", "b"), scores=((0.1, 0.2), (0.3, 0.4))):
    import pyarrow.parquet as pq

    t = pa.table({"id": pa.array(list(ids), pa.string()),
                  "scores": pa.array([None if s is None else list(s) for s in scores], pa.list_(pa.float32()))})
    pq.write_table(t.replace_schema_metadata(None if meta is None else {b"hardneg": meta}), path)


_GOOD_META = {"schema_version": 1, "task": "multiple_choice", "benchmark": "feint6k", "config": "msrvtt",
              "split": "test", "data_revision": "x", "model_id": "m", "model_revision": "0", "frames": {},
              "hardneg_version": "0"}


@pytest.mark.parametrize(("meta", "rows", "match"), [
    (b"[1, 2]", {}, "metadata is a JSON list, not an object of run settings"),
    (b"{not json", {}, "metadata is not valid JSON"),
    (json.dumps({"config": "msrvtt"}).encode(), {}, r"metadata lacks \[.*'task'"),
    (json.dumps({**_GOOD_META, "task": "ranking"}).encode(), {}, "metadata 'task' is 'ranking'"),
    (json.dumps({**_GOOD_META, "config": 3}).encode(), {}, "metadata 'config' must be a string"),
    (json.dumps(_GOOD_META).encode(), {"scores": ((0.1, 0.2), None)}, r"row 'b' has no score list \(null"),
    (json.dumps(_GOOD_META).encode(), {"scores": ((0.1, None), (0.1, 0.2))}, "row 'a' has a null score"),
    (json.dumps(_GOOD_META).encode(), {"scores": ((0.1, 0.2), (float("nan"), 0.2))}, "row 'b' has a nan score"),
    (json.dumps(_GOOD_META).encode(), {"ids": ("a", None)}, r"row 1 has no id \(null\)"),
    (json.dumps({**_GOOD_META, "task": "retrieval"}).encode(), {}, "need metadata 'video_ids'"),
    (json.dumps({**_GOOD_META, "task": "retrieval", "video_ids": []}).encode(), {}, "'video_ids' is empty"),
    (json.dumps({**_GOOD_META, "task": "retrieval", "video_ids": ["v1", "v2", "v3"]}).encode(), {},
     "row 'a' has 2 scores but the metadata lists 3 videos"),
], ids=["list-metadata", "invalid-json", "missing-fields", "unknown-task", "config-not-a-string", "null-score-list",
        "null-score", "nan-score", "null-id", "retrieval-without-video-ids", "retrieval-no-videos",
        "retrieval-row-length"])
def test_bad_predictions_files_get_clear_errors(tmp_path, capsys, meta, rows, match):
    """Before: list metadata raised AttributeError, a null score list TypeError (tracebacks)."""
    import re

    path = tmp_path / "bad.parquet"
    _bad_predictions(path, meta, **rows)
    assert main(["evaluate", str(path)]) == 2
    err = capsys.readouterr().err
    assert re.search(match, err), err
    assert not list(tmp_path.glob("bad.metrics.*"))
