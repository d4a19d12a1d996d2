"""Feint6K, contrast sets and PoSRank: raw fixtures -> repo folder -> load_dataset, checked against the raw rows."""

from __future__ import annotations

import json

import pytest

datasets = pytest.importorskip("datasets")

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from hardneg.datasets import build_benchmark  # noqa: E402
from hardneg.schema import MC_ITEM_SCHEMA, NEGATIVE_TYPES  # noqa: E402


def test_feint6k_blocks_become_six_way_items(tmp_path, rawfmt, hf_cache):
    raw = tmp_path / "raw"
    msr = rawfmt.feint6k_rows(3)
    vatex = rawfmt.feint6k_rows(2, prefix="vx")
    rawfmt.write_csv(raw / "feint6k_msrvtt.csv", ["video_id", "sentence"], msr)
    rawfmt.write_csv(raw / "feint6k_vatex.csv", ["video_id", "sentence"], vatex)
    result = build_benchmark("feint6k", raw, tmp_path / "out")
    assert result.report["counts"] == {"msrvtt": {"test": 3}, "vatex": {"test": 2}}

    ds = datasets.load_dataset(str(result.out), "msrvtt", split="test", cache_dir=hf_cache)
    assert ds.num_rows == 3
    for i, item in enumerate(ds):
        block = msr[6 * i : 6 * i + 6]
        assert item["video_id"] == block[0][0]
        assert item["captions"] == [s for _, s in block]  # positive first, file order kept
        assert item["label"] == 0
        assert item["negative_types"] == ["positive"] + ["counterfactual"] * 5
        assert [p["origin"] for p in item["provenance"]] == ["positive"] + ["human"] * 5
        assert item["source_dataset"] == "msrvtt"
    vx = datasets.load_dataset(str(result.out), "vatex", split="test", cache_dir=hf_cache)
    assert vx["video_id"] == ["vx7000", "vx7001"]


def test_contrast_sets_c_label_marks_the_manipulated_option(tmp_path, rawfmt, hf_cache):
    raw = tmp_path / "raw"
    rows = rawfmt.contrast_rows(7, with_c_label=True)
    rawfmt.write_tsv(raw / "msrvtt_human_contrast_set_with_c_label.tsv", rawfmt.CS_HEADER + ["c_label"], rows)
    rawfmt.write_tsv(raw / "msrvtt_lm_contrast_set.tsv", rawfmt.CS_HEADER, [r[:-1] for r in rows])
    result = build_benchmark("contrast_sets", raw, tmp_path / "out")
    assert result.report["counts"] == {"verb_human": {"test": 7}, "verb_lm": {"test": 7}}
    assert result.report["c_label_absent"] == ["verb_lm"]
    # hand count of c_label = (i + 2) % 5 for i in 0..6: 2,3,4,0,1,2,3
    assert result.report["manipulated_index"]["verb_human"] == {"0": 1, "1": 1, "2": 2, "3": 2, "4": 1}

    human = datasets.load_dataset(str(result.out), "verb_human", split="test", cache_dir=hf_cache)
    for i, item in enumerate(human):
        label, c_label = i % 5, (i + 2) % 5
        assert item["label"] == label and item["manipulated_index"] == c_label
        assert item["captions"] == rows[i][1:6]
        expected = ["random"] * 5
        expected[label], expected[c_label] = "positive", "verb_human"
        assert item["negative_types"] == expected
        assert item["provenance"][c_label]["origin"] == "human"
        assert item["provenance"][c_label]["pos"] == "verb"
    lm = datasets.load_dataset(str(result.out), "verb_lm", split="test", cache_dir=hf_cache)
    assert lm[0]["manipulated_index"] is None
    assert lm[0]["negative_types"].count("unknown") == 4
    assert "unknown" in NEGATIVE_TYPES


def test_contrast_sets_accept_generator_output_as_extra_configs(tmp_path, rawfmt, hf_cache):
    raw = tmp_path / "raw"
    rawfmt.write_tsv(raw / "msrvtt_human_contrast_set_with_c_label.tsv", rawfmt.CS_HEADER + ["c_label"], rawfmt.contrast_rows(2, True))
    prov = {"origin": "generator", "generator": "gender-swap", "generator_version": "0.1", "rule": "gender-map", "pos": None, "span": "man", "replacement": "woman", "seed": 3, "details": None}
    plain = dict(prov, origin="positive", generator=None, generator_version=None, rule=None, span=None, replacement=None, seed=None)
    items = [
        {
            "id": f"gender:video{i}",
            "video_id": f"video{i}",
            "source_dataset": "msrvtt",
            "source_split": "test",
            "category": "gender",
            "captions": [f"a man cooks {i}", f"a woman cooks {i}"],
            "label": 0,
            "manipulated_index": 1,
            "negative_types": ["positive", "gender"],
            "provenance": [plain, prov],
        }
        for i in (3, 1, 2)
    ]
    # two shards, one JSONL and one Parquet with an extra column (as the batch runner writes them)
    (raw / "gender-part0.jsonl").write_text("".join(json.dumps(x) + "\n" for x in items[:2]))
    table = pa.Table.from_pylist(items[2:], schema=MC_ITEM_SCHEMA).append_column("source_id", pa.array(["s2"]))
    pq.write_table(table, raw / "gender-part1.parquet")
    result = build_benchmark("contrast_sets", raw, tmp_path / "out")
    assert result.report["counts"] == {"verb_human": {"test": 2}, "gender": {"test": 3}}
    gender = datasets.load_dataset(str(result.out), "gender", split="test", cache_dir=hf_cache)
    assert gender["id"] == ["gender:video1", "gender:video2", "gender:video3"]  # pooled shards in id order
    assert gender[2]["provenance"][1]["seed"] == 3 and gender[2]["provenance"][1]["replacement"] == "woman"
    assert "source_id" not in gender.column_names


def test_posrank_joins_negatives_to_their_positive(tmp_path, rawfmt, hf_cache):
    raw = tmp_path / "raw"
    made = rawfmt.posrank_files(raw, n_captions=5)
    # a second part of speech with the '#' key form
    nouns = {"Vid-000_x#0": {str(j): made["captions"]["Vid-000_x##*##0"].replace("cup", f"thing{j}") for j in range(20)}}
    (raw / "uvo_val_noun_RE20.json").write_text(json.dumps(nouns))
    result = build_benchmark("posrank", raw, tmp_path / "out")
    assert result.report["counts"] == {"vln_uvo": {"test": 6}}  # one test split; part of speech in `category`
    assert result.report["captions_joined"] == {"vln_uvo/adv": 5, "vln_uvo/noun": 1}

    test = datasets.load_dataset(str(result.out), "vln_uvo", split="test", cache_dir=hf_cache)
    adv = test.filter(lambda r: r["category"] == "adv")
    for item, (key, negs) in zip(adv, made["negatives"].items()):
        positive = made["captions"][key]
        assert item["captions"][0] == positive
        assert item["captions"][1:] == [negs[str(j)] for j in range(20)]
        assert item["label"] == 0 and item["category"] == "adv"
        assert item["negative_types"] == ["positive"] + ["adv"] * 20
        assert item["provenance"][5]["span"] == "slowly" and item["provenance"][5]["replacement"] == "word4"
        assert item["provenance"][5]["generator"] == "posrank-single-word"
    noun = test.filter(lambda r: r["category"] == "noun")
    assert noun[0]["id"] == "vln_uvo:noun:Vid-000_x#0"
    assert noun[0]["provenance"][1]["span"] == "cup"
