"""`$HARDNEG_BENCHMARKS` takes `.py` paths: a benchmark declared in a file outside any package, with no PYTHONPATH."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hardneg import benchmarks

SRC = Path(__file__).resolve().parents[2] / "src"
TOY_SAMPLE = Path(__file__).resolve().parent / "toy_sample" / "toy"

#: a declaration whose parser is named by the file's own name and which imports a helper module beside it
DECLARATION = '''
"""A local benchmark in one file (plus a helper next to it); nothing installed, no PYTHONPATH."""
import json
from pathlib import Path

from hardneg.benchmarks import Benchmark, Metric
from hardneg.datasets.hub_layout import ConfigData, release_build
from hardneg.datasets.raw_common import mc_table

from envbench_rows import row_of


def parse(raw):
    path = Path(raw) / "toy.jsonl"
    rows = [row_of(json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return release_build("envbench", [ConfigData("main", {"test": mc_table(rows, path)})], [path.name], {})


BENCHMARK = Benchmark(
    name="envbench", title="Env bench", task="multiple_choice", hub_id="example/envbench", pretty_name="Env bench",
    paper_title="none", paper_url="https://example.org/envbench", citation="@misc{envbench}", licenses=("cc0-1.0",),
    license_note="CC0.", description="A local benchmark.", negatives="Hand-written.", limitations="Tiny.",
    source_datasets=("toy",), parser="envbench:parse", raw_files="toy.jsonl",
    metrics=(Metric("Accuracy", "R@1", "positive ranked first"),), order=98,
)
'''

HELPER = '''
from hardneg.datasets.raw_common import provenance


def row_of(rec):
    k = len(rec["captions"])
    return {"id": "env:" + rec["video"], "video_id": rec["video"], "source_dataset": "toy", "source_split": "test",
            "category": "swap", "captions": rec["captions"], "label": 0, "manipulated_index": None,
            "negative_types": ["positive"] + ["unknown"] * (k - 1),
            "provenance": [provenance("positive")] + [provenance("human")] * (k - 1)}
'''


@pytest.fixture()
def local_bench(tmp_path):
    folder = tmp_path / "somewhere else"
    folder.mkdir()
    (folder / "envbench.py").write_text(textwrap.dedent(DECLARATION))
    (folder / "envbench_rows.py").write_text(textwrap.dedent(HELPER))
    return folder / "envbench.py"


def _env(**extra) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(SRC)  # only the package itself: the benchmark's folder is not on it
    env.update(extra)
    return env


def test_a_py_path_lists_and_builds_without_pythonpath(local_bench, tmp_path):
    env = _env(HARDNEG_BENCHMARKS=f"hardneg.benchmarks.feint6k, {local_bench}")
    out = subprocess.run([sys.executable, "-m", "hardneg", "list", "--json", "--no-samples"], env=env,
                         capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    listed = json.loads(out.stdout)
    names = [b["name"] for b in listed] if isinstance(listed, list) else list(listed)
    assert "envbench" in str(names) and "feint6k" in str(names)
    built = subprocess.run([sys.executable, "-m", "hardneg", "build", "envbench", "--raw", str(TOY_SAMPLE),
                            "--out", str(tmp_path / "built")], env=env, capture_output=True, text=True, timeout=180,
                           cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    assert "A local benchmark." in (tmp_path / "built" / "README.md").read_text()


def test_load_file_registers_and_the_parser_resolves_by_the_file_name(local_bench, monkeypatch):
    before = dict(benchmarks.all_benchmarks())  # after discovery, so restoring it never empties the registry
    monkeypatch.setattr(sys, "path", list(sys.path))
    try:
        bench = benchmarks.load_file(local_bench)
        assert benchmarks.get("envbench") is bench
        build = bench.parse_function()(TOY_SAMPLE)
        assert build.benchmark == "envbench" and build.configs[0].splits["test"].num_rows == 3
    finally:
        benchmarks._REGISTRY.clear()
        benchmarks._REGISTRY.update(before)
        for name in ("envbench", "envbench_rows", "hardneg_user_benchmark_envbench"):
            sys.modules.pop(name, None)


def test_a_file_never_shadows_a_module_of_the_same_name(tmp_path, monkeypatch):
    (tmp_path / "json.py").write_text(DECLARATION.replace("envbench", "jsonbench").replace("from jsonbench_rows import row_of\n", ""))
    before = dict(benchmarks.all_benchmarks())  # after discovery, so restoring it never empties the registry
    monkeypatch.setattr(sys, "path", list(sys.path))
    try:
        benchmarks.load_file(tmp_path / "json.py")
        assert sys.modules["json"].__file__ != str(tmp_path / "json.py")  # the standard library's json stays
    finally:
        benchmarks._REGISTRY.clear()
        benchmarks._REGISTRY.update(before)
        sys.modules.pop("hardneg_user_benchmark_json", None)


@pytest.mark.parametrize("entry, message", [
    ("missing.py", "is not a .py file"),
    ("nodecl.py", "defines no module-level BENCHMARK"),
])
def test_a_bad_py_entry_is_a_clear_error(tmp_path, entry, message):
    (tmp_path / "nodecl.py").write_text("X = 1\n")
    out = subprocess.run([sys.executable, "-m", "hardneg", "list", "--no-samples"], capture_output=True, text=True,
                         env=_env(HARDNEG_BENCHMARKS=str(tmp_path / entry)), timeout=180, cwd=tmp_path)
    assert out.returncode != 0
    assert message in out.stderr and "HARDNEG_BENCHMARKS" in out.stderr
