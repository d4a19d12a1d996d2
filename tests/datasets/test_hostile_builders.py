"""Builders against damaged release files (issue 29): refused with a message that says what is wrong with the file
that is there, never "no release file found" for a file that is there, and never a silent build."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hardneg.datasets import build_benchmark
from hardneg.datasets.raw_common import RawFormatError
from hardneg.datasets.samples import sample_raw_dir

GARBAGE = {"text": b"garbage header\n1,2,3\n", "binary": bytes(range(1, 256)) * 4}
#: each benchmark's sample release files (the files a build reads; helper files such as videos.txt are not)
RELEASE_FILES = [("feint6k", None), ("contrast_sets", None), ("posrank", None), ("fire", "fire_sample.json"),
                 ("vitatecs", None), ("videocon-ssv2", "eval_ssv2_temporal.csv"), ("vilma", None),
                 ("videocon-atphard", "nextqa-atphard-statements.csv"), ("videocon-atphard", "nextqa-atphard.csv"),
                 ("tempcompass", "caption_matching.json")]


def copy_sample(name: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(sample_raw_dir(name), tmp_path / "raw"))


def release_files(name: str, only: str | None, raw: Path) -> list[Path]:
    files = sorted(p for p in raw.rglob("*") if p.is_file() and p.name != "videos.txt"
                   and "scores" not in p.name and not p.name.startswith("auto_eval_results"))
    return [p for p in files if only is None or p.name == only]


@pytest.mark.parametrize("kind", list(GARBAGE))
@pytest.mark.parametrize("name,only", RELEASE_FILES)
def test_a_damaged_release_file_is_named_not_missing(name, only, kind, tmp_path):
    raw = copy_sample(name, tmp_path)
    targets = release_files(name, only, raw)
    assert targets
    for target in targets:
        for p in targets:  # every release file damaged: nothing can be built
            p.write_bytes(GARBAGE[kind])
        with pytest.raises((RawFormatError, ValueError, FileNotFoundError)) as err:
            build_benchmark(name, raw, tmp_path / "out")
        msg = str(err.value)
        assert "release file found" not in msg, msg
        assert any(p.name in msg for p in targets), msg
        assert not (tmp_path / "out").exists()


def test_only_unrelated_files_still_say_not_found(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "notes.md").write_text("hello")
    with pytest.raises(FileNotFoundError, match="no tempcompass release file found"):
        build_benchmark("tempcompass", raw, tmp_path / "out")


def test_atphard_header_only_is_refused(tmp_path):
    raw = copy_sample("videocon-atphard", tmp_path)
    path = raw / "nextqa-atphard-statements.csv"
    path.write_text(path.read_text().splitlines()[0] + "\n")
    with pytest.raises(RawFormatError, match="header but no question"):
        build_benchmark("videocon-atphard", raw, tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("cut", [7, 40, 200])
def test_atphard_truncated_statements_are_refused(tmp_path, cut):
    raw = copy_sample("videocon-atphard", tmp_path)
    path = raw / "nextqa-atphard-statements.csv"
    data = path.read_bytes()
    path.write_bytes(data[:-cut])
    with pytest.raises(RawFormatError, match="truncated"):
        build_benchmark("videocon-atphard", raw, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_tempcompass_nul_in_an_instruction_line_is_refused(tmp_path):
    raw = copy_sample("tempcompass", tmp_path)
    path = raw / "caption_matching.json"
    data = json.loads(path.read_text())
    video = next(iter(data))
    aspect = next(iter(data[video]))
    q = data[video][aspect][0]["question"]
    data[video][aspect][0]["question"] = "Which caption\u0000 matches" + q[q.index("\n"):]
    path.write_text(json.dumps(data))
    with pytest.raises(RawFormatError, match="NUL character") as err:
        build_benchmark("tempcompass", raw, tmp_path / "out")
    assert "'question'" in str(err.value) and "Which caption" in str(err.value)


def test_mixed_line_endings_in_ssv2_are_refused_with_a_message_about_line_endings(tmp_path):
    """CRLF inside the prompts but one LF line break: not a CRLF copy of the release (which reads as the release
    itself, tests/datasets/test_crlf_release.py), so the prompts cannot be trusted byte for byte."""
    raw = copy_sample("videocon-ssv2", tmp_path)
    path = raw / "eval_ssv2_temporal.csv"
    path.write_bytes(path.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n").rstrip(b"\r\n") + b"\n")
    with pytest.raises(RawFormatError, match="line endings") as err:
        build_benchmark("videocon-ssv2", raw, tmp_path / "out")
    assert "CRLF" in str(err.value) and "dos2unix" in str(err.value)


def test_the_real_atphard_and_ssv2_files_still_build(realdata, tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    for name in ("nextqa-atphard-statements.csv", "nextqa-atphard.csv"):
        (raw / name).symlink_to(realdata / "videocon" / name)
    result = build_benchmark("videocon-atphard", raw, tmp_path / "out")
    assert result.report["counts"]["atp-hard"]["test"] == 1846  # the release: 1,846 questions
