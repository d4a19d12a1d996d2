"""Run the batch function on one shard and write its Parquet file; check and read shards back.

Both backends call `process_shard`, so a shard's bytes depend only on its input rows and the
batch function, never on which backend or worker wrote it. Writes are atomic and keyed by the
shard index, so a retried or repeated shard replaces itself instead of adding rows.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hardneg.io import atomic_write_parquet
from hardneg.runner.plan import MANIFEST, JobSpec, ShardTask, read_manifest, shard_name

#: Optional output columns: a row the batch function could not handle stays in the output
#: with ``skipped=True`` and a short ``skip_reason`` (it is counted, not silently dropped).
SKIPPED_COLUMN = "skipped"
SKIP_REASON_COLUMN = "skip_reason"
#: Reason recorded for input ids that have no row at all in the batch function's output.
NO_OUTPUT_REASON = "no output row"
SHARD_METADATA_KEY = b"hardneg_shard"
#: Fixed writer settings: identical bytes for identical tables, on every backend.
PARQUET_OPTIONS = {"compression": "zstd", "write_statistics": True, "use_dictionary": True}

BatchFn = Callable[[dict[str, list]], Any]


class ShardError(ValueError):
    """The batch function (or its factory) failed, or returned something unusable, on one shard.

    A ValueError so that commands print it as one line naming the shard and the cause."""


def to_table(out: Any, where: str) -> pa.Table:
    """Accept a batch function's output as a dict of lists, a pyarrow Table or a pandas DataFrame."""
    if isinstance(out, pa.Table):
        return out
    if isinstance(out, pa.RecordBatch):
        return pa.Table.from_batches([out])
    if isinstance(out, dict):
        try:
            return pa.table(out)
        except (pa.ArrowInvalid, pa.ArrowTypeError, ValueError, TypeError) as exc:
            lens = {k: len(v) for k, v in out.items() if hasattr(v, "__len__")}
            raise ShardError(f"{where}: batch function returned a dict that is not a table ({exc}); "
                             f"column lengths {lens} must all match") from exc
    if type(out).__name__ == "DataFrame" and (type(out).__module__ or "").startswith("pandas"):
        return pa.Table.from_pandas(out, preserve_index=False)
    raise ShardError(f"{where}: batch function returned {type(out).__name__}; "
                     "return a dict of equal-length lists or a pyarrow.Table")


def _skip_counts(out: pa.Table, where: str) -> Counter:
    reasons: Counter = Counter()
    if SKIPPED_COLUMN not in out.column_names:
        return reasons
    flags = out[SKIPPED_COLUMN]
    if not pa.types.is_boolean(flags.type):
        raise ShardError(f"{where}: output column {SKIPPED_COLUMN!r} must be boolean, got {flags.type}")
    mask = pc.fill_null(flags, False)
    if SKIP_REASON_COLUMN in out.column_names:
        for r in out.filter(mask)[SKIP_REASON_COLUMN].to_pylist():
            reasons[r or "unspecified"] += 1
    else:
        reasons["unspecified"] += pc.sum(mask).as_py() or 0
    return reasons


def build_fn(fn_factory: Callable) -> BatchFn:
    """Call the factory in a worker, turning its failure into a one-line ShardError."""
    try:
        return fn_factory()
    except Exception as exc:
        raise ShardError(f"batch function factory {fn_factory!r} failed in a worker: {type(exc).__name__}: {exc}") from exc


def process_shard(fn: BatchFn, rows: pa.Table, task: ShardTask, job: JobSpec) -> dict:
    """Apply `fn` to the shard's rows (as a dict of lists), write the shard file, return its record."""
    ids = rows[job.id_column]
    where = (f"shard {task.index} (input rows {task.start}..{task.stop - 1}, ids "
             f"{ids[0].as_py()!r}..{ids[-1].as_py()!r})")
    try:
        result = fn(rows.to_pydict())
    except Exception as exc:
        raise ShardError(f"batch function failed on {where}: {type(exc).__name__}: {exc}") from exc
    out = to_table(result, where)
    if job.id_column not in out.column_names:
        if out.num_rows:
            raise ShardError(f"{where}: batch function output has no id column {job.id_column!r} "
                             f"(columns: {out.column_names}); keep the input id on every output row")
        out = out.append_column(job.id_column, pa.array([], ids.type))
    reasons = _skip_counts(out, where)
    out_ids = pc.unique(out[job.id_column].cast(ids.type))
    unknown = pc.filter(out_ids, pc.invert(pc.is_in(out_ids, value_set=ids.combine_chunks())))
    if len(unknown):
        raise ShardError(f"{where}: output has ids not in this batch's input, e.g. {unknown[0].as_py()!r}; "
                         "output rows must carry the id of the input row they came from")
    missing = len(ids) - len(out_ids)
    if missing:
        reasons[NO_OUTPUT_REASON] += missing
    skipped = sum(v for k, v in reasons.items() if k != NO_OUTPUT_REASON)
    record = {
        "shard": task.index,
        "start": task.start,
        "stop": task.stop,
        "input_digest": task.digest,
        "rows_in": task.stop - task.start,
        "rows_written": out.num_rows,
        "rows_out": out.num_rows - skipped,
        "skipped": dict(sorted(reasons.items())),
    }
    meta = dict(out.schema.metadata or {})
    meta[SHARD_METADATA_KEY] = json.dumps(record, sort_keys=True).encode()
    out = out.replace_schema_metadata(meta)
    atomic_write_parquet(out, Path(job.out_dir) / shard_name(task.index, job.n_shards), **PARQUET_OPTIONS)
    return record


def completed_record(out_dir: Path, task: ShardTask, n_shards: int) -> dict | None:
    """The record of a finished shard file matching `task`, or None when it must be (re)done."""
    path = out_dir / shard_name(task.index, n_shards)
    if not path.exists():
        return None
    try:
        meta = pq.read_metadata(path)
        raw = (meta.schema.to_arrow_schema().metadata or {}).get(SHARD_METADATA_KEY)
        record = json.loads(raw) if raw else None
    except Exception:  # unreadable: atomic writes make this rare, redo it
        return None
    if (
        not record
        or record.get("shard") != task.index
        or record.get("input_digest") != task.digest
        or record.get("rows_in") != task.stop - task.start
        or record.get("rows_written") != meta.num_rows
    ):
        return None
    return record


def read_output(out_dir: str | Path, allow_incomplete: bool = False) -> pa.Table:
    """All output rows of a run, sorted by id (stable: rows of one id keep their order)."""
    out_dir = Path(out_dir)
    manifest = read_manifest(out_dir)
    if manifest is None:
        raise FileNotFoundError(f"{out_dir / MANIFEST} not found; {out_dir} is not a runner output folder")
    if not manifest.get("complete") and not allow_incomplete:
        raise ValueError(f"run in {out_dir} is incomplete; rerun the same command to resume it "
                         "(or pass allow_incomplete=True to read the finished shards)")
    tables = []
    for s in manifest["shards"]:
        path = out_dir / s["file"]
        if not path.exists():
            if allow_incomplete:
                continue
            raise FileNotFoundError(f"shard {path} listed in the manifest is missing; rerun to redo it")
        t = pq.read_table(path)
        tables.append(t.replace_schema_metadata(None))
    id_column = manifest["id_column"]
    if not tables:
        return pa.table({id_column: pa.array([], pa.string())})
    table = pa.concat_tables(tables, promote_options="permissive")
    return table.take(pc.sort_indices(table, sort_keys=[(id_column, "ascending")]))
