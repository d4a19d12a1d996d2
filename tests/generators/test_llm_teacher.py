"""LLM-teacher: Eq. 2 soft targets against a hand computation; mask filling with a tiny MLM."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from hardneg.generators.llm_teacher import MaskFiller, LlmTeacherBatchFn, soft_targets


def test_soft_targets_match_hand_computation():
    e_p = np.array([1.0, 0.0])
    embs = np.array([[2.0, 0.0], [0.0, 1.0], [1.0, 1.0]])  # cosines 1, 0, 1/sqrt(2)
    tau = 0.5
    z = [math.exp(1 / tau), math.exp(0 / tau), math.exp((1 / math.sqrt(2)) / tau)]
    expected = np.array(z) / sum(z)
    np.testing.assert_allclose(soft_targets(e_p, embs, tau), expected, rtol=1e-12)


def test_soft_targets_rejects_bad_input():
    with pytest.raises(ValueError, match="tau"):
        soft_targets([1.0], [[1.0]], tau=0)
    with pytest.raises(ValueError, match="caption_embeddings"):
        soft_targets([1.0, 0.0], [[1.0, 0.0, 0.0]])


@pytest.fixture(scope="module")
def teacher(tiny_xlmr, nlp):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    filler = MaskFiller(AutoModelForMaskedLM.from_pretrained(tiny_xlmr), AutoTokenizer.from_pretrained(tiny_xlmr))
    return lambda **kw: LlmTeacherBatchFn(nlp, filler, model_id=str(tiny_xlmr), **kw)


def test_mask_fills_are_whole_new_verbs_with_records(teacher, nlp):
    fn = teacher(k=10, search_k=60, seed=3)
    caps = ["a man is pushing a cart into the room", "people are dancing on the stage", "a dog under the table"]
    out = fn({"id": ["a", "b", "c"], "caption": caps})
    assert out["source_id"] == ["a", "b"]  # c has no action token
    for captions, prov, types in zip(out["captions"], out["provenance"], out["negative_types"]):
        assert 1 <= len(captions) - 1 <= 10
        assert len(set(captions)) == len(captions)
        for cap, rec in zip(captions[1:], prov[1:]):
            assert rec["generator"] == "llm-teacher-mask-fill" and rec["rule"] == "mlm-fill"
            assert rec["replacement"].lower() != rec["span"].lower()
            doc = nlp(cap)
            i = json.loads(rec["details"])["token_index"]
            assert doc[i].text == rec["replacement"] and doc[i].pos_ == "VERB"
        assert types[1:] == ["llm_fill"] * (len(captions) - 1)


def test_mask_fill_is_deterministic_across_batching(teacher):
    caps = ["a man is pushing a cart into the room", "people are dancing on the stage", "a girl is eating an apple"]
    ids = ["x", "y", "z"]
    whole = teacher(seed=1)({"id": ids, "caption": caps})
    parts = [teacher(seed=1)({"id": [i], "caption": [c]}) for i, c in zip(ids, caps)]
    assert whole["captions"] == [c for p in parts for c in p["captions"]]
    assert whole["provenance"] == [c for p in parts for c in p["provenance"]]


def test_soft_targets_recorded_with_sentence_model(tiny_xlmr, teacher):
    from hardneg.resources import MissingResourceError, load_sentence_model

    try:
        st = load_sentence_model()
    except MissingResourceError as exc:
        pytest.skip(str(exc))
    out = teacher(seed=0, sentence_model=st, tau=0.1)({"id": ["a"], "caption": ["a man is pushing a cart"]})
    dets = [json.loads(r["details"]) for r in out["provenance"][0][1:]]
    total = dets[0]["soft_target_positive"] + sum(d["soft_target"] for d in dets)
    assert total == pytest.approx(1.0, abs=1e-4)
    emb = st.encode(out["captions"][0], convert_to_numpy=True)
    np.testing.assert_allclose([d["soft_target"] for d in dets], soft_targets(emb[0], emb, 0.1)[1:], rtol=1e-3)


def test_factory_loads_a_local_masked_lm(tiny_xlmr):
    from hardneg.generators.llm_teacher import make_batch_fn

    fn = make_batch_fn(model=str(tiny_xlmr), k=3, search_k=40, seed=0)
    out = fn({"id": ["a"], "caption": ["a man is pushing a cart into the room"]})
    assert out["source_id"] == ["a"] and 2 <= len(out["captions"][0]) <= 4
