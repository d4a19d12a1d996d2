"""Build the declared benchmarks as Hub dataset repos (Parquet configs + card) from the authors' raw releases.

```python
from hardneg.datasets import build_benchmark, sample_raw_dir, build_samples
build_benchmark("posrank", raw="path/to/raw", out="built/posrank")   # validate, then write atomically
ds = datasets.load_dataset("built/posrank", "vln_uvo", split="test")
```
"""

from __future__ import annotations

import importlib

# Layering: the helpers here (`raw_common`, `hub_layout`, `table_checks`, `videos`, `push`) import nothing from
# `hardneg.benchmarks`; the declarations there use them for their parsers; `builder` and `samples` sit on top
# (they resolve a benchmark's name through the registry). The front-door names below are imported on first use,
# so a declaration importing a helper does not import the registry.
_LAZY = {
    "BuildResult": "hardneg.datasets.builder",
    "build_benchmark": "hardneg.datasets.builder",
    "parse_raw": "hardneg.datasets.builder",
    "RawFormatError": "hardneg.datasets.raw_common",
    "build_samples": "hardneg.datasets.samples",
    "sample_benchmarks": "hardneg.datasets.samples",
    "sample_raw_dir": "hardneg.datasets.samples",
    "sample_video_ids": "hardneg.datasets.samples",
}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'hardneg.datasets' has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *_LAZY])


__all__ = sorted(_LAZY)
