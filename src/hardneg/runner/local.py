"""Local backend: in this process for one worker, a spawn process pool for more.

Never imports Ray. Each pool process builds the batch function once (models load once per
worker); shards are handed out in input order and written by whichever process ran them.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Callable

import pyarrow as pa

from hardneg.pool import available_cores
from hardneg.runner.plan import JobSpec, ShardTask
from hardneg.runner.shards import ShardError, build_fn, process_shard

# Per-process worker state of the pool (set by the initializer, one per spawned process).
_worker_fn = None
_worker_job: JobSpec | None = None


def _init_worker(fn_factory: Callable, job: JobSpec, decode_workers: int = 0) -> None:
    global _worker_fn, _worker_job
    _worker_job = job
    if decode_workers:  # the cores are shared among the runner's workers (each decodes on its share)
        from hardneg.decoding import POOL_MIN_CORES

        if decode_workers >= POOL_MIN_CORES:  # a pool of its share of processes (hardneg.pool)
            os.environ.setdefault("HARDNEG_DECODE_WORKERS", str(decode_workers))
        else:  # below the pool's threshold one process decodes on its threads (hardneg.decoding.choose_path)
            os.environ.setdefault("HARDNEG_THREADS", str(decode_workers))
    try:
        _worker_fn = build_fn(fn_factory)
    except ShardError as exc:  # an initializer error would only say "broken pool": report it per task
        _worker_fn = exc


def _run_in_worker(task: ShardTask, rows: pa.Table) -> dict:
    if isinstance(_worker_fn, ShardError):
        raise _worker_fn
    return process_shard(_worker_fn, rows, task, _worker_job)


def run_local(
    fn_factory: Callable,
    table: pa.Table,
    tasks: list[ShardTask],
    job: JobSpec,
    num_workers: int,
    on_done: Callable[[dict], None],
) -> float:
    """Process `tasks`, calling `on_done(record)` as each shard lands; return start-up seconds."""
    t0 = time.perf_counter()
    if num_workers <= 1:
        fn = fn_factory()
        startup = time.perf_counter() - t0
        for task in tasks:
            on_done(process_shard(fn, table.slice(task.start, task.stop - task.start), task, job))
        return startup

    try:
        pickle.dumps(fn_factory)
    except Exception as exc:
        raise ValueError(
            f"fn_factory {fn_factory!r} is not picklable ({exc}), so it cannot reach worker processes; "
            "use a module-level function or functools.partial of one, or --workers 1"
        ) from exc
    ctx = mp.get_context("spawn")
    window = 2 * num_workers  # bounded in-flight shards: memory stays flat on long inputs
    with ProcessPoolExecutor(num_workers, mp_context=ctx, initializer=_init_worker,
                             initargs=(fn_factory, job, max(1, available_cores() // num_workers))) as pool:
        startup = time.perf_counter() - t0
        pending: set[Future] = set()
        queue = iter(tasks)
        error: BaseException | None = None
        while True:
            while error is None and len(pending) < window:
                task = next(queue, None)
                if task is None:
                    break
                pending.add(pool.submit(_run_in_worker, task, table.slice(task.start, task.stop - task.start)))
            if not pending:
                break
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                if fut.cancelled():
                    continue
                exc = fut.exception()
                if exc is None:
                    on_done(fut.result())
                elif error is None:
                    error = exc
            if error is not None:  # let running shards finish (they are valid), start no more
                for fut in pending:
                    fut.cancel()
        if error is not None:
            raise error
    return startup
