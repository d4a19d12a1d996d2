"""The data contracts every part of video-hardneg reads and writes.

One schema for the four benchmarks, so that one ranking core, one scorer, one
leaderboard and one demo serve all of them:

* **Multiple-choice items** (Feint6K/RCAD, contrast sets, PoSRank): one row per
  (video, positive caption) with all candidate captions, the index of the
  positive, and per candidate its negative type and provenance record.
* **Retrieval relevance** (FIRE): queries, a video collection, and relevance
  rows that keep the original single positive apart from the extra FIRE labels.
* **Predictions**: what `hardneg score` writes and the metrics, `hardneg
  evaluate` and the leaderboard read: ids and scores only, with the run's
  settings in the Parquet schema metadata under the key ``hardneg``.

The Arrow schemas below are the source of truth; dataset cards and the
`datasets.Features` of the Hub repos are derived from them.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

SCHEMA_VERSION = "1.0"

#: Negative types a candidate may carry. ``positive`` marks the true caption.
NEGATIVE_TYPES = (
    "positive",
    "counterfactual",  # Feint6K human-written action counterfactual
    "random",  # caption of another video
    "gender",
    "verb_lm",
    "verb_human",
    "id",  # LSMDC character-ID swap
    "noun",
    "verb",
    "adj",
    "adv",
    "prep",
    "phrase",
    "llm_fill",  # LLM-teacher mask filling
    "unknown",  # a release that does not say which negative is which (contrast-set TSV without c_label)
)

#: Parts of speech used by PoSRank, in the paper's order.
PARTS_OF_SPEECH = ("noun", "verb", "adj", "adv", "prep")

#: Multiple-choice set types of the contrast-sets paper.
CONTRAST_SET_TYPES = ("random", "gender", "verb_lm", "verb_human", "id")

#: Provenance of one candidate caption: how it was made, so every negative can be audited.
PROVENANCE_TYPE = pa.struct(
    [
        pa.field("origin", pa.string()),  # "positive" | "human" | "generator" | "dataset"
        pa.field("generator", pa.string()),  # e.g. "posrank-single-word"; null for human
        pa.field("generator_version", pa.string()),
        pa.field("rule", pa.string()),  # antonym | preposition-map | sibling | vocabulary | gender-map | ...
        pa.field("pos", pa.string()),  # part of speech of the replaced span, if any
        pa.field("span", pa.string()),  # replaced source text: positive[span_start:span_end]
        pa.field("replacement", pa.string()),  # the text that stands in its place in the negative
        pa.field("seed", pa.int64()),
        pa.field("details", pa.string()),  # JSON: filter scores and anything rule-specific
        # Character offsets of `span` in the positive caption (Python str indices), so that
        # positive[:span_start] + replacement + positive[span_end:] == negative. Null where
        # unknown (positives, human-written negatives whose edit is not one region).
        pa.field("span_start", pa.int64()),
        pa.field("span_end", pa.int64()),
    ]
)

#: One multiple-choice item.
MC_ITEM_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),  # unique within a config/split
        pa.field("video_id", pa.string(), nullable=False),
        pa.field("source_dataset", pa.string()),  # msrvtt | vatex | lsmdc | uvo | msvd | ...
        pa.field("source_split", pa.string()),
        pa.field("category", pa.string()),  # item-level group: MC type or part of speech
        pa.field("captions", pa.list_(pa.string()), nullable=False),
        pa.field("label", pa.int64(), nullable=False),  # index of the positive in `captions`
        pa.field("manipulated_index", pa.int64()),  # contrast sets: index of the manipulated option (c_label)
        pa.field("negative_types", pa.list_(pa.string()), nullable=False),  # one per candidate
        pa.field("provenance", pa.list_(PROVENANCE_TYPE), nullable=False),  # one per candidate
    ]
)

#: FIRE / retrieval: one query (caption).
QUERY_SCHEMA = pa.schema(
    [
        pa.field("query_id", pa.string(), nullable=False),
        pa.field("text", pa.string(), nullable=False),
        pa.field("video_id", pa.string(), nullable=False),  # the original (single) positive
        pa.field("source_dataset", pa.string()),
        pa.field("source_split", pa.string()),
        # row indices into the `<name>-videos` table: every video judged relevant (label 1, original or FIRE)
        pa.field("relevant", pa.list_(pa.int64())),
        pa.field("original", pa.int64()),  # row index of `video_id` in the videos table
    ]
)

#: FIRE / retrieval: the video collection, in the order prediction score vectors use.
VIDEO_SCHEMA = pa.schema(
    [
        pa.field("video_id", pa.string(), nullable=False),
        pa.field("source_dataset", pa.string()),
    ]
)

#: FIRE / retrieval: one judged (query, video) pair.
QREL_SCHEMA = pa.schema(
    [
        pa.field("query_id", pa.string(), nullable=False),
        pa.field("video_id", pa.string(), nullable=False),
        pa.field("label", pa.int64(), nullable=False),  # 1 relevant, 0 irrelevant (majority vote)
        pa.field("source", pa.string(), nullable=False),  # "original" | "fire"
        pa.field("n_judgments", pa.int64()),
        pa.field("agreement", pa.float64()),  # share of judgments agreeing with `label`
        pa.field("unresolved", pa.bool_()),  # tie / disagreement kept, flagged, never dropped
    ]
)

#: Training pairs: one (video, caption) per row, in the config a declaration names `pairs_config`
#: (split `train`, optionally `test`); read with `hardneg.items.load_pairs`.
PAIR_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("video_id", pa.string(), nullable=False),
        pa.field("caption", pa.string(), nullable=False),
        pa.field("source_dataset", pa.string()),
        pa.field("source_split", pa.string()),
    ]
)

#: Predictions: one row per item (multiple choice) or per query (retrieval).
#: For multiple choice, `scores[j]` is the score of `captions[j]` of item `id`.
#: For retrieval, `scores[j]` is the score of video `video_ids[j]` from the metadata.
PREDICTIONS_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("scores", pa.list_(pa.float32()), nullable=False),
    ]
)

#: Key of the JSON run metadata in the predictions Parquet schema metadata.
PREDICTIONS_METADATA_KEY = b"hardneg"

#: Fields the predictions metadata must carry (the result's identity).
PREDICTIONS_REQUIRED_METADATA = (
    "schema_version",
    "task",  # "multiple_choice" | "retrieval"
    "benchmark",  # a declared benchmark name (hardneg list)
    "config",
    "split",
    "data_revision",
    "model_id",
    "model_revision",
    "frames",  # {"n_frames", "fps", "resize", "decoder"}
    "hardneg_version",
)


def predictions_metadata(**fields: Any) -> dict[bytes, bytes]:
    """Encode run settings as Parquet schema metadata, refusing missing fields.

    Every writer of a predictions file comes here, so each file records the versions of the packages that
    change numbers (`versions`, `hardneg.versions.number_versions`) unless the caller gives them."""
    missing = [k for k in PREDICTIONS_REQUIRED_METADATA if k not in fields and k != "schema_version"]
    if missing:
        raise ValueError(
            f"predictions metadata is missing {missing}; pass them to predictions_metadata(...)"
        )
    fields.setdefault("schema_version", SCHEMA_VERSION)
    from hardneg.versions import number_versions

    fields.setdefault("versions", number_versions())  # the packages that change numbers, as the file is written
    return {PREDICTIONS_METADATA_KEY: json.dumps(fields, sort_keys=True).encode()}


def read_predictions_metadata(schema: pa.Schema) -> dict[str, Any]:
    """Decode the run settings of a predictions file; clear error when absent."""
    meta = schema.metadata or {}
    if PREDICTIONS_METADATA_KEY not in meta:
        raise ValueError(
            "predictions file has no 'hardneg' metadata: write it with hardneg.schema.predictions_metadata"
            " (hardneg score does this for you)"
        )
    from hardneg.json_limits import check_json_text

    raw = meta[PREDICTIONS_METADATA_KEY]
    check_json_text(raw, "its 'hardneg' metadata", "write it with hardneg.schema.predictions_metadata (hardneg score "
                    "does this for you)")  # before parsing: json.loads recurses once per level
    return json.loads(raw)


def check_columns(table: pa.Table, schema: pa.Schema, what: str) -> None:
    """Raise a ValueError naming each missing or mistyped column of `table`."""
    problems = []
    for field in schema:
        if field.name not in table.column_names:
            problems.append(f"missing column '{field.name}' ({field.type})")
        elif not table.schema.field(field.name).type.equals(field.type):
            problems.append(
                f"column '{field.name}' has type {table.schema.field(field.name).type}, expected {field.type}"
            )
    if problems:
        raise ValueError(f"{what}: " + "; ".join(problems))
