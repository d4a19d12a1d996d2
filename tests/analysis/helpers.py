"""Small hand-built FIRE and multiple-choice data shared by the analysis tests."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from hardneg.analysis.inputs import Judgments
from hardneg.io import atomic_write_parquet
from hardneg.schema import PREDICTIONS_SCHEMA, QREL_SCHEMA, QUERY_SCHEMA, VIDEO_SCHEMA, predictions_metadata

# 3 queries over 5 videos; originals v0, v1, v2; FIRE positives: q0 -> v3, q2 -> v4 and v0;
# q1 -> v3 judged not relevant.
QUERIES = ["q0", "q1", "q2"]
TEXTS = ["a man", "a dog runs on the beach", "a woman is slicing a tomato in a kitchen"]
VIDEOS = ["v0", "v1", "v2", "v3", "v4"]
ORIGINAL = [0, 1, 2]
FIRE_ROWS = [("q0", "v3", 1), ("q1", "v3", 0), ("q2", "v4", 1), ("q2", "v0", 1)]
SCORES = np.array(
    [
        [0.5, 0.1, 0.2, 0.9, 0.3],  # q0: v3 (FIRE positive) first, original v0 second
        [0.1, 0.8, 0.3, 0.2, 0.0],  # q1: original first
        [0.6, 0.0, 0.1, 0.2, 0.9],  # q2: v4, v0 (FIRE) then v3, then original v2 at rank 4
    ]
)


def judgments() -> Judgments:
    return Judgments(
        query_ids=list(QUERIES),
        texts=list(TEXTS),
        video_ids=list(VIDEOS),
        original=np.asarray(ORIGINAL),
        judged_query=np.asarray([QUERIES.index(q) for q, _, _ in FIRE_ROWS]),
        judged_video=np.asarray([VIDEOS.index(v) for _, v, _ in FIRE_ROWS]),
        judged_label=np.asarray([lab for _, _, lab in FIRE_ROWS]),
    )


def write_fire(folder, pooled_by: list[list[str]] | None = None) -> dict[str, str]:
    """queries/videos/qrels Parquet files of the hand-built example; returns their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    q = pa.Table.from_pylist(
        [{"query_id": qid, "text": t, "video_id": VIDEOS[o], "source_dataset": "toy", "source_split": "test"}
         for qid, t, o in zip(QUERIES, TEXTS, ORIGINAL)], schema=QUERY_SCHEMA)
    v = pa.Table.from_pylist([{"video_id": vid, "source_dataset": "toy"} for vid in VIDEOS], schema=VIDEO_SCHEMA)
    rows = [{"query_id": qid, "video_id": VIDEOS[o], "label": 1, "source": "original", "n_judgments": 0,
             "agreement": None, "unresolved": False} for qid, o in zip(QUERIES, ORIGINAL)]
    rows += [{"query_id": qid, "video_id": vid, "label": lab, "source": "fire", "n_judgments": 1, "agreement": 1.0,
              "unresolved": False} for qid, vid, lab in FIRE_ROWS]
    r = pa.Table.from_pylist(rows, schema=QREL_SCHEMA)
    if pooled_by is not None:
        r = r.append_column("pooled_by", pa.array([[]] * len(QUERIES) + pooled_by, pa.list_(pa.string())))
    paths = {}
    for name, table in (("queries", q), ("videos", v), ("qrels", r)):
        paths[name] = str(atomic_write_parquet(table, folder / f"{name}.parquet"))
    return paths


def write_predictions(path, ids, scores, task="retrieval", model_id="toy-model", **extra) -> str:
    meta = predictions_metadata(task=task, benchmark="fire" if task == "retrieval" else "contrast_sets", config="toy",
                                split="test", data_revision="test", model_id=model_id, model_revision="0",
                                frames={"n_frames": 0}, hardneg_version="0.1.0", **extra)
    table = pa.Table.from_pydict({"id": list(ids), "scores": [list(map(float, s)) for s in scores]},
                                 schema=PREDICTIONS_SCHEMA.with_metadata(meta))
    return str(atomic_write_parquet(table, path))
