"""A Gradio widget for one metric module, the way Hub metric Spaces present theirs.

`evaluate.utils.launch_gradio_widget` (0.4.6) builds its form with `gr.inputs.Dataframe`,
which Gradio 4+ removed, so it cannot run on the pinned Gradio 6. This is the same idea
(one table row per example, JSON cells, the metric card below) on the current API, plus a
box for `compute` options such as `ties`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["parse_table", "compute_from_table", "build_metric_widget", "launch_metric_widget"]


def _cell(value: Any, column: str, row: int) -> Any:
    """A cell as typed JSON (numbers, lists); plain text stays a string (e.g. `noun`)."""
    if isinstance(value, str):
        text = value.strip()
        if text == "":
            raise ValueError(f"row {row + 1}, column {column!r} is empty")
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text
    if isinstance(value, (np.generic,)):
        return value.item()
    return value


def parse_table(table: Any, feature_names: list[str]) -> dict[str, list]:
    """Widget rows -> `{input name: [one value per example]}`; empty columns of optional inputs are left out."""
    if hasattr(table, "to_dict"):  # pandas
        records = table.to_dict(orient="list")
        columns = {str(k): list(v) for k, v in records.items()}
    elif isinstance(table, dict) and "data" in table:
        headers = table.get("headers") or feature_names
        columns = {h: [r[i] for r in table["data"]] for i, h in enumerate(headers)}
    else:
        raise ValueError(f"unexpected table value of type {type(table).__name__}")
    out: dict[str, list] = {}
    for name in feature_names:
        values = columns.get(name, [])
        if all(v is None or (isinstance(v, str) and not v.strip()) for v in values):
            continue  # an optional column left blank
        out[name] = [_cell(v, name, i) for i, v in enumerate(values)]
    return out


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


def compute_from_table(module, table: Any, options: str = "") -> dict:
    """Run `module.compute` on the widget's rows; `options` is a JSON object of compute kwargs."""
    names = list(module.features.keys() if not isinstance(module.features, list) else module.features[0].keys())
    inputs = parse_table(table, names)
    kwargs = json.loads(options) if options and options.strip() else {}
    if not isinstance(kwargs, dict):
        raise ValueError('options must be a JSON object, e.g. {"ties": "expected", "n_resamples": 200}')
    return _jsonable(module.compute(**inputs, **kwargs))


def build_metric_widget(module, readme: str | Path | None = None):
    """A `gr.Interface` for `module` (not launched): a table of examples + options -> JSON results."""
    import gradio as gr

    features = module.features[0] if isinstance(module.features, list) else module.features
    names = list(features.keys())
    article = None
    if readme is not None and Path(readme).is_file():
        from evaluate.utils.gradio import parse_readme

        article = parse_readme(Path(readme))

    def run(table, options):
        try:
            return compute_from_table(module, table, options)
        except (ValueError, TypeError) as exc:  # shown in the page, not a stack trace
            raise gr.Error(str(exc)) from exc

    return gr.Interface(
        fn=run,
        inputs=[
            gr.Dataframe(headers=names, column_count=len(names), row_count=2, datatype="str",
                         label="examples (JSON per cell; leave optional columns empty)"),
            gr.Textbox(label="options (JSON)", value='{"ties": "expected", "n_resamples": 200}'),
        ],
        outputs=gr.JSON(label=module.name),
        title=f"Metric: {module.name}",
        description=module.info.description,
        article=article,
        flagging_mode="never",
    )


def launch_metric_widget(module, readme: str | Path | None = None, **launch_kwargs):
    """Build and launch the widget (what a metric Space's app.py calls)."""
    demo = build_metric_widget(module, readme)
    demo.launch(**launch_kwargs)
    return demo
