"""`--judge`: a local causal LM decides the answers a protocol set's rule cannot, with the set's judge prompt; the
judge, its prompt and decoding are in provenance."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hardneg import benchmarks
from hardneg.judges import LLMJudge, rating


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory):
    """A random-weight Qwen2 causal LM with the tiny video LLM's tokenizer and chat template, saved as a folder."""
    from transformers import AutoTokenizer, Qwen2Config, Qwen2ForCausalLM

    from hardneg.models.vlm.tiny import tiny_vlm_path

    tok = AutoTokenizer.from_pretrained(str(tiny_vlm_path("qwen2-vl")))
    cfg = Qwen2Config(vocab_size=len(tok), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=2048)
    out = tmp_path_factory.mktemp("judge")
    Qwen2ForCausalLM(cfg).save_pretrained(out)
    tok.save_pretrained(out)
    return out


@pytest.mark.parametrize("reply, want", [("Correct.", 1), ("Incorrect", 0), ("It is Correct", 1),
                                         ("Correct or Incorrect", 1), ("Both Incorrect and Correct", 0), ("yes", None)])
def test_rating_reads_replies_as_the_sources_do(reply, want):
    assert rating(reply) == want


def test_the_judge_decides_undecided_answers_with_the_sets_prompt(tiny_lm, monkeypatch):
    from hardneg.models import load_model

    judge = LLMJudge(str(tiny_lm), device="cpu")
    assert isinstance(judge.reply("Is this right?"), str)  # the real model runs
    asked = []

    def reply(prompt):
        asked.append(prompt)
        return "Incorrect" if "a dog runs" in prompt.split("Ground-Truth Answer:")[1] else "Correct"

    monkeypatch.setattr(judge, "reply", reply)
    m = load_model("tiny-vlm", device="cpu")
    m.use_protocol(benchmarks.get("tempcompass"), protocol_set="authors")
    q = "Which caption matches the video better?\nCaption A: a dog runs\nCaption B: a cat sits"
    item = {"captions": ["a dog runs", "a cat sits"], "provenance": [{"details": json.dumps({"question": q})}] * 2}
    monkeypatch.setattr(m.engine, "generate", lambda *a, **k: "the furry one")
    m.judge = judge
    m.set_item(item)
    assert m.score(np.zeros((2, 16, 16, 3), np.uint8), item["captions"]).tolist() == [0.0, 1.0]
    assert len(asked) == 1 and "Model Prediction: the furry one" in asked[0] and q in asked[0]
    report = m.take_generation_report()
    assert (report["by_judge"], report["undecided"]) == (1, 0)
    assert "pass --judge" not in report["note"] and "--judge" in report["note"]  # the footnote of a judged run
    ident = m.identity()["judge"]
    assert ident["model"] == str(tiny_lm) and "Caption Matching Question" in ident["prompts"][0]


def test_without_a_judge_prompt_the_answer_stays_undecided(tiny_lm, monkeypatch):
    judge = LLMJudge(str(tiny_lm), device="cpu")
    monkeypatch.setattr(judge, "reply", lambda prompt: "Correct")
    assert judge("q", "a", ["x", "y"], spec=benchmarks.get("vitatecs").vlm_for("default")) is None
    assert judge("q", "a", ["x", "y"], spec=benchmarks.get("vitatecs").vlm_for("lmms-eval")) == 0


def test_the_undecided_footnote_says_pass_judge_only_when_no_judge_ran(monkeypatch):
    from hardneg.models import load_model

    m = load_model("tiny-vlm", device="cpu")
    m.use_protocol(benchmarks.get("tempcompass"), protocol_set="authors")
    q = "Which caption matches the video better?\nCaption A: a dog runs\nCaption B: a cat sits"
    item = {"captions": ["a dog runs", "a cat sits"], "provenance": [{"details": json.dumps({"question": q})}] * 2}
    monkeypatch.setattr(m.engine, "generate", lambda *a, **k: "the furry one")
    notes = []
    for judge in (None, lambda question, answer, captions: None):
        m.judge = judge
        m.set_item(item)
        m.score(np.zeros((2, 16, 16, 3), np.uint8), item["captions"])
        report = m.take_generation_report()
        assert report["undecided"] == 1
        notes.append(report["note"])
    assert "pass --judge" in notes[0]
    assert "pass --judge" not in notes[1] and "the judge (--judge) left them undecided" in notes[1]
