"""The settings objects (`hardneg.settings`, issue 51): the public entry points keep their keyword names and fold
them into the objects; results.json records the objects and `recorded_settings` reads them back; the CLI builds
them in one place."""

from __future__ import annotations

import pytest

import hardneg
from hardneg.runner import run_map
from hardneg.scoring import score_benchmark
from hardneg.settings import (EvalSettings, Execution, ModelSpec, RunSpec, from_keywords, recorded_settings,
                              refuse_unknown)
from hardneg.video import FrameSettings


def test_keywords_fill_the_objects_and_unknown_ones_are_refused_by_name():
    options = {"ties": "optimistic", "seed": 3, "device": "cpu", "nonsense": 1}
    ev = from_keywords(EvalSettings, "f", None, options)
    spec = from_keywords(ModelSpec, "f", ModelSpec("tiny-clip"), options)
    assert ev == EvalSettings(ties="optimistic", seed=3) and spec == ModelSpec("tiny-clip", device="cpu")
    with pytest.raises(TypeError, match="unexpected keyword argument 'nonsense'"):
        refuse_unknown("f", options, (EvalSettings, ModelSpec))


@pytest.mark.parametrize("call", [
    lambda: hardneg.run_model("blind-unigram", "feint6k", out="x", resamplez=3),
    lambda: score_benchmark("blind-unigram", "d", "c", "o.parquet", batchsize=3),
    lambda: run_map(lambda: None, [], "o", backnd="local"),
])
def test_a_misspelt_keyword_is_a_type_error_naming_it(call):
    with pytest.raises(TypeError, match="unexpected keyword argument '(resamplez|batchsize|backnd)'"):
        call()


def test_results_json_records_the_objects_and_a_rerun_reads_them_back(tmp_path, cache, built):
    frames = FrameSettings(n_frames=4, resize=64)
    results = hardneg.run_model("blind-unigram", "feint6k", data=built / "feint6k", out=tmp_path / "out",
                                frames=frames, resamples=0, seed=5, ties="optimistic", model_id="test/blind",
                                cache_dir=cache, batch_size=16)
    got = recorded_settings(tmp_path / "out" / "results.json")
    assert set(got) == {k for k in results if "/" in k} and got
    for rec in got.values():
        assert rec.model == ModelSpec("blind-unigram", model_id="test/blind")
        assert rec.evaluation == EvalSettings(ties="optimistic", n_resamples=0, seed=5)
        assert rec.execution == Execution(batch_size=16, progress=False)
        assert rec.frames == frames
    # the same settings, read back and given as objects, reuse every predictions file (the resume key is the same)
    rec = next(iter(got.values()))
    again = hardneg.run.run_specs(rec.model, RunSpec("feint6k", data=built / "feint6k", out=tmp_path / "out",
                                                     cache_dir=cache, evaluation=rec.evaluation),
                                  rec.frames, rec.execution)
    assert all(r["run"]["reused"] for k, r in again.items() if "/" in k)
    assert {k: r["metrics"] for k, r in again.items()} == {k: r["metrics"] for k, r in results.items()}


def test_the_cli_builds_the_objects_in_one_place():
    """`hardneg run` and `hardneg score` read their model and frame flags through one builder each."""
    from hardneg.cli import model_flags
    from hardneg.cli import build_parser

    for argv in (["run", "--model", "tiny-clip"], ["score", "--model", "tiny-clip", "--dataset", "d", "--config", "c",
                                                   "--out", "o"]):
        argv += ["--model-id", "me/x", "--fp16", "--protocol-set", "lmms-eval", "--frames", "4",
                 "--processor-kwargs", "fps=2"]
        args = build_parser(argv).parse_args(argv)
        assert model_flags.model_spec(args) == ModelSpec("tiny-clip", fp16=True, protocol_set="lmms-eval",
                                                         model_id="me/x")
        assert model_flags.frame_settings(args) == FrameSettings(n_frames=4, processor={"fps": 2})
