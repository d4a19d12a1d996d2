"""No function in src/hardneg takes more than 10 parameters (issue 51): settings travel as a few named objects
(`hardneg.settings`). `self`/`cls` are not counted; `*args` and `**kwargs` count one each."""

from __future__ import annotations

import ast
from pathlib import Path


SRC = Path(__file__).resolve().parents[1] / "src" / "hardneg"
LIMIT = 10


def count(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    a = fn.args
    names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs if x.arg not in ("self", "cls")]
    return len(names) + bool(a.vararg) + bool(a.kwarg)


def offenders(root: Path = SRC) -> list[str]:
    """'path:line name (n parameters)' for every function over the limit under `root`."""
    out = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and count(node) > LIMIT:
                out.append(f"{path.relative_to(root.parent)}:{node.lineno} {node.name} ({count(node)} parameters)")
    return out


def test_the_counter_counts(tmp_path):
    """It can fail: a function of 11 parameters is listed, one of 10 (with self) is not."""
    (tmp_path / "m.py").write_text("def long(a, b, c, d, e, f, g, h, i, j, k): pass\n"
                                   "class C:\n    def ok(self, a, b, c, d, e, f, g, h, *args, **kw): pass\n")
    assert offenders(tmp_path) == [f"{tmp_path.name}/m.py:1 long (11 parameters)"]


def test_no_function_takes_more_than_10_parameters():
    found = offenders()
    assert not found, ("functions over 10 parameters (put the settings in an object of hardneg.settings):\n  "
                       + "\n  ".join(found))
