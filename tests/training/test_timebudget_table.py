"""The tables of issue 28's time-budget design (`experiments/training/training_timebudget.py`: probe,
experiment, per category) follow the display rule of the results vocabulary (percent with one decimal), docs/training.md carries their headers, and the statistics
(Holm's correction, the detectable effect) are right on hand-checked numbers."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    sys.path.insert(0, str(ROOT / "experiments" / "training"))
    spec = importlib.util.spec_from_file_location("training_timebudget",
                                                  ROOT / "experiments" / "training" / "training_timebudget.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _summary():
    tests = [{"row": "gen-word", "metric": "all", "difference": 0.021, "low": -0.004, "high": 0.046, "p_value": 0.1,
              "p_holm": 0.3, "mde": 0.035, "se": 0.0125, "seed_differences": [0.01, 0.02, 0.03]},
             {"row": "gen-word", "metric": "noun", "difference": -0.05, "low": -0.09, "high": -0.01, "p_value": 0.01,
              "p_holm": 0.02, "mde": 0.06, "se": 0.02, "seed_differences": [-0.05] * 3}]
    row = {"name": "coarse only", "train_accuracy": 0.5912, "test_accuracy": 0.297, "test_interval": [0.27, 0.328],
           "per_category": {"noun": 0.123}, "retrieval": {"V2T": 0.2, "T2V": 0.21}, "best_steps": [100, 150, 150]}
    other = dict(row, name="+ generator word-level negatives (Eq. 4)")
    return {"seeds": [0, 1, 2], "rows": {"coarse": row, "gen-word": other}, "tests": tests,
            "chance": {"noun": 0.1}, "chance_all": 0.31}


def test_every_cell_is_percent_and_every_header_says_its_unit():
    bench = _bench()
    table = bench.experiment_table(_summary())
    header, _, coarse, word, chance = table.splitlines()
    assert all(h.strip().endswith(("(%)", "(points)", "(Holm)", "steps")) or h.strip() == "training"
               for h in header.strip("|").split("|")), header
    assert "59.1" in coarse and "29.7 [27.0, 32.8]" in coarse
    assert "+2.1 [-0.4, +4.6]" in word and "| 0.3 |" in word and "| 3.5 |" in word
    assert "0.297" not in table and "0.591" not in table
    cats = bench.category_table(_summary())
    assert "12.3 (-5.0, p 0.02)" in cats
    probe = bench.probe_table({"attributes": {"noun": {"accuracy": 0.8, "low": 0.75, "high": 0.85, "chance": 0.1,
                                                        "n_test": 100, "classes": 10, "learnable": True}}})
    assert "| noun | 10 | 100 | 80.0 [75.0, 85.0] | 10.0 | yes |" in probe


def test_holm_and_the_detectable_effect():
    bench = _bench()
    # Holm: sorted p (0.01, 0.02, 0.03, 0.5) x (4, 3, 2, 1) = 0.04, 0.06, 0.06 (monotone), 0.5
    assert bench.holm([0.03, 0.01, 0.5, 0.02]) == pytest.approx([0.06, 0.04, 0.5, 0.06])
    assert bench.holm([0.9, 0.8]) == pytest.approx([1.0, 1.0])  # 0.8 x 2 caps at 1; monotone after
    # the detectable effect at one test: (1.96 + 0.84) x SE
    assert (bench._z(1 - 0.05 / 2) + bench._z(0.8)) == pytest.approx(2.8016, abs=1e-3)


def test_docs_hold_the_scripts_headers():
    bench = _bench()
    lines = (ROOT / "docs" / "training.md").read_text().splitlines()
    exp = bench.experiment_table(_summary()).splitlines()[0]
    probe = bench.probe_table({"attributes": {}}).splitlines()[0]
    assert exp in lines, "docs/training.md: the experiment table's header is not the one training_timebudget.py prints"
    assert probe in lines, "docs/training.md: the probe table's header is not the one training_timebudget.py prints"
    start = lines.index(exp)
    body = [x for x in lines[start + 2:] if x.startswith("| ")]
    for line in body[:10]:
        assert not re.search(r"(?<![\d.])0\.\d{3}\b", line), f"a fraction in a display: {line[:80]}"
