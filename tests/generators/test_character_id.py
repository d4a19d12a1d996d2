"""LSMDC-ID contrast sets: first ID swapped within movie and gender, later IDs 50:50."""

from __future__ import annotations

import collections
import json

import pytest

from hardneg.generators.character_id import CharacterIdBatchFn, find_ids, load_characters

CHARS = {"m1": {"Jenko": "male", "Schmidt": "male", "Zach": "male", "Eric": "male", "Molly": "female",
                "Mary Jane": "female", "Jane": "female"},
         "m2": {"Harry": "male", "Ron": "male", "Hermione": "female"}}


def run(caption, movie="m1", seed=0, cid="c"):
    out = CharacterIdBatchFn(load_characters(CHARS), seed=seed)({"id": [cid], "caption": [caption], "movie": [movie]})
    return out


def test_first_id_swapped_same_gender_same_movie():
    out = run("His gaze steely, Jenko lowers his gun.")
    neg = out["captions"][0][1]
    rec = out["provenance"][0][1]
    assert rec["span"] == "Jenko" and rec["replacement"] in ("Schmidt", "Zach", "Eric")
    assert neg == f"His gaze steely, {rec['replacement']} lowers his gun."
    assert out["category"] == ["id"] and out["negative_types"] == [["positive", "id"]]


def test_first_always_later_half_of_the_time():
    caption = "Jenko and Schmidt sit in the rear pew."
    later = collections.Counter()
    for i in range(200):
        out = run(caption, cid=str(i))
        swaps = dict(json.loads(out["provenance"][0][1]["details"])["swaps"])
        assert "Jenko" in swaps and swaps["Jenko"] not in ("Jenko", "Schmidt")
        later["Schmidt" in swaps] += 1
        words = out["captions"][0][1].split()
        assert words[0] != words[2]  # never "X and X"
    assert 70 <= later[True] <= 130, later


def test_longest_name_wins_and_whole_words_only():
    names = CHARS["m1"]
    assert find_ids("Mary Jane waves at Jane and Janet.", names) == [(0, 9, "Mary Jane"), (19, 23, "Jane")]


def test_no_id_or_no_alternative_gives_no_row():
    assert run("A man walks.")["id"] == []
    assert run("Hermione reads.", movie="m2")["id"] == []  # the only female ID of m2


def test_missing_movie_column_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="movie"):
        CharacterIdBatchFn(CHARS)({"id": ["1"], "caption": ["Jenko runs"]})
    p = tmp_path / "chars.csv"
    p.write_text("movie,name\nm1,Jenko\n")
    with pytest.raises(ValueError, match="gender"):
        load_characters(p)
    p.write_text("movie,id,gender\nm1,Jenko,Male\nm1,Zach,male\n")
    assert load_characters(p) == {"m1": {"Jenko": "male", "Zach": "male"}}
