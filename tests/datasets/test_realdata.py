"""The authors' real release files (../shared/realdata), checked against an independent read of them."""

from __future__ import annotations

import csv
import json

import pytest

datasets = pytest.importorskip("datasets")

from hardneg.datasets import build_benchmark  # noqa: E402

pytestmark = pytest.mark.realdata


def test_contrast_set_human_release(realdata, tmp_path, hf_cache):
    raw = realdata / "contrast_sets"
    result = build_benchmark("contrast_sets", raw, tmp_path / "cs")
    assert result.report["counts"] == {"verb_human": {"test": 2554}}
    assert result.report["n_candidates"] == {"verb_human": [5]}
    assert result.report["raw_files"] == ["msrvtt_human_contrast_set_with_c_label.tsv"]
    # both human releases were found and cross-checked row by row
    assert result.report["cross_checked_releases"] == [["msrvtt_human_contrast_set.tsv", "msrvtt_human_contrast_set_with_c_label.tsv"]]

    with open(raw / "msrvtt_human_contrast_set_with_c_label.tsv", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    ds = datasets.load_dataset(str(result.out), "verb_human", split="test", cache_dir=hf_cache)
    assert ds.num_rows == len(rows) == 2554
    assert ds["video_id"] == [r["clip"] for r in rows]
    assert ds["label"] == [int(r["label"]) for r in rows]
    assert ds["manipulated_index"] == [int(r["c_label"]) for r in rows]
    assert all(len(c) == 5 for c in ds["captions"])
    for item, row in zip(ds.select(range(0, 2554, 97)), rows[::97]):
        assert item["captions"] == [row[f"ending{j}"] for j in range(5)]
        assert item["negative_types"][int(row["c_label"])] == "verb_human"
        assert item["negative_types"].count("random") == 3
    counts = {str(k): sum(int(r["c_label"]) == k for r in rows) for k in range(5)}
    assert result.report["manipulated_index"]["verb_human"] == counts

    again = build_benchmark("contrast_sets", raw, tmp_path / "cs2").out
    name = "verb_human/test-00000-of-00001.parquet"
    assert (again / name).read_bytes() == (result.out / name).read_bytes()


def test_posrank_vln_uvo_adverb_release(realdata, tmp_path, hf_cache):
    raw = realdata / "posrank_uvo"
    result = build_benchmark("posrank", raw, tmp_path / "pr")
    assert result.report["counts"] == {"vln_uvo": {"test": 218}}
    assert result.report["negatives_per_caption"] == {"vln_uvo/adv": 20}
    assert result.report["captions_joined"] == {"vln_uvo/adv": 218}

    negatives = json.loads((raw / "uvo_val_adverb_RE20.json").read_text())
    captions = {}
    for line in (raw / "captions.txt").read_text(encoding="utf-8").splitlines():
        if line.strip():
            key, caption = line.split("**#**", 1)
            captions[key] = caption.strip()
    ds = datasets.load_dataset(str(result.out), "vln_uvo", split="test", cache_dir=hf_cache)
    assert ds.num_rows == len(negatives) == 218
    for item, (key, negs) in zip(ds, negatives.items()):
        assert item["captions"][0] == captions[key]
        assert item["captions"][1:] == [negs[str(j)].strip() for j in range(20)]
        assert item["video_id"] == key.split("##*##")[0]
    assert {len(c) for c in ds["captions"]} == {21}
