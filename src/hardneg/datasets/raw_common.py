"""Shared checks for the authors' raw files: every error names the file, the row and the fix.

The raw parsers (`raw_feint6k`, `raw_contrast_sets`, `raw_posrank`, `raw_fire`) read
everything through these helpers, so that a bad release fails the same way before
any output is written.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any, Iterable, Iterator

import pyarrow as pa

from hardneg.schema import MC_ITEM_SCHEMA, NEGATIVE_TYPES, PROVENANCE_TYPE

#: Marks a raw caption that no generator made (the authors' files carry no per-negative record).
AUTHORS_RELEASE = "authors-release"


class RawFormatError(ValueError):
    """A raw release file is malformed; the message names the file, the row and the fix."""

    def __init__(self, path: str | Path, problem: str, fix: str, row: int | str | None = None):
        where = f"{path}" if row is None else f"{path}, row {row}"
        super().__init__(f"{where}: {problem}. Fix: {fix}")
        self.path = str(path)
        self.row = row


def read_delimited(path: Path, delimiter: str, required: Iterable[str], optional: Iterable[str] = ()) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield (row number, row) of a CSV/TSV after checking its header.

    Row numbers count the header as row 1, as a spreadsheet shows them.
    """
    required = list(required)
    allowed = set(required) | set(optional)
    with open(path, newline="", encoding="utf-8-sig") as fh:  # -sig: tolerate a spreadsheet's BOM
        reader = csv.reader(fh, delimiter=delimiter, quoting=csv.QUOTE_MINIMAL if delimiter == "," else csv.QUOTE_NONE)
        try:
            header = next(reader)
        except StopIteration:
            raise RawFormatError(path, "the file is empty", "re-download the file; it should start with a header line") from None
        header = [h.strip() for h in header]
        missing = [c for c in required if c not in header]
        extra = [c for c in header if c not in allowed]
        if missing or extra:
            raise RawFormatError(
                path,
                f"wrong columns {header}: missing {missing}, unexpected {extra}",
                f"the header must be {required + [c for c in optional if c in header]} "
                f"({'tab' if delimiter == chr(9) else 'comma'}-separated)",
                row=1,
            )
        for i, values in enumerate(reader, start=2):
            if not values or (len(values) == 1 and not values[0].strip()):
                continue  # blank line (e.g. at the end of the file)
            if len(values) != len(header):
                raise RawFormatError(
                    path,
                    f"{len(values)} fields where the header has {len(header)}",
                    "check for a truncated line or a stray delimiter inside a caption",
                    row=i,
                )
            yield i, dict(zip(header, values))


def parse_int(value: str, path: Path, row: int, column: str, low: int, high: int) -> int:
    """An integer column in [low, high], or an error naming the cell."""
    try:
        number = int(value.strip())
    except ValueError:
        raise RawFormatError(path, f"column '{column}' is {value!r}, not an integer", f"write an integer in {low}..{high}", row) from None
    if not low <= number <= high:
        raise RawFormatError(path, f"column '{column}' is {number}, out of range {low}..{high}", f"use an index in {low}..{high}", row)
    return number


def _no_duplicate_keys(path: Path):
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise RawFormatError(path, f"duplicate key {key!r}", "keep one entry per key (the file was probably concatenated twice)", row=key)
            out[key] = value
        return out

    return hook


def load_json_strict(path: Path, check_duplicate_keys: bool = True) -> Any:
    """json.load that names truncation and (optionally) duplicate keys instead of silently keeping the last one."""
    text = path.read_text(encoding="utf-8")
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys(path) if check_duplicate_keys else None)
    except json.JSONDecodeError as exc:
        truncated = exc.pos >= len(text.rstrip()) - 1
        problem = f"invalid JSON at line {exc.lineno}, column {exc.colno} ({exc.msg})"
        if truncated:
            problem += "; the file ends early, it looks truncated"
        raise RawFormatError(path, problem, "re-download the file from the authors' release", row=exc.lineno) from None


def provenance(
    origin: str,
    *,
    generator: str | None = None,
    generator_version: str | None = None,
    rule: str | None = None,
    pos: str | None = None,
    span: str | None = None,
    replacement: str | None = None,
    seed: int | None = None,
    details: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One PROVENANCE_TYPE record; `details` is stored as sorted JSON so bytes are stable."""
    return {
        "origin": origin,
        "generator": generator,
        "generator_version": generator_version,
        "rule": rule,
        "pos": pos,
        "span": span,
        "replacement": replacement,
        "seed": seed,
        "details": None if details is None else json.dumps(details, sort_keys=True, ensure_ascii=False),
    }


_WORDS = re.compile(r"\w+(?:['’]\w+)*|[^\w\s]")


def single_word_diff(positive: str, negative: str) -> tuple[str | None, str | None]:
    """The (source span, replacement) where two captions differ, if they differ in one contiguous run of words.

    Punctuation is its own token, so "backward," vs "forward," gives ("backward", "forward").
    """
    a, b = _WORDS.findall(positive), _WORDS.findall(negative)
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end_a, end_b = len(a), len(b)
    while end_a > start and end_b > start and a[end_a - 1] == b[end_b - 1]:
        end_a -= 1
        end_b -= 1
    if start == end_a and start == end_b:
        return None, None
    return " ".join(a[start:end_a]), " ".join(b[start:end_b])


def check_mc_row(row: dict[str, Any], path: Path | str, where: int | str) -> None:
    """Check one multiple-choice item against the MC_ITEM_SCHEMA rules."""
    captions = row.get("captions") or []
    n = len(captions)
    if n < 2:
        raise RawFormatError(path, f"item {row.get('id')!r} has {n} captions", "an item needs the positive and at least one negative", where)
    for j, caption in enumerate(captions):
        if not isinstance(caption, str) or not caption.strip():
            raise RawFormatError(path, f"item {row.get('id')!r}: caption {j} is missing or empty", "fill in the caption or drop the item", where)
    label = row.get("label")
    if not isinstance(label, int) or isinstance(label, bool) or not 0 <= label < n:
        raise RawFormatError(path, f"item {row.get('id')!r}: label {label!r} out of range 0..{n - 1}", "label is the index of the positive caption", where)
    for column in ("negative_types", "provenance"):
        if len(row.get(column) or []) != n:
            raise RawFormatError(path, f"item {row.get('id')!r}: {len(row.get(column) or [])} {column} for {n} captions", f"give one {column} entry per caption", where)
    for j, kind in enumerate(row["negative_types"]):
        if kind not in NEGATIVE_TYPES:
            raise RawFormatError(path, f"item {row.get('id')!r}: negative type {kind!r} of caption {j} is unknown", f"use one of {list(NEGATIVE_TYPES)}", where)
    if row["negative_types"][label] != "positive":
        raise RawFormatError(path, f"item {row.get('id')!r}: caption {label} is the label but its type is {row['negative_types'][label]!r}", "the labelled caption must have type 'positive'", where)
    if not row.get("id") or not row.get("video_id"):
        raise RawFormatError(path, "item without an id or a video_id", "every item needs an id and a video id", where)


def mc_table(rows: list[dict[str, Any]], path: Path | str, where: list[int | str] | None = None) -> pa.Table:
    """Check rows (unique ids, one schema) and make the MC_ITEM_SCHEMA table, in the given order."""
    seen: dict[str, int | str] = {}
    for i, row in enumerate(rows):
        at = where[i] if where else i
        check_mc_row(row, path, at)
        if row["id"] in seen:
            raise RawFormatError(path, f"duplicate id {row['id']!r} (first at row {seen[row['id']]})", "ids must be unique within a config; remove the repeated item", at)
        seen[row["id"]] = at
    columns = {f.name: [r.get(f.name) for r in rows] for f in MC_ITEM_SCHEMA}
    return pa.Table.from_pydict(columns, schema=MC_ITEM_SCHEMA)


__all__ = [
    "AUTHORS_RELEASE",
    "PROVENANCE_TYPE",
    "RawFormatError",
    "check_mc_row",
    "load_json_strict",
    "mc_table",
    "parse_int",
    "provenance",
    "read_delimited",
    "single_word_diff",
]
