"""The metric's Space: a form to try the module on a few examples, with its card below."""

from pathlib import Path

import evaluate

from hardneg.metric_widget import launch_metric_widget

HERE = Path(__file__).resolve().parent

module = evaluate.load(str(HERE))
launch_metric_widget(module, HERE / "README.md")
