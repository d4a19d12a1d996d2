"""The result object every analysis returns: a table, JSON-ready details and a PNG plot.

One shape for all nine analyses so the CLI, the README and the tests treat them
alike: ``rows`` is the printed table, ``to_dict()`` is what goes to JSON, and
``plot(path)`` draws the figure (axes labelled, legend, title) and writes it atomically.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hardneg.io import atomic_write_bytes


def jsonable(value: Any) -> Any:
    """Plain Python types for json.dumps (NumPy scalars/arrays, tuples, NaN -> None)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [jsonable(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def format_cell(value: Any, digits: int = 4) -> str:
    if value is None:
        return "-"
    if isinstance(value, (float, np.floating)):
        return "-" if not math.isfinite(float(value)) else f"{float(value):.{digits}f}"
    return str(value)


def format_table(columns: list[str], rows: list[dict[str, Any]], digits: int = 4) -> str:
    """A plain-text table with aligned columns (also valid Markdown)."""
    cells = [[format_cell(r.get(c), digits) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    line = lambda vals: "| " + " | ".join(v.ljust(w) for v, w in zip(vals, widths)) + " |"  # noqa: E731
    out = [line(columns), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [line(row) for row in cells]
    return "\n".join(out)


@dataclass
class AnalysisResult:
    """Base result: subclasses add fields and implement `_draw(fig)`."""

    analysis: str
    title: str
    columns: list[str]
    rows: list[dict[str, Any]]
    params: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def extra(self) -> dict[str, Any]:
        """Analysis-specific details beyond the table (overridden by subclasses)."""
        return {}

    def to_dict(self) -> dict[str, Any]:
        from hardneg import __version__

        return jsonable(
            {
                "analysis": self.analysis,
                "title": self.title,
                "params": self.params,
                "columns": self.columns,
                "rows": self.rows,
                "notes": self.notes,
                "details": self.extra(),
                "hardneg_version": __version__,
            }
        )

    def format_table(self, digits: int = 4) -> str:
        return format_table(self.columns, self.rows, digits)

    def _draw(self, fig: Any) -> None:  # pragma: no cover - every subclass overrides
        raise NotImplementedError

    def figure_size(self) -> tuple[float, float]:
        return (8.0, 5.0)

    def plot(self, path: str | Path, dpi: int = 120) -> Path:
        """Draw the figure and write it as PNG to `path` atomically."""
        try:
            import matplotlib

            matplotlib.use("Agg", force=False)
            from matplotlib.figure import Figure
        except ImportError as exc:
            raise ImportError("plots need matplotlib: pip install -e '.[plots]' (from the clone; video-hardneg is not on PyPI)") from exc
        fig = Figure(figsize=self.figure_size(), layout="constrained")
        self._draw(fig)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi)
        return atomic_write_bytes(path, buf.getvalue())
