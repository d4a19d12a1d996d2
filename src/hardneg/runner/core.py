"""`run_map`: plan the shards, skip the finished ones, hand the rest to a backend, summarise."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

from hardneg.runner.inputs import load_input
from hardneg.runner.plan import JobSpec, make_plan, prepare_out_dir, write_manifest
from hardneg.runner.shards import completed_record
from hardneg.runner.summary import RunSummary
from hardneg.settings import Execution, from_keywords, refuse_unknown

BACKENDS = ("local", "ray")


def run_map(
    fn_factory: Callable[[], Callable],
    input: Any,
    out_dir: str | Path,
    id_column: str = "id",
    execution: Execution | None = None,
    overwrite: bool = False,
    **execution_options: Any,
) -> RunSummary:
    """Map a batch function over `input` in shards of `batch_size` rows, into `out_dir`.

    `fn_factory()` is called once per worker and returns `fn(batch) -> output`, where `batch`
    is a dict of equal-length lists (one per input column) and the output is a dict of lists
    or a pyarrow.Table whose rows carry `id_column`. Rows the function gives up on may stay
    with `skipped=True` and a `skip_reason`. The factory must be picklable (a module-level
    function or functools.partial) for more than one worker or for Ray.

    Shard k holds input rows [k*batch_size, (k+1)*batch_size); its file bytes do not depend
    on the backend or worker count, provided `fn` is a pure function of its batch: seed random
    choices per row (`row_seed(seed, row_id)`), and never let output depend on set or dict-of-
    hash iteration order, which differs between worker processes (PYTHONHASHSEED).
    Rerunning after an interruption skips finished shards.

    execution: where the shards run (`hardneg.settings.Execution`); or its fields as keywords (batch_size=256,
    backend="local", num_workers=1, ray_address, num_gpus=0, progress=True, ray_runtime_env), over it.
    """
    t0 = time.perf_counter()
    given = execution if execution is not None else Execution(batch_size=256)
    execution = from_keywords(Execution, "run_map", given, execution_options)
    refuse_unknown("run_map", execution_options, (Execution,))
    batch_size, backend, num_workers = execution.batch_size, execution.backend, execution.num_workers
    num_gpus, progress = execution.num_gpus, execution.progress
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if not isinstance(num_workers, int) or num_workers < 1:
        raise ValueError(f"num_workers must be a positive integer, got {num_workers!r}")
    if num_gpus and backend != "ray":
        raise ValueError("num_gpus applies to --backend ray; the local backend uses the device the model picks")
    if not callable(fn_factory):
        raise ValueError(f"fn_factory must be callable (returns the batch function), got {type(fn_factory).__name__}")
    table = load_input(input, id_column)
    plan = make_plan(table, id_column, batch_size)
    out = Path(out_dir)
    resuming = prepare_out_dir(out, plan, overwrite)
    n = len(plan.shards)
    job = JobSpec(out_dir=str(out.resolve()), id_column=id_column, n_shards=n)
    summary = RunSummary(backend=backend, num_workers=num_workers, out_dir=str(out), shards_total=n)

    records: dict[int, dict] = {}
    todo = []
    for task in plan.shards:
        rec = completed_record(out, task, n) if resuming else None
        if rec is None:
            todo.append(task)
        else:
            records[task.index] = rec
            summary.add(rec, resumed=True)
    write_manifest(out, plan, records, complete=False, summary=None)

    from tqdm.auto import tqdm

    bar = tqdm(total=plan.rows, initial=summary.rows_in, unit="row", disable=not progress,
               desc=f"hardneg {backend} x{num_workers}", dynamic_ncols=True)

    def on_done(record: dict) -> None:
        records[record["shard"]] = record
        summary.add(record, resumed=False)
        bar.update(record["rows_in"])

    try:
        if not todo:
            startup = 0.0
        elif backend == "local":
            from hardneg.runner.local import run_local

            startup = run_local(fn_factory, table, todo, job, num_workers, on_done)
        else:
            from hardneg.runner.ray_backend import run_ray

            startup = run_ray(fn_factory, table, todo, job, num_workers, on_done, ray_address=execution.ray_address,
                              num_gpus=num_gpus, runtime_env=execution.ray_runtime_env)
    except BaseException:
        write_manifest(out, plan, records, complete=False, summary=None)
        raise
    finally:
        bar.close()
    summary.startup_seconds = startup
    summary.seconds = time.perf_counter() - t0
    missing = [t.index for t in plan.shards if t.index not in records]
    if missing:  # a backend returned without an error but without every shard: never call it done
        write_manifest(out, plan, records, complete=False, summary=None)
        raise RuntimeError(f"shards {missing[:10]} were not written; rerun the same command to resume")
    write_manifest(out, plan, records, complete=True, summary=summary.to_dict())
    return summary
