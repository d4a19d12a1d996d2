"""The training spec (`hardneg.training.spec`) and the objective records: `hardneg.train` keeps its keywords, the
CLI builds one spec from its flags, and what a run records (its settings and their key) is what it always was."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from hardneg.training.objectives import OBJECTIVE_RECORDS, OBJECTIVES, help_lines, objective
from hardneg.training.spec import TrainSettings, TrainSpec

#: the keywords `hardneg.train` took before the spec (user code passes them)
OLD_KEYWORDS = ["model", "data", "out", "objective", "negatives", "negatives_settings", "videos", "steps", "epochs",
                "batch_size", "lr", "weight_decay", "seed", "lam", "n_negatives", "n_frames", "resize", "teacher",
                "limit", "save_every", "resume", "overwrite", "device", "compile", "progress", "_stop_after"]


def test_train_keeps_its_keywords_and_refuses_unknown_ones(tmp_path):
    import hardneg

    params = inspect.signature(hardneg.train).parameters
    assert sorted(params) == sorted(OLD_KEYWORDS)
    assert [p for p in params][:3] == ["model", "data", "out"]
    with pytest.raises(TypeError, match="'step_count'.*its settings are model, data, out"):
        hardneg.train("tiny-temporal", tmp_path, tmp_path / "o", step_count=3)
    with pytest.raises(ValueError, match="--epochs 0"):
        hardneg.train("tiny-temporal", tmp_path, tmp_path / "o", epochs=0)
    assert not (tmp_path / "o").exists()  # refused before any work


def test_spec_is_frozen_and_checked_when_built():
    spec = TrainSpec(objective="phrase", negatives_settings={"k": 5, "tiers": ["antonym"]})
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.lr = 1.0
    assert spec.negatives_settings == (("k", 5), ("tiers", ["antonym"]))
    assert spec.generator_settings == {"k": 5, "tiers": ["antonym"]}
    for bad, match in [({"objective": "nope"}, "objective 'nope' unknown"), ({"batch_size": 1}, "batch_size"),
                       ({"steps": 0}, "steps must be"), ({"lr": float("nan")}, "--lr"), ({"lam": -1}, "--lam"),
                       ({"limit": 0}, "--limit 0"), ({"negatives": "posrank"}, "objective 'coarse' uses no")]:
        with pytest.raises(ValueError, match=match):
            TrainSpec(**bad)


def test_recorded_settings_and_their_key_are_unchanged():
    """The settings a run records (and `--resume` compares) are built as before the spec: the same fields, the
    objective's generator filled in, the teacher kept for llm-lgt only, and the same key (pinned: a changed key
    would stop every earlier run from resuming)."""
    assert [f.name for f in dataclasses.fields(TrainSettings)] == [
        "model", "data", "videos", "objective", "negatives", "negatives_settings", "steps", "epochs", "batch_size",
        "lr", "weight_decay", "seed", "lam", "n_negatives", "n_frames", "resize", "teacher", "limit"]
    s = TrainSpec(data="pairs", out="o", objective="phrase", negatives_settings={"k": 5}, steps=6, batch_size=8,
                  seed=3, save_every=4, progress=False).settings()
    assert (s.negatives, s.negatives_settings, s.teacher, s.data) == ("posrank_phrase", {"k": 5}, "", "pairs")
    assert s.key() == "7b6423bfc6d31dbf"  # the old trainer built this TrainSettings with this key
    assert TrainSpec(objective="llm-lgt").settings().teacher == "sentence-transformers/all-MiniLM-L6-v2"
    assert TrainSpec().settings().negatives is None
    assert TrainSettings().key() == "0ab76db6161dbbdb"


def test_objective_records_are_the_one_table():
    from hardneg.training.losses import OBJECTIVES as loss_names
    from hardneg.training.trainer import OBJECTIVE_NEEDS

    assert OBJECTIVES == loss_names == ("coarse", "word", "phrase", "prompt", "llm-lbl", "llm-lgt")
    assert OBJECTIVE_NEEDS == {"coarse": (None, False), "word": ("posrank", False),
                               "phrase": ("posrank_phrase", False), "prompt": ("posrank_phrase", True),
                               "llm-lbl": ("llm_teacher", False), "llm-lgt": ("llm_teacher", False)}
    assert help_lines().splitlines()[0] == (
        "  coarse    L_coarse, symmetric video-text InfoNCE over the batch (PoSRank Sec. 6.1)")
    assert objective("word").extra == "fine" and objective("llm-lgt").extra == "logit"
    with pytest.raises(ValueError, match="choose one of"):
        objective("fine")
    with pytest.raises(ValueError, match="go together"):
        dataclasses.replace(OBJECTIVE_RECORDS["word"], generator=None)


def test_cli_builds_the_spec_from_its_flags_in_one_place(tmp_path):
    from hardneg.cli import build_parser
    from hardneg.cli.train import spec_from_args

    argv = ["train", "--data", str(tmp_path), "--out", str(tmp_path / "o"), "--objective", "word", "--steps", "7",
            "--batch-size", "4", "--frames", "6", "--negatives-set", "k=3", "--save-every", "2", "--no-progress",
            "--resume"]
    spec = spec_from_args(build_parser(argv).parse_args(argv))
    assert spec == TrainSpec(data=str(tmp_path), out=str(tmp_path / "o"), objective="word", steps=7, batch_size=4,
                             n_frames=6, negatives_settings={"k": 3}, save_every=2, progress=False, resume=True)
    with pytest.raises(ValueError, match="not a setting of generator 'posrank'"):
        bad = argv + ["--negatives-set", "kk=3"]
        spec_from_args(build_parser(bad).parse_args(bad))
