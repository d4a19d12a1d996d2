"""The benchmark item sets the leaderboard checks submissions against and scores them on.

A submission is judged against a built dataset folder (`hardneg build` output, the
Hub layout): which ids a split holds, how many candidates each item has, which one
is the positive, which video it belongs to (the bootstrap cluster) and, for FIRE,
which videos are relevant under the original and under the FIRE labels.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from hardneg.schema import MC_ITEM_SCHEMA, QREL_SCHEMA, QUERY_SCHEMA, VIDEO_SCHEMA, check_columns

#: benchmark -> task, as in the predictions metadata
BENCHMARK_TASKS: dict[str, str] = {
    "feint6k": "multiple_choice",
    "contrast_sets": "multiple_choice",
    "posrank": "multiple_choice",
    "fire": "retrieval",
}


@dataclass
class ItemSet:
    """One (benchmark, config, split) a predictions file can be scored on."""

    benchmark: str
    config: str
    split: str
    task: str
    ids: np.ndarray  # (N,) str: item ids (multiple choice) or query ids (retrieval)
    clusters: np.ndarray  # (N,) str: video of the item / original video of the query
    n_candidates: np.ndarray  # (N,) int: captions per item, or collection size per query
    label: np.ndarray | None = None  # (N,) int: index of the positive caption (multiple choice)
    captions: list[list[str]] | None = None  # multiple choice, for text-only baselines
    video_ids: list[str] | None = None  # retrieval: the collection, in canonical order
    original: np.ndarray | None = None  # retrieval: (N,) index of the original positive video
    fire_relevant: list[list[int]] | None = None  # retrieval: relevant video indices under FIRE labels
    revision: str = ""  # what `hardneg score` records as data_revision for this split of a local build
    files: list[Path] = field(default_factory=list)  # the Parquet files the revision hashes
    accepted_revisions: set[str] = field(default_factory=set)  # e.g. the Hub commit of the dataset repo
    index: dict[str, int] = field(default_factory=dict)

    def __post_init__(self):
        self.index = {str(i): k for k, i in enumerate(self.ids.tolist())}

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.benchmark, self.config, self.split)

    def __len__(self) -> int:
        return int(self.ids.shape[0])


def files_revision(files) -> str:
    """`sha256:` + 16 hex of the files' bytes in order: the data_revision `hardneg score` records
    for a local build (the builder writes byte-identical files, so a rebuild keeps it)."""
    h = hashlib.sha256()
    for p in files:
        h.update(Path(p).read_bytes())
    return "sha256:" + h.hexdigest()[:16]


def fire_revision(qrels_file: Path, queries_file: Path, videos_file: Path) -> str:
    """The scorer's revision of a FIRE config: one hash per table, combined when they differ."""
    revs = [files_revision([f]) for f in (qrels_file, queries_file, videos_file)]
    if revs[0] == revs[1] == revs[2]:
        return revs[0]
    return "sha256:" + hashlib.sha256("".join(revs).encode()).hexdigest()[:16]


def dataset_revision(folder: str | Path) -> str:
    """Content hash of a whole built folder (a label for the board's data, shown in its notes)."""
    return files_revision(sorted(Path(folder).rglob("*.parquet")))


def _split_files(config_dir: Path) -> dict[str, Path]:
    """{split: parquet file} of one config folder (Hub naming `<split>-00000-of-00001.parquet`)."""
    out: dict[str, Path] = {}
    for p in sorted(config_dir.glob("*.parquet")):
        split = p.name.split("-0", 1)[0]
        if split in out:
            raise ValueError(f"{config_dir}: split '{split}' has more than one Parquet shard; rebuild the folder")
        out[split] = p
    return out


def _mc_items(benchmark: str, config: str, split: str, path: Path) -> ItemSet:
    table = pq.read_table(path)
    check_columns(table, MC_ITEM_SCHEMA, f"{path}")
    ids = np.asarray(table.column("id").to_pylist(), dtype=object)
    captions = table.column("captions").to_pylist()
    return ItemSet(
        benchmark=benchmark,
        config=config,
        split=split,
        task="multiple_choice",
        ids=ids,
        clusters=np.asarray(table.column("video_id").to_pylist(), dtype=object),
        n_candidates=np.asarray([len(c) for c in captions], dtype=np.int64),
        label=np.asarray(table.column("label").to_pylist(), dtype=np.int64),
        captions=captions,
        revision=files_revision([path]),
        files=[path],
    )


def _fire_items(config: str, split: str, root: Path) -> ItemSet:
    paths = []

    def read(name: str, schema):
        files = _split_files(root / name)
        if split not in files:
            raise ValueError(f"{root / name} has no '{split}' split; rebuild the FIRE folder with `hardneg build fire`")
        t = pq.read_table(files[split])
        check_columns(t, schema, str(files[split]))
        paths.append(files[split])
        return t

    qrels = read(config, QREL_SCHEMA)
    queries = read(f"{config}-queries", QUERY_SCHEMA)
    videos = read(f"{config}-videos", VIDEO_SCHEMA)
    video_ids = [str(v) for v in videos.column("video_id").to_pylist()]
    vindex = {v: i for i, v in enumerate(video_ids)}
    qids = [str(q) for q in queries.column("query_id").to_pylist()]
    qindex = {q: i for i, q in enumerate(qids)}
    orig_videos = queries.column("video_id").to_pylist()
    missing = [v for v in orig_videos if v not in vindex]
    if missing:
        raise ValueError(f"{root}: original videos {missing[:3]} of config '{config}' are not in its video collection")
    original = np.asarray([vindex[v] for v in orig_videos], dtype=np.int64)
    relevant: list[set[int]] = [set() for _ in qids]
    for q, v, lab in zip(qrels.column("query_id").to_pylist(), qrels.column("video_id").to_pylist(),
                         qrels.column("label").to_pylist()):
        if lab == 1 and q in qindex and v in vindex:
            relevant[qindex[q]].add(vindex[v])
    return ItemSet(
        benchmark="fire",
        config=config,
        split=split,
        task="retrieval",
        ids=np.asarray(qids, dtype=object),
        clusters=np.asarray(orig_videos, dtype=object),
        n_candidates=np.full(len(qids), len(video_ids), dtype=np.int64),
        video_ids=video_ids,
        original=original,
        fire_relevant=[sorted(r) for r in relevant],
        revision=fire_revision(*paths),
        files=paths,
    )


def load_item_sets(folder: str | Path, benchmark: str, extra_revisions=()) -> dict[tuple[str, str, str], ItemSet]:
    """Every (config, split) of a built benchmark folder, keyed by (benchmark, config, split).

    extra_revisions: other data_revision values to accept, e.g. the Hub commit the folder was downloaded at.
    """
    folder = Path(folder)
    if benchmark not in BENCHMARK_TASKS:
        raise ValueError(f"unknown benchmark {benchmark!r}; choose one of {sorted(BENCHMARK_TASKS)}")
    if not folder.is_dir():
        raise FileNotFoundError(f"benchmark folder {folder} does not exist; build it with `hardneg build {benchmark}`")
    out: dict[tuple[str, str, str], ItemSet] = {}
    for config_dir in sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")):
        config = config_dir.name
        if benchmark == "fire" and (config.endswith("-queries") or config.endswith("-videos")):
            continue
        for split, path in _split_files(config_dir).items():
            if benchmark == "fire":
                items = _fire_items(config, split, folder)
            else:
                items = _mc_items(benchmark, config, split, path)
            items.accepted_revisions = {items.revision, *extra_revisions}
            out[items.key] = items
    if not out:
        raise ValueError(f"{folder} holds no config folders with Parquet splits; is it a `hardneg build` output?")
    return out


def load_benchmarks(root: str | Path, benchmarks=tuple(BENCHMARK_TASKS),
                    extra_revisions: dict[str, set[str]] | None = None) -> dict[tuple[str, str, str], ItemSet]:
    """Item sets of every benchmark folder `root/<benchmark>` that exists (extra_revisions per benchmark)."""
    root = Path(root)
    out: dict[tuple[str, str, str], ItemSet] = {}
    for b in benchmarks:
        if (root / b).is_dir():
            out.update(load_item_sets(root / b, b, (extra_revisions or {}).get(b, ())))
    if not out:
        raise FileNotFoundError(
            f"no built benchmark folders under {root}; expected {', '.join(f'{root}/{b}' for b in benchmarks)}"
        )
    return out
