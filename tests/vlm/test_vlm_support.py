"""`hardneg models`: every video-LLM model type of the installed transformers, its path and whether a tiny-model test
verifies it; docs/models.md holds the same table; `hardneg run` says it before loading; a type without a path is
refused by name."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hardneg.models.vlm.support import (VERIFIED, markdown_table, model_type_of, support, table, tiny_names,
                                        verification_note, video_llm_types)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "models.md"


def test_every_transformers_video_llm_type_is_listed():
    from transformers.models.auto.modeling_auto import MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES
    from transformers.models.auto.video_processing_auto import VIDEO_PROCESSOR_MAPPING_NAMES

    want = set(VIDEO_PROCESSOR_MAPPING_NAMES) & set(MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES)
    rows = {r.model_type for r in table()}
    assert want <= rows and len(want) >= 5
    for name in ("qwen3_vl", "gemma4", "internvl", "smolvlm", "molmo2", "instructblipvideo"):
        assert name in rows or name not in want


def test_docs_table_is_the_generated_one():
    text = DOCS.read_text(encoding="utf-8")
    got = re.search(r"<!-- models-table:start -->\n(.*?)<!-- models-table:end -->", text, re.S)
    assert got, "docs/models.md lacks the models table markers"
    assert got.group(1) == markdown_table(), "docs/models.md's table is stale: paste `hardneg models --markdown`"


def test_verified_types_are_the_tested_tiny_models():
    """A type is verified only when it has a family and its tiny model is one the tiny-model tests run on; the
    tiny model really is of that type."""
    from hardneg.models.vlm.tiny import tiny_vlm_path

    verified = [r for r in table() if r.verified]
    assert {r.model_type for r in verified} == set(VERIFIED)
    for r in verified:
        assert r.supported
        arch = VERIFIED[r.model_type]
        cfg = json.loads((tiny_vlm_path(arch) / "config.json").read_text())
        assert cfg["model_type"] == r.model_type
    assert len(tiny_names("all")) == len(VERIFIED) >= len(tiny_names())
    assert support("qwen3_vl").supported and support("qwen3_vl").path.startswith("generic: Qwen3VL")
    assert support("cosmos3_omni").path == "generic" and not support("cosmos3_omni").verified
    assert support("instructblipvideo").path.startswith("refused: ") and not support("instructblipvideo").supported
    assert not support("clip").supported and support("clip").path == "none"


def test_cli_lists_every_type_with_its_flag(capsys):
    from hardneg.cli import main

    assert main(["models"]) == 0
    out = capsys.readouterr().out
    lines = {ln.split()[0]: ln.split()[1] for ln in out.splitlines()[1:]
             if ln.strip() and "types" not in ln and not ln.startswith(("yes*:", "tiny models"))}
    assert set(lines) == {r.model_type for r in table()}
    for r in table():
        assert lines[r.model_type] == (("yes*" if r.stand_in_template else "yes") if r.verified else "no")
    assert main(["models", "--markdown"]) == 0
    assert capsys.readouterr().out == markdown_table()


def test_run_says_before_loading_whether_the_type_is_verified(tmp_path):
    from hardneg.cli.run import video_llm_note

    assert "verified in this version" in video_llm_note("tiny-vlm:video-llava")
    assert model_type_of("tiny-vlm") == "qwen2_vl"
    folder = tmp_path / "q3"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "qwen3_vl"}))
    note = video_llm_note(str(folder))
    assert "'qwen3_vl'" in note and "NOT verified" in note or "verified in this version" in note
    assert video_llm_note("clip") is None
    assert "unknown" in verification_note(None)


def test_a_type_without_a_hand_written_family_is_refused_by_name_when_asked_for_one(tmp_path):
    from transformers import Qwen3VLConfig

    from hardneg.models.vlm.model import VideoLLM

    folder = tmp_path / "qwen3"
    Qwen3VLConfig(text_config={"vocab_size": 64, "hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2,
                               "num_key_value_heads": 1, "intermediate_size": 32, "head_dim": 8},
                  vision_config={"depth": 1, "hidden_size": 16, "num_heads": 2, "intermediate_size": 32,
                                 "out_hidden_size": 16},
                  architectures=["Qwen3VLForConditionalGeneration"]).save_pretrained(folder)
    with pytest.raises(ValueError) as err:
        VideoLLM(str(folder), device="cpu", path="hand-written")
    msg = str(err.value)
    assert "model_type 'qwen3_vl'" in msg and "no hand-written family" in msg and "generic" in msg


def test_stand_in_templates_are_said_where_users_look():
    """A type verified under a stand-in chat template says so in the table and in `hardneg run`'s note; a type
    verified under its published template does not."""
    from hardneg.models.vlm.support import STAND_IN_TEMPLATES

    assert set(STAND_IN_TEMPLATES) <= set(VERIFIED)
    stand_in = next(iter(STAND_IN_TEMPLATES))
    assert "stand-in chat template" in verification_note(stand_in)
    assert "stand-in" not in verification_note("qwen2_vl")
    rows = {r.model_type: r for r in table()}
    assert rows[stand_in].stand_in_template and rows["qwen2_vl"].stand_in_template is None
    line = next(ln for ln in markdown_table().splitlines() if ln.startswith(f"| `{stand_in}` |"))
    assert "stand-in chat template" in line


@pytest.mark.parametrize("model_type", ["instructblip", "instructblipvideo"])
def test_refused_types_are_refused_by_name_before_loading(model_type):
    """InstructBLIP (images only) and InstructBLIP-Video (its Q-Former would read the caption) are refused with the
    model type and the reason, in `hardneg run`'s note and when loaded."""
    from types import SimpleNamespace

    from hardneg.models.vlm.model import check_video_config
    from hardneg.models.vlm.support import REFUSED

    note = verification_note(model_type)
    assert f"model type {model_type!r}" in note and "refused" in note and REFUSED[model_type] in note
    with pytest.raises(ValueError) as err:
        check_video_config("some/ckpt", SimpleNamespace(model_type=model_type, architectures=["X"]))
    assert f"model_type {model_type!r}" in str(err.value) and "refused" in str(err.value)
    assert ("Q-Former" in REFUSED[model_type]) == (model_type == "instructblipvideo")


def test_generic_refuses_a_processor_that_feeds_the_text_to_a_q_former():
    """The general rule behind instructblipvideo's refusal: any processor with Q-Former text inputs is refused by
    the generic path (it would feed the caption to the Q-Former), naming the model type."""
    from types import SimpleNamespace

    from hardneg.models.vlm.generic import Generic

    config = SimpleNamespace(model_type="some_qformer_type", video_token_id=5)
    processor = SimpleNamespace(model_input_names=["input_ids", "pixel_values", "qformer_input_ids"])
    with pytest.raises(ValueError) as err:
        Generic(config, {}, processor, None, "")
    assert "'some_qformer_type'" in str(err.value) and "Q-Former" in str(err.value)


def test_auto_path_says_which_and_why():
    """Issue 52: `path="auto"` records the path it runs and why; every type with a hand-written family is listed
    (auto keeps it: other scores, whatever the speed), any other type runs the generic family."""
    from hardneg.models.vlm.families import supported_model_types
    from hardneg.models.vlm.support import AUTO_PATH, auto_path

    assert set(AUTO_PATH) == set(supported_model_types())
    for t in supported_model_types():
        path, why = auto_path(t)
        assert path == "hand-written" and why
        assert f"path auto: {path}" in verification_note(t)
    assert auto_path("glm5_next")[0] == "generic"
