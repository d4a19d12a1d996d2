"""The one results vocabulary: every metric key defined once, with its unit and how it is shown.

Every surface reads this table: the declarations (`hardneg.benchmarks.Metric` takes its unit,
direction and range from here), the results engine and `results.json`, the `evaluate` modules and
their cards, `hardneg run` / `evaluate` / `quickstart` output, the submission payload, the board,
the demo, the dataset cards and the README tables. Two rules, as `evaluate`, MTEB and ranx do:

* machine-readable outputs (module `compute`, JSON, submission payloads, CSV downloads) hold
  fractions in [0, 1] and ranks as ranks;
* every display shows a fraction as percent with one decimal and says so in its header
  (``header("R@1") == "R@1 (%)"``); a rank is shown with two decimals (``"MeanR (rank)"``).

A key names one computation everywhere. ``R@1``, ``C@5`` and ``C@10_original`` are instances of the
templates ``R@k``, ``C@k`` and ``C@k_original``; a per-group key ``<key>_<group>`` (``PoSRank_noun``,
``Accuracy_direction``) is the same computation on one group's items and resolves to its base entry.
Multiple choice is ``Accuracy`` (not R@1); FIRE's C@k under the original single positive is
``C@k_original`` (not R@k).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

FRACTION = "fraction"
RANK = "rank"
UNITS = (FRACTION, RANK)


@dataclass(frozen=True)
class Entry:
    """One metric of the vocabulary.

    key: the key as written in outputs (a template such as ``R@k`` stands for ``R@1``, ``R@2``, ...).
    name: the display name (the same as the key: one name on every surface).
    unit: ``fraction`` (machine outputs in [0, 1], displays in percent) or ``rank`` (1 = best).
    higher_better: direction of "better".
    range: (low, high) of the machine value; None for a bound that depends on the item (a rank's C).
    chance: what a scorer that cannot tell candidates apart gets (the engine computes it exactly).
    definition: one line saying what it computes.
    module: the `evaluate` module (``metrics/<module>``) that outputs this key, if one does.
    """

    key: str
    name: str
    unit: str
    higher_better: bool
    range: tuple[float | None, float | None]
    chance: str
    definition: str
    module: str | None = None

    @property
    def percent(self) -> bool:
        """Shown as percent (every fraction is)."""
        return self.unit == FRACTION


_CONSTANT = "a constant scorer's exact score under the default tie rule (ties='expected')"

ENTRIES: tuple[Entry, ...] = (
    Entry("Accuracy", "Accuracy", FRACTION, True, (0.0, 1.0), f"1/C for C options; {_CONSTANT}",
          "multiple choice: share of items whose positive scores above all its negatives (per-item R@1 of the "
          "ranking core; a tie counts its expected value)", "accuracy"),
    Entry("Proficiency", "Proficiency", FRACTION, True, (0.0, 1.0), f"1/C of the proficiency test; {_CONSTANT}",
          "ViLMA: Accuracy on each item's proficiency test"),
    Entry("Combined", "Combined", FRACTION, True, (0.0, 1.0), f"product of the two tests' chances; {_CONSTANT}",
          "ViLMA: share of items where both the main test and the proficiency test are right",
          "rcad_accuracy"),
    Entry("R@k", "R@k", FRACTION, True, (0.0, 1.0), f"k/C for C candidates; {_CONSTANT}",
          "caption ranking with one positive (Feint6K/RCAD): share of items whose positive ranks in the top k",
          "rcad_accuracy"),
    Entry("MeanR", "MeanR", RANK, False, (1.0, None), f"(C+1)/2 for C candidates; {_CONSTANT}",
          "mean rank of the positive (1 = best)", "mean_rank"),
    Entry("MedianR", "MedianR", RANK, False, (1.0, None), f"(C+1)/2 for C candidates; {_CONSTANT}",
          "median rank of the positive (1 = best)", "mean_rank"),
    Entry("MRR", "MRR", FRACTION, True, (0.0, 1.0), f"H_C/C for C candidates; {_CONSTANT}",
          "mean reciprocal rank of the positive"),
    Entry("PoSRank", "PoSRank", FRACTION, True, (0.0, 1.0), f"H_C/C for C candidates; {_CONSTANT}",
          "unweighted mean over parts of speech of the MRR of the true caption (PoSRank Eq. 1); "
          "PoSRank_<pos> is one part of speech's MRR", "posrank"),
    Entry("C@k", "C@k", FRACTION, True, (0.0, 1.0), f"depends on each query's relevant videos; {_CONSTANT}",
          "retrieval with several relevant videos (FIRE labels): share of queries with a relevant video in "
          "the top k", "correct_at_k"),
    Entry("mAP", "mAP", FRACTION, True, (0.0, 1.0), f"depends on each query's relevant videos; {_CONSTANT}",
          "retrieval with several relevant videos: mean over queries of the average precision (FIRE Eq. 2)",
          "mean_average_precision"),
    Entry("C@k_original", "C@k_original", FRACTION, True, (0.0, 1.0), f"k/N for N videos; {_CONSTANT}",
          "C@k counting only the query's original single positive (the benchmark's own labels)", "correct_at_k"),
    Entry("mAP_original", "mAP_original", FRACTION, True, (0.0, 1.0), f"H_N/N for N videos; {_CONSTANT}",
          "mAP counting only the query's original single positive (the benchmark's own labels)",
          "mean_average_precision"),
)

BY_KEY: dict[str, Entry] = {e.key: e for e in ENTRIES}

#: concrete key -> template key (R@1 -> R@k); checked in this order
_TEMPLATES = ((re.compile(r"^R@\d+$"), "R@k"), (re.compile(r"^C@\d+$"), "C@k"),
              (re.compile(r"^C@\d+_original$"), "C@k_original"))


class UnknownMetricKey(KeyError):
    """A key the vocabulary does not define (the message names the known keys and the fix)."""

    def __str__(self) -> str:  # KeyError quotes its message; show it as written
        return str(self.args[0]) if self.args else ""


def _direct(key: str) -> Entry | None:
    if key in BY_KEY:
        return BY_KEY[key]
    for pattern, template in _TEMPLATES:
        if pattern.match(key):
            return BY_KEY[template]
    return None


def base_key(key: str) -> str | None:
    """The concrete key a (possibly per-group) key is an instance of: 'PoSRank_noun' -> 'PoSRank',
    'C@5_original' -> 'C@5_original', 'Accuracy_direction' -> 'Accuracy'; None when unknown."""
    if not isinstance(key, str) or key.endswith("_ci"):  # an interval beside its metric, not a group
        return None
    if _direct(key) is not None:
        return key
    parts = key.split("_")
    for cut in range(len(parts) - 1, 0, -1):  # longest known base first (mAP_original_x -> mAP_original)
        base = "_".join(parts[:cut])
        if _direct(base) is not None:
            return base
    return None


def lookup(key: str) -> Entry | None:
    """The entry of `key` (templates and per-group keys resolved), or None."""
    base = base_key(key)
    return None if base is None else _direct(base)


def entry(key: str) -> Entry:
    """The entry of `key`; an unknown key is a clear error naming the vocabulary and the fix."""
    found = lookup(key)
    if found is None:
        raise UnknownMetricKey(
            f"unknown metric key {str(key)[:80]!r}: the results vocabulary (hardneg.vocabulary) defines "
            f"{', '.join(BY_KEY)} (k a number; '<key>_<group>' for one group). Use one of these keys, or add an "
            "Entry to hardneg.vocabulary.ENTRIES with its unit, direction, range, chance rule and definition.")
    return found


def is_metric(key: str) -> bool:
    """True for a key the vocabulary defines (so not for `n`, `tie_rate`, `R@1_ci`, ...)."""
    return lookup(key) is not None


def unit(key: str) -> str:
    return entry(key).unit


def is_percent(key: str) -> bool:
    """Shown as percent (a fraction)."""
    return entry(key).unit == FRACTION


def higher_better(key: str) -> bool:
    return entry(key).higher_better


def header(key: str, label: str | None = None) -> str:
    """A column header that says the unit: 'R@1 (%)', 'MeanR (rank)'. `label` replaces the shown name
    (e.g. 'R@1 · msrvtt') while the unit still comes from `key`."""
    shown = key if label is None else label
    return f"{shown} (%)" if is_percent(key) else f"{shown} (rank)"


def scale(key: str) -> float:
    """Factor from the machine value to the displayed number (100 for fractions)."""
    return 100.0 if is_percent(key) else 1.0


def display(key: str, value: float | None, low: float | None = None, high: float | None = None,
            missing: str = "") -> str:
    """The value as every display writes it: percent with one decimal for a fraction, two decimals for a
    rank; with `low` and `high`, 'value [low, high]'. None or NaN gives `missing`."""
    pct = is_percent(key)

    def one(v):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return missing
        return f"{100 * float(v):.1f}" if pct else f"{float(v):.2f}"

    shown = one(value)
    if low is None or high is None or shown == missing:
        return shown
    return f"{shown} [{one(low)}, {one(high)}]"


def display_entry(key: str, entry_: dict | None, missing: str = "n/a") -> str:
    """`display` of a results entry {'value', 'low', 'high'} (results.json) or {'estimate', ...} (the store)."""
    if not entry_:
        return missing
    value = entry_.get("value", entry_.get("estimate"))
    return display(key, value, entry_.get("low"), entry_.get("high"), missing=missing)


def check_fraction(key: str, value: float | None) -> None:
    """Raise when a machine value of a fraction key is outside [0, 1] (e.g. a percent slipped in)."""
    if value is None or not is_percent(key) or (isinstance(value, float) and math.isnan(value)):
        return
    if not -1e-9 <= float(value) <= 1 + 1e-9:
        raise ValueError(f"{key} = {value!r} is outside [0, 1]: machine outputs hold fractions, not percent")


def table_markdown() -> str:
    """The vocabulary as a Markdown table (docs/metrics.md and the board's About tab)."""
    rows = ["| key | unit | better | range | chance | what it computes |", "|---|---|---|---|---|---|"]
    for e in ENTRIES:
        lo, hi = e.range
        rng = f"[{lo:g}, {'C' if hi is None else f'{hi:g}'}]"
        shown = "percent, 1 decimal" if e.percent else "rank, 2 decimals"
        rows.append(f"| `{e.key}` | {e.unit} ({shown}) | {'higher' if e.higher_better else 'lower'} | {rng} "
                    f"| {e.chance} | {e.definition} |")
    return "\n".join(rows)


__all__ = ["BY_KEY", "ENTRIES", "Entry", "FRACTION", "RANK", "UNITS", "UnknownMetricKey", "base_key",
           "check_fraction", "display", "display_entry", "entry", "header", "higher_better", "is_metric",
           "is_percent", "lookup", "scale", "table_markdown", "unit"]
