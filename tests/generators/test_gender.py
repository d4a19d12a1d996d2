"""Gender contrast sets: Table 6 exactly, one noun swapped, same-gender pronouns swapped."""

from __future__ import annotations

import collections
import json

import pytest

from hardneg.generators.gender import GENDER_MAP, GenderBatchFn, swap_pronoun


def test_table6_map_exactly():
    assert GENDER_MAP == {
        "man": ("woman",), "men": ("women",), "boy": ("girl",), "boys": ("girls",),
        "guy": ("woman", "girl"), "guys": ("women", "girls", "ladies"),
        "woman": ("man",), "women": ("men", "guys"), "girl": ("boy", "guy"), "girls": ("boys", "guys"),
        "lady": ("man", "guy"), "ladies": ("men", "guys"),
    }


@pytest.fixture(scope="module")
def gen(nlp):
    return lambda **kw: GenderBatchFn(nlp, **kw)


def one(fn, caption, cid="c"):
    out = fn({"id": [cid], "caption": [caption]})
    return (out["captions"][0], out["provenance"][0], out) if out["id"] else (None, None, out)


@pytest.mark.parametrize("caption,expected", [
    ("A woman is pushing her stroller", "A man is pushing his stroller"),                     # paper's example
    ("Two men are doing wrestling.", "Two women are doing wrestling."),                      # Table 1
    ("A man in black shirt is talking with his two friends.",
     "A woman in black shirt is talking with her two friends."),                             # Table 1
    ("Boys play football and he laughs at himself", "Girls play football and she laughs at herself"),
    ("A woman hugs her dog and the dog licks her", "A man hugs his dog and the dog licks him"),
])
def test_hand_checked_swaps(gen, caption, expected):
    caps, prov, out = one(gen(seed=0), caption)
    assert caps == [caption, expected]
    assert prov[1]["rule"] == "gender-map" and prov[1]["generator"] == "contrast-gender"
    assert out["manipulated_index"] == [1] and out["negative_types"] == [["positive", "gender"]]


def test_only_one_noun_and_only_its_gender_pronouns(gen):
    caption = "A man and a woman walk together while he talks to her"
    seen = set()
    for seed in range(20):
        caps, prov, _ = one(gen(seed=seed), caption)
        neg = caps[1]
        seen.add(neg)
        changed = [(a, b) for a, b in zip(caption.split(), neg.split()) if a != b]
        nouns = [c for c in changed if c[0] in ("man", "woman")]
        assert len(nouns) == 1
        d = json.loads(prov[1]["details"])
        if nouns[0][0] == "man":  # male noun -> male pronoun 'he' swapped, 'her' kept
            assert neg == "A woman and a woman walk together while she talks to her"
        else:
            assert neg == "A man and a man walk together while he talks to him"
        assert d["gendered_nouns"] == 2
    assert len(seen) == 2  # both nouns get chosen across seeds


def test_alternatives_uniform(gen):
    counts = collections.Counter(one(gen(seed=0), "The guys are singing", cid=str(i))[1][1]["replacement"]
                                 for i in range(300))
    assert set(counts) == {"women", "girls", "ladies"}
    assert all(70 <= c <= 130 for c in counts.values()), counts  # ~100 each


def test_capitalised_first_word_and_no_gendered_noun(gen):
    caps, prov, _ = one(gen(seed=2), "Girls dance on the stage")
    assert caps[1] in ("Boys dance on the stage", "Guys dance on the stage")
    assert one(gen(seed=0), "A cat sleeps on the sofa")[0] is None


def test_pronoun_forms():
    assert swap_pronoun("her", "PRP$") == "his" and swap_pronoun("her", "PRP") == "him"
    assert swap_pronoun("His", "PRP$") == "Her" and swap_pronoun("hers", "PRP") == "his"
    with pytest.raises(ValueError):
        swap_pronoun("it", "PRP")


def test_several_negatives_are_distinct(gen):
    caps, prov, _ = one(gen(seed=0, n_negatives=3), "The guys are singing")
    assert len(caps) == 4 and len(set(caps)) == 4
