"""The shard plan: which input rows go to which output shard, and how to tell a shard is done.

Shard k always holds input rows [k*B, (k+1)*B), whatever the backend or worker count, so a
shard file is identified by (k, digest of its input rows) and can be skipped on resume.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from hardneg.io import OutputExistsError, atomic_write_text

FORMAT = "hardneg-runner/1"
MANIFEST = "manifest.json"
SHARD_RE = re.compile(r"^part-(\d{5,})-of-(\d{5,})\.parquet$")


def shard_name(index: int, n_shards: int) -> str:
    return f"part-{index:05d}-of-{n_shards:05d}.parquet"


def table_to_ipc(table: pa.Table) -> bytes:
    """Serialise a table to Arrow IPC bytes (what travels to workers, and what is hashed).

    The rows are copied into fresh buffers first: the IPC bytes of a slice otherwise depend on
    where it was cut from (a string column's data buffer keeps bytes outside the slice), so the
    same rows in a longer input would get another digest.
    """
    compact = table.take(pa.array(range(table.num_rows), type=pa.int64()))
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, compact.schema) as writer:
        writer.write_table(compact.combine_chunks())
    return sink.getvalue().to_pybytes()


def ipc_to_table(data: bytes) -> pa.Table:
    return pa.ipc.open_stream(pa.py_buffer(data)).read_all()


@dataclass(frozen=True)
class ShardTask:
    """One unit of work: rows [start, stop) of the input, written to shard `index`."""

    index: int
    start: int
    stop: int
    digest: str  # sha256 of the shard's input rows (Arrow IPC)


@dataclass(frozen=True)
class JobSpec:
    """What every worker needs besides the rows: where to write and how to check."""

    out_dir: str
    id_column: str
    n_shards: int


@dataclass
class Plan:
    id_column: str
    batch_size: int
    rows: int
    columns: list[str]
    shards: list[ShardTask] = field(default_factory=list)

    @property
    def input_digest(self) -> str:
        h = hashlib.sha256()
        for s in self.shards:
            h.update(s.digest.encode())
        return h.hexdigest()

    def header(self) -> dict:
        return {
            "format": FORMAT,
            "id_column": self.id_column,
            "batch_size": self.batch_size,
            "rows": self.rows,
            "n_shards": len(self.shards),
            "columns": self.columns,
            "input_digest": self.input_digest,
        }


def make_plan(table: pa.Table, id_column: str, batch_size: int) -> Plan:
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    plan = Plan(id_column=id_column, batch_size=batch_size, rows=table.num_rows, columns=table.column_names)
    for k, start in enumerate(range(0, table.num_rows, batch_size)):
        stop = min(start + batch_size, table.num_rows)
        digest = hashlib.sha256(table_to_ipc(table.slice(start, stop - start))).hexdigest()
        plan.shards.append(ShardTask(k, start, stop, digest))
    return plan


def _owned(name: str) -> bool:
    return name == MANIFEST or bool(SHARD_RE.match(name)) or (name.startswith(".") and name.endswith(".tmp"))


def read_manifest(out_dir: Path) -> dict | None:
    path = out_dir / MANIFEST
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is not a readable runner manifest ({exc}); pass --overwrite to start over") from exc


def prepare_out_dir(out_dir: Path, plan: Plan, overwrite: bool) -> bool:
    """Make `out_dir` ready; return True when it holds a resumable run of this same plan.

    A folder from a different input/batch size, or with files the runner did not write, is
    never touched without `overwrite`; with it, only the runner's own files are removed.
    """
    if out_dir.exists() and not out_dir.is_dir():
        raise OutputExistsError(f"output {out_dir} exists and is not a folder; choose a folder path")
    out_dir.mkdir(parents=True, exist_ok=True)
    names = [p.name for p in out_dir.iterdir()]
    foreign = sorted(n for n in names if not _owned(n))
    if foreign:
        raise OutputExistsError(
            f"output folder {out_dir} holds files the runner did not write ({', '.join(foreign[:5])}); "
            "choose an empty or new folder"
        )
    manifest = read_manifest(out_dir) if not overwrite else None
    if overwrite:
        for n in names:
            (out_dir / n).unlink()
        return False
    if manifest is None:
        if any(SHARD_RE.match(n) for n in names):
            raise OutputExistsError(
                f"output folder {out_dir} holds shards but no {MANIFEST}; pass --overwrite to replace them"
            )
        for n in names:  # stray temporaries from a killed write
            (out_dir / n).unlink()
        return False
    header = plan.header()
    diffs = [k for k in header if manifest.get(k) != header[k]]
    if diffs:
        raise OutputExistsError(
            f"output folder {out_dir} holds a run with different {', '.join(diffs)} "
            f"(was {', '.join(f'{k}={manifest.get(k)!r}' for k in diffs if k != 'columns')}); "
            "pass --overwrite to replace it, or choose another folder"
        )
    for n in names:
        if n.startswith(".") and n.endswith(".tmp"):
            (out_dir / n).unlink(missing_ok=True)
    return True


def write_manifest(out_dir: Path, plan: Plan, shards: dict[int, dict], complete: bool, summary: dict | None) -> None:
    doc = dict(plan.header())
    doc["complete"] = complete
    doc["shards"] = [
        {"index": s.index, "file": shard_name(s.index, len(plan.shards)), "start": s.start, "stop": s.stop,
         "input_digest": s.digest, **({"record": shards[s.index]} if s.index in shards else {})}
        for s in plan.shards
    ]
    if summary is not None:
        doc["summary"] = summary
    atomic_write_text(out_dir / MANIFEST, json.dumps(doc, indent=1, sort_keys=False) + "\n")
