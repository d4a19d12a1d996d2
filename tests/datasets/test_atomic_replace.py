"""`--overwrite` never leaves `--out` missing: a kill between the moves is undone before the next run does anything.

The kill is forced in a child process at the exact point (the `hardneg.io._crash_point` hook calls
os._exit there), once on the two-step path (old tree moved aside, new one not yet in) and once on
the Linux one-step swap (renameat2 RENAME_EXCHANGE).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from hardneg.datasets import build_benchmark, sample_raw_dir
from hardneg.io import OutputExistsError, _rename_exchange, aside_path, atomic_directory

CHILD = textwrap.dedent(
    """
    import os, sys
    import hardneg.io as io
    out, mode, what = sys.argv[1], sys.argv[2], sys.argv[3]
    if mode == "two-step":
        io._rename_exchange = lambda a, b: False
    point = "aside" if mode == "two-step" else "exchanged"
    io._crash_point = lambda name: os._exit(17) if name == point else None
    if what == "dir":
        with io.atomic_directory(out, overwrite=True) as tmp:
            (tmp / "data.txt").write_text("new")
    else:
        from hardneg.datasets import build_benchmark, sample_raw_dir
        build_benchmark("posrank", sample_raw_dir("posrank"), out, overwrite=True)
    """
)


def _kill_mid_replace(out, mode: str, what: str = "dir") -> None:
    proc = subprocess.run([sys.executable, "-c", CHILD, str(out), mode, what], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 17, proc.stderr


def _exchange_supported(tmp_path) -> bool:
    a, b = tmp_path / "xa", tmp_path / "xb"
    a.mkdir(), b.mkdir()
    try:
        return _rename_exchange(a, b)
    finally:
        a.rmdir(), b.rmdir()


def test_kill_between_the_two_moves_is_undone_on_the_next_run(tmp_path):
    out = tmp_path / "built"
    with atomic_directory(out) as tmp:
        (tmp / "data.txt").write_text("old")
    _kill_mid_replace(out, "two-step")
    # the gap the issue measured: --out is gone, the old tree sits in the aside folder
    assert not out.exists() and (aside_path(out) / "data.txt").read_text() == "old"
    # the next run moves it back before anything else (here it then refuses to overwrite)
    with pytest.raises(OutputExistsError):
        with atomic_directory(out):
            pass
    assert (out / "data.txt").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["built"]


def test_kill_during_build_overwrite_keeps_the_previous_build(tmp_path):
    out = tmp_path / "pr"
    first = build_benchmark("posrank", sample_raw_dir("posrank"), out)
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    _kill_mid_replace(out, "two-step", what="build")
    assert not out.exists()
    with pytest.raises(OutputExistsError):  # restored first, then refused: the build is there again
        build_benchmark("posrank", sample_raw_dir("posrank"), out)
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert json.loads((out / "build_report.json").read_text())["counts"] == first.report["counts"]
    again = build_benchmark("posrank", sample_raw_dir("posrank"), out, overwrite=True)
    assert again.report["counts"] == first.report["counts"] and not aside_path(out).exists()


def test_one_step_swap_leaves_no_gap(tmp_path):
    if sys.platform != "linux" or not _exchange_supported(tmp_path):
        pytest.skip("renameat2(RENAME_EXCHANGE) is not available here; the two-step path is tested above")
    out = tmp_path / "built"
    with atomic_directory(out) as tmp:
        (tmp / "data.txt").write_text("old")
    _kill_mid_replace(out, "exchange")
    assert (out / "data.txt").read_text() == "new"  # the swap happened in one step before the kill
    assert not aside_path(out).exists()
    # the killed process's temporary folder (now holding the old tree) is removed by the next run
    assert len(list(tmp_path.glob(".built.*.tmp"))) == 1
    with atomic_directory(out, overwrite=True) as tmp:
        (tmp / "data.txt").write_text("newer")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["built"]


def test_leftover_aside_with_output_present_is_deleted(tmp_path):
    out = tmp_path / "built"
    with atomic_directory(out) as tmp:
        (tmp / "data.txt").write_text("new")
    aside_path(out).mkdir()
    (aside_path(out) / "data.txt").write_text("old")
    with atomic_directory(out, overwrite=True) as tmp:
        (tmp / "data.txt").write_text("newer")
    assert (out / "data.txt").read_text() == "newer" and not aside_path(out).exists()
