"""Where the `evaluate` metric modules live, so users can load them without a checkout.

From a source checkout (editable install) the modules are the repository's `metrics/<name>/`;
from a wheel they are the copy shipped at `hardneg/_shipped/metrics/<name>/`.
`evaluate.load(metric_path(name))` works offline either way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["METRIC_NAMES", "metric_path", "metrics_root", "load_metric"]

#: the modules, in the order the docs list them
METRIC_NAMES: tuple[str, ...] = (
    "rcad_accuracy",
    "mean_rank",
    "correct_at_k",
    "mean_average_precision",
    "posrank",
    "accuracy",
)

_PACKAGE_DIR = Path(__file__).resolve().parent


def _candidate_roots() -> list[Path]:
    """Checkout first (src/hardneg -> repo/metrics, only in the src layout), then the wheel's copy."""
    roots = []
    if _PACKAGE_DIR.parent.name == "src":
        roots.append(_PACKAGE_DIR.parents[1] / "metrics")
    roots.append(_PACKAGE_DIR / "_shipped" / "metrics")
    return roots


def _is_module_dir(folder: Path, name: str) -> bool:
    return (folder / f"{name}.py").is_file()


def metrics_root() -> Path:
    """The folder holding all metric modules (checkout's `metrics/` or the shipped copy)."""
    for root in _candidate_roots():
        if all(_is_module_dir(root / n, n) for n in METRIC_NAMES):
            return root
    looked = ", ".join(str(r) for r in _candidate_roots())
    raise FileNotFoundError(
        f"the metric modules were not found (looked in {looked}); reinstall the package with "
        "`pip install --force-reinstall video-hardneg` or run from a source checkout"
    )


def metric_path(name: str) -> str:
    """Absolute path of the folder of metric module `name`, ready for `evaluate.load(...)`.

    Raises ValueError listing the valid names when `name` is not one of them.
    """
    key = str(name).strip().replace("-", "_")
    if key not in METRIC_NAMES:
        raise ValueError(f"unknown metric module {name!r}; valid names: {', '.join(METRIC_NAMES)}")
    return str(metrics_root() / key)


def load_metric(name: str, **kwargs: Any):
    """`evaluate.load(metric_path(name), **kwargs)`: one call, no checkout, no network."""
    try:
        import evaluate
    except ImportError as exc:  # the `metrics` extra is not installed
        raise ImportError("load_metric needs `evaluate`; install it with: pip install -e '.[metrics]' (from the clone; video-hardneg is not on PyPI)") from exc
    return evaluate.load(metric_path(name), **kwargs)
