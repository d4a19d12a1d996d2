"""Released per-item outputs -> a predictions file (`hardneg import-scores`).

Papers release per-item scores or judged answers. Each benchmark declares which of those formats
it reads (`Benchmark.score_importers`, a `ScoreImporter` naming a parser function); the parser
joins the file's rows to the items of one built config and returns `ImportedScores`. This module
does what is the same for every format: it refuses or keeps (the user's choice, never silently)
rows that match no item and items with no row, and writes the predictions file that `hardneg
evaluate`, `run` and `submit` read, with the source file recorded in its metadata.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hardneg.benchmarks.base import ImportedScores  # what a format's parser returns (declared beside the importer)

#: what --on-mismatch takes
ON_MISMATCH = ("refuse", "keep")
#: examples listed per kind of mismatch
SHOW = 5


@dataclass
class ImportResult:
    out: Path
    n_items: int
    n_written: int
    missing: list[str]
    unmatched: list[str]
    metadata: dict[str, Any]


def _examples(values: list[str]) -> str:
    shown = "; ".join(values[:SHOW])
    return shown + (f"; ... ({len(values):,} in all)" if len(values) > SHOW else "")


def mismatch_text(unmatched: list[str], missing: list[str], what: str) -> str:
    """'3 rows match no item (e.g. ...); 2 items have no row (e.g. ...)'."""
    parts = []
    if unmatched:
        parts.append(f"{len(unmatched):,} row{'s' if len(unmatched) != 1 else ''} of the file "
                     f"{'match' if len(unmatched) != 1 else 'matches'} no {what} "
                     f"(e.g. {_examples(unmatched)})")
    if missing:
        plural = {"query": "queries"}.get(what, what + "s")
        parts.append(f"{len(missing):,} {plural if len(missing) != 1 else what} "
                     f"{'have' if len(missing) != 1 else 'has'} no complete row "
                     f"(e.g. {_examples(missing)})")
    return "; ".join(parts)


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def default_config(dataset: str, benchmark: str) -> str:
    """The first scoreable config of a built folder (a Hub id needs --config)."""
    from hardneg import benchmarks
    from hardneg.items import card_configs

    if not Path(dataset).is_dir():
        raise ValueError(f"--data {dataset} is not a local folder: pass --config (one of the benchmark's configs)")
    configs = benchmarks.get(benchmark).scoreable(card_configs(Path(dataset)))
    if not configs:
        raise ValueError(f"{dataset} holds no configs of {benchmark}; build it with `hardneg build {benchmark}`")
    return configs[0]


def import_scores(benchmark: str, file: str | Path, dataset: str, model_id: str, out: str | Path,
                  config: str | None = None, fmt: str | None = None, on_mismatch: str = "refuse",
                  model_revision: str | None = None, overwrite: bool = False) -> ImportResult:
    """Turn a released per-item file into a predictions Parquet for `benchmark` / `config` of `dataset`."""
    import numpy as np
    import pyarrow as pa

    from hardneg import __version__, benchmarks
    from hardneg.io import atomic_write_parquet, refuse_overwrite
    from hardneg.items import folder_benchmark, is_hub_id, load_benchmark
    from hardneg.schema import PREDICTIONS_SCHEMA, predictions_metadata

    if on_mismatch not in ON_MISMATCH:
        raise ValueError(f"--on-mismatch is {on_mismatch!r}; use one of {list(ON_MISMATCH)}")
    from hardneg import guards

    model_id = guards.model_id(model_id, "--model-id")  # the one model-id guard: 'org/my model' is refused (N10)
    model_revision = guards.optional_text(model_revision, "--model-revision",
                                          fix="give the model's revision (a commit or tag), or leave it out")
    decl = benchmarks.get(benchmark)
    importer = decl.score_importer(fmt)
    file = Path(file)
    if not file.is_file():
        raise FileNotFoundError(f"released file {file} not found; pass the file the authors published "
                                f"({importer.description})")
    out = Path(out)
    refuse_overwrite(out, overwrite)
    if Path(dataset).is_dir():
        built = folder_benchmark(Path(dataset))
        if built and built != decl.name:
            raise ValueError(f"--data {dataset} holds {built}, not {decl.name}; pass the folder built with "
                             f"`hardneg build {decl.name}`")
    config = config or default_config(dataset, decl.name)
    data = load_benchmark(dataset, config, benchmark=decl.name)
    imported: ImportedScores = importer.load()(file, data)

    what = "query" if data.task == "retrieval" else "item"
    ids = list(imported.scores)
    complete = [i for i in ids if all(s is not None for s in imported.scores[i])]
    done = set(complete)
    missing = [i for i in ids if i not in done]
    problem = mismatch_text(imported.unmatched, missing, what)
    if problem and on_mismatch == "refuse":
        raise ValueError(f"{file}: {problem}. Nothing was written. Check that the file belongs to {decl.name} "
                         f"config {config!r} (--data {dataset}); or pass --on-mismatch keep to write the "
                         f"{len(complete):,} matched {what}s (hardneg evaluate then reports the coverage)")
    if not complete:
        raise ValueError(f"{file}: no {what} of {decl.name} config {config!r} has a complete row; "
                         "is it the right file and --data?")
    values = [[float(s) for s in imported.scores[i]] for i in complete]
    table = pa.Table.from_pydict(
        {"id": complete, "scores": pa.array(values, pa.list_(pa.float32()))}, schema=PREDICTIONS_SCHEMA)
    if any(not np.array_equal(np.asarray(v, np.float32).astype(np.float64), np.asarray(v)) for v in values[:1000]):
        imported.notes.append("scores were rounded to float32, the predictions file's type")
    source = {
        "file": file.name, "sha256": file_sha256(file), "format": importer.name, "description": importer.description,
        "rows_read": imported.rows_read, "unmatched_rows": len(imported.unmatched),
        "unmatched_examples": imported.unmatched[:SHOW], "missing": len(missing), "missing_examples": missing[:SHOW],
        "rows_for_other_configs": imported.other_configs, "on_mismatch": on_mismatch, "notes": imported.notes,
    }
    meta = dict(
        task=data.task, benchmark=decl.name, config=config, split=",".join(data.splits),
        data_revision=data.data_revision, model_id=model_id, model_revision=model_revision,
        hub_id=dataset if is_hub_id(str(dataset)) else decl.hub_id,
        dataset_path=None if is_hub_id(str(dataset)) else str(Path(dataset).resolve()),
        model={"model_id": model_id, "adapter": "imported", "revision": model_revision},
        frames=None, hardneg_version=__version__, imported_from=source,
        rows_total=len(ids), rows_scored=len(complete),
        **({"video_ids": imported.video_ids} if imported.video_ids is not None else {}),
    )
    table = table.replace_schema_metadata(predictions_metadata(**meta))
    atomic_write_parquet(table, out)
    return ImportResult(out, len(ids), len(complete), missing, imported.unmatched, meta)
