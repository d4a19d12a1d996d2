"""`hardneg build` end to end, the built-in samples and their video lists, and the video coverage report."""

from __future__ import annotations

import json

import pytest

from hardneg.cli import main
from hardneg.datasets import build_benchmark, sample_benchmarks, sample_raw_dir, sample_video_ids
from hardneg.datasets.videos import coverage_report, resolve_videos, video_ids_of_folder


def test_cli_builds_and_refuses_overwrite(tmp_path, capsys):
    out = tmp_path / "feint6k"
    assert main(["build", "feint6k", "--sample", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "msrvtt/test: 5 rows" in printed and "vatex/test: 4 rows" in printed
    assert main(["build", "feint6k", "--sample", "--out", str(out)]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert main(["build", "feint6k", "--sample", "--out", str(out), "--overwrite"]) == 0


def test_cli_reports_raw_errors_with_exit_code_2(tmp_path, rawfmt, capsys):
    rows = rawfmt.feint6k_rows(1)[:5]
    rawfmt.write_csv(tmp_path / "raw" / "feint6k_msrvtt.csv", ["video_id", "sentence"], rows)
    assert main(["build", "feint6k", "--raw", str(tmp_path / "raw"), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert err.startswith("hardneg build: error: ") and "feint6k_msrvtt.csv" in err and "Fix:" in err
    assert not (tmp_path / "out").exists()


def test_cli_push_goes_through_push_folder(tmp_path, monkeypatch, capsys):
    sent = {}

    def fake_push(folder, repo_id, **kwargs):
        sent.update(folder=folder, repo_id=repo_id, **kwargs)
        return type("Info", (), {"oid": "abc123"})()

    monkeypatch.setattr("hardneg.datasets.push.push_folder", fake_push)
    out = tmp_path / "cs"
    assert main(["build", "contrast_sets", "--sample", "--out", str(out), "--push", "me/cs", "--private"]) == 0
    assert sent["repo_id"] == "me/cs" and sent["private"] is True and sent["folder"] == out
    assert "abc123" in capsys.readouterr().out


def test_cli_push_failure_is_a_clear_error_and_keeps_the_build(tmp_path, monkeypatch, capsys):
    def failing_push(folder, repo_id, **kwargs):
        raise ConnectionError("Hub unreachable")

    monkeypatch.setattr("hardneg.datasets.push.push_folder", failing_push)
    out = tmp_path / "pr"
    assert main(["build", "posrank", "--sample", "--out", str(out), "--push", "me/pr"]) == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert "upload to me/pr failed" in err and "Hub unreachable" in err and "--token" in err
    assert (out / "README.md").is_file()


def test_cli_help_explains_raw_formats(capsys):
    with pytest.raises(SystemExit):
        main(["build", "--help"])
    text = capsys.readouterr().out
    assert "feint6k_msrvtt.csv" in text and "--overwrite" in text and "--push" in text


@pytest.mark.parametrize("name", sample_benchmarks())
def test_sample_videos_txt_lists_exactly_the_referenced_videos(name, tmp_path):
    out = build_benchmark(name, sample_raw_dir(name), tmp_path / name).out
    assert sorted(sample_video_ids(name)) == video_ids_of_folder(out)


def test_coverage_report_counts_missing_videos(tmp_path):
    folder = tmp_path / "videos"
    (folder / "sub").mkdir(parents=True)
    (folder / "video7010.mp4").write_bytes(b"x")
    (folder / "sub" / "video7011.webm").write_bytes(b"x")
    (folder / "notes.txt").write_text("not a video")
    ids = ["video7010", "video7011", "video7012", "video7010"]
    resolved = resolve_videos(ids, folder)
    assert resolved == {"video7010": folder / "video7010.mp4", "video7011": folder / "sub" / "video7011.webm", "video7012": None}
    cov = coverage_report(ids, folder)
    assert (cov["n_videos"], cov["n_found"], cov["missing"]) == (3, 2, ["video7012"])
    assert cov["coverage"] == pytest.approx(2 / 3)
    with pytest.raises(FileNotFoundError, match="video folder"):
        coverage_report(ids, tmp_path / "none")


def test_build_with_videos_records_coverage(tmp_path):
    folder = tmp_path / "videos"
    folder.mkdir()
    for vid in sample_video_ids("feint6k")[:3]:
        (folder / f"{vid}.mp4").write_bytes(b"x")
    result = build_benchmark("feint6k", sample_raw_dir("feint6k"), tmp_path / "out", videos=folder)
    cov = json.loads((result.out / "build_report.json").read_text())["video_coverage"]
    assert (cov["n_videos"], cov["n_found"], cov["n_missing"]) == (9, 3, 6)
