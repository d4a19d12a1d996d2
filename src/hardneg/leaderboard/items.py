"""The item sets the leaderboard scores submissions on: the one reader's (`hardneg.items`), plus revisions.

A submission is judged against a built dataset folder (`hardneg build` output). What a split
holds (ids, candidates, positives, clusters, relevant videos) is read by `hardneg.items`, the
same reader `hardneg score` and `hardneg evaluate` use, so every part agrees on revisions.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path

from hardneg import benchmarks
from hardneg.items import ItemSet, load_benchmarks, load_item_sets


class _Tasks(Mapping):
    """benchmark name -> task kind, read live from the declarations (never a hand-kept list)."""

    def __getitem__(self, name: str) -> str:
        if not isinstance(name, str) or name not in benchmarks.names():
            raise KeyError(name)
        return benchmarks.get(name).task

    def __iter__(self):
        return iter(benchmarks.names())

    def __len__(self) -> int:
        return len(benchmarks.names())


BENCHMARK_TASKS: Mapping[str, str] = _Tasks()


def files_revision(files) -> str:
    """`sha256:` + 16 hex of the files' bytes in order: the data_revision `hardneg score` records
    for a local build (the builder writes byte-identical files, so a rebuild keeps it)."""
    h = hashlib.sha256()
    for p in files:
        h.update(Path(p).read_bytes())
    return "sha256:" + h.hexdigest()[:16]


def dataset_revision(folder: str | Path) -> str:
    """Content hash of a whole built folder (a label for the board's data, shown in its notes)."""
    return files_revision(sorted(Path(folder).rglob("*.parquet")))


__all__ = ["BENCHMARK_TASKS", "ItemSet", "dataset_revision", "files_revision", "load_benchmarks", "load_item_sets"]
