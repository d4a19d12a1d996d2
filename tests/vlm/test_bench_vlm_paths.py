"""perf/bench_vlm.py --paths (issue 52): the rows it prints carry the ratios the issue asks for and, with
--breakdown, the caption forwards' share of one item's time and the bound it puts on batching across videos.
Ratios are printed, never asserted: this checks what is computed, not how fast."""

from __future__ import annotations

import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "perf" / "bench_vlm.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_vlm", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_paths_with_breakdown_prints_each_types_caption_bound(capsys):
    bench = _bench()
    got = bench.main(["--paths", "--types", "qwen3_5", "--items", "2", "--captions", "3", "--caption-tokens", "4",
                      "--rounds", "1", "--breakdown"])
    (row,) = got["paths"]
    assert row["model_type"] == "qwen3_5"
    assert row["generic_one_item"] > 0 and row["generic_across_videos"] > 0
    assert abs(row["across_vs_one"] - row["generic_across_videos"] / row["generic_one_item"]) < 1e-9
    assert 0 < row["caption_share"] <= 1 and abs(row["caption_bound"] * row["caption_share"] - 1) < 1e-9
    out = capsys.readouterr().out
    assert "x one item" in out and "across videos can gain at most" in out


PROFILE = BENCH.parent / "profile_vlm_ops.py"


def test_profile_vlm_ops_prints_both_paths_and_their_ratio(capsys):
    spec = importlib.util.spec_from_file_location("profile_vlm_ops", PROFILE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.main(["--type", "qwen2_vl", "--items", "2", "--captions", "3", "--caption-tokens", "4", "--rows", "3"])
    out = capsys.readouterr().out
    assert "===== one item:" in out and "===== across videos:" in out
    assert "scaled_dot_product" in out or "aten::" in out  # the operator tables, not only the headers
    ratio = float(out.split("operators' own time: ")[1].split("x")[0])
    assert ratio > 0


def test_profile_vlm_ops_refuses_an_unknown_type_by_name():
    import pytest

    spec = importlib.util.spec_from_file_location("profile_vlm_ops", PROFILE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with pytest.raises(SystemExit, match="not-a-type: not a verified type"):
        mod.main(["--type", "not-a-type"])
