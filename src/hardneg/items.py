"""The one reader of built benchmark data, and the one alignment of predictions to items.

`load_benchmark` reads one config of a built folder (`hardneg build` output: the README card's
`configs:` say which Parquet files hold which split) or of a Hub dataset repo, as Arrow tables
(`BenchmarkData`: what scoring needs, captions and query texts included). `item_set` turns
those tables into arrays (`ItemSet`: what the results engine needs: ids, clusters, positives,
relevant videos, breakdown columns). `align_predictions` matches a predictions table to an
`ItemSet` by id, refuses duplicates and unknown ids, and reports coverage.

Everything benchmark-specific (which configs are companion tables, what the task is) comes from
the benchmark's declaration (`hardneg.benchmarks`).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from hardneg import benchmarks

#: item columns a breakdown may use
BREAKDOWN_COLUMNS = ("category", "source_dataset")


# ----------------------------------------------------------------------------- tables


@dataclass
class BenchmarkData:
    """One benchmark config, loaded: items (multiple choice) or queries + videos + qrels (retrieval)."""

    dataset: str
    benchmark: str
    config: str
    splits: list[str]
    data_revision: str
    items: pa.Table | None = None  # MC_ITEM_SCHEMA rows, all chosen splits
    queries: pa.Table | None = None  # retrieval
    videos: pa.Table | None = None
    qrels: pa.Table | None = None
    files: list[Path] = field(default_factory=list)  # local Parquet files read, in order (empty for the Hub)

    @property
    def declaration(self) -> benchmarks.Benchmark:
        return benchmarks.get(self.benchmark)

    @property
    def task(self) -> str:
        return self.declaration.task

    @property
    def is_local(self) -> bool:
        return Path(self.dataset).is_dir()


_CARD_CACHE: dict[tuple, dict] = {}


def _card_header(card: Path, text: str) -> dict:
    """The card's YAML header, parsed once per file version (a card's YAML is large: loading a board's item sets
    read each card once per config, most of `hardneg leaderboard show`'s time); libyaml's loader when present."""
    import yaml

    st = card.stat()
    key = (str(card.resolve()), st.st_mtime_ns, st.st_size)
    if key not in _CARD_CACHE:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        _CARD_CACHE[key] = yaml.load(text.split("---", 2)[1], Loader=loader) or {}
    return _CARD_CACHE[key]


def card_configs(folder: Path) -> dict[str, dict[str, list[str]]]:
    """{config: {split: [data file paths]}} from a built folder's README YAML (in card order)."""
    card = Path(folder) / "README.md"
    text = card.read_text(encoding="utf-8") if card.is_file() else ""
    if not text.startswith("---"):
        return _layout_configs(Path(folder))
    header = _card_header(card, text)
    out: dict[str, dict[str, list[str]]] = {}
    for cfg in header.get("configs", []):
        splits: dict[str, list[str]] = {}
        for df in cfg.get("data_files", []):
            paths = df["path"] if isinstance(df["path"], list) else [df["path"]]
            splits.setdefault(df["split"], []).extend(paths)
        out[cfg["config_name"]] = splits
    return out


def _layout_configs(folder: Path) -> dict[str, dict[str, list[str]]]:
    """Without a card: the Hub file layout `<config>/<split>-00000-of-00001.parquet`."""
    out: dict[str, dict[str, list[str]]] = {}
    for sub in sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")) if folder.is_dir() else []:
        for f in sorted(sub.glob("*.parquet")):
            out.setdefault(sub.name, {}).setdefault(f.name.split("-0", 1)[0], []).append(f"{sub.name}/{f.name}")
    return out


def folder_benchmark(folder: Path) -> str | None:
    """The benchmark a built folder holds, from its build report."""
    report = Path(folder) / "build_report.json"
    if report.is_file():
        return json.loads(report.read_text()).get("benchmark")
    return None


def scoreable_configs(folder: str | Path, benchmark: str | None = None) -> list[str]:
    """Configs of a built folder that get their own predictions (not companion tables)."""
    folder = Path(folder)
    decl = benchmarks.get(benchmark or folder_benchmark(folder) or "")
    return decl.scoreable(card_configs(folder))


def _folder_files(folder: Path, config: str) -> dict[str, list[Path]]:
    configs = card_configs(folder)
    if not configs:
        raise ValueError(f"{folder} has no README.md with `configs:` and no <config>/<split>-*.parquet files; "
                         "is it a `hardneg build` output?")
    if config not in configs:
        raise ValueError(f"dataset {folder} has no config {config!r}; choose one of {sorted(configs)}")
    return {s: [folder / p for p in ps] for s, ps in configs[config].items()}


def _read_folder_table(folder: Path, config: str, splits: list[str] | None, read: list[Path] | None = None) -> tuple[pa.Table, list[str], str]:
    files = _folder_files(folder, config)
    chosen = list(files) if not splits else splits
    unknown = [s for s in chosen if s not in files]
    if unknown:
        raise ValueError(f"config {config!r} of {folder} has no split(s) {unknown}; choose from {sorted(files)}")
    h = hashlib.sha256()
    tables = []
    for s in chosen:
        for p in files[s]:
            if not p.is_file():
                raise FileNotFoundError(f"data file {p} listed in {folder}/README.md is missing; rebuild the dataset")
            h.update(p.read_bytes())
            tables.append(pq.read_table(p).replace_schema_metadata(None))
            if read is not None:
                read.append(p)
    return pa.concat_tables(tables, promote_options="permissive"), chosen, "sha256:" + h.hexdigest()[:16]


def _read_hub_table(repo: str, config: str, splits: list[str] | None, revision: str | None):
    from hardneg.hub_access import ensure_dataset_loadable

    ensure_dataset_loadable(repo)  # offline: one clear message with the fix, not huggingface_hub's traceback
    import datasets
    from huggingface_hub import HfApi

    sha = HfApi().dataset_info(repo, revision=revision).sha
    dd = datasets.load_dataset(repo, config, revision=sha)
    chosen = list(dd) if not splits else splits
    unknown = [s for s in chosen if s not in dd]
    if unknown:
        raise ValueError(f"config {config!r} of {repo} has no split(s) {unknown}; choose from {sorted(dd)}")
    table = pa.concat_tables([dd[s].data.table for s in chosen], promote_options="permissive")
    return table, chosen, sha


def is_hub_id(dataset: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z0-9][\w.-]*/[\w.-]+", dataset)) and not Path(dataset).exists()


def load_benchmark(dataset: str, config: str, splits: list[str] | None = None, benchmark: str | None = None,
                   revision: str | None = None) -> BenchmarkData:
    """Load one config of a built repo folder or a Hub dataset id."""
    folder = Path(dataset)
    files: list[Path] = []
    if folder.is_dir():
        bench = benchmark or folder_benchmark(folder)

        def read(c, s):
            return _read_folder_table(folder, c, s, files)
    elif is_hub_id(dataset):
        known = benchmarks.by_hub_id(dataset)
        bench = benchmark or (known.name if known else None)

        def read(c, s):
            return _read_hub_table(dataset, c, s, revision)
    else:
        raise FileNotFoundError(f"dataset {dataset} is neither an existing folder nor a Hub id (owner/name); "
                                "build one with hardneg build or pass a Hub dataset id")
    if not bench:
        raise ValueError(f"cannot tell which benchmark {dataset} is; pass --benchmark ({benchmarks.names_text()})")
    decl = benchmarks.get(bench)
    if decl.is_retrieval:
        qrels, chosen, rev_q = read(config, splits)
        queries, _, rev_a = read(f"{config}-queries", chosen)
        videos, _, rev_b = read(f"{config}-videos", chosen)
        rev = rev_q if rev_q == rev_a == rev_b else "sha256:" + hashlib.sha256(
            f"{rev_q}{rev_a}{rev_b}".encode()).hexdigest()[:16]
        return BenchmarkData(dataset, bench, config, chosen, rev, queries=queries, videos=videos, qrels=qrels, files=files)
    items, chosen, rev = read(config, splits)
    for col in ("id", "video_id", "captions", "label"):
        if col not in items.column_names:
            raise ValueError(f"dataset {dataset} config {config}: no column {col!r}; is it a multiple-choice benchmark?")
    return BenchmarkData(dataset, bench, config, chosen, rev, items=items, files=files)


def load_pairs(dataset: str, split: str = "train", benchmark: str | None = None,
               revision: str | None = None) -> pa.Table:
    """The video-caption pairs (`hardneg.schema.PAIR_SCHEMA`) of a built folder or Hub dataset, for training.

    They live in the config the declaration names `pairs_config`; a benchmark without one has no
    training data, and the error says which benchmarks have.
    """
    from hardneg.schema import PAIR_SCHEMA, check_columns

    folder = Path(dataset)
    bench = benchmark or (folder_benchmark(folder) if folder.is_dir() else
                          getattr(benchmarks.by_hub_id(dataset), "name", None))
    if not bench:
        raise ValueError(f"cannot tell which benchmark {dataset} is; pass benchmark= ({benchmarks.names_text()})")
    decl = benchmarks.get(bench)
    if not decl.pairs_config:
        having = [n for n, b in benchmarks.all_benchmarks().items() if b.pairs_config]
        raise ValueError(f"benchmark {bench!r} has no {split} split of video-caption pairs (its declaration names no "
                         f"pairs_config); benchmarks with one: {', '.join(having) or 'none'}, or pass a folder of "
                         "video-caption pairs")
    if folder.is_dir():
        table, _, _ = _read_folder_table(folder, decl.pairs_config, [split])
    elif is_hub_id(dataset):
        table, _, _ = _read_hub_table(dataset, decl.pairs_config, [split], revision)
    else:
        raise FileNotFoundError(f"dataset {dataset} is neither an existing folder nor a Hub id (owner/name)")
    check_columns(table, PAIR_SCHEMA, f"{dataset} config {decl.pairs_config} split {split}")
    return table.select(PAIR_SCHEMA.names)


# ----------------------------------------------------------------------------- arrays


@dataclass
class ItemSet:
    """One (benchmark, config, split) as arrays: what the results engine and the leaderboard need."""

    benchmark: str
    config: str
    split: str
    task: str
    ids: np.ndarray  # (N,) str: item ids (multiple choice) or query ids (retrieval)
    clusters: np.ndarray  # (N,) str: video of the item / original video of the query (bootstrap unit)
    n_candidates: np.ndarray  # (N,) int: captions per item, or collection size per query
    label: np.ndarray | None = None  # (N,) int: index of the positive caption (multiple choice)
    captions: list[list[str]] | None = None  # multiple choice, for text-only baselines and the demo
    negative_types: list[list[str]] | None = None  # multiple choice, one per candidate
    video_ids: list[str] | None = None  # retrieval: the collection, in canonical order
    original: np.ndarray | None = None  # retrieval: (N,) index of the original positive video
    relevant: list[list[int]] | None = None  # retrieval: relevant video indices under the extra labels
    groups: dict[str, np.ndarray] = field(default_factory=dict)  # breakdown column -> (N,) str
    revision: str = ""  # the data_revision `hardneg score` records for this data
    files: list[Path] = field(default_factory=list)  # the local Parquet files behind `revision`
    accepted_revisions: set[str] = field(default_factory=set)  # e.g. the Hub commit of the dataset repo
    index: dict[str, int] = field(default_factory=dict)

    def __post_init__(self):
        self.index = {str(i): k for k, i in enumerate(self.ids.tolist())}
        if not self.accepted_revisions:
            self.accepted_revisions = {self.revision}

    @property
    def declaration(self) -> benchmarks.Benchmark:
        return benchmarks.get(self.benchmark)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.benchmark, self.config, self.split)

    @property
    def max_candidates(self) -> int:
        return int(self.n_candidates.max()) if len(self) else 0

    def __len__(self) -> int:
        return int(self.ids.shape[0])


def _strings(values) -> np.ndarray:
    return np.asarray(["" if v is None else str(v) for v in values], dtype=object)


def relevant_lists(queries: pa.Table, videos: pa.Table, qrels: pa.Table) -> tuple[list[str], np.ndarray, list[list[int]]]:
    """(video collection order, index of each query's original video, relevant video indices per query).

    The one place the FIRE relevance is joined: rows with label 1, either source.
    """
    video_ids = [str(v) for v in videos.column("video_id").to_pylist()]
    vindex = {v: i for i, v in enumerate(video_ids)}
    qids = [str(q) for q in queries.column("query_id").to_pylist()]
    qindex = {q: i for i, q in enumerate(qids)}
    orig_videos = [str(v) for v in queries.column("video_id").to_pylist()]
    missing = [v for v in orig_videos if v not in vindex]
    if missing:
        raise ValueError(f"original videos {missing[:3]} are not in the video collection; rebuild the dataset")
    original = np.asarray([vindex[v] for v in orig_videos], dtype=np.int64)
    relevant: list[set[int]] = [set() for _ in qids]
    for q, v, lab in zip(qrels.column("query_id").to_pylist(), qrels.column("video_id").to_pylist(),
                         qrels.column("label").to_pylist()):
        if lab == 1 and str(q) in qindex and str(v) in vindex:
            relevant[qindex[str(q)]].add(vindex[str(v)])
    return video_ids, original, [sorted(r) for r in relevant]


def item_set(data: BenchmarkData) -> ItemSet:
    """The arrays of a loaded config (all its chosen splits together)."""
    split = ",".join(data.splits)
    if data.task == "retrieval":
        video_ids, original, relevant = relevant_lists(data.queries, data.videos, data.qrels)
        qids = _strings(data.queries.column("query_id").to_pylist())
        return ItemSet(
            benchmark=data.benchmark, config=data.config, split=split, task="retrieval", ids=qids,
            clusters=_strings(data.queries.column("video_id").to_pylist()),
            n_candidates=np.full(len(qids), len(video_ids), dtype=np.int64),
            video_ids=video_ids, original=original, relevant=relevant, revision=data.data_revision, files=data.files,
            groups={c: _strings(data.queries.column(c).to_pylist()) for c in BREAKDOWN_COLUMNS
                    if c in data.queries.column_names},
        )
    t = data.items
    captions = t.column("captions").to_pylist()
    return ItemSet(
        benchmark=data.benchmark, config=data.config, split=split, task="multiple_choice",
        ids=_strings(t.column("id").to_pylist()), clusters=_strings(t.column("video_id").to_pylist()),
        n_candidates=np.asarray([len(c) for c in captions], dtype=np.int64),
        label=np.asarray(t.column("label").to_pylist(), dtype=np.int64), captions=captions,
        negative_types=t.column("negative_types").to_pylist() if "negative_types" in t.column_names else None,
        revision=data.data_revision, files=data.files,
        groups={c: _strings(t.column(c).to_pylist()) for c in (*BREAKDOWN_COLUMNS, *data.declaration.item_columns)
                if c in t.column_names},
    )


def load_items(dataset: str, config: str, splits: list[str] | None = None, benchmark: str | None = None,
               revision: str | None = None) -> ItemSet:
    return item_set(load_benchmark(dataset, config, splits, benchmark=benchmark, revision=revision))


def load_item_sets(folder: str | Path, benchmark: str | None = None, extra_revisions=()) -> dict[tuple[str, str, str], ItemSet]:
    """Every (config, split) of a built folder, keyed by (benchmark, config, split)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"benchmark folder {folder} does not exist; build it with `hardneg build`")
    bench = benchmark or folder_benchmark(folder)
    decl = benchmarks.get(bench or "")
    configs = card_configs(folder)
    out: dict[tuple[str, str, str], ItemSet] = {}
    for config in decl.scoreable(configs):
        for split in configs[config]:
            items = load_items(str(folder), config, [split], benchmark=decl.name)
            items.accepted_revisions = {items.revision, *extra_revisions}
            out[items.key] = items
    if not out:
        raise ValueError(f"{folder} holds no configs with Parquet splits; is it a `hardneg build` output?")
    return out


def load_benchmarks(root: str | Path, names=None, extra_revisions: dict[str, set[str]] | None = None) -> dict[tuple[str, str, str], ItemSet]:
    """Item sets of every benchmark folder `root/<name>` that exists."""
    root = Path(root)
    names = list(names or benchmarks.names())
    out: dict[tuple[str, str, str], ItemSet] = {}
    for b in names:
        if (root / b).is_dir():
            out.update(load_item_sets(root / b, b, (extra_revisions or {}).get(b, ())))
    if not out:
        raise FileNotFoundError(
            f"no built benchmark folders under {root}; expected {', '.join(f'{root}/{b}' for b in names)}")
    return out


# ----------------------------------------------------------------------------- alignment


@dataclass
class Aligned:
    """Scores in item order: what the results engine takes."""

    items: ItemSet  # the scored subset, in the benchmark's order
    scores: np.ndarray  # (n, C) float
    mask: np.ndarray | None  # (n, C) bool for ragged multiple choice, else None
    n_items: int  # items in the full split
    notes: list[str] = field(default_factory=list)

    @property
    def coverage(self) -> float:
        return len(self.items) / max(self.n_items, 1)


def pad_rows(rows: list, dtype=np.float64) -> tuple[np.ndarray, np.ndarray | None]:
    """The one padding helper: ragged rows -> (matrix, mask or None when all rows are full)."""
    from hardneg.ranking import pad_ragged

    mat, mask = pad_ragged(rows, dtype=dtype)
    return mat, (None if mask.all() else mask)


def subset_items(items: ItemSet, rows: np.ndarray) -> ItemSet:
    take = lambda a: None if a is None else a[rows]  # noqa: E731
    pick = lambda xs: None if xs is None else [xs[int(r)] for r in rows]  # noqa: E731
    return ItemSet(
        benchmark=items.benchmark, config=items.config, split=items.split, task=items.task,
        ids=items.ids[rows], clusters=items.clusters[rows], n_candidates=items.n_candidates[rows],
        label=take(items.label), captions=pick(items.captions), negative_types=pick(items.negative_types),
        video_ids=items.video_ids, original=take(items.original), relevant=pick(items.relevant),
        groups={k: v[rows] for k, v in items.groups.items()}, revision=items.revision, files=items.files,
        accepted_revisions=set(items.accepted_revisions),
    )


def align_predictions(items: ItemSet, ids: list[str], score_rows: list, video_ids: list[str] | None = None) -> Aligned:
    """Match prediction rows to items by id; refuse unknown or duplicate ids and wrong row lengths.

    Items without a prediction are left out and counted (coverage < 1). For retrieval, score
    columns follow `video_ids` (the predictions metadata); they are reordered to the collection,
    and queries whose own video was not scored are left out.
    """
    ids = [str(i) for i in ids]
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        dup = next(i for i in ids if i in seen or seen.add(i))
        raise ValueError(f"predictions hold duplicate ids (e.g. {dup[:100]!r}); each item must be scored once")
    unknown = [i for i in ids if i not in items.index]
    if unknown:
        raise ValueError(f"predictions hold {len(unknown)} ids not in {items.benchmark} config {items.config} "
                         f"(e.g. {unknown[0][:100]!r}); score the same dataset/config/split")
    order = np.argsort([items.index[i] for i in ids], kind="stable")
    rows = np.asarray([items.index[ids[k]] for k in order], dtype=np.int64)
    ordered = [score_rows[k] for k in order]
    notes: list[str] = []
    if items.task == "multiple_choice":
        for k, r in zip(order, rows):
            if len(score_rows[k]) != items.n_candidates[r]:
                raise ValueError(f"predictions row {ids[k][:100]!r} has {len(score_rows[k])} scores but the item has "
                                 f"{items.n_candidates[r]} captions")
        scores, mask = pad_rows(ordered)
        return Aligned(subset_items(items, rows), scores, mask, len(items), notes)
    if video_ids is None:
        raise ValueError("retrieval predictions need 'video_ids' in their metadata (hardneg score writes them)")
    video_ids = [str(v) for v in video_ids]
    if len(set(video_ids)) != len(video_ids):
        raise ValueError("predictions metadata 'video_ids' holds duplicate videos; each video must be scored once")
    col = {v: j for j, v in enumerate(items.video_ids)}
    unknown_v = [v for v in video_ids if v not in col]
    if unknown_v:
        raise ValueError(f"predictions score {len(unknown_v)} videos not in the collection (e.g. {unknown_v[0][:100]!r})")
    mat = np.asarray(ordered, dtype=np.float64).reshape(len(ordered), len(video_ids))
    n_missing = len(items.video_ids) - len(video_ids)
    if n_missing:
        # unscored videos cannot be ranked: score them below every scored one (lowest rank) and say so
        floor = float(mat.min()) - 1.0 if mat.size else 0.0
        full = np.full((mat.shape[0], len(items.video_ids)), floor)
        full[:, [col[v] for v in video_ids]] = mat
        notes.append(f"{n_missing} of {len(items.video_ids)} videos were not scored and rank last")
        mat = full
    scored = set(video_ids)
    keep = np.asarray([items.video_ids[int(items.original[r])] in scored for r in rows], dtype=bool)
    if not keep.all():
        notes.append(f"{int((~keep).sum())} queries whose own video was not scored are left out")
    return Aligned(subset_items(items, rows[keep]), mat[keep], None, len(items), notes)


def dataset_identity(data_revision: str, dataset: str) -> dict[str, Any]:
    """How a predictions file names its dataset: a Hub id + revision, or a content hash (never a local path)."""
    if is_hub_id(dataset):
        return {"hub_id": dataset, "revision": data_revision}
    return {"hub_id": None, "revision": data_revision}
