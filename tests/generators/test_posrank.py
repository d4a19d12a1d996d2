"""PoSRank single-word and phrase-level negatives on hand-checked sentences."""

from __future__ import annotations

import json

import pytest

from hardneg.generators.posrank import PosRankBatchFn, normalize_vocabulary
from hardneg.schema import PARTS_OF_SPEECH

VOCAB = normalize_vocabulary({
    "noun": ["cart", "room", "dogs", "apple", "box", "table", "road", "stage", "fence", "cup"],
    "verb": ["pushing", "pull", "eat", "jumps", "sleep", "dance", "walk", "throw", "sit"],
    "adj": ["red", "white", "big", "small", "wooden", "empty", "old"],
    "adv": ["slowly", "quickly", "backward", "forward", "loudly", "carefully", "together"],
    "adp": ["In", "on", "under", "over", "into", "with", "near", "behind"],
})


@pytest.fixture(scope="module")
def fn(nlp, wordnet):
    return lambda **kw: PosRankBatchFn(nlp, wordnet, VOCAB, **kw)


def rows_by_pos(out):
    return {i.rsplit("/", 1)[1]: (c, p) for i, c, p in zip(out["id"], out["captions"], out["provenance"])}


def test_antonym_first_keeps_inflection_and_case(fn):
    caps = ["A man is pushing the cart slowly into the room", "Men walk backward on a white road"]
    out = fn(k=20, seed=0)({"id": ["a", "b"], "caption": caps})
    a = rows_by_pos({k: [v[i] for i in range(len(v)) if out["source_id"][i] == "a"] for k, v in out.items()})
    b = rows_by_pos({k: [v[i] for i in range(len(v)) if out["source_id"][i] == "b"] for k, v in out.items()})
    assert a["verb"][0][1] == "A man is pulling the cart slowly into the room"      # is pushing -> is pulling
    assert a["adv"][0][1] == "A man is pushing the cart quickly into the room"
    assert a["prep"][0][1] == "A man is pushing the cart slowly out of the room"    # explicit preposition map
    assert a["noun"][0][1] == "A woman is pushing the cart slowly into the room"
    assert b["noun"][0][1] == "Women walk backward on a white road"                 # plural + capital kept
    assert b["adv"][0][1] == "Men walk forward on a white road"
    assert b["adj"][0][1] == "Men walk backward on a black road"
    for pos in ("verb", "adv", "prep", "noun"):
        assert a[pos][1][1]["rule"] == "antonym"
        assert a[pos][1][1]["pos"] == pos and a[pos][1][1]["seed"] == 0
    assert a["verb"][1][1]["span"] == "pushing" and a["verb"][1][1]["replacement"] == "pulling"


def test_k_unique_never_original_one_word_changed(fn):
    cap = "A man is pushing the cart slowly into the room"
    out = fn(k=20, seed=1)({"id": ["a"], "caption": [cap]})
    for caps, prov, cat in zip(out["captions"], out["provenance"], out["category"]):
        assert caps[0] == cap and len(caps) == len(set(caps))
        assert len(caps) - 1 <= 20
        for neg, rec in zip(caps[1:], prov[1:]):
            assert neg != cap
            assert rec["rule"] in ("antonym", "hypernym-antonym", "similar-antonym", "sibling", "vocabulary")
            # exactly the recorded word changed, plus a/an agreement before it (all words unique here)
            words = cap.split()
            i = words.index(rec["span"])
            expected = words[:i] + [rec["replacement"]] + words[i + 1:]
            if i and words[i - 1].lower() in ("a", "an"):
                art = "an" if rec["replacement"][0].lower() in "aeiou" else "a"
                expected[i - 1] = art.capitalize() if words[i - 1][0].isupper() else art
            assert neg == " ".join(expected)


def test_vocabulary_tier_fills_up_to_k_without_duplicates(fn):
    out = fn(k=5, seed=0, parts_of_speech=["adj"])({"id": ["a"], "caption": ["A wooden table"]})
    (caps,), (prov,) = out["captions"], out["provenance"]
    assert len(caps) == 6
    rules = [r["rule"] for r in prov[1:]]
    # tiers appear in priority order
    order = ["antonym", "hypernym-antonym", "similar-antonym", "sibling", "vocabulary"]
    assert [order.index(r) for r in rules] == sorted(order.index(r) for r in rules)


def test_caption_without_a_part_of_speech_gives_no_row(fn):
    out = fn(k=5, seed=0)({"id": ["x"], "caption": ["A dog sits"]})
    cats = set(out["category"])
    assert "adv" not in cats and "prep" not in cats and "adj" not in cats
    assert {"noun", "verb"} <= cats


def test_skip_words_and_article_agreement(fn):
    out = fn(k=20, seed=0, parts_of_speech=["adv"])({"id": ["x"], "caption": ["A man sits and then stands"]})
    assert out["id"] == []  # 'then' is never a target
    out = fn(k=20, seed=0, parts_of_speech=["adj"])({"id": ["x"], "caption": ["A man holds an old cup"]})
    assert out["captions"][0][1] == "A man holds a young cup"  # WordNet: old <-> young; 'an' -> 'a'
    assert json.loads(out["provenance"][0][1]["details"])["article_fixed"] is True
    for neg, rec in zip(out["captions"][0][1:], out["provenance"][0][1:]):
        art = "an" if rec["replacement"][0] in "aeiou" else "a"
        assert neg == f"A man holds {art} {rec['replacement']} cup"


def test_deterministic_across_batching_and_seed_matters(fn):
    caps = ["A man is pushing the cart slowly", "Two women walk into a red room", "The boy throws a big box"]
    ids = ["1", "2", "3"]
    whole = fn(k=8, seed=7)({"id": ids, "caption": caps})
    parts = [fn(k=8, seed=7)({"id": [i], "caption": [c]}) for i, c in zip(ids, caps)]
    for col in whole:
        assert whole[col] == [x for p in parts for x in p[col]]
    other = fn(k=8, seed=8)({"id": ids, "caption": caps})
    assert other["captions"] != whole["captions"]


def test_phrase_negatives_change_two_consecutive_words(fn, nlp):
    cap = "A boy wearing a black shirt walks slowly"
    out = fn(k=10, seed=0, phrase=True)({"id": ["p"], "caption": [cap]})
    (caps,), (prov,) = out["captions"], out["provenance"]
    assert out["category"] == ["phrase"] and len(caps) > 1
    orig = [t.text for t in nlp(cap)]
    for neg, rec in zip(caps[1:], prov[1:]):
        words = [t.text for t in nlp(neg)]
        changed = [i for i, (a, b) in enumerate(zip(orig, words)) if a != b] if len(words) == len(orig) else None
        if changed is not None:
            assert len(changed) == 2 and changed[1] == changed[0] + 1
        parts = json.loads(rec["details"])["parts"]
        assert len(parts) == 2 and all(p["pos"] in PARTS_OF_SPEECH for p in parts)
        assert rec["generator"] == "posrank-phrase"


def test_bad_settings_are_clear_errors(nlp, wordnet):
    with pytest.raises(ValueError, match="parts_of_speech"):
        PosRankBatchFn(nlp, wordnet, VOCAB, parts_of_speech=["pronoun"])
    with pytest.raises(ValueError, match="caption"):
        PosRankBatchFn(nlp, wordnet, VOCAB)({"id": ["1"], "text": ["a dog"]})


def test_multiword_verb_keeps_its_particle(fn):
    cap = "The boy picks up the box"
    out = fn(k=6, seed=0, parts_of_speech=["verb", "prep"])({"id": ["m"], "caption": [cap]})
    rows = dict(zip(out["category"], zip(out["captions"], out["provenance"])))
    for neg, rec in zip(rows["verb"][0][1:], rows["verb"][1][1:]):
        assert rec["span"] == "picks" and neg == f"The boy {rec['replacement']} up the box"
        assert rec["replacement"].endswith("s")  # third person singular kept
    assert rows["prep"][0][1] == "The boy picks down the box"  # particle 'up' -> 'down' from the map


def test_vocabulary_is_required_and_can_be_built(tmp_path):
    from hardneg.generators.posrank import main, make_batch_fn

    with pytest.raises(ValueError, match="build-vocabulary"):
        make_batch_fn()
    caps = tmp_path / "c.txt"
    caps.write_text("v1**#**Two men walk slowly into the red room\nA dog runs quickly\n")
    out = tmp_path / "v.json"
    assert main(["--build-vocabulary", str(caps), str(out)]) == 0
    vocab = json.loads(out.read_text())
    assert vocab["noun"] == ["dog", "man", "room"] and vocab["adv"] == ["quickly", "slowly"]
    assert vocab["prep"] == ["into"] and vocab["adj"] == ["red"] and vocab["verb"] == ["run", "walk"]


def test_hand_written_details_equal_canonical_json():
    from hardneg.generators.common import details_json
    from hardneg.generators.posrank import Target, word_details

    t = Target(0, 3, "men", "NNS", "NOUN", "man", 4)
    for fixed in (False, True):
        d = {"lemma": "out of", "tag": t.tag, "token_index": 4} | ({"article_fixed": True} if fixed else {})
        assert word_details("out of", t, fixed) == details_json(d)
    assert json.loads(word_details("woman", Target(0, 1, "x", "PRP$", "ADP", "x", 0), False))["tag"] == "PRP$"
