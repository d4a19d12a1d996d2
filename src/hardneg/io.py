"""Atomic, never-silently-overwriting file output shared by every writer in the package.

A crash mid-write must leave either the old file or the new one, never half of
one; an existing result is replaced only when the caller says so.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

import pyarrow as pa
import pyarrow.parquet as pq


class OutputExistsError(FileExistsError):
    """Raised instead of overwriting an existing result."""


def refuse_overwrite(path: str | os.PathLike, overwrite: bool, flag: str = "--overwrite") -> None:
    """Raise OutputExistsError when `path` exists and overwriting was not asked for."""
    p = Path(path)
    if p.exists() and not overwrite:
        raise OutputExistsError(f"{p} already exists; pass {flag} to replace it, or choose another path")


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write `data` to `path` via a temporary file in the same folder and an atomic rename."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(p.parent)
    return p


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_parquet(table: pa.Table, path: str | os.PathLike, **kwargs) -> Path:
    """Write a Parquet file atomically (deterministic: no created-by timestamps differ)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    os.close(fd)
    try:
        pq.write_table(table, tmp, **kwargs)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(p.parent)
    return p


@contextlib.contextmanager
def atomic_directory(out: str | os.PathLike, overwrite: bool = False) -> Iterator[Path]:
    """Build a whole output folder in a sibling temporary folder, then move it into place.

    A failure inside the block leaves no trace of the new output and the old one untouched.
    """
    out = Path(out)
    refuse_overwrite(out, overwrite)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        yield tmp
        if out.exists():
            backup = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".old", dir=out.parent))
            backup.rmdir()
            os.replace(out, backup)
            os.replace(tmp, out)
            shutil.rmtree(backup, ignore_errors=True)
        else:
            os.replace(tmp, out)
        _fsync_dir(out.parent)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
