"""No import cycle in `hardneg`: statically (imports inside functions count too) and by importing each module alone.

The static check reads every `import` / `from ... import` in `src/hardneg` (module level, inside functions and
under `if TYPE_CHECKING:` alike), as the project's pre-stop hook does, and fails naming every cycle. The dynamic
checks import each module of the package alone: in one interpreter with every `hardneg` module dropped from
`sys.modules` before each import (fast), and in a fresh interpreter per module (the issue's "python -c" check).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "hardneg"


def package_modules(root: Path = SRC, package: str = PACKAGE) -> dict[str, Path]:
    """{dotted module name: file} of every module of the package (a package is named without `.__init__`)."""
    out = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the package's modules it imports anywhere in its file.

    `from a.b import c` counts as an import of `a.b` and of `a.b.c` when that is a module; a relative import is
    resolved against the importing module's package. A package's own `__init__` importing its submodules is not
    an edge back (Python runs the package first), as in the hook's check.
    """
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        pkg = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = pkg.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            graph[name] |= {
                t for t in targets
                if t in modules and t != name and not (path.name == "__init__.py" and t.startswith(name + "."))
            }
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component with more than one module (Tarjan), each as a sorted list."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph) + 100))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return found


def describe(component: list[str], graph: dict[str, set[str]]) -> str:
    inside = set(component)
    return "; ".join(f"{m} -> {', '.join(sorted(graph[m] & inside))}" for m in component)


# --------------------------------------------------------------------------- the checker itself can fail


def test_the_cycle_finder_finds_a_cycle_through_an_import_inside_a_function(tmp_path):
    pkg = tmp_path / "toy"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from toy import a\n")  # a package importing its own module: not an edge
    (pkg / "a.py").write_text("from toy.b import thing\n")
    (pkg / "b.py").write_text("def later():\n    from . import c\n")
    (pkg / "c.py").write_text("import toy.a\n")
    (pkg / "d.py").write_text("from toy import b\n")
    graph = import_graph(package_modules(tmp_path, "toy"))
    assert graph["toy.b"] == {"toy", "toy.c"} and graph["toy.d"] == {"toy", "toy.b"} and graph["toy"] == set()
    assert cycles(graph) == [["toy.a", "toy.b", "toy.c"]]


def test_the_cycle_finder_passes_a_layered_package(tmp_path):
    pkg = tmp_path / "toy"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "low.py").write_text("import json\n")
    (pkg / "high.py").write_text("from toy.low import json\n\ndef f():\n    from toy import low\n")
    assert cycles(import_graph(package_modules(tmp_path, "toy"))) == []


# --------------------------------------------------------------------------- the package


def test_no_import_cycle_in_the_package_imports_inside_functions_included():
    graph = import_graph(package_modules())
    found = cycles(graph)
    assert not found, "import cycles in src/hardneg (imports inside functions count too): " + " | ".join(
        describe(c, graph) for c in found
    ) + ". Break each one: move the shared piece to a lower module, or pass what the lower layer needs in."


_EACH_ALONE = textwrap.dedent(
    """
    import importlib, sys, traceback
    failed = []
    for name in sys.argv[1:]:
        for loaded in [m for m in sys.modules if m == "hardneg" or m.startswith("hardneg.")]:
            del sys.modules[loaded]
        try:
            importlib.import_module(name)
        except BaseException:
            failed.append(name + ": " + traceback.format_exc(limit=-3).strip().splitlines()[-1])
    print("\\n".join(failed))
    sys.exit(1 if failed else 0)
    """
)


def importable_modules() -> list[str]:
    """Every module but `__main__` ones: importing `hardneg.__main__` runs the CLI, by design."""
    return [m for m in sorted(package_modules()) if not m.endswith(".__main__")]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), *filter(None, [env.get("PYTHONPATH")])])
    return env


@pytest.mark.slow
def test_every_module_imports_alone_with_the_package_unloaded_before_each():
    """Fast: one interpreter; before each module, every `hardneg` module is dropped, so the module's own imports
    run in its order from nothing (third-party packages stay loaded: they cannot make or hide a cycle here)."""
    names = importable_modules()
    proc = subprocess.run([sys.executable, "-c", _EACH_ALONE, *names], capture_output=True, text=True, env=_env(),
                          timeout=600)
    assert proc.returncode == 0, f"modules that fail to import alone:\n{proc.stdout}{proc.stderr[-3000:]}"


@pytest.mark.slow
def test_every_module_imports_alone_in_a_fresh_interpreter():
    """The issue's check as written: `python -c "import <module>"` for every module, each in a fresh interpreter
    (two at a time)."""
    env = _env()

    def one(name: str) -> str | None:
        proc = subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True, text=True, env=env,
                              timeout=300)
        if proc.returncode:
            return f"{name}: {(proc.stderr.strip().splitlines() or ['exit ' + str(proc.returncode)])[-1]}"
        return None

    with ThreadPoolExecutor(max_workers=2) as pool:
        failed = [f for f in pool.map(one, importable_modules()) if f]
    assert not failed, "modules that fail to import alone in a fresh interpreter:\n" + "\n".join(failed)
