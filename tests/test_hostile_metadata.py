"""`hardneg evaluate` on a predictions file whose metadata is built to hurt the parser (issue 29): refused with
a plain message naming the limit, before `json.loads` (which raised RecursionError at 100,000 levels)."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hardneg.cli import main
from hardneg.json_limits import MAX_JSON_BYTES, MAX_JSON_VALUES, check_json_text, json_shape
from hardneg.schema import PREDICTIONS_METADATA_KEY, PREDICTIONS_SCHEMA

UNIT = "[" * 60 + "]" * 60


def predictions_with(raw: bytes, path):
    table = pa.table({"id": pa.array(["a"], pa.string()), "scores": pa.array([[0.1, 0.2]], pa.list_(pa.float32()))},
                     schema=PREDICTIONS_SCHEMA).replace_schema_metadata({PREDICTIONS_METADATA_KEY: raw})
    pq.write_table(table, path)
    return path


@pytest.mark.parametrize("raw,expected", [
    (b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nests 100,001 levels deep; at most 64"),
    (json.dumps({"x": json.loads("[" + ",".join([UNIT] * 32_000) + "]")}).encode(), "values; at most 100,000"),
    (b'{"x": "' + b"a" * (MAX_JSON_BYTES + 1) + b'"}', "bytes; the limit is 4,194,304"),
])
def test_evaluate_refuses_hostile_metadata_with_a_plain_message(tmp_path, capsys, raw, expected):
    path = predictions_with(raw, tmp_path / "p.parquet")
    assert main(["evaluate", str(path), "--dataset", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert expected in err and "write it with hardneg.schema.predictions_metadata" in err
    assert "RecursionError" not in err and "Traceback" not in err and len(err) < 600


def test_json_shape_counts_outside_strings_only():
    assert json_shape(b'{"a": "[[[,,,", "b": [[1, 2]], "c": "\\\\\\"[["}') == (3, 6)  # 3 opening brackets, 3 commas
    check_json_text(b"[" + b"1," * (MAX_JSON_VALUES - 10) + b"1]", "x", "fix")  # under the limits: accepted
    with pytest.raises(ValueError, match="values"):
        check_json_text(b"[" + b"1," * (MAX_JSON_VALUES + 10) + b"1]", "x", "fix")
