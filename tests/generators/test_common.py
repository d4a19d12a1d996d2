"""Shared helpers: per-caption random streams, casing, article agreement, canonical records."""

from __future__ import annotations

import hashlib
import random

import pyarrow as pa

from hardneg.generators.common import (
    agree_article, article_slot, caption_rng, details_json, match_case, mc_row, negative_record, rows_to_columns, to_mc_table,
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
                                    "seed": 5, "details": '{"x":1}'}
    assert isinstance(table, pa.Table)
