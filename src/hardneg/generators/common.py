"""Pieces every generator shares: per-caption random streams, provenance records, MC rows.

Determinism rule: every random choice for a caption comes from a stream seeded by
``sha256(seed, generator, caption id, purpose)``, so the output depends only on
(input, seed), never on batch boundaries, worker count or Python's ``hash()``.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any, Iterable, Mapping

from hardneg.schema import MC_ITEM_SCHEMA

MC_COLUMNS = tuple(MC_ITEM_SCHEMA.names)
#: Extra output column: the input caption's id, so a batch runner can match outputs to inputs.
SOURCE_ID = "source_id"


def caption_rng(seed: int, generator: str, caption_id: str, purpose: str = "") -> random.Random:
    """A random stream private to one caption (and purpose) under one seed."""
    key = f"{int(seed)}\x1f{generator}\x1f{caption_id}\x1f{purpose}".encode("utf-8")
    return random.Random(int.from_bytes(hashlib.sha256(key).digest()[:8], "big"))


def _round_floats(value: Any) -> Any:
    if isinstance(value, float):
        return float(f"{value:.6g}")
    if isinstance(value, dict):
        return {k: _round_floats(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_round_floats(v) for v in value]
    return value


def details_json(details: Mapping[str, Any] | None) -> str | None:
    """Canonical JSON of a record's details (sorted keys, floats to 6 significant digits)."""
    if not details:
        return None
    if any(isinstance(v, (float, dict, list, tuple)) for v in details.values()):
        details = _round_floats(dict(details))
    return json.dumps(details, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def positive_record() -> dict[str, Any]:
    return {
        "origin": "positive", "generator": None, "generator_version": None, "rule": None,
        "pos": None, "span": None, "replacement": None, "seed": None, "details": None,
        "span_start": None, "span_end": None,
    }


def negative_record(
    generator: str, version: str, rule: str, *, pos: str | None, span: str | None,
    replacement: str | None, seed: int, details: Mapping[str, Any] | str | None = None,
    span_start: int | None = None, span_end: int | None = None,
) -> dict[str, Any]:
    """One `hardneg.schema.PROVENANCE_TYPE` value for a generated negative (`details`: a mapping, or
    its `details_json` text already written by a generator's fast path).

    `span` must be ``positive[span_start:span_end]`` and `replacement` the text that stands in its
    place, so that ``positive[:span_start] + replacement + positive[span_end:] == negative``
    (`edit_region` computes all three from a list of edits)."""
    return {
        "origin": "generator", "generator": generator, "generator_version": version, "rule": rule,
        "pos": pos, "span": span, "replacement": replacement, "seed": int(seed),
        "details": details if isinstance(details, str) else details_json(details),
        "span_start": span_start, "span_end": span_end,
    }


def edit_region(text: str, edits: Iterable[tuple[int, int, str]]) -> tuple[str, int, int, str, str]:
    """Apply non-overlapping character edits ``(start, end, new_text)`` to `text`.

    Returns ``(new_text, span_start, span_end, span, replacement)``: the one region of `text` from
    the first edit's start to the last edit's end, and what stands there afterwards, so that
    ``text[:span_start] + replacement + text[span_end:] == new_text`` (the region covers the
    unchanged text between edits too, e.g. 'man ... his' -> 'woman ... her')."""
    ordered = sorted(edits)
    if not ordered:
        raise ValueError("edit_region needs at least one edit")
    for (s0, e0, _), (s1, _, _) in zip(ordered, ordered[1:]):
        if s1 < e0:
            raise ValueError(f"overlapping edits at characters {s0}-{e0} and {s1}")
    start, end = ordered[0][0], ordered[-1][1]
    parts, pos = [], start
    for s, e, new in ordered:
        parts.append(text[pos:s])
        parts.append(new)
        pos = e
    replacement = "".join(parts)
    return text[:start] + replacement + text[end:], start, end, text[start:end], replacement


def check_span(positive: str, negative: str, record: Mapping[str, Any]) -> None:
    """Raise AssertionError unless `record`'s offsets rebuild `negative` from `positive` exactly."""
    s, e = record.get("span_start"), record.get("span_end")
    if s is None or e is None:
        raise AssertionError(f"no span offsets in {dict(record)}")
    if positive[s:e] != record["span"]:
        raise AssertionError(f"span {record['span']!r} is not positive[{s}:{e}] = {positive[s:e]!r}")
    rebuilt = positive[:s] + record["replacement"] + positive[e:]
    if rebuilt != negative:
        raise AssertionError(f"positive[:{s}] + {record['replacement']!r} + positive[{e}:] = {rebuilt!r} != {negative!r}")


# ------------------------------------------------------------------ caption files
#: Separator of the PoSRank release caption files: ``<key>**#**<caption>`` (e.g. VLN-UVO ``captions.txt``).
CAPTION_KEY_SEPARATOR = "**#**"


def split_caption_line(line: str) -> tuple[str | None, str]:
    """``'<key>**#**<caption>'`` -> (key, caption); a plain line -> (None, line). Both stripped."""
    key, sep, caption = line.partition(CAPTION_KEY_SEPARATOR)
    if not sep:
        return None, line.strip()
    return key.strip(), caption.strip()


def read_caption_lines(path: str | Path) -> list[tuple[str | None, str]]:
    """(key or None, caption) of every non-empty line of a caption text file.

    Reads both plain files (one caption per line) and the release format ``<key>**#**<caption>``
    (the one parser of that format: `hardneg generate --input`, ``posrank --build-vocabulary``)."""
    text = Path(path).read_text(encoding="utf-8")
    return [split_caption_line(ln) for ln in text.splitlines() if ln.strip()]


def release_video_id(key: str) -> str:
    """The video part of a release caption key: ``'<video>##*##<i>'`` or ``'<video>#<i>'`` -> video;
    any other key is its own video id."""
    for sep in ("##*##", "#"):
        video, found, index = key.rpartition(sep)
        if found and video and index.strip().isdigit():
            return video
    return key


def mc_row(
    source_id: str, item_id: str, video_id: str, positive: str, negatives: list[tuple[str, str, dict[str, Any]]], *,
    category: str | None, source_dataset: str | None = None, source_split: str | None = None,
    manipulated_index: int | None = None,
) -> dict[str, Any]:
    """An `MC_ITEM_SCHEMA` row: the positive first (label 0), then (caption, type, record) negatives."""
    return {
        SOURCE_ID: source_id,
        "id": item_id,
        "video_id": video_id,
        "source_dataset": source_dataset,
        "source_split": source_split,
        "category": category,
        "captions": [positive] + [c for c, _, _ in negatives],
        "label": 0,
        "manipulated_index": manipulated_index,
        "negative_types": ["positive"] + [t for _, t, _ in negatives],
        "provenance": [positive_record()] + [r for _, _, r in negatives],
    }


def rows_to_columns(rows: Iterable[Mapping[str, Any]]) -> dict[str, list]:
    """Rows -> a dict of lists: `source_id` plus the MC columns (what a batch function returns)."""
    names = (SOURCE_ID,) + MC_COLUMNS
    cols: dict[str, list] = {name: [] for name in names}
    for row in rows:
        for name in names:
            cols[name].append(row.get(name))
    return cols


def to_mc_table(columns: Mapping[str, list] | Any) -> Any:
    """A batch function's output (dict of lists or Arrow table) as a table of `MC_ITEM_SCHEMA`."""
    import pyarrow as pa

    if isinstance(columns, pa.Table):
        columns = columns.to_pydict()
    return pa.table({name: columns[name] for name in MC_COLUMNS}, schema=MC_ITEM_SCHEMA)


def batch_records(batch: Mapping[str, list], required: tuple[str, ...] = ("id", "caption")) -> list[dict[str, Any]]:
    """Turn a column batch into per-caption dicts, with a clear error for a missing column/value."""
    if "id" in required and SOURCE_ID in batch:  # fed by the runner: the caption id travels as source_id
        batch = {("id" if k == SOURCE_ID else k): v for k, v in batch.items() if k != "id"}
    missing = [c for c in required if c not in batch]
    if missing:
        raise ValueError(
            f"input batch has no column(s) {missing} (columns: {sorted(batch)}); "
            "name the caption and id columns with --caption-column/--id-column"
        )
    n = len(batch[required[0]])
    out = []
    for i in range(n):
        rec = {k: v[i] for k, v in batch.items()}
        for c in required:
            if rec[c] is None or (isinstance(rec[c], str) and not rec[c].strip()):
                raise ValueError(f"input row {i} (id={rec.get('id')!r}) has an empty '{c}'")
        rec["id"] = str(rec["id"])
        rec.setdefault("video_id", None)
        if rec["video_id"] is None:
            rec["video_id"] = rec["id"]
        out.append(rec)
    return out


def case_of(word: str) -> str:
    """'upper', 'title' or 'lower': the capitalisation pattern `apply_case` copies."""
    if len(word) > 1 and word.isupper():
        return "upper"
    return "title" if word[:1].isupper() else "lower"


def apply_case(word: str, case: str) -> str:
    """`word` in the capitalisation pattern `case` (from `case_of`)."""
    if case == "upper":
        return word.upper()
    if case == "title":
        return word[:1].upper() + word[1:]
    return word


def match_case(replacement: str, original: str) -> str:
    """Give `replacement` the capitalisation pattern of `original` (UPPER, Title or lower)."""
    return apply_case(replacement, case_of(original))


def article_slot(text_before: str) -> tuple[str, str, str] | None:
    """(text before the article, the article, the gap after it) when `text_before` ends in 'a '/'an '.

    Computed once per replaced word; `agree_article` then fixes the article for each replacement."""
    stripped = text_before.rstrip()
    gap = text_before[len(stripped):]
    if not gap:
        return None
    head, sep, last = stripped.rpartition(" ")
    if last.lower() not in ("a", "an"):
        return None
    return head + sep, last, gap


def agree_article(slot: tuple[str, str, str] | None, text_before: str, replacement: str) -> tuple[str, bool]:
    """`text_before` with the article of `slot` made to agree with `replacement`; (new prefix, changed)."""
    if slot is None or not replacement:
        return text_before, False
    head, article, gap = slot
    want = "an" if replacement[0].lower() in "aeiou" else "a"
    if article.lower() == want:
        return text_before, False
    return head + match_case(want, article) + gap, True


def article_edit(slot: tuple[str, str, str] | None, replacement: str) -> tuple[int, int, str] | None:
    """The edit ``(start, end, new article)`` that makes the article of `slot` (from `article_slot`)
    agree with `replacement`, or None when it already does (offsets into the text the slot was
    read from)."""
    if slot is None or not replacement:
        return None
    head, article, _ = slot
    want = "an" if replacement[0].lower() in "aeiou" else "a"
    if article.lower() == want:
        return None
    return len(head), len(head) + len(article), match_case(want, article)
