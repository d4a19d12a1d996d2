"""Peak resident memory of this process, as the benchmarks report it."""

from __future__ import annotations

import resource
from pathlib import Path


def peak_rss_mb() -> float:
    """Peak resident memory in MB: VmHWM (this process image only; `ru_maxrss` also counts the parent's
    peak when it was larger at fork time), `ru_maxrss` where /proc is missing (kB on most systems)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
