"""What comparing with a paper needs beside the numbers: the authors' item set, and how far ties can move a metric.

* A benchmark may declare other item sets its authors evaluate on (`Benchmark.item_choices`; ATP-Hard's
  `authors`: VideoCon's `eval_atphard.py` skips the question asked twice about one video, 1,844 of 1,846).
  `hardneg evaluate --items NAME` scores those items only and says which set was used.
* Where scores tie, a metric's value depends on the tie rule. The range from the pessimistic rule (every tie
  lost) to the optimistic one (every tie won), computed by the ranking core's own rules
  (`hardneg.ranking.ties`), is printed beside the value and kept in the result (`tie_range`), for every
  metric the ties move.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hardneg import benchmarks
from hardneg.items import Aligned, subset_items
from hardneg.results import evaluate_scores

#: the full item set's name in results (no `--items`)
ALL_ITEMS = "all"
#: the two rules that bound every other one (`hardneg.ranking.ties.TIE_RULES`)
BOUNDS = ("pessimistic", "optimistic")


def choose_items(aligned: Aligned, data, name: str | None) -> tuple[Aligned, dict[str, Any]]:
    """The aligned scores restricted to a declared item set (`name`; None: every item) and what was used:
    {"name", "description", "n_items", "n_items_release"}."""
    full = aligned.n_items
    if not name or name == ALL_ITEMS:
        return aligned, {"name": ALL_ITEMS, "description": "every item of the release", "n_items": full,
                         "n_items_release": full}
    choice = benchmarks.get(data.benchmark).item_choice(name)
    keep = {str(i) for i in choice.load()(data)}
    rows = np.nonzero(np.isin(aligned.items.ids.astype(str), list(keep)))[0]
    n_items = len(keep & {str(i) for i in data.items.column("id").to_pylist()}) if data.items is not None else len(keep)
    chosen = Aligned(subset_items(aligned.items, rows), np.asarray(aligned.scores)[rows],
                     None if aligned.mask is None else np.asarray(aligned.mask)[rows], n_items, list(aligned.notes))
    return chosen, {"name": choice.name, "description": choice.description, "n_items": n_items,
                    "n_items_release": full}


def tie_range(aligned: Aligned, result: dict[str, Any], seed: int = 0) -> dict[str, dict[str, float]]:
    """{metric: {"pessimistic", "optimistic"}} for every metric of `result` whose value the ties move (empty when
    nothing ties): each bound computed by the results engine under that tie rule, without intervals."""
    if not (result.get("tie_rate") or 0) > 0:
        return {}
    bounds = {}
    for rule in BOUNDS:
        r = evaluate_scores(aligned.items, aligned.scores, aligned.mask, ties=rule, n_resamples=0, seed=seed,
                            n_items=aligned.n_items)
        bounds[rule] = {k: v["value"] for k, v in r.metrics.items()}
    out = {}
    for key in result["metrics"]:
        lo, hi = bounds["pessimistic"].get(key), bounds["optimistic"].get(key)
        if lo is None or hi is None or np.isnan(lo) or np.isnan(hi) or abs(hi - lo) <= 1e-12:
            continue
        out[key] = {"pessimistic": float(lo), "optimistic": float(hi)}
    return out


def range_text(key: str, bounds: dict[str, float] | None, two_decimals: bool = False) -> str:
    """'ties 11.65–21.87 (pessimistic–optimistic)': percent for a fraction, as the value beside it."""
    if not bounds:
        return ""
    from hardneg import vocabulary

    if two_decimals:
        fmt = (lambda x: f"{100 * x:.2f}") if vocabulary.is_percent(key) else (lambda x: f"{x:.3f}")
    else:
        fmt = lambda x: vocabulary.display(key, x)  # noqa: E731
    return f"ties {fmt(bounds['pessimistic'])}–{fmt(bounds['optimistic'])} (pessimistic–optimistic)"


__all__ = ["ALL_ITEMS", "BOUNDS", "choose_items", "range_text", "tie_range"]
