"""VITATECS: the declaration, the parser's validation, the built-in sample and the real release."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from hardneg import benchmarks
from hardneg.benchmarks.vitatecs import ASPECTS
from hardneg.datasets import build_benchmark
from hardneg.datasets.raw_common import RawFormatError
from hardneg.datasets.samples import sample_raw_dir, sample_video_ids
from hardneg.io import atomic_write_parquet
from hardneg.items import load_items
from hardneg.results import chance_result, evaluate_scores
from hardneg.schema import PREDICTIONS_SCHEMA, predictions_metadata

SAMPLE = sample_raw_dir("vitatecs")
#: the release's counts (authors' README and ../shared/realdata/README.md)
RELEASE_COUNTS = {"Direction": 3800, "Intensity": 779, "Sequence": 151, "Localization": 1053,
                  "Compositionality": 1450, "Type": 6605}


def read_jsonl(folder: Path) -> dict[str, list[tuple[int, dict]]]:
    """An independent read of the release: {aspect: [(line number, row)]}."""
    out = {}
    for aspect in ASPECTS:
        path = folder / f"{aspect}.jsonl"
        if path.is_file():
            lines = path.read_text(encoding="utf-8").splitlines()
            out[aspect] = [(i, json.loads(t)) for i, t in enumerate(lines, 1) if t.strip()]
    return out


@pytest.fixture
def hf_cache(tmp_path) -> str:
    return str(tmp_path / "hf_cache")


@pytest.fixture
def raw(tmp_path) -> Path:
    """A writable copy of the built-in sample, for corrupting."""
    return Path(shutil.copytree(SAMPLE, tmp_path / "raw"))


def write_lines(path: Path, rows: list) -> None:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")


def row(aspect="Direction", src="MSRVTT", video="video7010.mp4", caption="a man opens a door",
        counterfactual="a man closes a door", **extra):
    return {"src_dataset": src, "video_name": video, "caption": caption, "counterfactual": counterfactual,
            "aspect": aspect, **extra}


# ----------------------------------------------------------------------------- declaration


def test_declared_once_and_found_by_the_registry():
    decl = benchmarks.get("vitatecs")
    assert decl.task == "multiple_choice" and decl.headline == ["Accuracy"]
    assert decl.metric("Accuracy").over == "category" and decl.metric("Accuracy").source == "R@1"
    assert decl.original_ties == "pessimistic" and "eval_vitatecs_xclip.py" in decl.original_ties_note
    assert decl.licenses == ("cc-by-4.0",) and decl.reported == ()
    assert "vitatecs" in benchmarks.names() and benchmarks.by_hub_id(decl.hub_id) is decl


# ----------------------------------------------------------------------------- the sample


def test_sample_builds_and_round_trips(tmp_path, hf_cache):
    datasets = pytest.importorskip("datasets")
    result = build_benchmark("vitatecs", SAMPLE, tmp_path / "out")
    expected = read_jsonl(SAMPLE)
    assert set(expected) == set(ASPECTS)
    counts = {a.lower(): {"test": len(rows)} for a, rows in expected.items()}
    counts["all"] = {"test": sum(len(r) for r in expected.values())}
    assert result.report["counts"] == counts
    assert [c.name for c in result.build.configs] == ["all"] + [a.lower() for a in ASPECTS]
    for aspect, rows in expected.items():
        ds = datasets.load_dataset(str(result.out), aspect.lower(), split="test", cache_dir=hf_cache)
        assert ds["id"] == [f"{aspect.lower()}:{i}" for i, _ in rows]
        assert ds["captions"] == [[r["caption"], r["counterfactual"]] for _, r in rows]
        assert ds["video_id"] == [r["video_name"].removesuffix(".mp4") for _, r in rows]
        assert ds["source_dataset"] == [r["src_dataset"].lower() for _, r in rows]
        assert set(ds["label"]) == {0} and set(ds["category"]) == {aspect.lower()}
        assert all(t == ["positive", "temporal"] for t in ds["negative_types"])
        prov = ds[0]["provenance"][1]
        assert prov["origin"] == "generator" and prov["rule"] == aspect.lower()
        assert json.loads(prov["details"])["aspect"] == aspect
    everything = datasets.load_dataset(str(result.out), "all", split="test", cache_dir=hf_cache)
    assert everything["id"] == [f"{a.lower()}:{i}" for a in ASPECTS for i, _ in expected[a]]
    card = (result.out / "README.md").read_text()
    assert "license: cc-by-4.0" in card and "li2024vitatecs" in card
    assert f"{counts['all']['test']} pairs read from 6 aspect files; 0 dropped" in card


def test_sample_videos_txt_lists_exactly_the_videos_and_overlaps_other_samples(tmp_path):
    result = build_benchmark("vitatecs", SAMPLE, tmp_path / "out")
    built = set(result.build.configs[0].splits["test"].column("video_id").to_pylist())
    listed = sample_video_ids("vitatecs")
    assert len(listed) == len(set(listed)) and set(listed) == built
    assert built & set(sample_video_ids("feint6k")) and built & set(sample_video_ids("contrast_sets"))


def test_rebuild_is_byte_identical_and_every_file_is_listed(tmp_path):
    a = build_benchmark("vitatecs", SAMPLE, tmp_path / "a")
    b = build_benchmark("vitatecs", SAMPLE, tmp_path / "b").out
    files = sorted(p.relative_to(a.out).as_posix() for p in a.out.rglob("*") if p.is_file())
    assert len(files) == 9  # 7 Parquet files, the card, the report
    assert all((a.out / f).read_bytes() == (b / f).read_bytes() for f in files)
    status = {e["path"]: e["status"] for e in a.report["files"]}
    assert status == {**{f"{x}.jsonl": "used" for x in ASPECTS}, "videos.txt": "ignored"}


def test_constant_scorer_is_chance_under_expected_ties_and_zero_under_the_authors_rule(tmp_path):
    out = build_benchmark("vitatecs", SAMPLE, tmp_path / "out").out
    items = load_items(str(out), "all")
    chance = chance_result(items, n_resamples=0)
    assert chance.value("Accuracy") == 0.5 and chance.chance["Accuracy"] == 0.5
    assert all(chance.value(f"Accuracy_{a.lower()}") == 0.5 for a in ASPECTS)
    zeros = np.zeros((len(items), 2))
    assert evaluate_scores(items, zeros, ties="pessimistic", n_resamples=0).value("Accuracy") == 0.0


def test_accuracy_is_the_unweighted_mean_over_aspects(tmp_path):
    """Hand-set scores through a predictions file and `hardneg evaluate`'s code path."""
    from hardneg.evaluation import evaluate_predictions

    out = build_benchmark("vitatecs", SAMPLE, tmp_path / "out").out
    items = load_items(str(out), "all")
    # the caption wins on every other item, ties on items 1, 5, ... (i % 4 == 1), loses otherwise
    scores = [[1.0, 0.0] if i % 2 == 0 else [0.5, 0.5] if i % 4 == 1 else [0.0, 1.0] for i in range(len(items))]
    meta = predictions_metadata(task="multiple_choice", benchmark="vitatecs", config="all", split="test",
                                data_revision=items.revision, model_id="hand", model_revision="0",
                                frames={"n_frames": 0}, hardneg_version="0")
    pred = tmp_path / "p.parquet"
    atomic_write_parquet(pa.Table.from_pydict({"id": items.ids.tolist(), "scores": scores},
                                              schema=PREDICTIONS_SCHEMA.with_metadata(meta)), pred)
    cat = items.groups["category"]
    for ties, tie_value in (("expected", 0.5), ("pessimistic", 0.0)):
        res = evaluate_predictions(pred, dataset=str(out), ties=ties, n_resamples=0)
        per_item = np.asarray([1.0 if i % 2 == 0 else tie_value if i % 4 == 1 else 0.0 for i in range(len(items))])
        per_aspect = {a: per_item[cat == a].mean() for a in sorted(set(cat.tolist()))}
        assert res["metrics"]["Accuracy"]["value"] == pytest.approx(np.mean(list(per_aspect.values())))
        assert "R@1" not in res["metrics"]  # a 2-way choice is Accuracy, never also R@1 (hardneg.vocabulary)
        for a, v in per_aspect.items():
            assert res["metrics"][f"Accuracy_{a}"]["value"] == pytest.approx(v)
    assert res["metrics"]["Accuracy"]["value"] != pytest.approx(per_item.mean())  # aspects weigh alike, not pairs


# ----------------------------------------------------------------------------- validation


@pytest.mark.parametrize("bad,words", [
    ('{"src_dataset": "MSRVTT", "video_name": "video7010.mp4", "caption": "a man', ["invalid JSON"]),
    ('["MSRVTT", "video7010.mp4"]', ["not a JSON object"]),
    (json.dumps({k: v for k, v in row().items() if k != "counterfactual"}), ["missing ['counterfactual']"]),
    (json.dumps(row(score=1)), ["unexpected ['score']"]),
    (json.dumps(row(caption=7)), ["field 'caption' is int"]),
    (json.dumps(row(aspect="Speed")), ["field 'aspect'", "unknown aspect"]),
    (json.dumps(row(aspect="Type")), ["field 'aspect' is 'Type' in the Direction file"]),
    (json.dumps(row(src="MSVD")), ["field 'src_dataset'", "unknown source dataset"]),
    (json.dumps(row(video="Ab3dEf9hIjk_000012_000022.mp4")), ["field 'video_name'", "not a MSRVTT video name"]),
    (json.dumps(row(src="VATEX", video="video7010.mp4")), ["field 'video_name'", "not a VATEX video name"]),
])
def test_malformed_lines_are_errors_naming_file_line_field_and_fix(raw, tmp_path, bad, words):
    path = raw / "Direction.jsonl"
    lines = path.read_text().splitlines()
    write_lines(path, [lines[0], bad, *lines[1:]])
    with pytest.raises(RawFormatError) as err:
        build_benchmark("vitatecs", raw, tmp_path / "out")
    message = str(err.value)
    assert "Direction.jsonl, row 2" in message and "Fix:" in message
    for w in words:
        assert w in message
    assert not (tmp_path / "out").exists()


def test_bad_bytes_are_named_by_line(raw, tmp_path):
    path = raw / "Sequence.jsonl"
    path.write_bytes(path.read_bytes() + b'{"caption": "caf\xe9"}\n')
    with pytest.raises(RawFormatError, match=r"Sequence.jsonl, row 3: byte 0xe9 .* not UTF-8"):
        build_benchmark("vitatecs", raw, tmp_path / "out")


def test_dubious_pairs_are_dropped_and_duplicates_kept_both_reported(raw, tmp_path):
    path = raw / "Intensity.jsonl"
    lines = path.read_text().splitlines()
    write_lines(path, [*lines,
                       row("Intensity", caption="a dog runs fast", counterfactual="A dog  runs fast"),  # identical
                       row("Intensity", caption="   ", counterfactual="a dog runs slowly"),  # empty
                       lines[0]])  # exact duplicate of line 1
    result = build_benchmark("vitatecs", raw, tmp_path / "out")
    report = result.report
    n = len(lines)
    assert report["counts"]["intensity"] == {"test": n + 1}
    assert report["lines_read"]["Intensity"] == n + 3
    assert report["dropped"]["count"] == 2
    assert [(d["line"], d["reason"].split()[0]) for d in report["dropped"]["pairs"]] == [(n + 1, "counterfactual"), (n + 2, "empty")]
    assert report["duplicate_pairs"] == {"count": 1, "kept": True,
                                         "pairs": [{"file": "Intensity.jsonl", "line": n + 3, "same_as_line": 1}]}
    assert report["per_aspect"]["intensity"]["dropped"] == 2
    card = (result.out / "README.md").read_text()
    assert "2 dropped (empty, or counterfactual identical to the caption); 1 exact duplicate pairs kept" in card
    on_disk = json.loads((result.out / "build_report.json").read_text())
    assert on_disk["dropped"]["count"] == 2 and on_disk["validation"] == report["validation"]


def test_missing_aspect_files_are_reported_and_an_empty_folder_is_an_error(raw, tmp_path):
    (raw / "Sequence.jsonl").unlink()
    result = build_benchmark("vitatecs", raw, tmp_path / "out")
    assert result.report["missing_aspects"] == ["Sequence"] and "sequence" not in result.report["counts"]
    assert "Aspect files missing from the raw folder: Sequence" in (result.out / "README.md").read_text()
    empty = tmp_path / "empty"
    (empty / "data").mkdir(parents=True)
    (empty / "data" / "Direction.jsonl").write_text(json.dumps(row()) + "\n")
    with pytest.raises(FileNotFoundError, match=r"no vitatecs release file found.*data/Direction.jsonl"):
        build_benchmark("vitatecs", empty, tmp_path / "out2")


def test_a_file_with_no_usable_pair_is_an_error(raw, tmp_path):
    write_lines(raw / "Type.jsonl", [row("Type", caption="a cat sits", counterfactual="a cat sits")])
    with pytest.raises(ValueError, match="Type.jsonl: no usable pair"):
        build_benchmark("vitatecs", raw, tmp_path / "out")


# ----------------------------------------------------------------------------- the real release


@pytest.mark.realdata
def test_real_release(realdata, tmp_path, hf_cache):
    datasets = pytest.importorskip("datasets")
    raw = realdata / "vitatecs"
    expected = read_jsonl(raw)
    result = build_benchmark("vitatecs", raw, tmp_path / "vt", strict=True)  # every release file used
    counts = result.report["counts"]
    assert {a: counts[a.lower()]["test"] for a in ASPECTS} == RELEASE_COUNTS
    assert counts["all"]["test"] == 13_838 == sum(RELEASE_COUNTS.values())
    # independent counts of what validation reports
    dup = sum(n - 1 for a in ASPECTS for n in Counter(
        (r["src_dataset"], r["video_name"], r["caption"], r["counterfactual"]) for _, r in expected[a]).values())
    assert result.report["duplicate_pairs"]["count"] == dup and result.report["dropped"]["count"] == 0
    for aspect in ("Sequence", "Direction"):
        ds = datasets.load_dataset(str(result.out), aspect.lower(), split="test", cache_dir=hf_cache)
        rows = expected[aspect]
        assert ds["id"] == [f"{aspect.lower()}:{i}" for i, _ in rows]
        assert [c[0] for c in ds["captions"]] == [r["caption"] for _, r in rows]
        assert [c[1] for c in ds["captions"]] == [r["counterfactual"] for _, r in rows]
        assert ds["video_id"] == [r["video_name"].removesuffix(".mp4") for _, r in rows]
    everything = datasets.load_dataset(str(result.out), "all", split="test", cache_dir=hf_cache)
    assert everything.num_rows == 13_838
    assert everything["captions"] == [[r["caption"], r["counterfactual"]] for a in ASPECTS for _, r in expected[a]]
    assert Counter(everything["source_dataset"]) == Counter(
        r["src_dataset"].lower() for a in ASPECTS for _, r in expected[a])
    items = load_items(str(result.out), "all")
    zeros = np.zeros((len(items), 2))
    assert evaluate_scores(items, zeros, n_resamples=0).value("Accuracy") == 0.5
    assert evaluate_scores(items, zeros, ties="expected", n_resamples=0).value("Accuracy") == 0.5
    assert evaluate_scores(items, zeros, ties="pessimistic", n_resamples=0).value("Accuracy") == 0.0
