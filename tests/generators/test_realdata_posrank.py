"""Regenerate the published VLN-UVO adverb (and, where its file is present, preposition) negatives
and compare the first negative (the antonym).

The recipe `posrank_uvo_adverb` runs through `hardneg generate` on the release's own caption lines
(`<key>**#**<caption>`, so the item ids are the release keys) and its first negative is compared
with the published one (docs/generators-posrank.md has the method and the numbers).

Measured with generator 2.0 and this recipe: 157/218 = 72.0% of captions get the published first
negative (version 1.1: 127/218 = 58.3%). The 61 mismatches (see `classify`):

* 46 the same adverb, but it has no WordNet antonym: both sides draw a random vocabulary adverb
  (e.g. 'aside'), which no seed can reproduce;
* 13 spaCy tags no adverb (that is not a stop word) where the authors' tagger did ('pink', 'bib',
  'left' in 'from left to right');
* 2 another adverb chosen among several with antonyms (a random choice, 'forward' vs 'fast').

Version 1.1 for the same categories: 54 same adverb / other replacement (41 without an antonym),
21 another adverb, 16 no adverb tagged.
"""

from __future__ import annotations

import collections
import difflib
import json

import pyarrow.parquet as pq
import pytest

from hardneg.generators.common import check_span, read_caption_lines

#: recipe, release file, part of speech, its name, captions in the file, first negatives measured equal
CASES = {
    "adverb": ("posrank_uvo_adverb", "uvo_val_adverb_RE20.json", "adv", 218, 157),
    # Not in ../shared/realdata today (read from the authors' repository when measured); the case
    # runs where the file is put next to the adverb one: 219/236 = 92.8% (version 1.1: 51/236).
    "preposition": ("posrank_uvo_preposition", "uvo_val_preposition_RE20.json", "prep", 236, 219),
}
MARGIN = 0.02  # a spaCy model release may tag a few captions differently


def changed_words(a: str, b: str) -> list[str]:
    aw, bw = a.split(), b.split()
    ops = difflib.SequenceMatcher(a=aw, b=bw).get_opcodes()
    return [w.strip(",.").lower() for t, i1, i2, _, _ in ops if t != "equal" for w in aw[i1:i2]]


def classify(name: str, caption: str, published: str, mine: list[str] | None, record: dict | None) -> str:
    if mine is None:
        return f"no {name} tagged by spaCy"
    if mine[1] == published:
        return "match"
    word = caption[record["span_start"]:record["span_end"]].split()[0].lower()
    if word not in changed_words(caption, published):
        return f"different {name} chosen"
    return f"same {name}, different replacement" + (
        " (no antonym: random vocabulary)" if record["rule"] == "vocabulary" else "")


@pytest.mark.realdata
@pytest.mark.parametrize("case", sorted(CASES))
def test_published_first_negative_is_reproduced(realdata, tmp_path, capsys, case):
    from hardneg.cli import main

    recipe, release, pos, n, measured = CASES[case]
    root = realdata / "posrank_uvo"
    if not (root / release).is_file():
        pytest.skip(f"{root / release} is not in this checkout's shared/realdata")
    captions = {key: cap for key, cap in read_caption_lines(root / "captions.txt") if key}
    published = json.loads((root / release).read_text())
    ids = list(published)
    assert len(ids) == n
    lines = tmp_path / "captions.txt"  # the release's own lines for these captions
    lines.write_text("".join(f"{k}**#**{captions[k]}\n" for k in ids), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["generate", recipe, "--input", str(lines), "--out", str(out), "--no-progress",
                 "--set", f"vocabulary={root / 'vln_uvo_word_dic_20230920.json'}"]) == 0
    rows = pq.read_table(out / "items.parquet").to_pylist()
    mine = {r["id"].rsplit("/", 1)[0]: r for r in rows}
    assert set(mine) <= set(ids)
    reasons = collections.Counter(
        classify(case, captions[i], published[i]["0"],
                 *((mine[i]["captions"], mine[i]["provenance"][1]) if i in mine else (None, None)))
        for i in ids)
    share = reasons["match"] / len(ids)
    with capsys.disabled():
        print(f"\n{case}: first negative = published: {reasons['match']}/{len(ids)} = {share:.1%}; {dict(reasons)}")
    assert share >= measured / len(ids) - MARGIN, reasons
    # ids are the release keys, the video id is the key's video part
    some = rows[0]
    assert some["video_id"] == some["id"].rsplit("/", 1)[0].rpartition("##*##")[0]
    # every produced row is a full K=20 set of distinct negatives whose spans rebuild them
    for r in rows:
        caps, prov = r["captions"], r["provenance"]
        assert caps[0] == captions[r["id"].rsplit("/", 1)[0]]
        assert len(caps) == 21 and len(set(caps)) == 21
        assert all(p["pos"] == pos and p["generator_version"] == "2.0" for p in prov[1:])
        for neg, rec in zip(caps[1:], prov[1:]):
            check_span(caps[0], neg, rec)
