"""Expected time and memory of the steps that can take over a minute, measured here and scaled to the input.

A user who starts `hardneg world generate 1000 200`, `hardneg score` on it or `hardneg train` should know before
waiting whether it is a matter of seconds, minutes or an hour, and how much memory it needs. Each long step has
one `Cost` below, measured on `MACHINE` with `/usr/bin/time` (CPU seconds and peak resident memory); the step
prints `expected(...)` before it starts when the estimate is over a minute, and its `--help` prints
`help_line(...)`. Costs are CPU seconds of one process on a quiet core of that machine: a busy machine takes
longer (measured: wall time up to `BUSY_FACTOR` x under load average 12 on 2 cores), a GPU far less for models.
The README's "Expected time and memory" table holds the same numbers (tests/test_expected.py checks it).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

MACHINE = "a 2-core AMD EPYC (x86-64) virtual machine with no GPU"
#: wall time / CPU time seen while measuring under load average 12 on that machine
BUSY_FACTOR = 6


@dataclass(frozen=True)
class Cost:
    """What one step costs here: `fixed_s` + `per_unit_s` x units CPU seconds, at most `peak_mb` resident."""

    step: str
    unit: str
    per_unit_s: float
    fixed_s: float
    peak_mb: int
    measured: str  # the runs the numbers come from

    def seconds(self, units: float) -> float:
        return self.fixed_s + self.per_unit_s * max(0.0, units)


COSTS: dict[str, Cost] = {
    "world generate": Cost("hardneg world generate", "scene", 0.042, 0.0, 100,
                           "300 scenes (64x64, 16 frames): 12.5 s of CPU, 95 MB peak (72 s wall at load average 12)"),
    "score": Cost("hardneg score (tiny-clip on the CPU, cold cache; larger models take longer)", "item", 0.096, 0.0, 560,
                  "the world's posrank config, 100 videos and 500 items: 47.8 s of CPU, 558 MB peak (202 s wall at load "
                  "average 12)"),
    "train": Cost("hardneg train --objective coarse (tiny-temporal on the CPU, batch 32)", "step", 0.18, 11.0, 530,
                  "6 and 18 steps on a 40-pair world: 12.3 and 14.5 s of CPU, 527 MB peak"),
    "train with negatives": Cost("hardneg train --objective word (negatives made on the fly; tiny-temporal on the CPU, "
                                 "batch 32)", "step", 2.0, 10.0, 1310,
                                 "6 and 18 steps on a 40-pair world: 22.0 and 45.6 s of CPU, 1.31 GB peak (149 s wall "
                                 "at load average 11); phrase, prompt and llm-* objectives not measured"),
}


def duration(seconds: float) -> str:
    """'40 s', '9 min', '1.5 h': one rounded figure, as a person reads it."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def expected(step: str, units: float) -> str:
    """'expected: about 50 s of CPU (up to 5 min on a busy machine) and 100 MB peak for 1,200 scenes ...'."""
    cost = COSTS[step]
    quiet = cost.seconds(units)
    return (f"expected: about {duration(quiet)} (up to {duration(quiet * BUSY_FACTOR)} on a busy machine) and "
            f"{cost.peak_mb} MB peak memory for {units:,.0f} {cost.unit}{'' if units == 1 else 's'}, as measured on {MACHINE} "
            f"({cost.per_unit_s:g} s of CPU per {cost.unit}; a faster machine takes less)")


def announce(step: str, units: float, threshold_s: float = 60.0, stream=None) -> bool:
    """Print `expected(...)` to standard error when the step may take over `threshold_s` (on a busy machine)."""
    if COSTS[step].seconds(units) * BUSY_FACTOR <= threshold_s:
        return False
    print(f"{COSTS[step].step}: {expected(step, units)}", file=stream or sys.stderr)
    return True


def help_line(step: str) -> str:
    """The --help sentence: the measured cost per unit, the memory and the machine."""
    c = COSTS[step]
    return (f"Expected time and memory (measured on {MACHINE}): about {c.per_unit_s:g} s of CPU per {c.unit}"
            f"{f' plus {c.fixed_s:g} s to start' if c.fixed_s else ''}, at most about {c.peak_mb} MB; a busy machine "
            f"takes up to {BUSY_FACTOR}x longer. Measured: {c.measured}.")


def markdown_table() -> str:
    """The README's table: one row per long step, from `COSTS` (tests/test_expected.py keeps them equal)."""
    rows = ["| step | CPU time (quiet machine) | peak memory | measured |", "|---|---|---|---|"]
    for c in COSTS.values():
        start = f" + {c.fixed_s:g} s" if c.fixed_s else ""
        rows.append(f"| {c.step} | {c.per_unit_s:g} s per {c.unit}{start} | {c.peak_mb} MB | {c.measured} |")
    return "\n".join(rows)


__all__ = ["BUSY_FACTOR", "COSTS", "Cost", "MACHINE", "announce", "duration", "expected", "help_line",
           "markdown_table"]
