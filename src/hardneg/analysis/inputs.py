"""Read built datasets and `hardneg score` predictions into aligned arrays for the analyses.

Analyses are pure functions over arrays; this module is the only place that
knows file formats, so every alignment problem (a missing id, a score vector of
the wrong length, a video the collection does not have) gets one clear error
naming the file, the row and the fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from hardneg.schema import MC_ITEM_SCHEMA, QREL_SCHEMA, QUERY_SCHEMA, VIDEO_SCHEMA, read_predictions_metadata

#: Optional qrels column naming the pooled systems whose top 10 surfaced a judged pair
#: (the FIRE release's `models` field); list<string> or a comma-separated string.
POOLED_BY_COLUMNS = ("pooled_by", "models")


def read_parquet(path: str | Path, required: pa.Schema | None, what: str) -> pa.Table:
    """A Parquet table, with a clear error when it is absent or lacks required columns."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{what} file {p} does not exist")
    try:
        table = pq.read_table(p)
    except Exception as exc:  # pyarrow raises several types for a non-Parquet file
        raise ValueError(f"{what} file {p} is not a readable Parquet file ({exc})") from exc
    if required is not None:
        missing = [f.name for f in required if not f.nullable and f.name not in table.column_names]
        if missing:
            raise ValueError(
                f"{what} file {p} lacks columns {missing}; expected the hardneg.schema layout "
                f"({', '.join(f.name for f in required)})"
            )
    return table


@dataclass
class Predictions:
    """One system's predictions: ids, one score vector per id, and the run metadata."""

    name: str
    ids: list[str]
    scores: list[np.ndarray]
    metadata: dict[str, Any]
    path: str = ""


def read_predictions(path: str | Path, name: str | None = None) -> Predictions:
    """Read a predictions Parquet (PREDICTIONS_SCHEMA + `hardneg` metadata)."""
    table = read_parquet(path, None, "predictions")
    for col in ("id", "scores"):
        if col not in table.column_names:
            raise ValueError(f"predictions file {path} lacks column '{col}'; write it with `hardneg score`")
    meta = read_predictions_metadata(table.schema)
    ids = [str(x) for x in table.column("id").to_pylist()]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise ValueError(f"predictions file {path}: id {dup!r} appears more than once")
    scores = _score_vectors(table.column("scores"))
    label = name or str(meta.get("model_id") or Path(path).stem)
    return Predictions(label, ids, scores, meta, str(path))


def _score_vectors(column: pa.ChunkedArray) -> list[np.ndarray]:
    """One float32 view per row of a list<float> column, without going through Python lists."""
    out: list[np.ndarray] = []
    for chunk in column.chunks:
        if chunk.null_count:
            raise ValueError("predictions have a row with null scores; every id needs its score vector")
        offsets = chunk.offsets.to_numpy()
        values = chunk.values.to_numpy(zero_copy_only=False).astype(np.float32, copy=False)
        out += [values[a:b] for a, b in zip(offsets[:-1], offsets[1:])]
    return out


def parse_named_paths(values: list[str] | None) -> list[tuple[str | None, str]]:
    """`NAME=PATH` or `PATH` arguments -> (name or None, path)."""
    out = []
    for v in values or []:
        name, sep, path = v.partition("=")
        out.append((name, path) if sep and name and not Path(v).exists() else (None, v))
    return out


def read_named_predictions(values: list[str] | None) -> list[Predictions]:
    preds = [read_predictions(path, name) for name, path in parse_named_paths(values)]
    names = [p.name for p in preds]
    if len(set(names)) != len(names):
        raise ValueError(f"two predictions files share the system name {names}; name them with NAME=PATH")
    return preds


# ------------------------------------------------------------------ multiple choice
@dataclass
class MCItems:
    """Multiple-choice items as Python lists (one entry per item)."""

    ids: list[str]
    video_ids: list[str]
    captions: list[list[str]]
    label: np.ndarray
    negative_types: list[list[str]]
    manipulated_index: list[int | None]
    category: list[str | None]
    provenance: list[list[dict]]

    @classmethod
    def from_table(cls, table: pa.Table) -> "MCItems":
        col = lambda n: table.column(n).to_pylist() if n in table.column_names else [None] * table.num_rows  # noqa: E731
        items = cls(
            ids=[str(x) for x in col("id")],
            video_ids=[str(x) for x in col("video_id")],
            captions=col("captions"),
            label=np.asarray(col("label"), dtype=np.int64),
            negative_types=[x or [] for x in col("negative_types")],
            manipulated_index=col("manipulated_index"),
            category=col("category"),
            provenance=[x or [] for x in col("provenance")],
        )
        for i, (caps, lab) in enumerate(zip(items.captions, items.label)):
            if not caps or not 0 <= lab < len(caps):
                raise ValueError(f"item {items.ids[i]!r}: label {lab} is not an index into its {len(caps or [])} captions")
        return items

    def __len__(self) -> int:
        return len(self.ids)

    def score_matrix(self, preds: Predictions) -> tuple[np.ndarray, np.ndarray]:
        """(N, C) scores aligned to these items (NaN padded) and the (N, C) candidate mask."""
        where = {i: k for k, i in enumerate(preds.ids)}
        width = max(len(c) for c in self.captions)
        scores = np.full((len(self), width), np.nan)
        mask = np.zeros((len(self), width), dtype=bool)
        missing = [i for i in self.ids if i not in where]
        if missing:
            raise ValueError(
                f"predictions {preds.path or preds.name} have no scores for {len(missing)} of {len(self)} items "
                f"(e.g. id {missing[0]!r}); score the same dataset config and split"
            )
        for r, (item_id, caps) in enumerate(zip(self.ids, self.captions)):
            s = preds.scores[where[item_id]]
            if s.size != len(caps):
                raise ValueError(
                    f"predictions {preds.path or preds.name}: item {item_id!r} has {s.size} scores but {len(caps)} captions"
                )
            scores[r, : s.size] = s
            mask[r, : s.size] = True
        return scores, mask


def read_mc_items(paths: str | Path | list) -> MCItems:
    """Items of one or more MC_ITEM_SCHEMA Parquet files (e.g. every part-of-speech split), in file order."""
    paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
    tables = [read_parquet(p, MC_ITEM_SCHEMA, "multiple-choice items") for p in paths]
    table = pa.concat_tables([t.select([c for c in tables[0].column_names if c in t.column_names]) for t in tables],
                             promote_options="permissive") if len(tables) > 1 else tables[0]
    items = MCItems.from_table(table)
    if len(set(items.ids)) != len(items.ids):
        dup = next(i for i in items.ids if items.ids.count(i) > 1)
        raise ValueError(f"item id {dup!r} appears more than once across {[str(p) for p in paths]}")
    return items


# ------------------------------------------------------------------ retrieval (FIRE)
@dataclass
class Judgments:
    """FIRE-style relevance: queries, the video collection, original positives and judged pairs."""

    query_ids: list[str]
    texts: list[str]
    video_ids: list[str]
    original: np.ndarray  # (Q,) index of each query's original positive video
    judged_query: np.ndarray  # (J,) query index of each extra ("fire") judged pair
    judged_video: np.ndarray  # (J,) video index
    judged_label: np.ndarray  # (J,) 1 relevant, 0 not (unresolved pairs count as 0)
    pooled_by: list[tuple[str, ...]] | None = None  # (J,) systems whose top 10 surfaced the pair

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.query_ids), len(self.video_ids)

    def relevant(self, keep: np.ndarray | None = None):
        """Qrels of the FIRE positives (extra judged pairs with label 1), optionally only `keep` rows."""
        from hardneg.ranking import Qrels

        sel = self.judged_label > 0
        if keep is not None:
            sel &= keep
        keys = np.unique(self.judged_query[sel] * len(self.video_ids) + self.judged_video[sel])
        return Qrels(keys // len(self.video_ids), keys % len(self.video_ids))

    def n_positives(self) -> np.ndarray:
        """Known positives per query: the original plus every FIRE positive other than it."""
        extra = (self.judged_label > 0) & (self.judged_video != self.original[self.judged_query])
        return 1 + np.bincount(self.judged_query[extra], minlength=len(self.query_ids))


def _pooled_by(table: pa.Table) -> list[tuple[str, ...]] | None:
    for name in POOLED_BY_COLUMNS:
        if name in table.column_names:
            out = []
            for v in table.column(name).to_pylist():
                if v is None:
                    out.append(())
                elif isinstance(v, str):
                    out.append(tuple(x.strip() for x in v.split(",") if x.strip()))
                else:
                    out.append(tuple(str(x) for x in v))
            return out
    return None


def judgments_from_tables(queries: pa.Table, videos: pa.Table, qrels: pa.Table) -> Judgments:
    """Build `Judgments` from the FIRE queries / videos / qrels tables (hardneg.schema layout)."""
    query_ids = [str(x) for x in queries.column("query_id").to_pylist()]
    video_ids = [str(x) for x in videos.column("video_id").to_pylist()]
    v_index = {v: i for i, v in enumerate(video_ids)}
    q_index = {q: i for i, q in enumerate(query_ids)}
    if len(q_index) != len(query_ids):
        raise ValueError("queries table: query_id values must be unique")
    if len(v_index) != len(video_ids):
        raise ValueError("videos table: video_id values must be unique")
    original = np.empty(len(query_ids), dtype=np.int64)
    for i, v in enumerate(queries.column("video_id").to_pylist()):
        if v not in v_index:
            raise ValueError(f"queries table row {i}: original video {v!r} is not in the videos table")
        original[i] = v_index[v]
    rows = qrels.to_pydict()
    pooled = _pooled_by(qrels)
    jq, jv, jl, jp = [], [], [], []
    for r, (q, v, lab, src) in enumerate(zip(rows["query_id"], rows["video_id"], rows["label"], rows["source"])):
        if src == "original":
            continue
        if src != "fire":
            raise ValueError(f"qrels row {r}: source {src!r} must be 'original' or 'fire'")
        if q not in q_index:
            raise ValueError(f"qrels row {r}: query {q!r} is not in the queries table")
        if v not in v_index:
            raise ValueError(f"qrels row {r}: video {v!r} is not in the videos table")
        jq.append(q_index[q])
        jv.append(v_index[v])
        jl.append(int(lab or 0))
        if pooled is not None:
            jp.append(pooled[r])
    return Judgments(
        query_ids=query_ids,
        texts=[str(x) for x in queries.column("text").to_pylist()],
        video_ids=video_ids,
        original=original,
        judged_query=np.asarray(jq, dtype=np.int64),
        judged_video=np.asarray(jv, dtype=np.int64),
        judged_label=np.asarray(jl, dtype=np.int64),
        pooled_by=jp if pooled is not None else None,
    )


def read_judgments(queries: str | Path, videos: str | Path, qrels: str | Path) -> Judgments:
    return judgments_from_tables(
        read_parquet(queries, QUERY_SCHEMA, "queries"),
        read_parquet(videos, VIDEO_SCHEMA, "videos"),
        read_parquet(qrels, QREL_SCHEMA, "qrels"),
    )


def retrieval_scores(judgments: Judgments, preds: Predictions) -> np.ndarray:
    """(Q, V) scores of one system in the judgments' query and video order."""
    vids = preds.metadata.get("video_ids")
    if not vids:
        raise ValueError(
            f"predictions {preds.path or preds.name} have no 'video_ids' in their metadata; "
            "retrieval predictions must name the video of each score (hardneg score writes them)"
        )
    col = {v: j for j, v in enumerate(vids)}
    missing_v = [v for v in judgments.video_ids if v not in col]
    if missing_v:
        raise ValueError(
            f"predictions {preds.path or preds.name} score {len(vids)} videos but miss {len(missing_v)} of the collection "
            f"(e.g. {missing_v[0]!r}); score every video of the videos table"
        )
    order = np.asarray([col[v] for v in judgments.video_ids], dtype=np.int64)
    where = {i: k for k, i in enumerate(preds.ids)}
    out = np.empty(judgments.shape, dtype=np.float32)  # float32 as stored: half the memory of float64
    for r, q in enumerate(judgments.query_ids):
        k = where.get(q)
        if k is None:
            raise ValueError(f"predictions {preds.path or preds.name} have no row for query {q!r}; score every query")
        s = preds.scores[k]
        if s.size != len(vids):
            raise ValueError(f"predictions {preds.path or preds.name}: query {q!r} has {s.size} scores for {len(vids)} video_ids")
        out[r] = s[order]
    return out
