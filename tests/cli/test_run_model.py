"""`hardneg.run_model`: any object with the model protocol, any benchmarks, results.json, resuming."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest

from hardneg.run import config_results
from cli_oracles import EmbeddingOracle, ScoreOracle

import hardneg
from hardneg.items import card_configs


def _value(results, key, metric):
    return results[key]["metrics"][metric]["value"]


def _run(model, tmp_path, cache, **kw):
    kw.setdefault("benchmarks", "feint6k,fire")
    return hardneg.run_model(model, out=tmp_path / "out", cache_dir=cache, resamples=0, **kw)


def test_embedding_object_is_scored_on_the_real_frames_and_captions(answers, tmp_path, cache):
    """An oracle that knows which video each frame stack is gets every item right: the frames reach
    encode_video, the captions encode_text, and the default cosine similarity ranks them."""
    results = _run(EmbeddingOracle(answers), tmp_path, cache)
    for config in ("msrvtt", "vatex"):
        assert _value(results, f"feint6k/{config}", "R@1") == 1.0
        assert _value(results, f"feint6k/{config}", "MeanR") == 1.0
    for config in ("msrvtt", "msvd"):
        assert _value(results, f"fire/{config}", "C@1") == 1.0
        assert _value(results, f"fire/{config}", "mAP") == 1.0
    assert all(r["model_id"] == "test/embedding-oracle" and r["coverage"] == 1.0 for r in results.values())
    # each benchmark's one number under its own key (issue 27): Feint6K's is the mean of R@1 over its configs
    assert results["feint6k"]["value"] == 1.0 and results["feint6k"]["rule"] == "mean"


@pytest.mark.parametrize("sign, r1, mean_rank", [(1.0, 1.0, 1.0), (-1.0, 0.0, 6.0)])
def test_score_object_gets_each_items_video_and_captions(answers, tmp_path, cache, sign, r1, mean_rank):
    """score(video, captions): right answers give R@1 = 1; the negated oracle puts every positive last."""
    results = _run(ScoreOracle(answers, sign), tmp_path, cache, benchmarks="feint6k")
    assert set(results) == {"feint6k/msrvtt", "feint6k/vatex", "feint6k"}
    assert results["feint6k"]["metrics"]["R@1"]["value"] == r1  # the benchmark's number: mean over both
    for res in config_results(results).values():
        assert res["metrics"]["R@1"]["value"] == r1 and res["metrics"]["MeanR"]["value"] == mean_rank


def test_score_object_on_retrieval(answers, tmp_path, cache):
    results = _run(ScoreOracle(answers), tmp_path, cache, benchmarks="fire")
    assert _value(results, "fire/msrvtt", "C@1") == 1.0 and _value(results, "fire/msvd", "mAP") == 1.0


def test_results_json_holds_every_scoreable_config(answers, tmp_path, cache, built):
    results = _run(EmbeddingOracle(answers), tmp_path, cache)
    expected = {f"{b}/{c}" for b in ("feint6k", "fire") for c in card_configs(built / b) if not c.endswith(("-queries", "-videos"))}
    assert set(config_results(results)) == expected and {"feint6k", "fire"} <= set(results)
    on_disk = json.loads((tmp_path / "out" / "results.json").read_text())
    assert on_disk == json.loads(json.dumps(results))
    for key, res in config_results(on_disk).items():
        assert (tmp_path / "out" / res["run"]["predictions"]).is_file()
        assert res["chance"] and res["headline"] and res["provenance"]["model_id"] == "test/embedding-oracle"


def test_a_plain_function_and_a_text_only_model(tmp_path, cache):
    seen = []

    def by_length(video, captions):
        seen.append(video)
        return [float(len(c)) for c in captions]

    results = _run(by_length, tmp_path, cache, benchmarks="contrast_sets")
    assert results and all(isinstance(v, np.ndarray) and v.dtype == np.uint8 and v.ndim == 4 for v in seen)

    seen.clear()
    by_length.uses_video = False
    results = _run(by_length, tmp_path / "blind", cache, benchmarks="contrast_sets")
    assert seen and all(v is None for v in seen)
    assert all(r["videos"]["ok"] == 0 for r in config_results(results).values())  # nothing was decoded


def test_a_versioned_model_resumes_and_an_unversioned_one_rescores(answers, tmp_path, cache):
    first = EmbeddingOracle(answers, revision="v1")
    a = _run(first, tmp_path, cache, benchmarks="feint6k")
    assert first.calls["video"] > 0 and not any(r["run"]["reused"] for r in config_results(a).values())
    again = EmbeddingOracle(answers, revision="v1")
    b = _run(again, tmp_path, cache, benchmarks="feint6k")
    assert again.calls == {"video": 0, "text": 0} and all(r["run"]["reused"] for r in config_results(b).values())
    assert {k: r["metrics"] for k, r in a.items()} == {k: r["metrics"] for k, r in b.items()}
    changed = EmbeddingOracle(answers, revision="v2")  # a new version is scored again
    c = _run(changed, tmp_path, cache, benchmarks="feint6k")
    assert changed.calls["text"] > 0 and not any(r["run"]["reused"] for r in config_results(c).values())
    unversioned = EmbeddingOracle(answers)
    d = _run(unversioned, tmp_path, cache, benchmarks="feint6k")
    assert unversioned.calls["video"] > 0 and not any(r["run"]["reused"] for r in config_results(d).values())


def test_another_models_predictions_are_not_replaced_without_overwrite(answers, tmp_path, cache):
    _run(EmbeddingOracle(answers), tmp_path, cache, benchmarks="feint6k")
    before = (tmp_path / "out" / "predictions" / "feint6k-msrvtt.parquet").read_bytes()
    with pytest.raises(FileExistsError, match="overwrite"):
        _run(ScoreOracle(answers), tmp_path, cache, benchmarks="feint6k")
    assert (tmp_path / "out" / "predictions" / "feint6k-msrvtt.parquet").read_bytes() == before
    results = _run(ScoreOracle(answers), tmp_path, cache, benchmarks="feint6k", overwrite=True)
    assert all(r["model_id"] == "test/score-oracle" for r in results.values())


def test_data_root_single_folder_and_clear_errors(answers, tmp_path, cache, built, videos):
    model = EmbeddingOracle(answers)
    root = hardneg.run_model(model, "all", data=built, videos=videos, out=tmp_path / "a", resamples=0)
    assert {k.split("/")[0] for k in root} == {p.name for p in built.iterdir() if (p / "README.md").is_file()}
    one = hardneg.run_model(model, data=built / "feint6k", videos=videos, out=tmp_path / "b", resamples=0)
    assert set(one) == {"feint6k/msrvtt", "feint6k/vatex", "feint6k"} and _value(one, "feint6k/msrvtt", "R@1") == 1.0
    with pytest.raises(ValueError, match="unknown benchmark 'nope'; known benchmarks: feint6k"):
        hardneg.run_model(model, "feint6k,nope", out=tmp_path / "c")
    with pytest.raises(FileNotFoundError, match="no built folder for"):
        hardneg.run_model(model, "feint6k", data=tmp_path / "b", out=tmp_path / "c")
    with pytest.raises(ValueError, match="needs videos"):
        hardneg.run_model(model, "feint6k", data=built, out=tmp_path / "c", resamples=0)


def test_protocol_errors_name_the_method(answers, tmp_path, cache):
    class WrongShape(EmbeddingOracle):
        def encode_text(self, texts):
            return np.zeros((len(texts) + 1, 3))

    class NotANumber:
        def score(self, video, captions):
            return [float("nan")] * len(captions)

    with pytest.raises(ValueError, match=r"encode_text returned shape \(7, 3\); expected \(6, D\)"):
        _run(WrongShape(answers), tmp_path, cache, benchmarks="feint6k")
    with pytest.raises(ValueError, match="score returned NaN"):
        _run(NotANumber(), tmp_path / "n", cache, benchmarks="feint6k")
    with pytest.raises(TypeError, match="docs/models.md"):
        _run(object(), tmp_path / "o", cache, benchmarks="feint6k")
    with pytest.raises(ValueError, match="in this process only"):
        _run(NotANumber(), tmp_path / "w", cache, benchmarks="feint6k", backend="ray")


def test_score_models_leave_no_frames_behind(answers, tmp_path, cache):
    temp = Path(tempfile.gettempdir())
    before = set(temp.glob("hardneg-frames-*")) | set(temp.glob("hardneg-run-cache-*"))
    _run(ScoreOracle(answers), tmp_path, cache, benchmarks="feint6k")
    after = set(temp.glob("hardneg-frames-*")) | set(temp.glob("hardneg-run-cache-*"))
    assert after <= before
