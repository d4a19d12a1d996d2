"""The Space widget parses a table of JSON cells and returns the module's results."""

from __future__ import annotations

import pandas as pd
import pytest

from hardneg.metric_modules import metric_path
from hardneg.metric_widget import compute_from_table, parse_table


def test_parse_table_reads_json_cells_and_skips_blank_optional_columns():
    table = pd.DataFrame({"predictions": ["[0.9, 0.1]", "[0.2, 0.8]"], "references": ["0", "0"],
                          "pos": ["noun", "verb"], "video_ids": ["", ""]})
    parsed = parse_table(table, ["predictions", "references", "pos", "video_ids"])
    assert parsed == {"predictions": [[0.9, 0.1], [0.2, 0.8]], "references": [0, 0], "pos": ["noun", "verb"]}


def test_compute_from_table(load):
    module = load("posrank")
    table = pd.DataFrame({"predictions": ["[0.9, 0.1]", "[0.2, 0.8]"], "references": ["0", "0"],
                          "pos": ["noun", "verb"], "video_ids": ["", ""]})
    out = compute_from_table(module, table, '{"n_resamples": 0, "return_per_example": true}')
    assert out["PoSRank_noun"] == 1.0 and out["PoSRank_verb"] == 0.5
    assert out["per_example"]["RR"] == [1.0, 0.5]  # JSON-ready lists
    with pytest.raises(ValueError, match="options must be a JSON object"):
        compute_from_table(module, table, "[1]")


@pytest.mark.slow
def test_widget_builds(load):
    pytest.importorskip("gradio")
    from hardneg.metric_widget import build_metric_widget

    demo = build_metric_widget(load("rcad_accuracy"), f"{metric_path('rcad_accuracy')}/README.md")
    assert demo.title == "Metric: rcad_accuracy"
