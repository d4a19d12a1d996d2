"""Deterministic bytes, the card's YAML, no silent overwrite, and nothing left by a failed build."""

from __future__ import annotations

import hashlib

import pytest
import yaml

from hardneg.datasets import build_benchmark, build_samples, sample_raw_dir
from hardneg.datasets import hub_layout
from hardneg.io import OutputExistsError


def _digest(folder):
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name", ["feint6k", "contrast_sets", "posrank", "fire"])
def test_same_input_gives_identical_bytes(name, tmp_path):
    a = build_benchmark(name, sample_raw_dir(name), tmp_path / "a").out
    b = build_benchmark(name, sample_raw_dir(name), tmp_path / "b").out
    da, db = _digest(a), _digest(b)
    assert da == db
    assert any(name.endswith(".parquet") for name in da)


def test_card_yaml_names_every_split_file(tmp_path):
    out = build_benchmark("posrank", sample_raw_dir("posrank"), tmp_path / "out").out
    text = (out / "README.md").read_text()
    assert text.startswith("---\n")
    meta = yaml.safe_load(text.split("---\n")[1])
    assert meta["license"] == "unknown"
    (config,) = meta["configs"]
    assert config["config_name"] == "vln_uvo" and config["default"] is True
    for entry in config["data_files"]:
        assert (out / entry["path"]).is_file()
    assert [s["split"] for s in config["data_files"]] == ["test"]  # parts of speech live in `category`
    info = meta["dataset_info"][0]
    assert [f["name"] for f in info["features"]][:3] == ["id", "video_id", "source_dataset"]
    assert {s["name"]: s["num_examples"] for s in info["splits"]} == {"test": 5}
    assert 'load_dataset("video-hardneg/posrank", "vln_uvo"' in text
    assert "@inproceedings{chen2024beyond" in text


def test_existing_output_needs_overwrite(tmp_path):
    out = tmp_path / "out"
    build_benchmark("feint6k", sample_raw_dir("feint6k"), out)
    marker = out / "msrvtt" / "test-00000-of-00001.parquet"
    before = marker.read_bytes()
    with pytest.raises(OutputExistsError, match="--overwrite"):
        build_benchmark("feint6k", sample_raw_dir("feint6k"), out)
    assert marker.read_bytes() == before
    build_benchmark("feint6k", sample_raw_dir("feint6k"), out, overwrite=True)
    assert marker.read_bytes() == before


def test_failure_while_writing_leaves_old_output_and_no_temp(tmp_path, monkeypatch):
    out = tmp_path / "out"
    build_benchmark("contrast_sets", sample_raw_dir("contrast_sets"), out)
    before = _digest(out)

    calls = {"n": 0}
    real = hub_layout.parquet_bytes

    def flaky(table):
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError("disk full")
        return real(table)

    monkeypatch.setattr(hub_layout, "parquet_bytes", flaky)
    with pytest.raises(OSError, match="disk full"):
        build_benchmark("contrast_sets", sample_raw_dir("contrast_sets"), out, overwrite=True)
    assert _digest(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_failure_inside_the_output_folder_leaves_nothing(tmp_path, monkeypatch):
    out = tmp_path / "new"
    real_write = hub_layout.write_blob
    seen = {"n": 0}

    def failing_write(path, data):
        seen["n"] += 1
        if seen["n"] == 3:
            raise OSError("interrupted")
        return real_write(path, data)

    monkeypatch.setattr(hub_layout, "write_blob", failing_write)
    with pytest.raises(OSError, match="interrupted"):
        build_benchmark("fire", sample_raw_dir("fire"), out)
    assert seen["n"] == 3  # two files were written inside the temporary folder before the failure
    assert list(tmp_path.iterdir()) == []


def test_build_samples_builds_every_declared_sample(tmp_path):
    from hardneg import benchmarks

    outs = build_samples(tmp_path / "samples")
    assert sorted(outs) == sorted(n for n, b in benchmarks.all_benchmarks().items() if b.sample)
    assert {"contrast_sets", "feint6k", "fire", "posrank"} <= set(outs)
    for folder in outs.values():
        assert (folder / "README.md").is_file() and (folder / "build_report.json").is_file()


@pytest.mark.parametrize("name", ["feint6k", "contrast_sets", "posrank", "fire"])
def test_every_config_in_the_card_loads_offline(name, tmp_path, hf_cache):
    datasets = pytest.importorskip("datasets")
    out = build_benchmark(name, sample_raw_dir(name), tmp_path / name).out
    meta = yaml.safe_load((out / "README.md").read_text().split("---\n")[1])
    report = __import__("json").loads((out / "build_report.json").read_text())
    for config in meta["configs"]:
        ds = datasets.load_dataset(str(out), config["config_name"], cache_dir=hf_cache)
        assert {s: d.num_rows for s, d in ds.items()} == report["counts"][config["config_name"]]


def test_output_may_not_replace_the_raw_folder(tmp_path, rawfmt):
    raw = tmp_path / "data" / "raw"
    rawfmt.write_csv(raw / "feint6k_msrvtt.csv", ["video_id", "sentence"], rawfmt.feint6k_rows(1))
    for out in (raw, tmp_path / "data"):
        with pytest.raises(ValueError, match="would replace the raw files"):
            build_benchmark("feint6k", raw, out, overwrite=True)
    assert (raw / "feint6k_msrvtt.csv").is_file()
