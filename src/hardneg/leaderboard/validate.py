"""Check an uploaded predictions file before anything is stored.

The file is parsed with pyarrow only (never executed, never unpickled); its name is
never used. Memory is bounded before anything is decoded: the footer's length, the
declared row and value counts and every page header must fit what the declared
benchmark config can need (`Limits`, from the board's item sets), and only then are the
rows read, in record batches with a running count (see `parquet_guard`). Metadata is
size- and depth-checked before it is parsed and every field is type-checked.

Every check failure becomes one line of a `SubmissionError` saying what is wrong and how
to fix it, so a submitter can repair everything in one round. User text in a message is
always quoted with `repr` and cut to about 200 characters (`quote`).
"""

from __future__ import annotations

import json
import os
import reprlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hardneg import guards
from hardneg.leaderboard.identity import Identity, IdentityError, as_identity, reserved_conflict
from hardneg.leaderboard.items import BENCHMARK_TASKS, ItemSet, files_revision
from hardneg.json_limits import MAX_JSON_VALUES
from hardneg.leaderboard.model_meta import clean_model_meta
from hardneg.leaderboard.parquet_guard import (MAX_FOOTER_BYTES, MAX_JSON_DEPTH, ParquetLimitError, json_shape,
                                               open_footer, scan_chunk)
from hardneg.schema import PREDICTIONS_METADATA_KEY, PREDICTIONS_REQUIRED_METADATA

#: absolute upload limit; the bound a config allows (`Limits.file_bytes`) is usually far lower
MAX_FILE_BYTES = 256 * 1024 * 1024
#: largest 'hardneg' metadata value parsed
MAX_METADATA_BYTES = 4 * 1024 * 1024
#: most containers and separators in the 'hardneg' metadata (bounds what `json.loads` builds: a retrieval file's
#: `video_ids` is the one long list, and no benchmark has close to this many videos in one config)
MAX_METADATA_VALUES = MAX_JSON_VALUES
#: longest item id, in UTF-8 bytes
MAX_ID_BYTES = 256
#: characters of user text quoted in a message
MAX_QUOTE = 200

_SHOW = 5  # how many example ids a message lists
#: metadata fields the board reads, with their longest accepted length
_STRING_FIELDS = {"task": 64, "benchmark": 64, "config": 200, "split": 400, "data_revision": 200, "model_id": 200}

_repr = reprlib.Repr()
_repr.maxstring = _repr.maxother = MAX_QUOTE
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = _SHOW
_repr.maxlevel = 3


def quote(value: Any, limit: int = MAX_QUOTE) -> str:
    """User text as `repr` (newlines and quotes escaped), cut to about `limit` characters."""
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        return repr(value[:limit]) + f"… ({len(value):,} characters)"
    text = _repr.repr(value)
    return text if len(text) <= limit + 20 else text[:limit] + "…"


class SubmissionError(ValueError):
    """A submission that was refused; `problems` lists every reason, one fix each."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("submission refused:\n- " + "\n- ".join(self.problems))


@dataclass
class ValidatedPart:
    """The rows of one (benchmark, config, split), scores aligned to the item set."""

    items: ItemSet
    scores: np.ndarray  # (N, C) float64 in item-set order; NaN marks padding (mask False)
    mask: np.ndarray | None  # (N, C) bool when items have different candidate counts


@dataclass
class ValidatedSubmission:
    """A predictions file that passed every check: one part per split it covers (`hardneg score`
    writes several splits into one file when no --split is given, e.g. PoSRank's parts of speech)."""

    metadata: dict[str, Any]
    parts: list[ValidatedPart]
    model_id: str
    submitter: str
    n_bytes: int

    @property
    def items(self) -> ItemSet:
        return self.parts[0].items

    @property
    def scores(self) -> np.ndarray:
        return self.parts[0].scores

    @property
    def mask(self) -> np.ndarray | None:
        return self.parts[0].mask


@dataclass(frozen=True)
class Limits:
    """The most a file for these parts may declare; anything above is refused unread."""

    items: int  # rows a complete file has
    rows: int  # rows read at most (the items and some slack, to name extra or repeated ids)
    candidates: int  # most candidates of an item
    values: int  # score values read at most
    id_bytes: int  # uncompressed bytes of the id column
    score_bytes: int  # uncompressed bytes of the scores column
    pages: int  # pages per column chunk

    @property
    def file_bytes(self) -> int:
        """Largest file that can fit: both columns stored uncompressed, the largest footer, and 1 MiB of slack."""
        return self.id_bytes + self.score_bytes + MAX_FOOTER_BYTES + (1 << 20)


def limits_for(parts: list[ItemSet]) -> Limits:
    items = sum(len(p) for p in parts)
    rows = 2 * items + 100
    cand = max((int(p.n_candidates.max()) for p in parts if len(p)), default=1)
    values = rows * cand
    id_bytes = rows * (MAX_ID_BYTES + 16) + (1 << 20)
    score_bytes = (values + rows) * 16 + (1 << 20)
    pages = 1000 + rows // 100 + (id_bytes + score_bytes) // 8192
    return Limits(items, rows, cand, values, id_bytes, score_bytes, pages)


def upload_limit(item_sets: dict[tuple[str, str, str], ItemSet], max_bytes: int = MAX_FILE_BYTES) -> int:
    """The largest file any config of the board can need (all its splits in one file), capped at `max_bytes`:
    what the Spaces pass to Gradio's `max_file_size`."""
    by_config: dict[tuple[str, str], list[ItemSet]] = {}
    for (bench, config, _), items in item_sets.items():
        by_config.setdefault((bench, config), []).append(items)
    need = max((limits_for(parts).file_bytes for parts in by_config.values()), default=max_bytes)
    return min(max_bytes, need)


def _n(count: int, word: str) -> str:
    """'1 item', '3 items'."""
    return f"{count:,} {word}" + ("" if count == 1 else "s")


def _examples(values) -> str:
    values = list(values)
    shown = ", ".join(quote(v, 80) for v in values[:_SHOW])
    return shown + (f" ... ({len(values):,} in all)" if len(values) > _SHOW else "")


def _where(parts: list[ItemSet]) -> str:
    return f"{parts[0].config}/{','.join(p.split for p in parts)}"


# --- reading --------------------------------------------------------------------------------
def open_source(data) -> tuple[pa.NativeFile, int]:
    """A random-access reader over the upload: bytes in memory, or a file path (memory-mapped, never read whole)."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        buf = pa.py_buffer(data)
        return pa.BufferReader(buf), buf.size
    path = os.fspath(data)
    size = os.stat(path).st_size
    if size == 0:
        return pa.BufferReader(b""), 0
    return pa.memory_map(path, "r"), size


def open_parquet(source: pa.NativeFile, size: int, **kwargs) -> pq.ParquetFile:
    """The footer only (its length checked first); a clear error when the bytes are not Parquet."""
    try:
        open_footer(source, size)
        return pq.ParquetFile(source, **kwargs)
    except ParquetLimitError as exc:  # our own words: nothing of the file's content
        raise SubmissionError([f"the file is not a readable Parquet file ({exc}); "
                               "upload the predictions Parquet written by `hardneg score`"]) from None
    except Exception as exc:  # pyarrow raises several types for garbage input
        raise SubmissionError(
            [f"the file is not a readable Parquet file ({type(exc).__name__}: {quote(str(exc), 160)}); "
             "upload the predictions Parquet written by `hardneg score`"]
        ) from None


def read_metadata(pf: pq.ParquetFile, problems: list[str]) -> dict | None:
    """The 'hardneg' JSON metadata: size and nesting checked before it is parsed."""
    kv = pf.metadata.metadata or {}
    raw = kv.get(PREDICTIONS_METADATA_KEY)
    if raw is None:
        problems.append("predictions file has no 'hardneg' metadata: write it with hardneg.schema.predictions_metadata"
                        " (hardneg score does this for you)")
        return None
    if len(raw) > MAX_METADATA_BYTES:
        problems.append(f"the 'hardneg' metadata is {len(raw):,} bytes; the limit is {MAX_METADATA_BYTES:,} "
                        "(write it with hardneg.schema.predictions_metadata)")
        return None
    depth, values = json_shape(raw)
    if depth > MAX_JSON_DEPTH:
        problems.append(f"the 'hardneg' metadata nests {depth:,} levels deep; at most {MAX_JSON_DEPTH} are accepted "
                        "(write it with hardneg.schema.predictions_metadata)")
        return None
    if values > MAX_METADATA_VALUES:
        problems.append(f"the 'hardneg' metadata holds about {values:,} values; at most {MAX_METADATA_VALUES:,} are "
                        "accepted (write it with hardneg.schema.predictions_metadata)")
        return None
    try:
        meta = json.loads(raw.decode("utf-8"))
    except Exception as exc:  # UnicodeDecodeError, JSONDecodeError, anything else: refused, never raised
        problems.append(f"the 'hardneg' metadata is not UTF-8 JSON ({type(exc).__name__}); "
                        "write it with hardneg.schema.predictions_metadata")
        return None
    if not isinstance(meta, dict):
        problems.append("the 'hardneg' metadata must be a JSON object; write it with hardneg.schema.predictions_metadata")
        return None
    return meta


def check_metadata(meta: dict, item_sets: dict, problems: list[str]) -> list[ItemSet]:
    """Required fields present and of the right type; the parts (config/splits) the file covers, or []."""
    missing = [k for k in PREDICTIONS_REQUIRED_METADATA if k not in meta]
    if missing:
        problems.append(f"metadata is missing {missing}; add them (hardneg.schema.predictions_metadata lists the fields)")
        return []
    typed = True
    for key, longest in _STRING_FIELDS.items():
        value = meta[key]
        if not isinstance(value, str):
            problems.append(f"metadata {key} must be a string, not {type(value).__name__} ({quote(value, 60)})")
            typed = False
        elif len(value) > longest:
            problems.append(f"metadata {key} is {len(value):,} characters ({quote(value, 60)}); at most {longest}")
            typed = False
    try:
        guards.optional_text(meta.get("model_revision"), "metadata model_revision",
                             fix="give the model's revision (a commit or tag, at most 200 characters) or null")
    except guards.GuardError as exc:
        problems.append(str(exc))
        typed = False
    if meta.get("model_meta") is not None:  # stored and shown on the board: checked as the upload form's is
        try:
            clean_model_meta(meta["model_meta"])
        except ValueError as exc:
            problems.append(f"metadata {quote(str(exc), 300)} (in the file's own 'model_meta'; fix it there, or "
                            "leave it out and pass the values to `hardneg submit`)")
            typed = False
    if typed:  # the fields above said their own words; every other key and text is stored too (issue 36 N5)
        try:
            guards.json_tree(meta, "metadata", max_values=2 * MAX_METADATA_VALUES + 1)
        except guards.GuardError as exc:
            problems.append(f"{exc} (write the metadata with hardneg.schema.predictions_metadata)")
            typed = False
    if not typed:
        return []
    bench = meta["benchmark"]
    if bench not in BENCHMARK_TASKS:
        problems.append(f"metadata benchmark {quote(bench)} is unknown; use one of {sorted(BENCHMARK_TASKS)}")
        return []
    if meta["task"] != BENCHMARK_TASKS[bench]:
        problems.append(f"metadata task {quote(meta['task'])} does not match benchmark {bench!r} "
                        f"(it is {BENCHMARK_TASKS[bench]!r})")
    config = meta["config"]
    splits = [s.strip() for s in meta["split"].split(",") if s.strip()]
    parts, unknown = [], []
    for split in splits:
        items = item_sets.get((bench, config, split))
        (parts if items is not None else unknown).append(items if items is not None else split)
    if unknown or not splits or len(set(splits)) != len(splits):
        on_board = sorted(f"{c}/{s}" for b, c, s in item_sets if b == bench)
        problems.append(
            f"config/split {quote(config + '/' + meta['split'])} is not on the {bench} board; "
            f"the board scores {', '.join(on_board) or 'nothing yet'}"
        )
        return []
    expected = {parts[0].revision} if len(parts) == 1 else {files_revision([f for it in parts for f in it.files])}
    for it in parts:
        expected |= it.accepted_revisions - {it.revision}
    if len(parts) == 1:
        expected |= parts[0].accepted_revisions
    if meta["data_revision"] not in expected:
        problems.append(
            f"data_revision {quote(meta['data_revision'])} is not the board's {bench} data "
            f"({' or '.join(sorted(expected))}); re-score the model on the current dataset revision and submit the new file"
        )
    return parts


def check_model_name(meta: dict, identity: Identity, problems: list[str], reserved=None) -> str:
    """The model name: valid, in a namespace the signed-in user may write, and not a reserved row name."""
    model_id = meta.get("model_id")
    if not isinstance(model_id, str):
        return ""  # reported by check_metadata
    model_id = model_id.strip()
    try:  # the one model-id guard (a bare name passes here: refused below with the namespace to use)
        guards.model_id(model_id, namespace=False)
    except guards.GuardError:
        problems.append(
            f"metadata model_id {quote(model_id)} is not a valid model name: one '<your user or org>/<model name>' "
            "pair, each part 1-96 letters, digits, '_', '-' or '.', not starting or ending with '-' or '.', without "
            "'..' or '--' (as Hub repo ids); set model_id to such a name"
        )
        return model_id
    conflict = reserved_conflict(model_id, reserved)
    if conflict is not None:
        problems.append(f"model name {quote(model_id)} is reserved: {conflict!r} is one of the board's baseline or "
                        "reported rows; choose another name")
    if not identity.may_write(model_id):
        you = f"you are signed in as {identity.username!r}" + (
            f" (organizations: {', '.join(identity.orgs)})" if identity.orgs else " (no organizations)")
        if "/" not in model_id:
            problems.append(f"model name {quote(model_id)} has no namespace; {you}: set model_id to "
                            f"'{identity.username}/{model_id[:60]}' or '<organization>/{model_id[:60]}'")
        else:
            problems.append(f"model name {quote(model_id)} is in namespace {quote(model_id.split('/', 1)[0], 60)}; "
                            f"{you}: a board name must be '<your user name or one of your organizations>/<name>'")
    return model_id


def check_columns(schema: pa.Schema, problems: list[str]) -> bool:
    """Exactly 'id' (string) and 'scores' (list of floats); False when the data cannot be read."""
    ok = True
    names = schema.names
    if "id" not in names:
        problems.append("missing column 'id' (string): one row per item id of the split")
        ok = False
    else:
        t = schema.field("id").type
        if pa.types.is_dictionary(t):
            t = t.value_type
        if not (pa.types.is_string(t) or pa.types.is_large_string(t)):
            problems.append(f"column 'id' has type {schema.field('id').type}; it must be string (the item ids)")
            ok = False
    if "scores" not in names:
        problems.append("missing column 'scores' (list<float32>): the candidates' scores of each item")
        ok = False
    else:
        t = schema.field("scores").type
        if not ((pa.types.is_list(t) or pa.types.is_large_list(t)) and pa.types.is_floating(t.value_type)):
            problems.append(f"column 'scores' has type {t}; it must be list<float32> (one score per candidate)")
            ok = False
    extra = [c for c in names if c not in ("id", "scores")]
    if extra:
        problems.append(f"unexpected columns [{_examples(extra)}]; a predictions file holds only 'id' and 'scores'")
        ok = False
    if len(names) != len(set(names)):
        problems.append("a column name appears twice; a predictions file holds one 'id' and one 'scores' column")
        ok = False
    return ok


def check_declared_size(pf: pq.ParquetFile, source: pa.NativeFile, size: int, parts: list[ItemSet],
                        limits: Limits, problems: list[str]) -> bool:
    """Footer counts and page headers within `limits`; nothing decoded. False (with a problem) when not."""
    md = pf.metadata
    where = _where(parts)
    if md.num_rows > limits.rows:
        problems.append(f"the file has {md.num_rows:,} rows; {where} has {_n(limits.items, 'item')} "
                        "(one row per item id); remove the extra rows")
        return False
    if md.num_rows < 0 or sum(md.row_group(g).num_rows for g in range(md.num_row_groups)) != md.num_rows:
        problems.append("the file's row groups do not add up to its row count; the file is malformed "
                        "(write it with `hardneg score` or pyarrow)")
        return False
    if md.num_row_groups > max(16, limits.rows):
        problems.append(f"the file has {md.num_row_groups:,} row groups for {_n(md.num_rows, 'row')}; write it in one")
        return False
    per_column: dict[str, list[int]] = {}  # path -> [declared values, page values, bytes, dictionary values, rows]
    chunk_bytes = 0
    try:
        for g in range(md.num_row_groups):
            rg = md.row_group(g)
            for j in range(rg.num_columns):
                col = rg.column(j)
                pages = scan_chunk(source, size, col, limits.pages)
                acc = per_column.setdefault(col.path_in_schema, [0, 0, 0, 0, 0])
                acc[0] += max(col.num_values, 0)
                acc[1] += pages.values
                acc[2] += max(pages.uncompressed_bytes, col.total_uncompressed_size)
                acc[3] += pages.dictionary_values
                acc[4] += pages.rows
                chunk_bytes += col.total_compressed_size
    except ParquetLimitError as exc:
        problems.append(f"the file's pages cannot be checked: {exc}; the file is malformed "
                        "(write it with `hardneg score` or pyarrow)")
        return False
    for path, (declared, page_values, n_bytes, dict_values, page_rows) in per_column.items():
        is_id = path == "id"
        most_values = limits.rows if is_id else limits.values + limits.rows
        most_bytes = limits.id_bytes if is_id else limits.score_bytes
        what = "column 'id'" if is_id else "column 'scores'"
        values = max(declared, page_values)
        if values > most_values:
            if is_id:
                problems.append(f"{what} holds {values:,} values; {where} has {_n(limits.items, 'item')} "
                                "(one id per row); remove the extra rows")
            else:
                problems.append(f"{what} holds {values:,} scores; {where} has at most {limits.candidates:,} "
                                f"candidates for each of {_n(limits.items, 'item')}; give one score per candidate")
            return False
        if page_rows > limits.rows or dict_values > most_values:
            problems.append(f"{what} declares more rows or dictionary entries than {where} can need; "
                            "write the file with `hardneg score` or pyarrow")
            return False
        if n_bytes > most_bytes:
            problems.append(f"{what} is {n_bytes:,} bytes uncompressed; a file for {where} needs at most "
                            f"{most_bytes:,} (ids are at most {MAX_ID_BYTES} bytes)")
            return False
    footer = int.from_bytes(source.read_at(8, size - 8)[:4], "little")
    if size > 12 + footer + chunk_bytes + (1 << 20):
        problems.append(f"the file is {size:,} bytes but its columns and footer take {12 + footer + chunk_bytes:,}; "
                        "remove whatever else it holds")
        return False
    return True


def read_rows(pf: pq.ParquetFile, limits: Limits, problems: list[str]) -> tuple[list | None, pa.Array | None]:
    """Ids (a list) and scores (one ListArray), read in record batches with a running bound."""
    ids: list = []
    chunks: list[pa.Array] = []
    n_rows = n_values = 0
    for batch in pf.iter_batches(batch_size=8192, columns=["id", "scores"], use_threads=False):
        n_rows += batch.num_rows
        if n_rows > limits.rows:
            problems.append(f"the file has more than {limits.rows:,} rows; one row per item id")
            return None, None
        id_col, score_col = batch.column(0), batch.column(1)
        if pa.types.is_dictionary(id_col.type):
            lengths = pc.binary_length(id_col.dictionary)
            longest = pc.max(lengths).as_py() if len(lengths) else 0
            if (longest or 0) > MAX_ID_BYTES:
                problems.append(f"an id is {longest:,} bytes long; ids are at most {MAX_ID_BYTES} bytes (the item ids)")
                return None, None
            id_col = id_col.cast(id_col.type.value_type)
        else:
            longest = pc.max(pc.binary_length(id_col)).as_py() if len(id_col) else 0
            if (longest or 0) > MAX_ID_BYTES:
                problems.append(f"an id is {longest:,} bytes long; ids are at most {MAX_ID_BYTES} bytes (the item ids)")
                return None, None
        n_values += int(pc.sum(pc.list_value_length(score_col)).as_py() or 0)
        if n_values > limits.values:
            problems.append(f"the file holds more than {limits.values:,} scores; at most {limits.candidates:,} "
                            "candidates per item")
            return None, None
        ids.extend(id_col.to_pylist())
        chunks.append(score_col)
    scores = pa.chunked_array(chunks, type=pf.schema_arrow.field("scores").type).combine_chunks() if chunks else None
    return ids, scores


# --- checks on the rows -----------------------------------------------------------------------
def check_ids(ids: list, parts: list[ItemSet], problems: list[str]) -> None:
    """Every id once, every item of every part covered, nothing else: duplicates and partial coverage are refused."""
    if any(i is None for i in ids):
        problems.append(f"{_n(sum(i is None for i in ids), 'row')} with an empty id; every row needs its item id")
    seen: dict[str, int] = {}
    for i in ids:
        if i is not None:
            seen[i] = seen.get(i, 0) + 1
    dups = [i for i, n in seen.items() if n > 1]
    if dups:
        problems.append(f"ids appear more than once: {_examples(dups)}; keep one row per id")
    for items in parts:
        missing = [i for i in items.ids.tolist() if i not in seen]
        if missing:
            problems.append(f"{_n(len(missing), 'id')} of {items.config}/{items.split} missing: {_examples(missing)}; "
                            "score every item of the split")
    extra = [i for i in seen if not any(i in it.index for it in parts)]
    if extra:
        problems.append(f"{_n(len(extra), 'id')} not in {_where(parts)}: {_examples(extra)}; remove them (wrong split?)")


def align_scores(ids: list, col: pa.Array, items: ItemSet, meta: dict, problems: list[str]):
    """Scores of the rows of `items` as an (N, C) float64 matrix in item-set order, after count and finiteness checks."""
    if len(ids) != len(items):  # a file covering several splits: this split's rows only
        keep = [k for k, i in enumerate(ids) if i in items.index]
        col = col.take(pa.array(keep, pa.int64()))
        ids = [ids[k] for k in keep]
    if col.null_count:
        problems.append(f"{_n(col.null_count, 'row')} with null scores; give every item its list of scores")
        return None, None
    lengths = np.asarray(pc.list_value_length(col), dtype=np.int64)
    values = col.flatten()
    if values.null_count:
        problems.append("some scores are null; every candidate needs a finite score")
        return None, None
    rows = np.asarray([items.index[i] for i in ids], dtype=np.int64)
    expected = items.n_candidates[rows]
    wrong = np.nonzero(lengths != expected)[0]
    if wrong.size:
        ex = [f"{quote(ids[k], 80)} has {lengths[k]:,}, expected {expected[k]}" for k in wrong[:_SHOW]]
        problems.append(f"{_n(int(wrong.size), 'item')} with the wrong number of scores ({'; '.join(ex)}); "
                        "give one score per candidate")
        return None, None
    flat = np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.float64)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    bad = ~np.isfinite(flat)
    if bad.any():
        bad_rows = np.unique(np.searchsorted(offsets, np.nonzero(bad)[0], side="right") - 1)
        problems.append(
            f"{_n(int(bad_rows.size), 'item')} with NaN or infinite scores: {_examples(ids[k] for k in bad_rows)}; "
            "replace them with finite numbers"
        )
        return None, None
    width = int(items.n_candidates.max())
    scores = np.full((len(items), width), np.nan)
    for k in range(len(ids)):
        scores[rows[k], : lengths[k]] = flat[offsets[k] : offsets[k + 1]]
    mask = None if (items.n_candidates == width).all() else (np.arange(width)[None, :] < items.n_candidates[:, None])
    if items.task == "retrieval":
        order = meta.get("video_ids")
        if (not isinstance(order, list) or len(order) != len(items.video_ids)
                or not all(isinstance(v, str) for v in order) or len(set(order)) != len(order)
                or set(order) != set(items.video_ids)):
            problems.append(
                f"metadata video_ids must list the {len(items.video_ids)} videos of {items.config} once each, "
                "in the order of the score columns"
            )
            return None, None
        col_of = {v: j for j, v in enumerate(order)}
        scores = scores[:, [col_of[v] for v in items.video_ids]]
    return scores, mask


def validate_submission(
    data,
    submitter: Identity | str,
    item_sets: dict[tuple[str, str, str], ItemSet],
    max_bytes: int = MAX_FILE_BYTES,
    reserved=None,
) -> ValidatedSubmission:
    """Every check of the board; raises SubmissionError listing all problems found.

    data: the file's bytes, or a path (memory-mapped; never read whole before the checks pass).
    submitter: the verified identity (a plain name means a user with no organizations).
    """
    try:
        identity = as_identity(submitter)
    except IdentityError:
        raise SubmissionError(["sign in with your Hugging Face account first; nothing was stored"]) from None
    source, size = open_source(data)
    if size > max_bytes:
        raise SubmissionError([f"file is {size:,} bytes, over the {max_bytes:,}-byte limit; submit one config per file"])
    if not size:
        raise SubmissionError(["the file is empty; upload the predictions Parquet written by `hardneg score`"])
    pf = open_parquet(source, size)
    problems: list[str] = []
    meta = read_metadata(pf, problems)
    parts = check_metadata(meta, item_sets, problems) if meta is not None else []
    model_id = check_model_name(meta, identity, problems, reserved) if meta is not None else ""
    try:
        schema = pf.schema_arrow
    except Exception as exc:
        raise SubmissionError(problems + [f"the file's schema cannot be read as Arrow ({type(exc).__name__}); "
                                          "write it with `hardneg score` or pyarrow"]) from None
    columns_ok = check_columns(schema, problems)
    validated: list[ValidatedPart] = []
    if columns_ok and parts:
        limits = limits_for(parts)
        before = len(problems)
        if size > limits.file_bytes:
            problems.append(f"file is {size:,} bytes; a file for {_where(parts)} needs at most {limits.file_bytes:,}")
        elif check_declared_size(pf, source, size, parts, limits, problems):
            ids, col = read_rows(open_parquet(source, size, read_dictionary=["id"]), limits, problems)
            if ids is not None:
                check_ids(ids, parts, problems)
                if len(problems) == before:
                    for items in parts:
                        scores, mask = align_scores(ids, col, items, meta, problems)
                        if scores is not None:
                            validated.append(ValidatedPart(items, scores, mask))
    if problems:
        raise SubmissionError(problems)
    return ValidatedSubmission(meta, validated, model_id, identity.username, size)
