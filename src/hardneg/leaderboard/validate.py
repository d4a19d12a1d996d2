"""Check an uploaded predictions file before anything is stored.

The file is parsed with pyarrow only (never executed, never unpickled) from bytes in
memory; its name is never used. Every check failure becomes one line of a
`SubmissionError` saying what is wrong and how to fix it, so a submitter can repair
everything in one round.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from hardneg import benchmarks
from hardneg.leaderboard.items import ItemSet, files_revision
from hardneg.schema import PREDICTIONS_REQUIRED_METADATA, read_predictions_metadata

#: default upload limit
MAX_FILE_BYTES = 256 * 1024 * 1024

#: a model name the board accepts: Hub-style ids, local names, revisions after '@'
_MODEL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-/:@+]{0,199}$")
_SUBMITTER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-]{0,63}$")
_SHOW = 5  # how many example ids a message lists


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


def _n(count: int, word: str) -> str:
    """'1 item', '3 items'."""
    return f"{count} {word}" + ("" if count == 1 else "s")


def _examples(values) -> str:
    values = list(values)
    shown = ", ".join(repr(v) for v in values[:_SHOW])
    return shown + (f" ... ({len(values)} in all)" if len(values) > _SHOW else "")


def read_table(data: bytes) -> pa.Table:
    """Parse Parquet bytes (pyarrow only); a clear error when it is not Parquet."""
    try:
        return pq.read_table(pa.BufferReader(data))
    except Exception as exc:  # pyarrow raises several types for garbage input
        raise SubmissionError(
            [f"the file is not a readable Parquet file ({type(exc).__name__}: {str(exc)[:200]}); "
             "upload the predictions Parquet written by `hardneg score`"]
        ) from None


def check_metadata(table: pa.Table, item_sets: dict, problems: list[str]) -> tuple[dict | None, list[ItemSet]]:
    try:
        meta = read_predictions_metadata(table.schema)
    except (ValueError, UnicodeDecodeError) as exc:
        problems.append(str(exc))
        return None, []
    if not isinstance(meta, dict):
        problems.append("the 'hardneg' metadata must be a JSON object; write it with hardneg.schema.predictions_metadata")
        return None, []
    missing = [k for k in PREDICTIONS_REQUIRED_METADATA if k not in meta]
    if missing:
        problems.append(f"metadata is missing {missing}; add them (hardneg.schema.predictions_metadata lists the fields)")
        return meta, []
    bench = meta["benchmark"]
    if not isinstance(bench, str) or bench not in benchmarks.names():
        problems.append(f"metadata benchmark {str(bench)[:100]!r} is unknown; use one of {benchmarks.names()}")
        return meta, []
    task = benchmarks.get(bench).task
    if meta["task"] != task:
        problems.append(f"metadata task {str(meta['task'])[:100]!r} does not match benchmark {bench!r} (it is {task!r})")
    config = str(meta["config"])
    splits = [s.strip() for s in str(meta["split"]).split(",") if s.strip()]
    parts, unknown = [], []
    for split in splits:
        items = item_sets.get((bench, config, split))
        (parts if items is not None else unknown).append(items if items is not None else split)
    if unknown or not splits or len(set(splits)) != len(splits):
        on_board = sorted(f"{c}/{s}" for b, c, s in item_sets if b == bench)
        problems.append(
            f"config/split {config}/{meta['split']} is not on the {bench} board; "
            f"the board scores {', '.join(on_board) or 'nothing yet'}"
        )
        return meta, []
    expected = {parts[0].revision} if len(parts) == 1 else {files_revision([f for it in parts for f in it.files])}
    for it in parts:
        expected |= it.accepted_revisions - {it.revision}
    if len(parts) == 1:
        expected |= parts[0].accepted_revisions
    if str(meta["data_revision"]) not in expected:
        problems.append(
            f"data_revision {meta['data_revision']!r} is not the board's {bench} data ({' or '.join(sorted(expected))}); "
            "re-score the model on the current dataset revision and submit the new file"
        )
    return meta, parts


def check_model_name(meta: dict, submitter: str, owner_of: Callable[[str], str | None], problems: list[str]) -> str:
    model_id = str(meta.get("model_id", "")).strip()
    if not _SUBMITTER.match(submitter or ""):
        problems.append(
            "submitter name must be 1-64 letters, digits, '.', '_' or '-' (your Hub user name); fill in the submitter field"
        )
    if not _MODEL_NAME.match(model_id):
        problems.append(
            f"metadata model_id {model_id!r} is not a valid model name (1-200 characters: letters, digits, ._-/:@+); "
            "set model_id to the model's Hub id"
        )
        return model_id
    owner = owner_of(model_id)
    if owner is not None and owner != submitter:
        problems.append(
            f"model name {model_id!r} already belongs to submitter {owner!r}; submit under that name or rename your model"
        )
    return model_id


def check_columns(table: pa.Table, problems: list[str]) -> bool:
    ok = True
    if "id" not in table.column_names:
        problems.append("missing column 'id' (string): one row per item id of the split")
        ok = False
    elif not (pa.types.is_string(table.schema.field("id").type) or pa.types.is_large_string(table.schema.field("id").type)):
        problems.append(f"column 'id' has type {table.schema.field('id').type}; it must be string (the item ids)")
        ok = False
    if "scores" not in table.column_names:
        problems.append("missing column 'scores' (list<float32>): the candidates' scores of each item")
        ok = False
    else:
        t = table.schema.field("scores").type
        if not ((pa.types.is_list(t) or pa.types.is_large_list(t)) and pa.types.is_floating(t.value_type)):
            problems.append(f"column 'scores' has type {t}; it must be list<float32> (one score per candidate)")
            ok = False
    extra = [c for c in table.column_names if c not in ("id", "scores")]
    if extra:
        problems.append(f"unexpected columns {extra}; a predictions file holds only 'id' and 'scores'")
    return ok


def check_ids(ids: list, parts: list[ItemSet], problems: list[str]) -> None:
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
        where = "/".join([parts[0].config, ",".join(it.split for it in parts)])
        problems.append(f"{_n(len(extra), 'id')} not in {where}: {_examples(extra)}; remove them (wrong split?)")


def align_scores(table: pa.Table, items: ItemSet, meta: dict, problems: list[str]):
    """Scores of the rows of `items` as an (N, C) float64 matrix in item-set order, after count and finiteness checks."""
    all_ids = table.column("id").to_pylist()
    if len(all_ids) != len(items):  # a file covering several splits: this split's rows only
        table = table.take(pa.array([k for k, i in enumerate(all_ids) if i in items.index], pa.int64()))
    ids = table.column("id").to_pylist()
    col = table.column("scores").combine_chunks()
    if col.null_count:
        problems.append(f"{_n(col.null_count, 'row')} with null scores; give every item its list of scores")
        return None, None
    lengths = np.asarray(col.value_lengths(), dtype=np.int64)
    flat = np.asarray(col.flatten().to_numpy(zero_copy_only=False), dtype=np.float64)
    if col.flatten().null_count:
        problems.append("some scores are null; every candidate needs a finite score")
        return None, None
    rows = np.asarray([items.index[i] for i in ids], dtype=np.int64)
    expected = items.n_candidates[rows]
    wrong = np.nonzero(lengths != expected)[0]
    if wrong.size:
        ex = [f"{ids[k]} has {lengths[k]}, expected {expected[k]}" for k in wrong[:_SHOW]]
        problems.append(f"{_n(int(wrong.size), 'item')} with the wrong number of scores ({'; '.join(ex)}); give one score per candidate")
        return None, None
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
        if not isinstance(order, list) or sorted(map(str, order)) != sorted(items.video_ids) or len(set(order)) != len(order):
            problems.append(
                f"metadata video_ids must list the {len(items.video_ids)} videos of {items.config} once each, "
                "in the order of the score columns"
            )
            return None, None
        col_of = {str(v): j for j, v in enumerate(order)}
        scores = scores[:, [col_of[v] for v in items.video_ids]]
    return scores, mask


def validate_submission(
    data: bytes,
    submitter: str,
    item_sets: dict[tuple[str, str, str], ItemSet],
    owner_of: Callable[[str], str | None] = lambda model_id: None,
    max_bytes: int = MAX_FILE_BYTES,
) -> ValidatedSubmission:
    """Every check of the board; raises SubmissionError listing all problems found."""
    if len(data) > max_bytes:
        raise SubmissionError([f"file is {len(data):,} bytes, over the {max_bytes:,}-byte limit; submit one split per file"])
    if not data:
        raise SubmissionError(["the file is empty; upload the predictions Parquet written by `hardneg score`"])
    table = read_table(data)
    problems: list[str] = []
    meta, parts = check_metadata(table, item_sets, problems)
    model_id = check_model_name(meta or {}, submitter, owner_of, problems) if meta else ""
    columns_ok = check_columns(table, problems)
    validated: list[ValidatedPart] = []
    if columns_ok and parts:
        before = len(problems)
        check_ids(table.column("id").to_pylist(), parts, problems)
        if len(problems) == before:
            for items in parts:
                scores, mask = align_scores(table, items, meta, problems)
                if scores is not None:
                    validated.append(ValidatedPart(items, scores, mask))
    if problems:
        raise SubmissionError(problems)
    return ValidatedSubmission(meta, validated, model_id, submitter, len(data))
