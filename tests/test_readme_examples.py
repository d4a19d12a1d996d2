"""Every ```python block of README.md, of the docs pages that took the README's reference (`MOVED_DOCS`) and of
the metric cards (metrics/*/README.md) runs as written.

Each block runs in a fresh namespace in an empty temporary working directory, the way a reader
pastes it (and the way `evaluate` runs its modules' docstring examples). Where a statement is
followed by a comment that starts with `# {`, that comment is the documented output and must be
the value's repr (whitespace aside). A block is skipped only when the line before its fence is
`<!-- skip-test -->` (for blocks that need the network, e.g. `push_to_hub`).
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: pages of docs/ that took the README's reference (issue 27): their blocks stay checked as they were in the README
MOVED_DOCS = ("datasets", "evaluate-modules", "reproductions", "scoring", "generators", "analyses", "world", "demo",
              "leaderboard", "install", "layout")
DOCUMENTS = [REPO / "README.md", *(REPO / "docs" / f"{name}.md" for name in MOVED_DOCS),
             *sorted((REPO / "metrics").glob("*/README.md"))]
SKIP = "<!-- skip-test -->"
FRONT_DOOR = ("<!-- front-door:start -->", "<!-- front-door:end -->")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # 1-based line of the opening fence
    code: str
    skip: bool

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"


def python_blocks(text: str, path: Path) -> list[Block]:
    """The ```python blocks of a Markdown text, with whether a skip marker precedes each."""
    lines = text.splitlines()
    blocks, i = [], 0
    while i < len(lines):
        if lines[i].strip() == "```python":
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"), None)
            if end is None:
                raise ValueError(f"{path}:{i + 1}: a ```python block is never closed")
            before = next((lines[k].strip() for k in range(i - 1, -1, -1) if lines[k].strip()), "")
            blocks.append(Block(path, i + 1, textwrap.dedent("\n".join(lines[i + 1:end])), before == SKIP))
            i = end
        i += 1
    return blocks


def documented_output(lines: list[str], after: int) -> str | None:
    """The `# {...}` comment right after line `after` (1-based end of a statement), joined; else None."""
    comment = []
    for line in lines[after:]:
        if not line.lstrip().startswith("#"):
            break
        comment.append(line.lstrip()[1:])
    text = " ".join(comment).strip()
    return text if text.startswith("{") else None


def run_block(code: str, filename: str) -> None:
    """Run `code` statement by statement in a fresh namespace, checking documented outputs."""
    namespace: dict = {"__name__": "__readme__"}
    lines = code.splitlines()
    tree = ast.parse(code, filename)
    for node in tree.body:
        expected = documented_output(lines, node.end_lineno)
        if expected is None or not isinstance(node, ast.Expr):
            exec(compile(ast.Module([node], []), filename, "exec"), namespace)  # noqa: S102 - our own docs
            continue
        expr = node.value
        is_print = isinstance(expr, ast.Call) and getattr(expr.func, "id", None) == "print" and len(expr.args) == 1
        value = eval(compile(ast.Expression(expr.args[0] if is_print else expr), filename, "eval"), namespace)  # noqa: S307
        got = repr(value)
        assert "".join(got.split()) == "".join(expected.split()), (
            f"{filename}, line {node.lineno}: documented output\n  {expected}\ndiffers from what it returns\n  {got}")


ALL_BLOCKS = [b for p in DOCUMENTS if p.is_file() for b in python_blocks(p.read_text(encoding="utf-8"), p)]


@pytest.mark.parametrize("block", [pytest.param(b, id=b.name, marks=[pytest.mark.skip(reason=SKIP)] if b.skip else [])
                                   for b in ALL_BLOCKS])
def test_block_runs(block, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HARDNEG_CACHE", str(tmp_path / "cache"))  # sample videos and embeddings stay here
    run_block(block.code, block.name)


def test_blocks_are_found():
    """The extractor sees the README's blocks and every card's (a broken fence would hide them)."""
    assert all(p.is_file() for p in DOCUMENTS), [str(p) for p in DOCUMENTS if not p.is_file()]
    with_blocks = [p for p in DOCUMENTS if "```python" in p.read_text(encoding="utf-8")]
    by_file = {p: [b for b in ALL_BLOCKS if b.path == p] for p in with_blocks}
    assert all(by_file.values()), [str(p) for p, bs in by_file.items() if not bs]
    assert REPO / "README.md" in by_file and REPO / "docs" / "evaluate-modules.md" in by_file


def test_skip_marker_and_output_check_work():
    """The helpers themselves: a marker skips, a wrong documented output fails, a right one passes."""
    text = "x\n<!-- skip-test -->\n```python\nraise SystemExit\n```\n\n```python\nprint(1)\n```\n"
    a, b = python_blocks(text, REPO / "x.md")
    assert a.skip and not b.skip and b.line == 7
    run_block("d = {'a': 1}\nprint(d)\n# {'a': 1}", "ok")
    with pytest.raises(AssertionError, match="documented output"):
        run_block("d = {'a': 2}\nd\n# {'a': 1}", "wrong")


def test_front_door_section():
    """README's "Evaluate your own model": between its markers, at most 15 lines of Python per block."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start, end = (text.find(m) for m in FRONT_DOOR)
    assert 0 <= start < end and text.count(FRONT_DOOR[0]) == text.count(FRONT_DOOR[1]) == 1
    section = text[start:end]
    assert "## Evaluate your own model" in section
    blocks = python_blocks(section, REPO / "README.md")
    assert len(blocks) >= 2 and not any(b.skip for b in blocks)
    for b in blocks:
        assert len(b.code.strip().splitlines()) <= 15, b.code
