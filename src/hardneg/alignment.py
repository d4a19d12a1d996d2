"""Which items a predictions file covers, and which dataset it may be scored against.

Two rules shared by `hardneg evaluate` and the leaderboard:

* **Duplicates and unknown ids are errors, partial coverage is reported.** `check_prediction_ids`
  refuses an id that appears twice (a FIRE file with every query twice would otherwise count
  each query twice and move both the metric and its chance level) or that is not in the split,
  and returns a `Coverage`: how many of the split's items (or of a collection's videos) were
  scored, which are missing, and whether the result is comparable with full-coverage results.
  The leaderboard refuses anything short of full coverage; `hardneg evaluate` may score a
  partial file but prints and records the coverage and marks the result "not comparable".
* **Only datasets the operator names are loaded.** `resolve_dataset` picks the dataset to load
  for a predictions file: `--dataset` when given; else the local folder the file records (when
  it exists here); else the Hub dataset its benchmark *declares* (`hardneg.benchmarks`). A
  different Hub id named by the file's metadata is loaded only with
  `--trust-metadata-dataset`, since a file's metadata is the file author's text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

#: how many example ids a message or a summary lists
SHOW = 5


class PredictionIdError(ValueError):
    """Ids that cannot be scored: repeated, unknown to the split, or empty."""


def _cut(value: Any, limit: int = 80) -> str:
    text = str(value)
    return repr(text if len(text) <= limit else text[:limit] + "…")


def _examples(values: Sequence[Any]) -> str:
    shown = ", ".join(_cut(v) for v in values[:SHOW])
    return shown + (f" ... ({len(values):,} in all)" if len(values) > SHOW else "")


@dataclass(frozen=True)
class Coverage:
    """How a predictions file covers a split (or a retrieval collection).

    rows: for each prediction, in file order, the index of its item in `item_ids`.
    """

    n_items: int
    n_scored: int
    missing: tuple[str, ...] = ()  # every missing id, in the split's order
    rows: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64), repr=False, compare=False)
    what: str = "items"

    @property
    def fraction(self) -> float:
        return self.n_scored / self.n_items if self.n_items else 0.0

    @property
    def complete(self) -> bool:
        return self.n_items > 0 and self.n_scored == self.n_items

    @property
    def comparable(self) -> bool:
        """Only full coverage is comparable with other results on the split."""
        return self.complete

    def summary(self) -> str:
        """'scored 4 of 5 videos (80.0%): not comparable with full-coverage results; missing: 'v4''."""
        text = f"scored {self.n_scored:,} of {self.n_items:,} {self.what} ({100 * self.fraction:.1f}%)"
        if self.complete:
            return text
        return (f"{text}: not comparable with full-coverage results; missing: {_examples(list(self.missing))}")

    def to_dict(self) -> dict[str, Any]:
        return {"what": self.what, "n_items": self.n_items, "n_scored": self.n_scored, "fraction": self.fraction,
                "complete": self.complete, "comparable": self.comparable, "n_missing": len(self.missing),
                "missing_examples": list(self.missing[:SHOW])}


def check_prediction_ids(ids: Iterable[Any], item_ids: Iterable[Any], what: str = "items") -> Coverage:
    """The coverage of `item_ids` by the prediction rows `ids`; PredictionIdError for empty, repeated or unknown ids.

    Ids compare as strings. Every problem of one kind is counted and a few are named, so one
    round of fixes suffices.
    """
    ids = list(ids)
    index: dict[str, int] = {}
    for k, item in enumerate(item_ids):
        index.setdefault(str(item), k)
    n_items = len(index)
    empty = sum(1 for i in ids if i is None or (isinstance(i, str) and not i))
    if empty:
        raise PredictionIdError(f"{empty:,} prediction rows have an empty id; every row needs its item id")
    keys = [str(i) for i in ids]
    seen: dict[str, int] = {}
    for key in keys:
        seen[key] = seen.get(key, 0) + 1
    dups = [key for key, n in seen.items() if n > 1]
    problems = []
    if dups:
        extra_rows = sum(seen[key] - 1 for key in dups)
        problems.append(f"{len(dups):,} ids appear more than once ({extra_rows:,} extra rows): {_examples(dups)}; "
                        f"score each of the {what} once")
    unknown = [key for key in seen if key not in index]
    if unknown:
        problems.append(f"{len(unknown):,} ids are not among the {n_items:,} {what}: {_examples(unknown)}; "
                        "score the same dataset, config and split")
    if problems:
        raise PredictionIdError("; ".join(problems))
    rows = np.fromiter((index[key] for key in keys), dtype=np.int64, count=len(keys))
    covered = np.zeros(n_items, dtype=bool)
    covered[rows] = True
    order = list(index)
    missing = tuple(order[k] for k in np.flatnonzero(~covered))
    return Coverage(n_items=n_items, n_scored=len(keys), missing=missing, rows=rows, what=what)


def resolve_dataset(meta: dict, dataset: str | None = None, trust_metadata_dataset: bool = False) -> tuple[str, str]:
    """(dataset to load, why): `dataset` (an explicit --dataset), else the file's recorded local folder when it
    exists here, else the Hub dataset the file's benchmark declares. A Hub id that only the file's metadata names
    (and its benchmark does not declare) is used only with `trust_metadata_dataset`; otherwise ValueError says
    how to load it on purpose."""
    if dataset:
        return str(dataset), "--dataset"
    for key in ("dataset_path", "dataset"):
        value = meta.get(key)
        if isinstance(value, str) and value and Path(value).is_dir():
            return value, f"the file's local folder ({key})"
    declared = None
    bench = meta.get("benchmark")
    if isinstance(bench, str):
        from hardneg import benchmarks

        if bench in benchmarks.names():
            declared = benchmarks.get(bench).hub_id
    named = [v for v in (meta.get("hub_id"), meta.get("dataset")) if isinstance(v, str) and v]
    foreign = [v for v in named if v != declared and not Path(v).is_dir()]
    if foreign and (trust_metadata_dataset or declared is None):
        if trust_metadata_dataset:
            return foreign[0], "the file's metadata (--trust-metadata-dataset)"
        raise ValueError(f"the predictions file names the dataset {_cut(foreign[0])}, which no benchmark declares; "
                         f"pass --dataset {_cut(foreign[0])[1:-1]} (or --trust-metadata-dataset) to load it on purpose")
    if declared:
        if foreign:  # the file names another Hub dataset: the declared one is used, and the caller can say so
            return declared, (f"the {bench} declaration (the file names {_cut(foreign[0])}; pass --dataset or "
                              "--trust-metadata-dataset to use that instead)")
        return declared, f"the {bench} declaration"
    raise ValueError("the predictions file does not name a dataset found here; pass --dataset (folder or Hub id)")
