"""Ray backend: the shards become a Ray Dataset, mapped by an actor pool of batch functions.

Each Dataset row is one shard (index, row range, digest and its input rows as Arrow IPC), so
Ray can never split or merge a shard: every actor task writes whole shards with the same
`process_shard` as the local backend. Actors build the batch function once; an actor that
dies is restarted and its task retried by Ray, and the retry rewrites the same shard file
atomically, so its rows land exactly once.

Imported only for `backend="ray"`; needs `pip install -e '.[distributed]' (from the clone; video-hardneg is not on PyPI)`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from typing import Callable

import pyarrow as pa

from hardneg.runner.plan import JobSpec, ShardTask, ipc_to_table, table_to_ipc
from hardneg.runner.shards import ShardError, build_fn, process_shard

try:
    import ray
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError(
        "the Ray backend needs Ray Data: pip install -e '.[distributed]' (from the clone; video-hardneg is not on PyPI) (or use --backend local)"
    ) from exc

#: CPUs of the local Ray instance started when no --ray-address is given (at least this many).
LOCAL_MIN_CPUS = 2


class ShardWorker:
    """Callable class run by Ray Data's actor pool: one batch function per actor."""

    def __init__(self, fn_factory: Callable, job: JobSpec):
        self._fn = build_fn(fn_factory)
        self._job = job

    def __call__(self, batch: pa.Table) -> pa.Table:
        records = []
        for row in batch.to_pylist():
            if hashlib.sha256(row["ipc"]).hexdigest() != row["digest"]:
                raise ShardError(f"shard {row['shard']}: input bytes changed in transit (digest mismatch)")
            task = ShardTask(row["shard"], row["start"], row["stop"], row["digest"])
            rec = process_shard(self._fn, ipc_to_table(row["ipc"]), task, self._job)
            records.append(rec)
        return pa.table({"record": [json.dumps(r, sort_keys=True) for r in records]})


def _shard_dataset(table: pa.Table, tasks: list[ShardTask]):
    """One single-row block per shard: Ray schedules shards, never fragments of them."""
    items = [
        {"shard": t.index, "start": t.start, "stop": t.stop, "digest": t.digest,
         "ipc": table_to_ipc(table.slice(t.start, t.stop - t.start))}
        for t in tasks
    ]
    # built in the driver (no metadata tasks), one block per item
    return ray.data.from_items(items, override_num_blocks=len(items))


def _connect(address: str | None, num_workers: int, runtime_env: dict | None) -> bool:
    """Join `address` or start a small local instance; return True when we started/joined it here."""
    if ray.is_initialized():
        return False
    kwargs = {"include_dashboard": False, "logging_level": logging.WARNING, "log_to_driver": True}
    if runtime_env:
        kwargs["runtime_env"] = runtime_env
    if address:
        ray.init(address=address, **kwargs)
    else:
        ray.init(address="local", num_cpus=max(LOCAL_MIN_CPUS, num_workers), **kwargs)
    return True


def run_ray(
    fn_factory: Callable,
    table: pa.Table,
    tasks: list[ShardTask],
    job: JobSpec,
    num_workers: int,
    on_done: Callable[[dict], None],
    ray_address: str | None = None,
    num_gpus: float = 0,
    runtime_env: dict | None = None,
) -> float:
    """Process `tasks` on Ray with `num_workers` actors; return Ray's start-up seconds."""
    t0 = time.perf_counter()
    started = _connect(ray_address, num_workers, runtime_env)
    startup = time.perf_counter() - t0
    ctx = ray.data.DataContext.get_current()
    saved = {k: getattr(ctx, k) for k in ("enable_progress_bars", "print_on_execution_start") if hasattr(ctx, k)}
    for k in saved:  # our tqdm bar counts rows for both backends; no execution-plan banner
        setattr(ctx, k, False)
    # Ray Data's INFO chatter and its "progress bars disabled" notice would bury our bar
    quiet = {logging.getLogger("ray.data"): logging.WARNING,
             logging.getLogger("ray.data._internal.progress"): logging.ERROR}
    saved_levels = {lg: lg.level for lg in quiet}
    for lg, level in quiet.items():
        lg.setLevel(level)
    try:
        ds = _shard_dataset(table, tasks).map_batches(
            ShardWorker,
            fn_constructor_kwargs={"fn_factory": fn_factory, "job": job},
            batch_size=1,
            batch_format="pyarrow",
            compute=ray.data.ActorPoolStrategy(size=num_workers),
            num_cpus=1,
            num_gpus=num_gpus or None,
        )
        try:
            for batch in ds.iter_batches(batch_size=None, batch_format="pyarrow"):
                for raw in batch["record"].to_pylist():
                    on_done(json.loads(raw))
        except ray.exceptions.RayError as exc:
            # the worker's ShardError arrives as text inside Ray's wrapper: keep its one line
            found = re.search(r"ShardError: ([^\n]*)", str(exc))
            msg = found.group(1) if found else f"{type(exc).__name__}: {exc}"
            raise ShardError(f"Ray run stopped: {msg}; finished shards are kept, rerun to resume") from exc
    finally:
        for k, v in saved.items():
            setattr(ctx, k, v)
        for lg, level in saved_levels.items():
            lg.setLevel(level)
        if started:
            ray.shutdown()
    return startup
