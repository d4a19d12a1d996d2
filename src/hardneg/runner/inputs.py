"""Turn whatever the user hands the runner into one in-order Arrow table with valid ids.

Sharding is by input order, so the input must be materialised in a fixed order first;
everything downstream (local or Ray) sees only this table.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

#: Column names given to a plain-text input (one row per non-empty line).
TEXT_ID_COLUMN = "id"
TEXT_COLUMN = "text"

_PARQUET = (".parquet", ".pq")
_JSONL = (".jsonl", ".ndjson", ".json")
_CSV = (".csv", ".tsv")
_TEXT = (".txt",)


def _read_text(path: Path, id_column: str) -> pa.Table:
    lines = [ln.rstrip("\r\n") for ln in path.read_text(encoding="utf-8").splitlines()]
    lines = [ln for ln in lines if ln.strip()]
    width = max(6, len(str(len(lines))))
    # zero-padded string ids sort in line order both as strings and in read_output
    ids = [f"{i:0{width}d}" for i in range(len(lines))]
    return pa.table({id_column: pa.array(ids, pa.string()), TEXT_COLUMN: pa.array(lines, pa.string())})


def _read_path(path: Path, id_column: str) -> pa.Table:
    if not path.exists():
        raise FileNotFoundError(f"input {path} does not exist; pass a Parquet, JSONL, CSV or .txt file")
    name = path.name.lower()
    if path.is_dir() or name.endswith(_PARQUET):
        import pyarrow.parquet as pq

        return pq.read_table(path)
    if name.endswith(_JSONL):
        import pyarrow.json as pj

        try:
            return pj.read_json(path)
        except pa.ArrowInvalid as exc:
            raise ValueError(f"input {path} is not JSON Lines (one JSON object per line): {exc}") from exc
    if name.endswith(_CSV):
        import pyarrow.csv as pcsv

        delimiter = "\t" if name.endswith(".tsv") else ","
        return pcsv.read_csv(path, parse_options=pcsv.ParseOptions(delimiter=delimiter))
    if name.endswith(_TEXT):
        return _read_text(path, id_column)
    raise ValueError(
        f"input {path}: unknown file type; use .parquet, .jsonl/.json, .csv/.tsv or .txt "
        "(or pass a pyarrow.Table / datasets.Dataset)"
    )


def _from_object(obj: Any) -> pa.Table | None:
    """Convert in-memory inputs without importing their libraries."""
    if isinstance(obj, pa.Table):
        return obj
    if isinstance(obj, pa.RecordBatch):
        return pa.Table.from_batches([obj])
    module = type(obj).__module__ or ""
    if module.startswith("datasets"):
        if type(obj).__name__ in ("DatasetDict", "IterableDatasetDict"):
            raise ValueError(
                f"input is a DatasetDict with splits {list(obj.keys())}; pass one split, e.g. ds['test']"
            )
        if not hasattr(obj, "with_format"):
            raise ValueError(f"input {type(obj).__name__} is not supported; pass a datasets.Dataset")
        if type(obj).__name__ == "IterableDataset":
            raise ValueError("input is a streaming IterableDataset; load it without streaming=True")
        # respects select/shuffle/filter index mappings, unlike obj.data
        return obj.with_format("arrow")[:]
    if module.startswith("pandas") and type(obj).__name__ == "DataFrame":
        return pa.Table.from_pandas(obj, preserve_index=False)
    if isinstance(obj, dict):
        return pa.table(obj)
    return None


def load_input(source: Any, id_column: str = "id") -> pa.Table:
    """Return `source` as a pyarrow.Table in input order, with a valid unique `id_column`.

    Accepts a pyarrow Table, a dict of lists, a pandas DataFrame, a `datasets.Dataset`, or a
    path to Parquet (file or folder), JSONL, CSV/TSV or text (one caption per line; ids are
    the zero-padded line numbers).
    """
    table = _from_object(source)
    if table is None:
        if isinstance(source, (str, os.PathLike)):
            table = _read_path(Path(source), id_column)
        else:
            raise ValueError(
                f"input of type {type(source).__name__} is not supported; pass a pyarrow.Table, "
                "a datasets.Dataset or a path to a .parquet/.jsonl/.csv/.txt file"
            )
    check_ids(table, id_column)
    # library metadata (pandas, huggingface) is not data: the same rows give the same shards
    return table.replace_schema_metadata(None).combine_chunks()


def check_ids(table: pa.Table, id_column: str) -> None:
    """Ids key shards, resume and the final sort: they must exist, be non-null, and be unique."""
    if id_column not in table.column_names:
        raise ValueError(
            f"input has no id column {id_column!r} (columns: {table.column_names}); "
            "pass id_column=<name> (--id-column) or add an id column"
        )
    ids = table[id_column]
    t = ids.type
    if not (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_integer(t)):
        raise ValueError(f"id column {id_column!r} has type {t}; ids must be strings or integers")
    if ids.null_count:
        row = pc.index(pc.is_null(ids), True).as_py()
        raise ValueError(f"id column {id_column!r} is null at row {row}; every row needs an id")
    if len(ids) and pc.count_distinct(ids).as_py() != len(ids):
        counts = pc.value_counts(ids)
        dup = next(d["values"] for d in counts.to_pylist() if d["counts"] > 1)
        rows = pc.indices_nonzero(pc.equal(ids, pa.scalar(dup, t))).to_pylist()[:5]
        raise ValueError(f"id column {id_column!r} has duplicate id {dup!r} at rows {rows}; ids must be unique")
