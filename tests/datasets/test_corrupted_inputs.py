"""Corrupted raw inputs, every category for every builder: a clear error, never a traceback or a wrong build.

Each case writes a valid raw folder in the authors' format, corrupts one thing, and checks that
`build_benchmark` raises a ValueError (RawFormatError for a bad file) whose message names the file,
the row or line, and the fix; that nothing is written; and that the CLI prints it as an error with
exit code 2 and no traceback. Categories (the issue's list): non-UTF-8 bytes, oversized fields,
deep JSON nesting, a string where a list is needed, an integer or list id, string provenance
entries, a scalar where an object is needed, non-ASCII digits (`²`), a string manipulated_index,
NUL bytes, truncation, empty (0-byte) files. A category that cannot occur in a builder's inputs
(Feint6K has only CSV text, so no JSON types or nesting) has no case there.
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

from hardneg.cli import main
from hardneg.datasets import RawFormatError, build_benchmark
from hardneg.datasets.raw_common import MAX_FIELD_CHARS

# the raw-format writers of this folder's conftest (tests/datasets is not a package: `datasets` would shadow HF's)
_spec = importlib.util.spec_from_file_location("_datasets_rawfmt", Path(__file__).with_name("conftest.py"))
_rawfmt = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_rawfmt)
CS_HEADER, contrast_rows, feint6k_rows = _rawfmt.CS_HEADER, _rawfmt.contrast_rows, _rawfmt.feint6k_rows
fire_release, fire_row, posrank_files, write_csv, write_tsv = (
    _rawfmt.fire_release, _rawfmt.fire_row, _rawfmt.posrank_files, _rawfmt.write_csv, _rawfmt.write_tsv
)

HUGE = "x" * (MAX_FIELD_CHARS + 1)
DEEP = "[" * 5000 + "]" * 5000


# --------------------------------------------------------------------------- valid releases


def feint6k_raw(raw: Path) -> Path:
    return write_csv(raw / "feint6k_msrvtt.csv", ["video_id", "sentence"], feint6k_rows(2))


CS_TSV = "msrvtt_human_contrast_set_with_c_label.tsv"
CS_JSONL = "generated_gender.jsonl"


def gender_row(i: int) -> dict:
    prov = {k: None for k in ("origin", "generator", "generator_version", "rule", "pos", "span", "replacement", "seed", "details")}
    return {
        "id": f"gender:video{7000 + i}",
        "video_id": f"video{7000 + i}",
        "source_dataset": "msrvtt",
        "source_split": "test",
        "category": "gender",
        "captions": [f"a man is cooking {i}", f"a woman is cooking {i}", f"a dog runs {i}"],
        "label": 0,
        "manipulated_index": 1,
        "negative_types": ["positive", "gender", "random"],
        "provenance": [dict(prov, origin="positive"), dict(prov, origin="generator", generator="gender"), dict(prov, origin="dataset")],
    }


def contrast_raw(raw: Path, rows: list[dict] | None = None) -> Path:
    write_tsv(raw / CS_TSV, CS_HEADER + ["c_label"], contrast_rows(3, with_c_label=True))
    rows = rows if rows is not None else [gender_row(0), gender_row(1)]
    (raw / CS_JSONL).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return raw


PR_JSON = "uvo_val_adverb_RE20.json"


def posrank_raw(raw: Path) -> dict:
    return posrank_files(raw, n_captions=3)


def fire_raw(raw: Path, annotations: list | None = None, disagreements: list | None = None) -> Path:
    rows = annotations if annotations is not None else [
        fire_row("MSRVTT", "a cat sleeps", "video1", ["relevant"]),
        fire_row("MSRVTT", "a cat sleeps", "video2", ["relevant", "irrelevant", "relevant"]),
    ]
    dis = disagreements if disagreements is not None else [fire_row("MSRVTT", "a dog runs", "video1", ["relevant", "irrelevant"], with_label=False)]
    return fire_release(raw, rows, dis, {"msrvtt": [("video1", "a cat sleeps"), ("video2", "a dog runs")]})


# --------------------------------------------------------------------------- corruptions


def put_bytes(path: Path, marker: bytes, replacement: bytes) -> None:
    data = path.read_bytes()
    assert marker in data, marker
    path.write_bytes(data.replace(marker, replacement, 1))


def posrank_edit(raw: Path, edit: Callable[[dict], None]) -> None:
    data = json.loads((raw / PR_JSON).read_text())
    edit(data)
    (raw / PR_JSON).write_text(json.dumps(data))


def first_key(raw: Path) -> str:
    return next(iter(json.loads((raw / PR_JSON).read_text())))


def fire_edit(raw: Path, edit: Callable[[dict], None]) -> None:
    data = json.loads((raw / "fire.json").read_text())
    edit(data)
    (raw / "fire.json").write_text(json.dumps(data))


def contrast_jsonl(raw: Path, field: str, value) -> None:
    row = gender_row(1)
    row[field] = value
    contrast_raw(raw, [gender_row(0), row])


@dataclass
class Case:
    benchmark: str
    category: str
    corrupt: Callable[[Path], None]
    file: str  # the file the message must name
    where: tuple[str, ...]  # fragments naming the row / line / key
    also: tuple[str, ...] = ()  # fragments naming the field or the problem
    exc: type = RawFormatError


def _feint6k_truncated(raw: Path) -> None:
    path = feint6k_raw(raw)
    text = path.read_text()
    path.write_text(text[: text.rstrip().rindex(",")])  # the last line loses its sentence


def _feint6k_empty(raw: Path) -> None:
    (raw / "feint6k_msrvtt.csv").write_bytes(b"")
    (raw / "feint6k_vatex.csv").write_bytes(b"")


def _feint6k_huge(raw: Path) -> None:
    rows = feint6k_rows(1)
    rows[2] = (rows[2][0], HUGE)
    write_csv(raw / "feint6k_msrvtt.csv", ["video_id", "sentence"], rows)


def _feint6k_unclosed_quote(raw: Path) -> None:
    path = feint6k_raw(raw)
    put_bytes(path, b"a person is opening box number 0\n", b'"a person is opening box number 0\n')


def _tsv_bytes(raw: Path, marker: bytes, replacement: bytes) -> None:
    contrast_raw(raw)
    put_bytes(raw / CS_TSV, marker, replacement)


def _cs_label(raw: Path, value: str, column: int = 6) -> None:
    rows = contrast_rows(3, with_c_label=True)
    rows[1][column] = value
    write_tsv(raw / CS_TSV, CS_HEADER + ["c_label"], rows)


def _cs_truncated_jsonl(raw: Path) -> None:
    contrast_raw(raw)
    path = raw / CS_JSONL
    path.write_text(path.read_text().rstrip()[:-30])


def _cs_empty(raw: Path) -> None:
    (raw / CS_TSV).write_bytes(b"")
    (raw / CS_JSONL).write_bytes(b"")
    (raw / "msrvtt_lm_contrast_set.tsv").write_bytes(b"")


def _cs_deep_line(raw: Path) -> None:
    contrast_raw(raw)
    with open(raw / CS_JSONL, "a") as fh:
        fh.write('{"id": ' + DEEP + "}\n")


def _cs_scalar_line(raw: Path) -> None:
    contrast_raw(raw)
    with open(raw / CS_JSONL, "a") as fh:
        fh.write("5\n")


def _cs_tsv_field_huge(raw: Path) -> None:
    rows = contrast_rows(3, with_c_label=True)
    rows[1][2] = HUGE
    write_tsv(raw / CS_TSV, CS_HEADER + ["c_label"], rows)


def _cs_csv_named_tsv_damaged(raw: Path) -> None:
    # a tab-separated release named .csv is recognized by its header; its bad row is still found
    rows = contrast_rows(3, with_c_label=True)
    rows[2][7] = "x"
    write_tsv(raw / "msrvtt_human_contrast_set_with_c_label.csv", CS_HEADER + ["c_label"], rows)


def _pr_nonutf8_json(raw: Path) -> None:
    posrank_raw(raw)
    put_bytes(raw / PR_JSON, b"word3", b"word\xff")


def _pr_nonutf8_captions(raw: Path) -> None:
    posrank_raw(raw)
    put_bytes(raw / "captions.txt", b"toward table 1", b"toward t\xe9ble 1")


def _pr_huge(raw: Path) -> None:
    posrank_raw(raw)
    posrank_edit(raw, lambda d: d[next(iter(d))].__setitem__("3", HUGE))


def _pr_huge_caption(raw: Path) -> None:
    posrank_raw(raw)
    with open(raw / "captions.txt", "a") as fh:
        fh.write(f"Other-vid##*##1**#**{HUGE}\n")


def _pr_deep(raw: Path) -> None:
    posrank_raw(raw)
    (raw / PR_JSON).write_text('{"Vid-000_x##*##0": ' + DEEP + "}")


def _pr_negatives_string(raw: Path) -> None:
    posrank_raw(raw)
    posrank_edit(raw, lambda d: d.__setitem__(next(iter(d)), "abcde"))


def _pr_negative_int(raw: Path) -> None:
    posrank_raw(raw)
    posrank_edit(raw, lambda d: d[next(iter(d))].__setitem__("0", 5))


def _pr_negative_list(raw: Path) -> None:
    posrank_raw(raw)
    posrank_edit(raw, lambda d: d[next(iter(d))].__setitem__("7", ["a", "b"]))


def _pr_scalar(raw: Path) -> None:
    posrank_raw(raw)
    (raw / PR_JSON).write_text("5")


def _pr_superscript_key(raw: Path) -> None:
    made = posrank_raw(raw)
    negs = made["negatives"]
    key = next(iter(negs))
    negs[key.replace("##*##0", "##*##²")] = negs.pop(key)
    (raw / PR_JSON).write_text(json.dumps(negs))


def _pr_superscript_caption(raw: Path) -> None:
    posrank_raw(raw)
    with open(raw / "captions.txt", "a", encoding="utf-8") as fh:
        fh.write("Other-vid##*##²**#**a caption with a superscript index\n")


def _pr_empty(raw: Path) -> None:
    posrank_raw(raw)
    (raw / "uvo_val_noun_RE20.json").write_bytes(b"")
    (raw / "uvo_val_verb_RE20.json").write_bytes(b"")
    (raw / "captions.txt").write_bytes(b"")


def _pr_truncated(raw: Path) -> None:
    posrank_raw(raw)
    path = raw / PR_JSON
    path.write_text(path.read_text()[:-40])


def _pr_no_captions(raw: Path) -> None:
    posrank_raw(raw)
    (raw / "captions.txt").unlink()


def _pr_misnamed(raw: Path) -> None:
    posrank_raw(raw)
    (raw / PR_JSON).rename(raw / "negatives_adverbs.json")


def _pr_fused_msrvtt_bad_key(raw: Path) -> None:
    raw.mkdir(parents=True, exist_ok=True)
    (raw / "msrvtt10ktest.caption.txt").write_text("video7010#0 a man drives a car slowly\n", encoding="utf-8")
    negs = {"video7010#0": {str(j): f"a man drives a car w{j}" for j in range(20)}, "video7010#x": {str(j): "n" for j in range(20)}}
    (raw / "msr1ka_adverb_RE20.json").write_text(json.dumps(negs))


def _fire_nonutf8(raw: Path) -> None:
    fire_raw(raw)
    put_bytes(raw / "fire.json", b"a dog runs", b"a d\xf6g runs")


def _fire_nonutf8_queries(raw: Path) -> None:
    fire_raw(raw)
    put_bytes(raw / "msrvtt_queries.csv", b"a dog runs", b"a d\xf6g runs")


def _fire_empty(raw: Path) -> None:
    (raw).mkdir(parents=True, exist_ok=True)
    (raw / "fire.json").write_bytes(b"")
    (raw / "msrvtt_queries.csv").write_bytes(b"")


def _fire_truncated_csv(raw: Path) -> None:
    fire_raw(raw)
    path = raw / "msrvtt_queries.csv"
    path.write_text(path.read_text().rstrip()[: -len(",a dog runs")] + "\n")


CASES = [
    # ---------------------------------------------------------------- feint6k (CSV text only)
    Case("feint6k", "non-utf8", lambda raw: put_bytes(feint6k_raw(raw), b"box number 1 variant 2", b"box n\xffmber 1 variant 2"),
         "feint6k_msrvtt.csv", ("row 11",), ("line 11", "byte offset", "0xff", "UTF-8")),
    Case("feint6k", "oversized-field", _feint6k_huge, "feint6k_msrvtt.csv", ("row 4",), ("1,048,576",)),
    Case("feint6k", "oversized-field-unclosed-quote", _feint6k_unclosed_quote, "feint6k_msrvtt.csv", ("row 2",), ("unclosed double quote",)),
    Case("feint6k", "nul-byte", lambda raw: put_bytes(feint6k_raw(raw), b"box number 1 variant 0", b"box number 1\x00variant 0"),
         "feint6k_msrvtt.csv", ("row 9",), ("NUL", "line 9")),
    Case("feint6k", "truncated", _feint6k_truncated, "feint6k_msrvtt.csv", ("row 13",), ("1 fields",)),
    Case("feint6k", "empty-files", _feint6k_empty, "feint6k_msrvtt.csv", ("feint6k_vatex.csv",), ("2 empty",)),
    Case("feint6k", "tab-separated-named-csv-bad-row", lambda raw: write_tsv(raw / "feint6k_msrvtt.csv", ["video_id", "sentence"], feint6k_rows(1)[:5]),
         "feint6k_msrvtt.csv", ("row 6",), ("not a multiple of 6",)),
    # ---------------------------------------------------------------- contrast sets (TSV + JSONL generator output)
    Case("contrast_sets", "non-utf8", lambda raw: _tsv_bytes(raw, b"another video caption 1-0", b"another vid\xe9o caption 1-0"),
         CS_TSV, ("row 3", "line 3", "byte offset"), ("0xe9",)),
    Case("contrast_sets", "non-utf8-jsonl", lambda raw: (contrast_raw(raw), put_bytes(raw / CS_JSONL, b"cooking 1", b"cook\xffng 1")),
         CS_JSONL, ("row 2", "line 2"), ("0xff",)),
    Case("contrast_sets", "oversized-field", _cs_tsv_field_huge, CS_TSV, ("row 3",), ("1,048,576",)),
    Case("contrast_sets", "oversized-caption-jsonl", lambda raw: contrast_jsonl(raw, "captions", ["a", HUGE]), CS_JSONL, ("row 2",), ("caption 1", "1,048,576")),
    Case("contrast_sets", "deep-nesting", _cs_deep_line, CS_JSONL, ("row 3",), ("nested deeper",)),
    Case("contrast_sets", "string-for-list-captions", lambda raw: contrast_jsonl(raw, "captions", "abcde"), CS_JSONL, ("row 2",), ("'captions'", "not a list")),
    Case("contrast_sets", "string-for-list-negative-types", lambda raw: contrast_jsonl(raw, "negative_types", "positive"), CS_JSONL, ("row 2",), ("'negative_types'", "not a list")),
    Case("contrast_sets", "integer-id", lambda raw: contrast_jsonl(raw, "id", 5), CS_JSONL, ("row 2",), ("'id'", "int")),
    Case("contrast_sets", "list-video-id", lambda raw: contrast_jsonl(raw, "video_id", ["video1"]), CS_JSONL, ("row 2",), ("'video_id'", "list")),
    Case("contrast_sets", "string-provenance", lambda raw: contrast_jsonl(raw, "provenance", ["positive", "gender", "dataset"]), CS_JSONL, ("row 2",), ("provenance 0", "not an object")),
    Case("contrast_sets", "provenance-wrong-type", lambda raw: contrast_jsonl(raw, "provenance", [{"origin": "positive", "seed": "7"}] * 3), CS_JSONL, ("row 2",), ("'seed'", "integer")),
    Case("contrast_sets", "scalar-line", _cs_scalar_line, CS_JSONL, ("row 3",), ("not a JSON object",)),
    Case("contrast_sets", "superscript-label", lambda raw: _cs_label(raw, "²"), CS_TSV, ("row 3",), ("'label'", "not an integer")),
    Case("contrast_sets", "arabic-digit-c-label", lambda raw: _cs_label(raw, "٣", column=7), CS_TSV, ("row 3",), ("'c_label'", "not an integer")),
    Case("contrast_sets", "string-manipulated-index", lambda raw: contrast_jsonl(raw, "manipulated_index", "1"), CS_JSONL, ("row 2",), ("'manipulated_index'",)),
    Case("contrast_sets", "bool-label", lambda raw: contrast_jsonl(raw, "label", True), CS_JSONL, ("row 2",), ("label True",)),
    Case("contrast_sets", "nul-byte", lambda raw: _tsv_bytes(raw, b"another video caption 2-1", b"another video\x00caption 2-1"), CS_TSV, ("row 4",), ("NUL",)),
    Case("contrast_sets", "truncated", _cs_truncated_jsonl, CS_JSONL, ("row 2",), ("truncated",)),
    Case("contrast_sets", "empty-files", _cs_empty, CS_TSV, (CS_JSONL, "msrvtt_lm_contrast_set.tsv"), ("3 empty",)),
    Case("contrast_sets", "tab-separated-named-csv-bad-row", _cs_csv_named_tsv_damaged, "msrvtt_human_contrast_set_with_c_label.csv", ("row 4",), ("'c_label'",)),
    # ---------------------------------------------------------------- posrank (negatives JSON + captions text)
    Case("posrank", "non-utf8", _pr_nonutf8_json, PR_JSON, ("row 1", "line 1", "byte offset"), ("0xff",)),
    Case("posrank", "non-utf8-captions", _pr_nonutf8_captions, "captions.txt", ("row 2", "line 2"), ("0xe9",)),
    Case("posrank", "oversized-field", _pr_huge, PR_JSON, ("row Vid-000_x##*##0",), ("negative 3", "1,048,576")),
    Case("posrank", "oversized-caption", _pr_huge_caption, "captions.txt", ("row 5",), ("1,048,576",)),
    Case("posrank", "deep-nesting", _pr_deep, PR_JSON, ("row 1", "line 1"), ("nested deeper",)),
    Case("posrank", "string-for-object", _pr_negatives_string, PR_JSON, ("row Vid-000_x##*##0",), ("expected keys",)),
    Case("posrank", "integer-negative", _pr_negative_int, PR_JSON, ("row Vid-000_x##*##0",), ("negative 0", "int 5")),
    Case("posrank", "list-negative", _pr_negative_list, PR_JSON, ("row Vid-000_x##*##0",), ("negative 7", "a list")),
    Case("posrank", "scalar-file", _pr_scalar, PR_JSON, ("row 1",), ("top level is int",)),
    Case("posrank", "superscript-key", _pr_superscript_key, PR_JSON, ("²",), ("digits 0-9",)),
    Case("posrank", "superscript-caption-key", _pr_superscript_caption, "captions.txt", ("row 5",), ("digits 0-9",)),
    Case("posrank", "non-digit-key-fused-name", _pr_fused_msrvtt_bad_key, "msr1ka_adverb_RE20.json", ("video7010#x",), ("digits 0-9",)),
    Case("posrank", "nul-byte", lambda raw: (posrank_raw(raw), put_bytes(raw / "captions.txt", b"toward table 2", b"toward\x00table 2")),
         "captions.txt", ("row 3",), ("NUL", "line 3")),
    Case("posrank", "truncated", _pr_truncated, PR_JSON, ("row 1", "line 1"), ("truncated",)),
    Case("posrank", "empty-files", _pr_empty, "uvo_val_noun_RE20.json", ("uvo_val_verb_RE20.json", "captions.txt"), ("3 empty",)),
    Case("posrank", "no-caption-source", _pr_no_captions, PR_JSON, ("captions.txt",), ("Fine-grained-negatives",), exc=FileNotFoundError),
    Case("posrank", "negatives-under-another-name", _pr_misnamed, "negatives_adverbs.json", ("RE20",), ("rename",)),
    # ---------------------------------------------------------------- fire (release JSON + queries CSV)
    Case("fire", "non-utf8", _fire_nonutf8, "fire.json", ("row 1", "line 1", "byte offset"), ("0xf6",)),
    Case("fire", "non-utf8-queries", _fire_nonutf8_queries, "msrvtt_queries.csv", ("row 3", "line 3"), ("0xf6",)),
    Case("fire", "oversized-field", lambda raw: fire_raw(raw, [fire_row("MSRVTT", HUGE, "video1", ["relevant"])]), "fire.json", ("annotations[0]",), ("'query'", "1,048,576")),
    Case("fire", "oversized-csv-field", lambda raw: (fire_raw(raw), write_csv(raw / "msrvtt_queries.csv", ["video_id", "sentence"], [("video1", "a cat sleeps"), ("video2", HUGE)])),
         "msrvtt_queries.csv", ("row 3",), ("1,048,576",)),
    Case("fire", "deep-nesting", lambda raw: (fire_raw(raw), (raw / "fire.json").write_text('{"annotations": ' + DEEP + ', "disagreements": []}')),
         "fire.json", ("row 1", "line 1"), ("nested deeper",)),
    Case("fire", "string-for-list-labels", lambda raw: fire_raw(raw, [dict(fire_row("MSRVTT", "a cat sleeps", "video1", ["relevant"]), annotator_labels="relevant")]),
         "fire.json", ("annotations[0]",), ("annotator_labels",)),
    Case("fire", "string-for-list-models", lambda raw: fire_raw(raw, [dict(fire_row("MSRVTT", "a cat sleeps", "video1", ["relevant"]), models="CLIP4CLIP")]),
         "fire.json", ("annotations[0]",), ("'models'", "not a list")),
    Case("fire", "integer-video-id", lambda raw: fire_raw(raw, [dict(fire_row("MSRVTT", "a cat sleeps", "video1", ["relevant"]), video_id=5)]),
         "fire.json", ("annotations[0]",), ("'video_id'", "int 5")),
    Case("fire", "list-video-id", lambda raw: fire_raw(raw, None, [dict(fire_row("MSRVTT", "a dog runs", "video1", ["relevant", "irrelevant"], with_label=False), video_id=["video1"])]),
         "fire.json", ("disagreements[0]",), ("'video_id'", "a list")),
    Case("fire", "list-dataset", lambda raw: fire_raw(raw, [dict(fire_row("MSRVTT", "a cat sleeps", "video1", ["relevant"]), dataset=["MSRVTT"])]),
         "fire.json", ("annotations[0]",), ("'dataset'",)),
    Case("fire", "scalar-entry", lambda raw: fire_raw(raw, [fire_row("MSRVTT", "a cat sleeps", "video1", ["relevant"]), 5]), "fire.json", ("annotations[1]",), ("not an object",)),
    Case("fire", "scalar-annotations", lambda raw: (fire_raw(raw), fire_edit(raw, lambda d: d.__setitem__("annotations", 5))), "fire.json", ("row 1",), ("lists 'annotations'",)),
    Case("fire", "nul-byte", lambda raw: (fire_raw(raw), put_bytes(raw / "msrvtt_queries.csv", b"a dog runs", b"a dog\x00runs")), "msrvtt_queries.csv", ("row 3",), ("NUL",)),
    Case("fire", "truncated", lambda raw: (fire_raw(raw), (raw / "fire.json").write_text((raw / "fire.json").read_text()[:-5])), "fire.json", ("row 1",), ("truncated",)),
    Case("fire", "truncated-csv", _fire_truncated_csv, "msrvtt_queries.csv", ("row 3",), ("1 fields",)),
    Case("fire", "empty-files", _fire_empty, "fire.json", ("msrvtt_queries.csv",), ("2 empty",)),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c.benchmark}-{c.category}" for c in CASES])
def test_corrupted_input_is_a_clear_error(case, tmp_path, capsys):
    raw, out = tmp_path / "raw", tmp_path / "out"
    raw.mkdir()
    case.corrupt(raw)
    with pytest.raises(case.exc) as info:
        build_benchmark(case.benchmark, raw, out)
    assert isinstance(info.value, (ValueError, FileNotFoundError))  # never a TypeError, ArrowTypeError, csv.Error, RecursionError
    message = str(info.value)
    assert case.file in message, message
    assert any(w in message for w in case.where), (case.where, message)
    for fragment in case.also:
        assert fragment in message, (fragment, message)
    if isinstance(info.value, RawFormatError):
        assert "Fix:" in message
    assert len(message) < 3000, "the message must stay readable"
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")]

    # the CLI prints it as an error line with exit code 2, no traceback
    capsys.readouterr()
    assert main(["build", case.benchmark, "--raw", str(raw), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "error:" in err and case.file in err


def test_case_counts_per_builder():
    """The suite's size per builder (quoted in the report of issue 13)."""
    counts = {b: sum(c.benchmark == b for c in CASES) for b in ("feint6k", "contrast_sets", "posrank", "fire")}
    assert all(n >= 7 for n in counts.values()), counts
    categories = {c.category.split("-")[0] for c in CASES}
    assert {"non", "oversized", "deep", "string", "integer", "list", "scalar", "superscript", "nul", "truncated", "empty"} <= categories


# --------------------------------------------------------------------------- accepted, and right


def test_tab_separated_contrast_release_named_csv_is_read_as_tsv_with_c_label(tmp_path):
    raw = tmp_path / "raw"
    write_tsv(raw / "msrvtt_human_contrast_set_with_c_label.csv", CS_HEADER + ["c_label"], contrast_rows(4, with_c_label=True))
    result = build_benchmark("contrast_sets", raw, tmp_path / "out")
    assert result.report["manipulated_index"]["verb_human"]  # c_label kept
    (entry,) = result.report["files"]
    assert entry["status"] == "used" and "tab-separated" in entry["reason"] and "named .csv" in entry["reason"]


def test_json_string_escapes_and_deep_but_legal_text_are_not_nesting(tmp_path):
    """Brackets inside captions are text: a caption of 100 '[' builds."""
    raw = tmp_path / "raw"
    made = posrank_files(raw, n_captions=1)
    key = next(iter(made["negatives"]))
    made["negatives"][key]["5"] = "[" * 100 + ' \\" {'
    (raw / PR_JSON).write_text(json.dumps(made["negatives"]))
    result = build_benchmark("posrank", raw, tmp_path / "out")
    assert result.report["counts"]["vln_uvo"]["test"] == 1
