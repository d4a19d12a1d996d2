"""Character-ID swap contrast sets for LSMDC-IDs (Park et al., Appendix A.2).

The first character ID of a description is replaced by another ID of the same movie and
gender, chosen uniformly; each later ID is kept or swapped the same way with equal chance.
IDs are matched as whole words from the movie's character list; all mentions of one ID
get the same replacement, and IDs already in the description are not used as
replacements while others are available (so "Jenko and Schmidt" never becomes
"Schmidt and Schmidt").

Provenance: ``span``/``replacement`` are the one region from the first swapped mention to the
last, with ``span_start``/``span_end`` its character offsets (``positive[:span_start] +
replacement + positive[span_end:] == negative``); every swap is in ``details["swaps"]``.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any, Mapping

from hardneg.generators.common import batch_records, caption_rng, edit_region, mc_row, negative_record, rows_to_columns

NAME = "contrast-character-id"
VERSION = "1.1"  # 1.1: span/replacement cover every swapped mention, with exact offsets

Characters = dict[str, dict[str, str]]  # movie -> {character id -> gender}


def load_characters(source: str | Path | Mapping[str, Mapping[str, str]]) -> Characters:
    """Character lists: a {movie: {id: gender}} mapping, a JSON file of it, or a CSV with
    columns movie,id,gender."""
    if isinstance(source, Mapping):
        return {str(m): {str(c): str(g).lower() for c, g in chars.items()} for m, chars in source.items()}
    p = Path(source)
    if not p.is_file():
        raise FileNotFoundError(f"character list {p} not found (JSON {{movie: {{id: gender}}}} or CSV movie,id,gender)")
    if p.suffix.lower() == ".json":
        return load_characters(json.loads(p.read_text()))
    out: Characters = {}
    with p.open(newline="") as fh:
        reader = csv.DictReader(fh)
        missing = {"movie", "id", "gender"} - set(reader.fieldnames or ())
        if missing:
            raise ValueError(f"character list {p}: missing column(s) {sorted(missing)}; need movie,id,gender")
        for row in reader:
            out.setdefault(row["movie"], {})[row["id"]] = row["gender"].lower()
    return out


def find_ids(text: str, names: Mapping[str, str]) -> list[tuple[int, int, str]]:
    """(start, end, id) of whole-word ID mentions, longest names first, no overlaps, in text order."""
    taken: list[tuple[int, int, str]] = []
    for name in sorted(names, key=lambda n: (-len(n), n)):
        for m in re.finditer(r"(?<!\w)" + re.escape(name) + r"(?!\w)", text):
            if all(m.end() <= s or m.start() >= e for s, e, _ in taken):
                taken.append((m.start(), m.end(), name))
    return sorted(taken)


def id_negative(rec: Mapping[str, Any], characters: Characters, *, seed: int) -> dict[str, Any] | None:
    """The MC row (positive + one ID-swapped negative) of one description, or None."""
    movie = rec.get("movie")
    if movie is None:
        raise ValueError(f"input row id={rec['id']!r} has no 'movie' (needed to pick IDs of the same movie)")
    names = characters.get(str(movie), {})
    text = rec["caption"]
    mentions = find_ids(text, names)
    if not mentions:
        return None
    rng = caption_rng(seed, NAME, rec["id"], "id")
    order = list(dict.fromkeys(name for _, _, name in mentions))  # distinct IDs by first mention
    present = set(order)
    mapping: dict[str, str] = {}
    for k, name in enumerate(order):
        if k > 0 and rng.random() < 0.5:
            continue  # later IDs: kept with probability 1/2
        pool = sorted(c for c, g in names.items() if g == names[name] and c != name)
        fresh = [c for c in pool if c not in present and c not in mapping.values()]
        pool = fresh or pool
        if not pool:
            if k == 0:
                return None  # no other ID of this gender in the movie
            continue
        mapping[name] = pool[rng.randrange(len(pool))]
    edits = [(start, end, mapping[name]) for start, end, name in mentions if name in mapping]
    if not edits:
        return None
    # one region from the first swapped mention to the last
    out, span_start, span_end, span, replacement = edit_region(text, edits)
    if out == text:
        return None
    first = order[0]
    details = {"movie": str(movie), "swaps": [[a, b] for a, b in mapping.items()],
               "gender": names[first], "ids_in_caption": len(order)}
    neg = (out, "id", negative_record(NAME, VERSION, "id-swap", pos="propn", span=span, replacement=replacement,
                                      seed=seed, details=details, span_start=span_start, span_end=span_end))
    return mc_row(rec["id"], f"{rec['id']}/id", rec["video_id"], text, [neg], category="id",
                  source_dataset=rec.get("source_dataset"), source_split=rec.get("source_split"),
                  manipulated_index=1)


class CharacterIdBatchFn:
    """Pure batch function: (id, caption, movie) columns in, one MC row per description with an ID."""

    def __init__(self, characters: Characters, *, seed: int = 0) -> None:
        self.characters, self.seed = characters, int(seed)

    def __call__(self, batch: Mapping[str, list]) -> dict[str, list]:
        recs = batch_records(batch, required=("id", "caption", "movie"))
        rows = [r for r in (id_negative(rec, self.characters, seed=self.seed) for rec in recs) if r]
        return rows_to_columns(rows)


def make_batch_fn(*, characters: str | Path | Mapping[str, Mapping[str, str]], seed: int = 0) -> CharacterIdBatchFn:
    """Factory: reads the movies' character lists (id -> gender)."""
    return CharacterIdBatchFn(load_characters(characters), seed=seed)
