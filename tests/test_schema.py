"""The data contracts: metadata round-trips and column checks name what is wrong."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hardneg import schema


def _meta(**over):
    fields = dict(
        task="multiple_choice", benchmark="feint6k", config="msrvtt", split="test",
        data_revision="abc", model_id="m", model_revision="r",
        frames={"n_frames": 8, "fps": None, "resize": 224, "decoder": "pyav"}, hardneg_version="0.1.0",
    )
    fields.update(over)
    return fields


def test_predictions_metadata_roundtrip():
    s = schema.PREDICTIONS_SCHEMA.with_metadata(schema.predictions_metadata(**_meta()))
    got = schema.read_predictions_metadata(s)
    assert got["benchmark"] == "feint6k"
    assert got["frames"]["n_frames"] == 8
    assert got["schema_version"] == schema.SCHEMA_VERSION


def test_predictions_metadata_missing_field_is_named():
    fields = _meta()
    del fields["model_revision"]
    with pytest.raises(ValueError, match="model_revision"):
        schema.predictions_metadata(**fields)


def test_read_metadata_absent_gives_fix():
    with pytest.raises(ValueError, match="hardneg score"):
        schema.read_predictions_metadata(schema.PREDICTIONS_SCHEMA)


def test_check_columns_names_missing_and_mistyped():
    table = pa.table({"id": pa.array([1, 2])})
    with pytest.raises(ValueError) as err:
        schema.check_columns(table, schema.PREDICTIONS_SCHEMA, "predictions.parquet")
    msg = str(err.value)
    assert "column 'id' has type int64" in msg and "missing column 'scores'" in msg


def test_mc_schema_accepts_a_well_formed_item():
    prov = {k: None for k in schema.PROVENANCE_TYPE.names}
    row = dict(
        id="v1#0", video_id="v1", source_dataset="msrvtt", source_split="test", category=None,
        captions=["a man runs", "a woman runs"], label=0, manipulated_index=1,
        negative_types=["positive", "gender"], provenance=[dict(prov, origin="positive"), dict(prov, origin="generator")],
    )
    table = pa.Table.from_pylist([row], schema=schema.MC_ITEM_SCHEMA)
    schema.check_columns(table, schema.MC_ITEM_SCHEMA, "items")
    assert set(schema.CONTRAST_SET_TYPES) <= set(schema.NEGATIVE_TYPES)
    assert set(schema.PARTS_OF_SPEECH) <= set(schema.NEGATIVE_TYPES)
