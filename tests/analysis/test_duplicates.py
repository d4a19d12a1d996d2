"""PoSRank duplicate analysis on hand-tagged captions (and spaCy tagging when installed)."""

from __future__ import annotations

import numpy as np
import pytest

from hardneg.analysis import duplicate_analysis
from hardneg.analysis.posrank_duplicates import duplicate_share, remove_words

N, V, A = "noun", "verb", "adv"
CAPTIONS = [
    ("a dog runs fast", [None, N, V, A]),
    ("a cat runs fast", [None, N, V, A]),
    ("a dog walks fast", [None, N, V, A]),
    ("a dog runs", [None, N, V]),
    ("a dog runs fast", [None, N, V, A]),  # exact repeat of the first: dropped before counting
]


def _split():
    return [c.split() for c, _ in CAPTIONS], [t for _, t in CAPTIONS]


def test_single_word_removal_hand_computed(artifacts_dir):
    tokens, tags = _split()
    r = duplicate_analysis(tokens, tags, parts_of_speech=("noun", "verb", "adv", "adj"), max_removed=2)
    # 4 unique captions. noun: "a runs fast" x2 -> 2/4. verb: "a dog fast" x2 -> 2/4.
    # adv: "a dog runs" (from 1) equals caption 4 (no adverb to remove) -> 2/4. adj: nothing removed, all distinct -> 0.
    assert r.params["captions"] == 4 and r.params["captions_before_dedupe"] == 5
    assert r.shares == {"noun": [0.5, 0.5], "verb": [0.5, 0.5], "adv": [0.5, 0.5], "adj": [0.0, 0.0]}
    assert [row["captions_with_pos"] for row in r.rows] == [4, 4, 3, 0]
    r.plot(artifacts_dir / "analysis_duplicates.png")


def test_removal_is_random_but_seeded_and_capped():
    toks = "a man rides a horse near a river".split()
    tags = [None, N, V, None, N, None, None, N]
    rng = np.random.default_rng(0)
    one = remove_words(toks, tags, "noun", 1, rng)
    assert len(one) == len(toks) - 1 and sum(w in one for w in ("man", "horse", "river")) == 2
    assert remove_words(toks, tags, "noun", 5, rng) == ("a", "rides", "a", "near", "a")
    assert remove_words(toks, tags, "noun", 1, np.random.default_rng(0)) == one


def test_duplicate_share_counts_every_member_of_a_group():
    assert duplicate_share([("a",), ("a",), ("b",), ("a",)]) == 0.75


def test_two_nouns_needed_to_collide():
    # "a man rides a horse" vs "a boy rides a bike": identical only after both nouns go.
    tokens = ["a man rides a horse".split(), "a boy rides a bike".split()]
    tags = [[None, N, V, None, N]] * 2
    r = duplicate_analysis(tokens, tags, parts_of_speech=("noun",), max_removed=2)
    assert r.shares["noun"] == [0.0, 1.0]


def test_spacy_tagging_maps_to_posrank_parts_of_speech():
    from hardneg.resources import MissingResourceError

    from hardneg.analysis.posrank_duplicates import tag_captions

    try:
        tokens, tags = tag_captions(["A man quickly rides a horse on the beach."])
    except MissingResourceError as exc:
        pytest.skip(str(exc))
    got = dict(zip(tokens[0], tags[0]))
    assert got["man"] == "noun" and got["horse"] == "noun" and got["rides"] == "verb"
    assert got["quickly"] == "adv" and got["on"] == "prep" and "." not in got


@pytest.mark.realdata
def test_duplicates_cli_reads_the_posrank_release_caption_lines(realdata, tmp_path, capsys):
    pytest.importorskip("spacy")
    import json

    from hardneg.cli import main

    lines = (realdata / "posrank_uvo" / "captions.txt").read_text(encoding="utf-8").splitlines()[:150]
    caption = lines[0].split("**#**", 1)[1]
    lines.append("another-video##*##7**#**" + caption)  # same caption, another id prefix
    caps = tmp_path / "captions.txt"
    caps.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code = main(["analyze", "duplicates", "--captions", str(caps), "--max-removed", "2", "--out", str(tmp_path / "o")])
    if code != 0:
        pytest.skip("no spaCy English pipeline: " + capsys.readouterr().err)
    data = json.loads((tmp_path / "o" / "duplicates.json").read_text())
    assert data["params"]["captions_before_dedupe"] == 151
    # the `<video>##*##<i>**#**` prefix is stripped, so the repeated caption collapses into one
    assert data["params"]["captions"] < 151
    assert all(0.0 <= s <= 1.0 for v in data["details"]["shares"].values() for s in v)
