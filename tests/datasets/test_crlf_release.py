"""A CRLF copy of a release (a Windows checkout, a spreadsheet's save: every line break \\r\\n) is read as the same
file (issue 36 M12: a valid SSv2 copy was refused, its prompts' inner line breaks being CRLF too): every
benchmark's sample, its text files converted to CRLF, builds byte for byte what the original builds."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hardneg import benchmarks
from hardneg.datasets import build_benchmark
from hardneg.datasets.samples import sample_raw_dir

TEXT = {".csv", ".tsv", ".json", ".jsonl", ".txt"}
WITH_SAMPLES = [n for n, b in benchmarks.all_benchmarks().items() if b.sample]


def _built(raw: Path, name: str, out: Path) -> dict[str, bytes]:
    build_benchmark(name, raw, out)
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name", WITH_SAMPLES)
def test_a_crlf_copy_of_a_release_builds_the_same_dataset(name, tmp_path):
    lf = Path(shutil.copytree(sample_raw_dir(name), tmp_path / "lf" / "raw"))
    crlf = Path(shutil.copytree(sample_raw_dir(name), tmp_path / "crlf" / "raw"))
    converted = 0
    for p in crlf.rglob("*"):
        if p.is_file() and p.suffix in TEXT:
            data = p.read_bytes().replace(b"\r\n", b"\n")
            if b"\n" in data:
                p.write_bytes(data.replace(b"\n", b"\r\n"))
                converted += 1
    assert converted
    want = _built(lf, name, tmp_path / "lf" / "out")
    got = _built(crlf, name, tmp_path / "crlf" / "out")
    assert sorted(got) == sorted(want)
    assert [k for k in want if got[k] != want[k]] == []
