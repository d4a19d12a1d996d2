"""Checks the shared build path applies to every table a parser returns, whatever the benchmark.

A parser reads its release with the helpers of `hardneg.datasets.raw_common`, which refuse NUL bytes
in a file's text; a NUL can still arrive through an escape (JSON `\\u0000`) or a parser's own reading.
`check_tables` runs after every parser (`hardneg.datasets.builder.parse_raw`), so a new benchmark's
parser is covered without calling anything:

* no string anywhere in any table (nested lists and structs included) holds a NUL byte;
* every multiple-choice negative type is one the benchmark may carry (the shared ones plus its
  declaration's `negative_types`, passed in).

An error names the raw file and line when it can find the NUL there, the config, split, row, item
id and field, and the fix.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

import pyarrow as pa
import pyarrow.compute as pc

from hardneg.datasets.hub_layout import BenchmarkBuild
from hardneg.datasets.raw_common import RawFormatError

NUL = "\x00"
#: a NUL byte in a file, or the JSON escape that decodes to one
_NUL_IN_FILE = re.compile(rb"\x00|\\u0000", re.IGNORECASE)
_ID_COLUMNS = ("id", "query_id", "video_id")


def _string_leaves(arr: pa.Array) -> Iterator[pa.Array]:
    """Every string array inside `arr` (through lists, structs and dictionaries)."""
    t = arr.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        yield arr
    elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        yield from _string_leaves(arr.flatten())
    elif pa.types.is_struct(t):
        for i in range(t.num_fields):
            yield from _string_leaves(arr.field(i))
    elif pa.types.is_dictionary(t):
        yield from _string_leaves(arr.dictionary)


def _has_nul(column: pa.ChunkedArray) -> bool:
    for chunk in column.chunks:
        for leaf in _string_leaves(chunk):
            if pc.any(pc.match_substring(leaf, NUL)).as_py():
                return True
    return False


def _nul_path(value: Any, where: str) -> str | None:
    """The field path (`captions[2]`, `provenance[1].replacement`) of the first string holding a NUL."""
    if isinstance(value, str):
        return where if NUL in value else None
    if isinstance(value, list):
        for i, v in enumerate(value):
            hit = _nul_path(v, f"{where}[{i}]")
            if hit:
                return hit
    if isinstance(value, dict):
        for k, v in value.items():
            hit = _nul_path(v, f"{where}.{k}")
            if hit:
                return hit
    return None


def _raw_location(raw: Path | None, raw_files: list[str]) -> str | None:
    """'file, line N' of the first NUL byte (or `\\u0000` escape) in the files the parser read."""
    if raw is None:
        return None
    for name in raw_files:
        path = raw / name
        candidates = [path] if path.is_file() else sorted(p for p in raw.rglob(Path(name).name) if p.is_file())
        for p in candidates:
            data = p.read_bytes()
            m = _NUL_IN_FILE.search(data)
            if m:
                line = data.count(b"\n", 0, m.start()) + 1
                return f"{p}, line {line}"
    return None


def _item_id(table: pa.Table, row: int) -> str:
    for name in _ID_COLUMNS:
        if name in table.column_names:
            return f" (item {table.column(name)[row].as_py()!r})"
    return ""


def check_nul(build: BenchmarkBuild, raw: str | Path | None = None) -> None:
    """Refuse a NUL byte in any string of any table of `build`, naming where it is and the fix."""
    raw = Path(raw) if raw is not None else None
    for config in build.configs:
        for split, table in config.splits.items():
            for name in table.column_names:
                column = table.column(name)
                if not _has_nul(column):
                    continue
                for row, value in enumerate(column.to_pylist()):
                    field = _nul_path(value, name)
                    if field:
                        break
                else:  # detected in a leaf the row values do not show (e.g. an unused dictionary entry)
                    row, field = 0, name
                found = _raw_location(raw, build.raw_files)
                source = found or f"{raw or 'the raw folder'} (one of: {', '.join(build.raw_files) or 'its files'})"
                raise RawFormatError(
                    source,
                    f"a NUL byte in field '{field}' of config {config.name!r}, split {split!r}, row {row}"
                    f"{_item_id(table, row)} of the {build.benchmark} build",
                    "a NUL byte (or the JSON escape \\u0000) in a caption or id means a damaged release file: "
                    "remove it from the raw file, or re-download the release",
                )


def check_negative_types(build: BenchmarkBuild) -> None:
    """Every multiple-choice item's negative types are ones this benchmark may carry (`build.negative_types`)."""
    known = set(build.negative_types)
    for config in build.configs:
        for split, table in config.splits.items():
            if "negative_types" not in table.column_names:
                continue
            values = pc.list_flatten(table.column("negative_types"))
            unknown = sorted(set(pc.unique(values).to_pylist()) - known - {None})
            if not unknown:
                continue
            row = next(i for i, types in enumerate(table.column("negative_types").to_pylist()) if set(types or ()) & set(unknown))
            raise ValueError(
                f"{build.benchmark}: config {config.name!r}, split {split!r}, row {row}{_item_id(table, row)}: "
                f"negative type {unknown[0]!r} is unknown. Fix: use one of {list(build.negative_types)}, "
                "or add the type to the declaration's negative_types"
            )


def check_tables(build: BenchmarkBuild, raw: str | Path | None = None) -> None:
    """The checks every parser's output gets (see the module docstring)."""
    check_nul(build, raw)
    check_negative_types(build)


__all__ = ["check_negative_types", "check_nul", "check_tables"]
