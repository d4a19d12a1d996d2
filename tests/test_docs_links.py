"""Issue 27 §12: the README is a front page that links the reference in docs/; every relative link of the README,
CONTRIBUTING.md and docs/*.md points at a file that exists, and a `#anchor` at a heading of that file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
README_LIMIT = 25 * 1024


def slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text, inside = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            inside = not inside
        elif not inside and line.startswith("#"):
            text.append(slug(line.lstrip("#")))
    return set(text)


def links(path: Path) -> list[str]:
    body = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return [m for m in LINK.findall(body) if not re.match(r"[a-z]+:", m)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(page):
    broken = []
    for target in links(page):
        file, _, anchor = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading with that anchor in {dest.name}")
    assert not broken, f"{page.relative_to(REPO)}: " + "; ".join(broken)


def test_readme_is_a_front_page():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(text.encode()) <= README_LIMIT, f"README.md is {len(text.encode())} bytes; the reference goes to docs/"
    for section in ("## Two commands", "## Evaluate your own model", "## Leaderboard", "## Expected time and memory"):
        assert section in text
    linked = {Path(t.partition("#")[0]).name for t in links(REPO / "README.md")}
    for page in ("install.md", "datasets.md", "scoring.md", "leaderboard.md", "training.md", "world.md", "demo.md",
                 "evaluate-modules.md", "reproductions.md", "generators.md", "analyses.md", "models.md"):
        assert page in linked, f"the README does not link docs/{page}"
