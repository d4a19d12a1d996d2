"""Write predictions files for an item set (tests, demos, load tests): valid or broken on purpose."""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from hardneg.leaderboard.items import ItemSet
from hardneg.schema import PREDICTIONS_SCHEMA, predictions_metadata


def predictions_bytes(items: ItemSet, model_id: str, scores=None, seed: int = 0, skill: float = 1.0,
                      ids=None, revision: str | None = None, **meta) -> bytes:
    """Parquet bytes of a predictions file for `items`.

    Default scores: random noise plus `skill` on the positive (multiple choice) or the
    original video (retrieval), so different seeds/skills give different but valid models.
    """
    rng = np.random.default_rng(seed)
    n = len(items)
    if scores is None:
        scores = [rng.normal(size=int(c)).astype(np.float32) for c in items.n_candidates]
        for i in range(n):
            target = items.label[i] if items.task == "multiple_choice" else items.original[i]
            scores[i][target] += skill
    fields = dict(task=items.task, benchmark=items.benchmark, config=items.config, split=items.split,
                  data_revision=items.revision if revision is None else revision, model_id=model_id,
                  model_revision="test", frames={"n_frames": 8, "fps": None, "resize": 224, "decoder": "pyav"},
                  hardneg_version="0.1.0")
    if items.task == "retrieval":
        fields["video_ids"] = list(items.video_ids)
    fields.update(meta)
    table = pa.table({"id": pa.array(items.ids.tolist() if ids is None else ids, pa.string()),
                      "scores": pa.array([list(map(float, s)) for s in scores], pa.list_(pa.float32()))},
                     schema=PREDICTIONS_SCHEMA).replace_schema_metadata(predictions_metadata(**fields))
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()
