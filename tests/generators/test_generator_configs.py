"""The generators' settings objects (`PosRankConfig`, `VerbPhraseConfig`): the public keywords still work and
mean the same as a `config=`, bad settings are refused when the object is built, and `help()` / `hardneg train
--negatives-set` still see every setting by name."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from hardneg.generators.posrank import PosRankBatchFn, PosRankConfig, make_batch_fn, make_phrase_batch_fn
from hardneg.generators.verb_phrase import VerbPhraseConfig
from hardneg.generators.verb_phrase import make_batch_fn as verb_make_batch_fn

VOCAB = {"noun": ["cart", "dog", "road"], "verb": ["pull", "eat", "run"], "adj": ["red", "old"],
         "adv": ["slowly", "quickly"], "prep": ["on", "under"]}
BATCH = {"id": ["1", "2"], "caption": ["a man slowly pushes a red cart on the road", "the dog quickly runs up"]}

#: the keywords the factories took before their configs (recipes and --set name them)
POSRANK_KEYS = ["vocabulary", "k", "seed", "parts_of_speech", "phrase", "tiers", "sibling_limit", "vocabulary_pos",
                "min_length", "preposition_map", "skip_targets", "prefer_antonym_targets", "fit_surface",
                "replace_all", "batch_size"]
VERB_KEYS = ["verb_counts", "infill_model", "perplexity_model", "sentence_model", "seed", "k", "min_verb_count",
             "max_negatives", "max_new_tokens", "word_cos_max", "sent_cos_max", "ppl_diff_max",
             "ppl_diff_max_if_low", "ppl_m_max", "device"]


def test_factories_keep_their_keywords():
    assert set(inspect.signature(make_batch_fn).parameters) == set(POSRANK_KEYS) | {"config"}
    assert set(inspect.signature(make_phrase_batch_fn).parameters) == set(POSRANK_KEYS) - {"phrase"} | {"config"}
    assert set(inspect.signature(verb_make_batch_fn).parameters) == set(VERB_KEYS) | {"config"}


def test_keywords_and_config_give_the_same_negatives(nlp, wordnet):
    kw = {"k": 3, "seed": 2, "tiers": ["antonym", "vocabulary"], "fit_surface": False, "replace_all": True}
    by_keywords = PosRankBatchFn(nlp, wordnet, VOCAB, **kw)(BATCH)
    by_config = PosRankBatchFn(nlp, wordnet, VOCAB, config=PosRankConfig(**kw))(BATCH)
    over = PosRankBatchFn(nlp, wordnet, VOCAB, config=PosRankConfig(k=9, seed=2), k=3, tiers=["antonym", "vocabulary"],
                          fit_surface=False, replace_all=True)(BATCH)
    assert by_keywords["captions"] and by_keywords == by_config == over
    assert by_keywords != PosRankBatchFn(nlp, wordnet, VOCAB, k=3, seed=2)(BATCH)  # the settings do matter


def test_bad_settings_are_refused_when_built(nlp, wordnet):
    for bad, match in [({"parts_of_speech": ["pronoun"]}, "parts_of_speech"), ({"k": 0}, "k must be"),
                       ({"tiers": ["antonym", "antonym"]}, "tiers"), ({"vocabulary_pos": "adv"}, "vocabulary_pos"),
                       ({"sibling_limit": -1}, "sibling_limit"), ({"min_length": 0}, "min_length"),
                       ({"skip_targets": "some"}, "some")]:
        with pytest.raises(ValueError, match=match):
            PosRankConfig(**bad)
    with pytest.raises(TypeError, match="'kk'.*its settings are k, seed"):
        PosRankBatchFn(nlp, wordnet, VOCAB, kk=3)
    with pytest.raises(TypeError, match="'kk'"):
        make_batch_fn(vocabulary=VOCAB, kk=3)
    with pytest.raises(TypeError, match="expected a PosRankConfig"):
        PosRankBatchFn(nlp, wordnet, VOCAB, config={"k": 3})


def test_configs_are_frozen_and_normalised():
    cfg = PosRankConfig(parts_of_speech=["verb"], tiers=["antonym"], k=3.0)
    assert (cfg.parts_of_speech, cfg.tiers, cfg.k) == (("verb",), ("antonym",), 3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.k = 4
    vp = VerbPhraseConfig(model_ids={"infill": "t5"}, k=6)
    assert vp.model_ids == (("infill", "t5"),) and vp.ppl_limits == (0.6, 1.4, 750.0)
    with pytest.raises(TypeError, match="model_ids is recorded"):
        verb_make_batch_fn(model_ids={"infill": "x"})
