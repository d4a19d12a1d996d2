"""The chaos run (perf/chaos_mirror.py) at a small size: a board process killed at random with its disk wiped, the
stand-in Hub failing 20% of calls; every acknowledged submission and moderation ends in the repo and on the board
exactly once. The full run (200 operations, 10 kills) is `PYTHONPATH=src python3 perf/chaos_mirror.py`."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "perf" / "chaos_mirror.py"


@pytest.mark.slow
def test_chaos_nothing_acknowledged_is_lost_or_doubled():
    spec = importlib.util.spec_from_file_location("chaos_mirror", SCRIPT)
    chaos = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(chaos)
    counts = chaos.run(n_ops=60, kills=3, fail=0.2, seed=1, quiet=True)
    assert counts["problem list"] == []
    # the 2 kills at operations always happen; the kill timed to land during a start-up restore happens only where
    # that restore is still running when its timer fires (a quiet machine may finish it first)
    assert counts["kills (disk wiped)"] - counts["kills during a start-up restore"] == 2
    assert counts["kills during a start-up restore"] in (0, 1) and counts["acknowledged submissions"] > 30
    assert counts["acknowledged submissions in repo exactly once"] == counts["acknowledged submissions"]
    assert counts["acknowledged submissions on board exactly once"] == counts["acknowledged submissions"]
    assert counts["acknowledged moderations in repo exactly once"] == counts["acknowledged moderations"]
