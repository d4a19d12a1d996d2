"""A Gradio widget for one metric module, the way Hub metric Spaces present theirs.

`evaluate.utils.launch_gradio_widget` (0.4.6) builds its form with `gr.inputs.Dataframe`,
which Gradio 4+ removed, so it cannot run on the pinned Gradio 6. This is the same idea
(one table row per example, JSON cells, the metric card below) on the current API, plus a
box for `compute` options such as `ties`.

The form opens filled with the first example of the card's "## Examples" section (the
inputs of its first `compute(...)` call), so Submit works at once; an empty or incomplete
form, or input the module refuses, gives one plain message beside the result instead of
`evaluate`'s internal errors (an empty `compute()` would otherwise report a missing cache
file).
"""

from __future__ import annotations

import ast
import inspect
import json
import logging
import re
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["parse_table", "compute_from_table", "card_example", "build_metric_widget", "launch_metric_widget",
           "WidgetInputError"]

log = logging.getLogger(__name__)

#: the options box's default
DEFAULT_OPTIONS = {"ties": "expected", "n_resamples": 200}


class WidgetInputError(ValueError):
    """Input the widget cannot compute, with a message meant for the page."""


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


def _feature_names(module) -> list[str]:
    return list(module.features.keys() if not isinstance(module.features, list) else module.features[0].keys())


def _required_inputs(module, names: list[str]) -> list[str]:
    """Feature inputs `compute` cannot do without (no default in the module's `_compute`)."""
    try:
        params = inspect.signature(module._compute).parameters
    except (TypeError, ValueError, AttributeError):
        return names[:2]
    return [n for n in names if n in params and params[n].default is inspect.Parameter.empty]


def _drop_blank_rows(table: Any) -> Any:
    """The table without rows whose every cell is empty (what an emptied form holds)."""
    if hasattr(table, "to_dict"):
        blank = table.apply(lambda r: all(v is None or (isinstance(v, str) and not v.strip())
                                          or (isinstance(v, float) and np.isnan(v)) for v in r), axis=1)
        return table[~blank] if len(table) else table
    return table


def compute_from_table(module, table: Any, options: str = "") -> dict:
    """Run `module.compute` on the widget's rows; `options` is a JSON object of compute kwargs.

    WidgetInputError when there is nothing to compute: no row, or a required input left empty."""
    names = _feature_names(module)
    try:
        kwargs = json.loads(options) if options and options.strip() else {}
    except json.JSONDecodeError:
        raise ValueError('options must be a JSON object, e.g. {"ties": "expected", "n_resamples": 200}') from None
    if not isinstance(kwargs, dict):
        raise ValueError('options must be a JSON object, e.g. {"ties": "expected", "n_resamples": 200}')
    inputs = parse_table(_drop_blank_rows(table), names)
    if not inputs:
        raise WidgetInputError("the form is empty: fill in at least one example row (one JSON value per cell), "
                               "or reload the page for the card's example")
    missing = [n for n in _required_inputs(module, names) if n not in inputs]
    if missing:
        raise WidgetInputError(f"fill in the column(s) {', '.join(missing)}: every example needs them")
    return _jsonable(module.compute(**inputs, **kwargs))


def _literal_kwargs(call: ast.Call, dicts: dict[str, dict]) -> dict[str, Any] | None:
    out: dict[str, Any] = {}
    for kw in call.keywords:
        if kw.arg is None:  # **inputs
            if not (isinstance(kw.value, ast.Name) and kw.value.id in dicts):
                return None
            out.update(dicts[kw.value.id])
            continue
        try:
            out[kw.arg] = ast.literal_eval(kw.value)
        except ValueError:
            return None
    return out


def card_example(readme: str | Path | None, feature_names: list[str]) -> tuple[list[list[str]], dict[str, Any]]:
    """The first example of a metric card: (table rows, one JSON/text cell per feature; extra compute options).

    Read from the first ```python block of the "## Examples" section: the keyword arguments of its first
    `.compute(...)` call, with `**name` expanded from an earlier `name = dict(...)` of literals. ([], {}) when
    the card has none."""
    if readme is None or not Path(readme).is_file():
        return [], {}
    text = Path(readme).read_text(encoding="utf-8")
    section = re.search(r"^## Examples\s*$(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    block = re.search(r"```python\n(.*?)```", section.group(1), flags=re.S) if section else None
    if block is None:
        return [], {}
    try:
        tree = ast.parse(block.group(1))
    except SyntaxError:
        return [], {}
    dicts: dict[str, dict] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict":
                got = _literal_kwargs(value, dicts)
                if got is not None:
                    dicts[node.targets[0].id] = got
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and n.func.attr == "compute"]
    for call in sorted(calls, key=lambda c: (c.lineno, c.col_offset)):
        kwargs = _literal_kwargs(call, dicts)
        if not kwargs or "predictions" not in kwargs:
            continue
        n = len(kwargs["predictions"])
        columns = {k: v for k, v in kwargs.items() if k in feature_names and isinstance(v, list) and len(v) == n}
        options = {k: v for k, v in kwargs.items() if k not in columns}
        cell = lambda v: v if isinstance(v, str) else json.dumps(v)  # noqa: E731 (plain text stays text)
        rows = [[cell(columns[f][i]) if f in columns else "" for f in feature_names] for i in range(n)]
        return rows, options
    return [], {}


def build_metric_widget(module, readme: str | Path | None = None):
    """A `gr.Interface` for `module` (not launched): a table of examples + options -> JSON results, opening
    with the card's example, and a line for plain messages (empty form, input the module refuses)."""
    import gradio as gr

    names = _feature_names(module)
    article = None
    if readme is not None and Path(readme).is_file():
        from evaluate.utils.gradio import parse_readme

        article = parse_readme(Path(readme))
    rows, extra = card_example(readme, names)
    options = dict(DEFAULT_OPTIONS, **extra)

    def run(table, options):
        try:
            return compute_from_table(module, table, options), ""
        except (ValueError, TypeError) as exc:  # the module's and the form's own messages: meant for people
            return None, f"**{str(exc)[:500]}**"
        except Exception:  # anything else: logged here, a plain line in the page
            log.exception("metric widget %s failed", module.name)
            return None, "**the metric could not be computed on this input; check the cells (one JSON value each)**"

    return gr.Interface(
        fn=run,
        inputs=[
            gr.Dataframe(value=rows or None, headers=names, column_count=len(names), row_count=max(len(rows), 2),
                         datatype="str", label="examples (JSON per cell; leave optional columns empty)"),
            gr.Textbox(label="options (JSON)", value=json.dumps(options)),
        ],
        outputs=[gr.JSON(label=module.name), gr.Markdown()],
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
