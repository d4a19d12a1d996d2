"""FIRE: pooled judgments, majority vote, unresolved pairs kept, original positives apart from FIRE ones."""

from __future__ import annotations

import pytest

datasets = pytest.importorskip("datasets")

from hardneg.datasets import build_benchmark  # noqa: E402
from hardneg.benchmarks.fire import vote  # noqa: E402

R, I = "relevant", "irrelevant"


@pytest.fixture
def fire_raw(tmp_path, rawfmt):
    row = rawfmt.fire_row
    queries = {
        "msrvtt": [("v1", "a cat jumps"), ("v2", "a man sings"), ("v3", "a car drives")],
        "msvd": [("m1", "a dog runs"), ("m2", "a dog runs"), ("m2", "a girl reads")],  # duplicate text
    }
    annotations = [
        row("MSRVTT", "a cat jumps", "v2", [R]),  # extra positive
        row("MSRVTT", "a cat jumps", "v3", [I]),
        row("MSRVTT", "a cat  jumps ", "v4", [R, R]),  # whitespace differs; video only in FIRE
        row("MSRVTT", "a man sings", "v2", [R]),  # the original pair judged too
        row("MSRVTT", "a car drives", "v1", [I]),
        row("MSRVTT", "a car drives", "v1", [R, R]),  # same pair again: pooled -> 2 R vs 1 I
        row("MSVD", "a dog runs", "m3", [R]),
        row("MSVD", "a girl reads", "m1", [I]),
    ]
    disagreements = [
        row("MSRVTT", "a man sings", "v3", [R, I], with_label=False),  # tie -> unresolved
        row("MSRVTT", "a man sings", "v1", [I, R, I], with_label=False),  # 2-1 -> irrelevant
    ]
    rawfmt.fire_release(tmp_path / "raw", annotations, disagreements, queries)
    return tmp_path / "raw"


def test_vote_rule():
    assert vote([1, 1, 0]) == (1, 2 / 3, False)
    assert vote([0]) == (0, 1.0, False)
    assert vote([1, 0]) == (0, 0.5, True)


def test_fire_qrels_queries_videos(fire_raw, tmp_path, hf_cache):
    result = build_benchmark("fire", fire_raw, tmp_path / "out")
    counts = result.report["counts_by_vote"]["msrvtt"]
    # pairs: (cat,v2) R, (cat,v3) I, (cat,v4) R, (sings,v2) R, (drives,v1) R by 2-1, (sings,v3) tie, (sings,v1) I
    assert counts["pairs"] == 7
    assert (counts["relevant"], counts["irrelevant"], counts["unresolved"]) == (4, 2, 1)
    assert counts["videos"] == 4 and counts["videos_only_in_fire"] == 1
    rows = result.report["release"]["rows"]["msrvtt"]
    assert rows["annotation_rows"] == 6 and rows["disagreement_rows"] == 2 and rows["labels"] == 13

    qrels = datasets.load_dataset(str(result.out), "msrvtt", split="test", cache_dir=hf_cache).to_pandas()
    queries = datasets.load_dataset(str(result.out), "msrvtt-queries", split="test", cache_dir=hf_cache)
    videos = datasets.load_dataset(str(result.out), "msrvtt-videos", split="test", cache_dir=hf_cache)
    assert queries["query_id"] == ["msrvtt-q00000", "msrvtt-q00001", "msrvtt-q00002"]
    assert queries["video_id"] == ["v1", "v2", "v3"]
    assert videos["video_id"] == ["v1", "v2", "v3", "v4"]

    def get(q, v):
        sel = qrels[(qrels.query_id == q) & (qrels.video_id == v)]
        assert len(sel) == 1, (q, v)
        return sel.iloc[0]

    assert get("msrvtt-q00000", "v1").source == "original" and get("msrvtt-q00000", "v1").n_judgments == 0
    assert get("msrvtt-q00000", "v2").label == 1 and get("msrvtt-q00000", "v2").source == "fire"
    assert get("msrvtt-q00000", "v4").label == 1 and get("msrvtt-q00000", "v4").n_judgments == 2
    orig = get("msrvtt-q00001", "v2")
    assert (orig.source, orig.label, orig.n_judgments, orig.agreement) == ("original", 1, 1, 1.0)
    tie = get("msrvtt-q00001", "v3")
    assert bool(tie.unresolved) and tie.label == 0 and tie.agreement == 0.5
    pooled = get("msrvtt-q00002", "v1")
    assert pooled.label == 1 and pooled.n_judgments == 3 and pooled.agreement == pytest.approx(2 / 3)
    # original-only positives are one per query; FIRE adds two more
    assert (qrels.source == "original").sum() == 3
    assert ((qrels.label == 1) & (qrels.source == "fire")).sum() == 3


def test_fire_duplicate_query_text_applies_to_every_query(fire_raw, tmp_path, hf_cache):
    result = build_benchmark("fire", fire_raw, tmp_path / "out")
    qrels = datasets.load_dataset(str(result.out), "msvd", split="test", cache_dir=hf_cache).to_pandas()
    m3 = qrels[qrels.video_id == "m3"]
    assert sorted(m3.query_id) == ["msvd-q00000", "msvd-q00001"] and set(m3.label) == {1}


def test_fire_card_records_both_licenses(fire_raw, tmp_path):
    result = build_benchmark("fire", fire_raw, tmp_path / "out")
    card = (result.out / "README.md").read_text()
    assert "- cc-by-nc-sa-4.0\n- cc-by-nc-2.0" in card
    assert "CC BY-NC-SA 4.0" in card and "CC BY-NC 2.0" in card
    assert result.report["release"]["release_metadata"]["license"] == "CC BY-NC-SA 4.0"
    assert result.report["paper_table2"]["msrvtt"]["relevant"] == 2855


def test_fire_needs_the_queries_file(fire_raw, tmp_path):
    (fire_raw / "msvd_queries.csv").unlink()
    with pytest.raises(FileNotFoundError, match="msvd_queries.csv"):
        build_benchmark("fire", fire_raw, tmp_path / "out")
    assert not (tmp_path / "out").exists()
