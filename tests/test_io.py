"""Atomic output: a failure leaves the old result, and nothing is overwritten unasked."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hardneg.io import (
    OutputExistsError,
    atomic_directory,
    atomic_write_parquet,
    atomic_write_text,
    refuse_overwrite,
)


def test_atomic_write_text_replaces_whole_file(tmp_path):
    p = tmp_path / "a" / "result.json"
    atomic_write_text(p, "old")
    atomic_write_text(p, "new")
    assert p.read_text() == "new"
    assert [f.name for f in p.parent.iterdir()] == ["result.json"]  # no temp files left


def test_atomic_write_parquet_roundtrip(tmp_path):
    table = pa.table({"id": ["a", "b"], "x": [1, 2]})
    p = atomic_write_parquet(table, tmp_path / "t.parquet")
    assert pq.read_table(p).equals(table)


def test_refuse_overwrite_names_flag(tmp_path):
    p = tmp_path / "out"
    p.mkdir()
    with pytest.raises(OutputExistsError, match="--overwrite"):
        refuse_overwrite(p, overwrite=False)
    refuse_overwrite(p, overwrite=True)


def test_atomic_directory_failure_keeps_old_output(tmp_path):
    out = tmp_path / "built"
    with atomic_directory(out) as tmp:
        (tmp / "data.txt").write_text("v1")
    with pytest.raises(RuntimeError):
        with atomic_directory(out, overwrite=True) as tmp:
            (tmp / "data.txt").write_text("half")
            raise RuntimeError("crash mid-build")
    assert (out / "data.txt").read_text() == "v1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["built"]


def test_atomic_directory_refuses_existing_without_overwrite(tmp_path):
    out = tmp_path / "built"
    out.mkdir()
    (out / "keep.txt").write_text("keep")
    with pytest.raises(OutputExistsError):
        with atomic_directory(out):
            pass
    assert (out / "keep.txt").read_text() == "keep"


def test_atomic_directory_overwrite_replaces(tmp_path):
    out = tmp_path / "built"
    with atomic_directory(out) as tmp:
        (tmp / "old.txt").write_text("1")
    with atomic_directory(out, overwrite=True) as tmp:
        (tmp / "new.txt").write_text("2")
    assert sorted(p.name for p in out.iterdir()) == ["new.txt"]


def test_parquet_outputs_get_normal_file_modes(tmp_path):
    """Predictions Parquet files get 0666 less the umask, like any plain file (mkstemp would give 0600)."""
    import os

    import pyarrow as pa

    from hardneg.io import atomic_write_parquet

    old = os.umask(0o022)
    try:
        path = atomic_write_parquet(pa.table({"a": [1]}), tmp_path / "p.parquet")
    finally:
        os.umask(old)
    assert os.stat(path).st_mode & 0o777 == 0o644
