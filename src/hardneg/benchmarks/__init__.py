"""The benchmark registry: every declaration, found once.

Declarations come from three places, in this order:
1. this package's own modules (`feint6k`, `contrast_sets`, `posrank`, `fire`, `vitatecs`, ...):
   every module here that defines a module-level `BENCHMARK`;
2. installed packages that expose an entry point in the group ``hardneg.benchmarks``
   (the entry point names an object that is a `Benchmark`, as lm-eval and MTEB find tasks);
3. the environment variable ``HARDNEG_BENCHMARKS``: comma-separated module names or paths to
   ``.py`` files defining ``BENCHMARK`` (for a local benchmark without packaging). A file is loaded
   by its location (`load_file`), so it needs no PYTHONPATH.

`register()` adds one at run time. An unknown name is a clear error listing the known ones.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
import sys
from pathlib import Path

from hardneg.benchmarks.base import CHANCE_CONSTANT_SCORER, TASKS, Benchmark, Metric, ReportedRow, ScoreImporter

ENTRY_POINT_GROUP = "hardneg.benchmarks"
ENV_VAR = "HARDNEG_BENCHMARKS"

_REGISTRY: dict[str, Benchmark] = {}
_LOADED = False


def register(benchmark: Benchmark, replace: bool = False) -> Benchmark:
    """Add a declaration; a second one under the same name is refused unless `replace`."""
    if not isinstance(benchmark, Benchmark):
        raise TypeError(f"register() takes a hardneg.benchmarks.Benchmark, got {type(benchmark).__name__}")
    old = _REGISTRY.get(benchmark.name)
    if old is not None and old != benchmark and not replace:
        raise ValueError(f"a benchmark named {benchmark.name!r} is already registered; choose another name")
    _REGISTRY[benchmark.name] = benchmark
    return benchmark


def _module_benchmark(module) -> None:
    bench = getattr(module, "BENCHMARK", None)
    if isinstance(bench, Benchmark):
        register(bench, replace=True)


def _stem_is_this_file(path: Path) -> bool:
    """Whether `import <file stem>` would import `path` itself (never shadow another module of that name)."""
    if not path.stem.isidentifier():
        return False
    loaded = sys.modules.get(path.stem)
    if loaded is not None:
        return getattr(loaded, "__file__", None) == str(path)
    try:
        spec = importlib.util.find_spec(path.stem)
    except (ImportError, ValueError):
        return False
    return spec is not None and spec.origin == str(path)


def load_file(path: str | Path) -> Benchmark:
    """Import a `.py` file that defines `BENCHMARK` by its location and register it (what a `.py` entry of
    `HARDNEG_BENCHMARKS` does): no PYTHONPATH needed.

    The module is importable afterwards under its file name (`my_bench.py` -> `my_bench`, unless another module
    already has that name), so the declaration's `parser="my_bench:parse"` resolves; its folder joins
    `sys.path`, as when Python runs a script, so it may import a helper module next to it.
    """
    path = Path(path).expanduser()
    if path.suffix != ".py" or not path.is_file():
        raise ValueError(f"{ENV_VAR}: {path} is not a .py file (cwd {Path.cwd()}); give the path of a .py file "
                         "that defines BENCHMARK, or a module name importable from sys.path")
    path = path.resolve()
    name = f"hardneg_user_benchmark_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ValueError(f"{ENV_VAR}: cannot import {path}; give a .py file that defines BENCHMARK")
    if str(path.parent) not in sys.path:
        sys.path.append(str(path.parent))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    if _stem_is_this_file(path):
        sys.modules[path.stem] = module  # `parser="<file stem>:parse"` finds this module, not a second copy
    bench = getattr(module, "BENCHMARK", None)
    if not isinstance(bench, Benchmark):
        raise ValueError(f"{ENV_VAR}: {path} defines no module-level BENCHMARK = hardneg.benchmarks.Benchmark(...); "
                         "see CONTRIBUTING.md, 'Add a benchmark'")
    return register(bench, replace=True)


def _discover() -> None:
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    here = Path(__file__).resolve().parent
    for info in sorted(pkgutil.iter_modules([str(here)]), key=lambda i: i.name):
        if info.name != "base":
            _module_benchmark(importlib.import_module(f"{__name__}.{info.name}"))
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        obj = ep.load()
        if not isinstance(obj, Benchmark):
            raise TypeError(f"entry point {ep.name!r} in group {ENTRY_POINT_GROUP!r} is not a hardneg Benchmark")
        register(obj, replace=True)
    for entry in filter(None, (e.strip() for e in os.environ.get(ENV_VAR, "").split(","))):
        if entry.endswith(".py"):
            load_file(entry)
        else:
            _module_benchmark(importlib.import_module(entry))


def all_benchmarks() -> dict[str, Benchmark]:
    """{name: declaration} of every known benchmark, in a stable order (built-ins first, then by name)."""
    _discover()
    return dict(sorted(_REGISTRY.items(), key=lambda kv: (kv[1].order, kv[0])))


def names() -> list[str]:
    return list(all_benchmarks())


def get(name: str) -> Benchmark:
    """The declaration of `name`; a clear error naming the known benchmarks otherwise."""
    if not isinstance(name, str):
        raise ValueError(f"a benchmark name must be a string, got {type(name).__name__}")
    known = all_benchmarks()
    if name not in known:
        raise ValueError(f"unknown benchmark {name[:100]!r}; known benchmarks: {', '.join(known)} "
                         f"(add one with a declaration, see CONTRIBUTING.md)")
    return known[name]


def by_hub_id(hub_id: str) -> Benchmark | None:
    """The benchmark published at Hub repo `hub_id`, if any."""
    return next((b for b in all_benchmarks().values() if b.hub_id == hub_id), None)


def negative_types() -> tuple[str, ...]:
    """The shared negative types plus every type a declaration adds (what a built item may carry)."""
    from hardneg.schema import NEGATIVE_TYPES

    extra = [t for b in all_benchmarks().values() for t in b.negative_types if t not in NEGATIVE_TYPES]
    return tuple(NEGATIVE_TYPES) + tuple(dict.fromkeys(extra))


def names_text() -> str:
    """'a, b, c' for help text and errors."""
    return ", ".join(names())


__all__ = [
    "Benchmark", "CHANCE_CONSTANT_SCORER", "ENTRY_POINT_GROUP", "ENV_VAR", "Metric", "ReportedRow", "ScoreImporter", "TASKS",
    "all_benchmarks", "by_hub_id", "get", "load_file", "names", "negative_types", "names_text", "register",
]
