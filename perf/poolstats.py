"""Measuring a row of a workers sweep: wall time, CPU time of this process and of pool workers, peaks.

Shared by perf/bench_scoring.py and perf/bench_world.py. CPU time of live worker processes is read
from /proc/<pid>/stat (utime + stime), since `RUSAGE_CHILDREN` only counts children that have
exited and been waited for; peak memory is VmHWM, reset per row with /proc/self/clear_refs.
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def proc_cpu(pid: int) -> float:
    """CPU seconds (user + system) of a live process; 0 when it is gone or /proc is missing."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK
    except (OSError, IndexError, ValueError):
        return 0.0


def proc_peak_mb(pid: int | str = "self") -> float:
    """VmHWM of a process in MB (0 when unknown)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def reset_peak() -> None:
    """Make VmHWM start again from the current resident size (Linux >= 4.0; ignored elsewhere)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


class Row:
    """Time a block: wall, CPU of this process and of `pids` (pool workers), peaks. Use as a context manager."""

    def __init__(self, pids: list[int] | None = None):
        self.pids = list(pids or [])

    def __enter__(self) -> "Row":
        reset_peak()
        self._cpu0 = time.process_time()
        self._w0 = {p: proc_cpu(p) for p in self.pids}
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.wall = time.perf_counter() - self._t0
        self.cpu_self = time.process_time() - self._cpu0
        self.cpu_workers = sum(proc_cpu(p) - c for p, c in self._w0.items())
        self.cpu = self.cpu_self + self.cpu_workers
        self.peak_self_mb = proc_peak_mb()
        self.peak_worker_mb = max((proc_peak_mb(p) for p in self.pids), default=0.0)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def workers_list(cores: int, given: str | None = None) -> list[int]:
    """1, 2, 4, ... up to `cores` (and `cores` itself), or the comma-separated counts given."""
    if given:
        return [int(x) for x in given.split(",") if x.strip()]
    out, w = [], 1
    while w < cores:
        out.append(w)
        w *= 2
    return out + [cores]
