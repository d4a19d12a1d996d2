"""The training table of `perf/bench_training.py` follows the display rule of the results vocabulary
(percent with one decimal, '(%)' in every header), and docs/training.md carries its header (the README, a front
page since issue 27, links it)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_training", ROOT / "perf" / "bench_training.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _results(bench):
    assert bench.table_columns({"rows": {"x": {"metrics": {}}}}) == []  # no column without a value behind it
    every = ["retrieval/meanR@1,5,10_V2T", "retrieval/meanR@1,5,10_T2V"]
    every += [f"posrank/PoSRank_{p}" for p in bench.POS] + ["posrank/PoSRank", "counterfactual/Accuracy",
                                                              "temporal/Accuracy"]
    every += [f"temporal/Accuracy_{a}" for a in bench.ASPECTS]
    metrics = {k: {"value": 0.297, "low": 0.27, "high": 0.328} for k in every}
    return {"rows": {"coarse only": {"metrics": metrics}}, "chance": {k: 0.5 for k in every}}


def test_every_cell_is_percent_and_every_header_says_so():
    bench = _bench()
    table = bench.markdown_table(_results(bench))
    header, _, row, blind, chance = table.splitlines()
    assert all(h.strip().endswith("(%)") for h in header.strip("|").split("|")[1:]), header
    cells = [c.strip() for c in row.strip("|").split("|")[1:]]
    assert cells and all(c == "29.7 [27.0, 32.8]" for c in cells), row
    assert set(c.strip() for c in chance.strip("|").split("|")[1:]) == {"50.0"}
    assert "0.297" not in table


def test_readme_and_docs_hold_the_scripts_header_and_percent_cells():
    bench = _bench()
    header = bench.markdown_table(_results(bench)).splitlines()[0]
    assert "docs/training.md" in (ROOT / "README.md").read_text()  # the README links the table (issue 27: front page)
    for doc in ("docs/training.md",):
        lines = (ROOT / doc).read_text().splitlines()
        assert header in lines, f"{doc}: the training table's header is not the one bench_training.py prints"
        start = lines.index(header)
        body = [x for x in lines[start + 2:] if x.startswith("| ")]
        body = body[:next((i for i, x in enumerate(body) if x.startswith("| chance")), len(body)) + 1]
        assert len(body) >= 8, doc
        for line in body:
            assert not re.search(r"(?<![\d.])0\.\d{3}\b", line), f"{doc}: a fraction in a display: {line[:80]}"
