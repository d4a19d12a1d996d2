"""Shared helpers: per-caption random streams, casing, article agreement, canonical records."""

from __future__ import annotations

import hashlib
import random

import pyarrow as pa

import pytest

from hardneg.generators.common import (
    agree_article, article_edit, article_slot, caption_rng, check_span, details_json, edit_region, match_case, mc_row,
    negative_record, read_caption_lines, release_video_id, rows_to_columns, split_caption_line, to_mc_table,
)
from hardneg.schema import MC_ITEM_SCHEMA


def test_caption_rng_is_sha256_of_seed_generator_id_purpose():
    key = "3\x1fgen\x1fcap-1\x1fadv".encode()
    expected = random.Random(int.from_bytes(hashlib.sha256(key).digest()[:8], "big")).random()
    assert caption_rng(3, "gen", "cap-1", "adv").random() == expected
    assert caption_rng(3, "gen", "cap-2", "adv").random() != expected
    assert caption_rng(4, "gen", "cap-1", "adv").random() != expected


def test_match_case():
    assert match_case("woman", "Man") == "Woman"
    assert match_case("woman", "MAN") == "WOMAN"
    assert match_case("out of", "Into") == "Out of"
    assert match_case("woman", "man") == "woman"
    assert match_case("a", "A") == "A"


def fix_article(text_before, replacement):
    return agree_article(article_slot(text_before), text_before, replacement)


def test_fix_article():
    assert fix_article("A man holds an ", "young") == ("A man holds a ", True)
    assert fix_article("A man holds a ", "old") == ("A man holds an ", True)
    assert fix_article("A ", "egg") == ("An ", True)
    assert fix_article("the ", "egg") == ("the ", False)
    assert fix_article("a ", "cup") == ("a ", False)


def test_article_edit_gives_the_article_offsets():
    text = "A man holds an old cup"
    slot = article_slot(text[:15])
    assert article_edit(slot, "young") == (12, 14, "a")
    assert article_edit(slot, "empty") is None
    assert article_edit(article_slot("An "), "cup") == (0, 2, "A")
    assert article_edit(article_slot("the "), "cup") is None


def test_edit_region_rebuilds_the_negative_from_one_span():
    text = "A man walks with his dog and his cat"
    new, start, end, span, repl = edit_region(text, [(29, 32, "her"), (2, 5, "woman"), (17, 20, "her")])
    assert new == "A woman walks with her dog and her cat"
    assert (start, end, span) == (2, 32, "man walks with his dog and his")
    assert repl == "woman walks with her dog and her"
    assert text[:start] + repl + text[end:] == new
    check_span(text, new, {"span": span, "replacement": repl, "span_start": start, "span_end": end})
    with pytest.raises(ValueError, match="overlapping"):
        edit_region(text, [(2, 5, "x"), (4, 8, "y")])
    with pytest.raises(AssertionError):
        check_span(text, new, {"span": "man", "replacement": "woman", "span_start": 2, "span_end": 5})


def test_release_caption_lines_share_one_parser(tmp_path):
    assert split_caption_line("--7qK_w-g3Y##*##1**#**A person is putting liquid \n") == (
        "--7qK_w-g3Y##*##1", "A person is putting liquid")
    assert split_caption_line("  a plain caption ") == (None, "a plain caption")
    assert split_caption_line("k**#**a caption with **#** inside") == ("k", "a caption with **#** inside")
    f = tmp_path / "c.txt"
    f.write_text("v1##*##0**#**Two men walk\n\nv1##*##1**#** A dog runs \n", encoding="utf-8")
    assert read_caption_lines(f) == [("v1##*##0", "Two men walk"), ("v1##*##1", "A dog runs")]
    assert release_video_id("--7qK_w-g3Y##*##1") == "--7qK_w-g3Y"
    assert release_video_id("video7960#7") == "video7960"
    assert release_video_id("clip-3") == "clip-3"


def test_details_json_is_canonical():
    assert details_json({"b": 1, "a": 0.1234567891}) == '{"a":0.123457,"b":1}'
    assert details_json({}) is None


def test_rows_become_mc_schema_table():
    rec = negative_record("g", "1.0", "antonym", pos="adv", span="slowly", replacement="quickly", seed=5,
                          details={"x": 1})
    row = mc_row("c1", "c1/adv", "v1", "go slowly", [("go quickly", "adv", rec)], category="adv")
    cols = rows_to_columns([row])
    assert cols["source_id"] == ["c1"]
    table = to_mc_table(cols)
    assert table.schema.equals(MC_ITEM_SCHEMA)
    got = table.to_pylist()[0]
    assert got["captions"] == ["go slowly", "go quickly"] and got["label"] == 0
    assert got["negative_types"] == ["positive", "adv"]
    assert got["provenance"][0]["origin"] == "positive"
    assert got["provenance"][1] == {"origin": "generator", "generator": "g", "generator_version": "1.0",
                                    "rule": "antonym", "pos": "adv", "span": "slowly", "replacement": "quickly",
                                    "seed": 5, "details": '{"x":1}', "span_start": None, "span_end": None}
    assert isinstance(table, pa.Table)
