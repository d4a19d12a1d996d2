"""The multi-writer chaos run (perf/chaos_mirror.py) at a small size (issue 49): two board processes on one repo,
the stand-in Hub failing 20% of calls, 10% of commits landing after the client timed out, file_exists lagging, each
board killed with its disk wiped; every acknowledged submission and moderation ends in the repo and on the board
exactly once, no version is taken twice, every state is the repo's last moderation. The full run is
`PYTHONPATH=src python3 perf/chaos_mirror.py` (2 writers x 100 operations, 5 kills each); here 2 x 16 operations, 1 kill each."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "perf" / "chaos_mirror.py"


@pytest.mark.slow
def test_chaos_two_writers_lose_nothing_and_double_nothing():
    spec = importlib.util.spec_from_file_location("chaos_mirror", SCRIPT)
    chaos = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(chaos)
    counts = chaos.run(n_ops=16, kills=1, fail=0.2, seed=1, quiet=True, writers=2, late=0.1, late_s=0.3, lag=2.0)
    assert counts["problem list"] == []
    assert counts["kills (disk wiped)"] == 2 and counts["acknowledged submissions"] > 16
    assert counts["lost (acknowledged, not in the repo or not on the board exactly once)"] == 0
    assert counts["duplicated (a record or a (model, part, version) twice)"] == 0 and counts["wrong states"] == 0
