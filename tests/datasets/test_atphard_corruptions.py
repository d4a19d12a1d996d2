"""Three ATP-Hard corruptions that got misleading messages (issue 36 M10), each now named for what it is:
a QA file (nextqa-atphard.csv) with its header only was reported as the first statement's question "not in"
it; a QA file cut mid-row built silently (its last row's answer text lost); a release file whose header was
damaged was reported as not found, though it is there under its own name."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hardneg.datasets import build_benchmark
from hardneg.datasets.raw_common import RawFormatError
from hardneg.datasets.samples import sample_raw_dir

STATEMENTS, QA = "nextqa-atphard-statements.csv", "nextqa-atphard.csv"


def _raw(tmp_path: Path) -> Path:
    return Path(shutil.copytree(sample_raw_dir("videocon-atphard"), tmp_path / "raw"))


def _refused(raw: Path, tmp_path: Path, *expected: str) -> str:
    with pytest.raises(RawFormatError) as err:
        build_benchmark("videocon-atphard", raw, tmp_path / "out")
    msg = str(err.value)
    for text in expected:
        assert text in msg, msg
    assert not (tmp_path / "out").exists()
    return msg


def test_a_qa_file_with_its_header_only(tmp_path):
    raw = _raw(tmp_path)
    (raw / QA).write_text((raw / QA).read_text().splitlines()[0] + "\n")
    msg = _refused(raw, tmp_path, QA, "header but no question", "download nextqa-atphard.csv again")
    assert "is not in" not in msg


@pytest.mark.parametrize("cut", [3, 7, 40])
def test_a_truncated_qa_file(tmp_path, cut):
    raw = _raw(tmp_path)
    (raw / QA).write_bytes((raw / QA).read_bytes()[:-cut])
    _refused(raw, tmp_path, QA, "truncated", "download nextqa-atphard.csv again")


@pytest.mark.parametrize("name,old,new", [(STATEMENTS, "vid_id", "video_id"), (QA, "qid", "q_id")])
def test_a_release_file_with_a_damaged_header_is_named_not_missing(tmp_path, name, old, new):
    raw = _raw(tmp_path)
    path = raw / name
    path.write_text(path.read_text().replace(old, new, 1))
    msg = _refused(raw, tmp_path, name, "its header is", new, f"download {name} again")
    assert "but not" not in msg
