"""Every malformed raw file fails before anything is written, naming the file, the row and the fix."""

from __future__ import annotations

import json

import pytest

from hardneg.datasets import RawFormatError, build_benchmark

R, I = "relevant", "irrelevant"


def _assert_fails(benchmark, raw, out, exc, *fragments):
    with pytest.raises(exc) as info:
        build_benchmark(benchmark, raw, out)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message
    if exc is RawFormatError:
        assert "Fix:" in message
    assert not out.exists()
    assert not [p for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")], "temporary output left behind"
    return message


def test_feint6k_block_mixing_two_videos(tmp_path, rawfmt):
    rows = rawfmt.feint6k_rows(2)
    rows[8] = ("video9999", rows[8][1])  # row 10 of the file (header is row 1)
    rawfmt.write_csv(tmp_path / "raw" / "feint6k_msrvtt.csv", ["video_id", "sentence"], rows)
    _assert_fails("feint6k", tmp_path / "raw", tmp_path / "out", RawFormatError, "feint6k_msrvtt.csv", "row 10", "mixes videos")


def test_feint6k_block_of_five_rows(tmp_path, rawfmt):
    rows = rawfmt.feint6k_rows(2)[:-1]
    rawfmt.write_csv(tmp_path / "raw" / "feint6k_vatex.csv", ["video_id", "sentence"], rows)
    _assert_fails("feint6k", tmp_path / "raw", tmp_path / "out", RawFormatError, "feint6k_vatex.csv", "row 12", "not a multiple of 6")


def test_feint6k_wrong_columns(tmp_path, rawfmt):
    rawfmt.write_csv(tmp_path / "raw" / "feint6k_msrvtt.csv", ["video", "caption"], rawfmt.feint6k_rows(1))
    _assert_fails("feint6k", tmp_path / "raw", tmp_path / "out", RawFormatError, "feint6k_msrvtt.csv", "row 1", "wrong columns", "video_id")


def test_feint6k_missing_caption(tmp_path, rawfmt):
    rows = rawfmt.feint6k_rows(1)
    rows[3] = (rows[3][0], "  ")
    rawfmt.write_csv(tmp_path / "raw" / "feint6k_msrvtt.csv", ["video_id", "sentence"], rows)
    _assert_fails("feint6k", tmp_path / "raw", tmp_path / "out", RawFormatError, "row 5", "missing caption")


def test_feint6k_duplicate_video(tmp_path, rawfmt):
    rows = rawfmt.feint6k_rows(2)
    rows[6:12] = [(rows[0][0], s) for _, s in rows[6:12]]
    rawfmt.write_csv(tmp_path / "raw" / "feint6k_msrvtt.csv", ["video_id", "sentence"], rows)
    _assert_fails("feint6k", tmp_path / "raw", tmp_path / "out", RawFormatError, "duplicate id", "row 8")


def test_contrast_label_out_of_range(tmp_path, rawfmt):
    rows = rawfmt.contrast_rows(3, with_c_label=True)
    rows[1][6] = 5
    rawfmt.write_tsv(tmp_path / "raw" / "msrvtt_human_contrast_set_with_c_label.tsv", rawfmt.CS_HEADER + ["c_label"], rows)
    _assert_fails("contrast_sets", tmp_path / "raw", tmp_path / "out", RawFormatError, "msrvtt_human_contrast_set_with_c_label.tsv", "row 3", "'label' is 5", "0..4")


def test_contrast_c_label_equal_to_label(tmp_path, rawfmt):
    rows = rawfmt.contrast_rows(2, with_c_label=True)
    rows[0][7] = rows[0][6]
    rawfmt.write_tsv(tmp_path / "raw" / "msrvtt_human_contrast_set_with_c_label.tsv", rawfmt.CS_HEADER + ["c_label"], rows)
    _assert_fails("contrast_sets", tmp_path / "raw", tmp_path / "out", RawFormatError, "row 2", "c_label equals label")


def test_contrast_duplicate_clip(tmp_path, rawfmt):
    rows = rawfmt.contrast_rows(3, with_c_label=False)
    rows[2][0] = rows[0][0]
    rawfmt.write_tsv(tmp_path / "raw" / "msrvtt_human_contrast_set.tsv", rawfmt.CS_HEADER, rows)
    _assert_fails("contrast_sets", tmp_path / "raw", tmp_path / "out", RawFormatError, "duplicate id", "row 4")


def test_contrast_truncated_line(tmp_path, rawfmt):
    path = rawfmt.write_tsv(tmp_path / "raw" / "msrvtt_lm_contrast_set.tsv", rawfmt.CS_HEADER, rawfmt.contrast_rows(3, False))
    text = path.read_text()
    path.write_text(text[: text.rindex("\t")])  # last line loses its label
    _assert_fails("contrast_sets", tmp_path / "raw", tmp_path / "out", RawFormatError, "msrvtt_lm_contrast_set.tsv", "row 4", "6 fields")


def test_contrast_unnamed_set(tmp_path, rawfmt):
    rawfmt.write_tsv(tmp_path / "raw" / "msrvtt_contrast_set.tsv", rawfmt.CS_HEADER, rawfmt.contrast_rows(1, False))
    _assert_fails("contrast_sets", tmp_path / "raw", tmp_path / "out", RawFormatError, "human", "lm")


def test_contrast_generated_bad_category(tmp_path, rawfmt):
    raw = tmp_path / "raw"
    raw.mkdir()
    prov = {k: None for k in ("origin", "generator", "generator_version", "rule", "pos", "span", "replacement", "seed", "details")}
    row = {"id": "x", "video_id": "v", "source_dataset": "msrvtt", "source_split": "test", "category": "colour", "captions": ["a", "b"], "label": 0, "manipulated_index": 1, "negative_types": ["positive", "random"], "provenance": [prov, prov]}
    (raw / "gen.jsonl").write_text(json.dumps(row) + "\n")
    _assert_fails("contrast_sets", raw, tmp_path / "out", RawFormatError, "gen.jsonl", "row 1", "category 'colour'")


def test_posrank_truncated_json(tmp_path, rawfmt):
    raw = tmp_path / "raw"
    rawfmt.posrank_files(raw)
    path = raw / "uvo_val_adverb_RE20.json"
    path.write_text(path.read_text()[:-40])
    _assert_fails("posrank", raw, tmp_path / "out", RawFormatError, "uvo_val_adverb_RE20.json", "truncated")


def test_posrank_nineteen_negatives(tmp_path, rawfmt):
    raw = tmp_path / "raw"
    made = rawfmt.posrank_files(raw)
    key = next(iter(made["negatives"]))
    del made["negatives"][key]["19"]
    (raw / "uvo_val_adverb_RE20.json").write_text(json.dumps(made["negatives"]))
    _assert_fails("posrank", raw, tmp_path / "out", RawFormatError, f"row {key}", "exactly 20 negatives")


def test_posrank_caption_missing_from_captions_file(tmp_path, rawfmt):
    raw = tmp_path / "raw"
    made = rawfmt.posrank_files(raw)
    made["negatives"]["Ghost##*##0"] = {str(j): f"n{j}" for j in range(20)}
    (raw / "uvo_val_adverb_RE20.json").write_text(json.dumps(made["negatives"]))
    _assert_fails("posrank", raw, tmp_path / "out", RawFormatError, "Ghost##*##0", "not in captions.txt")


def test_posrank_duplicate_key(tmp_path, rawfmt):
    raw = tmp_path / "raw"
    made = rawfmt.posrank_files(raw, n_captions=1)
    key, negs = next(iter(made["negatives"].items()))
    body = json.dumps(negs)
    (raw / "uvo_val_adverb_RE20.json").write_text("{" + f'"{key}": {body}, "{key}": {body}' + "}")
    _assert_fails("posrank", raw, tmp_path / "out", RawFormatError, "duplicate key", key)


def test_posrank_captions_line_without_separator(tmp_path, rawfmt):
    raw = tmp_path / "raw"
    rawfmt.posrank_files(raw)
    with open(raw / "captions.txt", "a") as fh:
        fh.write("Broken##*##0 a caption without the separator\n")
    _assert_fails("posrank", raw, tmp_path / "out", RawFormatError, "captions.txt", "row 6", "separator")


def test_fire_bad_label(tmp_path, rawfmt):
    rows = [rawfmt.fire_row("MSRVTT", "a cat", "v1", [R]), rawfmt.fire_row("MSRVTT", "a cat", "v2", [R])]
    rows[1]["label"] = "maybe"
    rawfmt.fire_release(tmp_path / "raw", rows, [], {"msrvtt": [("v1", "a cat")]})
    _assert_fails("fire", tmp_path / "raw", tmp_path / "out", RawFormatError, "fire.json", "annotations[1]", "'maybe'")


def test_fire_missing_field(tmp_path, rawfmt):
    row = rawfmt.fire_row("MSVD", "a cat", "v1", [R, I], with_label=False)
    del row["queue_ids"]
    rawfmt.fire_release(tmp_path / "raw", [rawfmt.fire_row("MSVD", "a cat", "v1", [R])], [row], {"msvd": [("v1", "a cat")]})
    _assert_fails("fire", tmp_path / "raw", tmp_path / "out", RawFormatError, "disagreements[0]", "queue_ids")


def test_fire_query_not_in_captions(tmp_path, rawfmt):
    rows = [rawfmt.fire_row("MSRVTT", "a dog", "v1", [R])]
    rawfmt.fire_release(tmp_path / "raw", rows, [], {"msrvtt": [("v1", "a cat")]})
    _assert_fails("fire", tmp_path / "raw", tmp_path / "out", RawFormatError, "'a dog'", "msrvtt_queries.csv")


def test_fire_truncated_json(tmp_path, rawfmt):
    path = rawfmt.fire_release(tmp_path / "raw", [rawfmt.fire_row("MSRVTT", "a cat", "v1", [R])], [], {"msrvtt": [("v1", "a cat")]})
    path.write_text(path.read_text()[:-5])
    _assert_fails("fire", tmp_path / "raw", tmp_path / "out", RawFormatError, "fire.json", "truncated")


def test_missing_raw_folder_and_unknown_benchmark(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        build_benchmark("feint6k", tmp_path / "nope", tmp_path / "out")
    with pytest.raises(ValueError, match="unknown benchmark"):
        build_benchmark("msrvtt", tmp_path, tmp_path / "out")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="feint6k_msrvtt.csv"):
        build_benchmark("feint6k", tmp_path / "empty", tmp_path / "out")
