"""Released PoSRank negatives carry the exact replaced span: positive[:start] + replacement + positive[end:] == negative."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from hardneg.datasets import build_benchmark, sample_raw_dir
from hardneg.datasets.raw_common import replaced_span, single_word_diff


@pytest.mark.parametrize(
    "positive,negative,span,replacement",
    [
        ("moves his right hand backward, and then", "moves his right hand forward, and then", "backward", "forward"),
        ("A person moves the cup slowly toward it", "A person moves the cup quickly toward it", "slowly", "quickly"),
        ("a t-shirt and jeans", "a t-top and jeans", "shirt", "top"),
        ("he said: go (now).", "he said: stop (now).", "go", "stop"),
        ("it is the man's hat", "it is the woman's hat", "man's", "woman's"),
        ("throws it", "throws it home", "", " home"),
        ("a red car", "a car", "red ", ""),
        ("leans forward, walks, leans forward, ends", "leans back, walks, leans back, ends", "forward, walks, leans forward", "back, walks, leans back"),
    ],
)
def test_span_is_exact_text_with_the_captions_own_spacing(positive, negative, span, replacement):
    start, end, neg_end = replaced_span(positive, negative)
    assert (positive[start:end], negative[start:neg_end]) == (span, replacement)
    assert positive[:start] + replacement + positive[end:] == negative
    assert single_word_diff(positive, negative) == (span, replacement)
    assert replaced_span(positive, positive) is None


def _check_offsets(items) -> int:
    checked = 0
    for item in items:
        positive = item["captions"][0]
        for negative, prov in zip(item["captions"][1:], item["provenance"][1:]):
            if negative == positive:
                assert prov["span_start"] is None
                continue
            s, e = prov["span_start"], prov["span_end"]
            assert s is not None and e is not None, item["id"]
            assert positive[s:e] == prov["span"], item["id"]
            assert positive[:s] + prov["replacement"] + positive[e:] == negative, item["id"]
            checked += 1
        assert item["provenance"][0]["span_start"] is None
    return checked


def test_built_sample_has_exact_offsets(tmp_path):
    out = build_benchmark("posrank", sample_raw_dir("posrank"), tmp_path / "pr").out
    table = pq.read_table(out / "vln_uvo" / "test-00000-of-00001.parquet")
    assert {"span_start", "span_end"} <= set(table.schema.field("provenance").type.value_type.names)
    assert _check_offsets(table.to_pylist()) == 5 * 20


@pytest.mark.realdata
def test_real_posrank_uvo_offsets(realdata, tmp_path):
    out = build_benchmark("posrank", realdata / "posrank_uvo", tmp_path / "pr").out
    items = pq.read_table(out / "vln_uvo" / "test-00000-of-00001.parquet").to_pylist()
    assert _check_offsets(items) == 218 * 20
    # the recorded span is the caption's own text: no spaces added around punctuation
    spans = [p["span"] for it in items for p in it["provenance"][1:]]
    assert not [s for s in spans if " ," in s or " ." in s]
