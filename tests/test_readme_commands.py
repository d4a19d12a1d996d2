"""The README's shell commands run as written in a fresh clone (issue 19 §5 and "Done when").

Every ```bash block of README.md whose fence follows the line `<!-- readme-test: run -->` is extracted
and run, in document order, command by command, in a `git clone` of this repository in a temporary
folder: what a new user has after cloning. The commands run in a virtual environment of their own
(over the packages of the environment running the tests, `venv_helpers`, so they are reused; the clone's
`pip install -e ...` goes into that environment, never into the machine's), with no network:
`PIP_NO_INDEX=1` and `HF_HUB_OFFLINE=1`. A `pip install` that fails only because a third-party
dependency is missing from this machine would need the network, not a README fix, and is reported
as skipped; one that cannot find video-hardneg itself (a package name the index does not have)
fails the test.

To cover a new block (e.g. the submit and board commands), put `<!-- readme-test: run -->` on the
line before its ```bash fence; the pages of docs/ that took the README's reference (`DOCS`) are read the
same way, after the README. The README's two set-up commands are checked too: `bash scripts/quickstart.sh`
runs as written, every line of the README's `$ hardneg quickstart` block is among what it prints, and
`.ci/run` runs `bash scripts/test.sh`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from venv_helpers import make_venv_over_running_env

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
#: the pages that took the README's reference (issue 27); their marked blocks run after the README's, in this order
DOCS = [REPO / "docs" / f"{name}.md" for name in ("install", "datasets", "evaluate-modules", "reproductions", "scoring",
                                                   "generators", "analyses", "world", "demo", "leaderboard")]
QUICKSTART = "$ hardneg quickstart"
MARKER = "<!-- readme-test: run -->"
pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Command:
    line: int  # 1-based line of the command in README.md
    text: str

    def __str__(self) -> str:
        return f"README.md:{self.line}: {self.text}"


def marked_blocks(text: str) -> list[list[Command]]:
    """The commands of every ```bash block preceded by MARKER (comments dropped, `\\` continuations joined)."""
    lines = text.splitlines()
    blocks, i = [], 0
    while i < len(lines):
        if lines[i].strip() == "```bash":
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"), None)
            if end is None:
                raise ValueError(f"README.md:{i + 1}: a ```bash block is never closed")
            before = next((lines[k].strip() for k in range(i - 1, -1, -1) if lines[k].strip()), "")
            if before == MARKER:
                blocks.append(_commands(lines[i + 1:end], i + 2))
            i = end
        i += 1
    return blocks


def _commands(body: list[str], first_line: int) -> list[Command]:
    out, pending, start = [], "", first_line
    for n, raw in enumerate(body, first_line):
        if not pending:
            start = n
        line = raw.rstrip()
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = pending + line
        pending = ""
        if line.strip() and not line.lstrip().startswith("#"):
            out.append(Command(start, line.strip()))
    return out


def test_marked_blocks_are_found():
    blocks = marked_blocks(README.read_text(encoding="utf-8"))
    commands = [c.text for b in blocks for c in b]
    assert any(c.startswith("pip install -e '.[metrics]'") for c in commands), "the install block is not marked"
    assert any(c.startswith("hardneg run ") for c in commands) and any(c.startswith("hardneg evaluate ") for c in commands)
    assert not [c for c in commands if re.search(r"pip install ['\"]?video-hardneg", c)], "names a package not on PyPI"


def test_extractor_joins_continuations_and_skips_unmarked():
    text = "\n".join(["```bash", "echo unmarked", "```", MARKER, "", "```bash", "# comment", "echo a \\",
                      "  b   # trailing", "echo c", "```"])
    (block,) = marked_blocks(text)
    assert [c.text for c in block] == ["echo a    b   # trailing", "echo c"] and block[0].line == 8


def test_no_install_instruction_names_a_package_the_index_lacks():
    """`pip install 'video-hardneg[...]'` fails: the package is not on PyPI. No doc may say it."""
    docs = [README, REPO / "CONTRIBUTING.md", *REPO.glob("docs/*.md"), *REPO.glob("metrics/*/README.md"),
            *REPO.glob("dataset_scripts/*/README.md"), *REPO.glob("spaces/*/README.md")]
    bad = []
    for path in docs:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"pip install\s+(-[^e]\S*\s+)*['\"]?video-hardneg", line):
                bad.append(f"{path.relative_to(REPO)}:{n}: {line.strip()}")
    assert not bad, "\n".join(bad)


def test_two_setup_commands_stay_true():
    text = README.read_text(encoding="utf-8")
    section = text.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    block = section.split("```bash", 1)[1].split("```", 1)[0]
    commands = [line.split("#", 1)[0].strip() for line in block.strip().splitlines()]
    assert commands == ["bash scripts/quickstart.sh", "bash scripts/test.sh"]
    assert (REPO / "scripts" / "quickstart.sh").is_file() and (REPO / "scripts" / "test.sh").is_file()
    ci = (REPO / ".ci" / "run").read_text()
    assert "bash scripts/test.sh" in ci
    assert "hardneg quickstart" in (REPO / "scripts" / "quickstart.sh").read_text()


# ----------------------------------------------------------------------------- running them


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout: there is nothing to clone")
    root = tmp_path_factory.mktemp("readme-clone")
    work = root / "video-hardneg"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(work)], check=True, timeout=300)
    venv = root / "venv"
    make_venv_over_running_env(venv)  # sees this environment's packages: a venv's, a .venv's or PATH's
    bindir = venv / "bin"
    # `pip` is this environment's own (the machine's pip module run by the environment's Python installs here)
    (bindir / "pip").write_text(f'#!/bin/sh\nexec "{bindir / "python"}" -m pip "$@"\n')
    (bindir / "pip").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(PATH=f"{bindir}{os.pathsep}{env.get('PATH', '')}", VIRTUAL_ENV=str(venv), PIP_NO_INDEX="1",
               PIP_NO_BUILD_ISOLATION="0", PIP_REQUIRE_VIRTUALENV="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
               HF_HUB_OFFLINE="1", HARDNEG_CACHE=str(root / "cache"), MPLBACKEND="Agg")
    where = subprocess.run(["python", "-c", "import sys; print(sys.prefix)"], env=env, cwd=work, capture_output=True,
                           text=True, check=True)
    assert Path(where.stdout.strip()) == venv, "the commands would not run in the test's own environment"
    return work, env


def test_clone_environment_sees_the_packages_of_this_one(clone):
    """Run from a virtual environment, the clone's own environment still finds what this one has (issue 27 §1:
    offline, `pip install -e .` in a venv could not find hatchling or filelock)."""
    import importlib.util

    work, env = clone
    names = [n for n in ("hatchling", "filelock", "pyarrow", "numpy") if importlib.util.find_spec(n)]
    code = "import importlib.util as u; print(' '.join(n for n in %r if u.find_spec(n)))" % (names,)
    out = subprocess.run(["python", "-c", code], cwd=work, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == names


NEEDS_NETWORK = re.compile(r"No matching distribution found for (\S+)|Cannot install .* conflicting dependencies")


def _run(command: str, work: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=work, env=env, capture_output=True,
                          text=True, timeout=900)


def test_readme_commands_run_in_a_fresh_clone(clone):
    work, env = clone
    skipped, ran = [], 0
    blocks = [(README, b) for b in marked_blocks(README.read_text(encoding="utf-8"))]
    blocks += [(doc, b) for doc in DOCS for b in marked_blocks(doc.read_text(encoding="utf-8"))]
    for _doc, block in blocks:
        for cmd in block:
            out = _run(cmd.text, work, env)
            ran += 1
            if out.returncode != 0 and cmd.text.startswith("pip install"):
                missing = NEEDS_NETWORK.search(out.stderr + out.stdout)
                if missing and "video-hardneg" not in (missing.group(1) or "").lower():
                    skipped.append(f"{cmd} (needs the network: {missing.group(0)[:120]})")
                    continue
            assert out.returncode == 0, f"{cmd}\nexit {out.returncode}\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}"
            if cmd.text.startswith("hardneg metric-path"):
                assert Path(out.stdout.strip()).resolve().is_relative_to(work.resolve())
    where = _run("python -c 'import hardneg; print(hardneg.__file__)'", work, env)
    assert Path(where.stdout.strip()).resolve().is_relative_to(work.resolve()), "the clone's package was not installed"
    # what the run/evaluate block left behind: results and a JSON read from standard output
    assert (work / "runs" / "tiny" / "results.json").is_file() and not (work / "-").exists()
    assert ran >= 10
    if skipped:
        print("skipped offline:\n" + "\n".join(skipped))


def readme_quickstart_lines(text: str) -> list[str]:
    """The lines of the README's `$ hardneg quickstart` output block, less the command and the `...` elisions."""
    block = text.split(QUICKSTART, 1)[1].split("```", 1)[0]
    return [line.rstrip() for line in block.splitlines() if line.strip() and line.strip() not in ("...", "…")]


def test_readme_quickstart_block_is_found():
    lines = readme_quickstart_lines(README.read_text(encoding="utf-8"))
    assert len(lines) >= 10 and lines[0].startswith("model: tiny-clip") and lines[1].startswith("benchmark")
    assert readme_quickstart_lines(f"x\n{QUICKSTART}\na  b\n...\nc\n```\n") == ["a  b", "c"]


def test_quickstart_script_runs_as_written(clone):
    work, env = clone
    out = _run("bash scripts/quickstart.sh --out qs", work, env)
    assert out.returncode == 0, f"{out.stdout[-2000:]}\n{out.stderr[-3000:]}"
    assert "Accuracy (%)" in out.stdout and "R@1 (%)" in out.stdout and (work / "qs" / "results.json").is_file()
    printed = {line.rstrip() for line in out.stdout.splitlines()}
    stale = [line for line in readme_quickstart_lines(README.read_text(encoding="utf-8")) if line not in printed]
    assert not stale, "README's quickstart block shows lines the command no longer prints:\n" + "\n".join(stale)
