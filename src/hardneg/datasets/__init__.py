"""Build the declared benchmarks as Hub dataset repos (Parquet configs + card) from the authors' raw releases.

```python
from hardneg.datasets import build_benchmark, sample_raw_dir, build_samples
build_benchmark("posrank", raw="path/to/raw", out="built/posrank")   # validate, then write atomically
ds = datasets.load_dataset("built/posrank", "vln_uvo", split="test")
```
"""

from __future__ import annotations

from hardneg.datasets.builder import BuildResult, build_benchmark, parse_raw
from hardneg.datasets.raw_common import RawFormatError
from hardneg.datasets.samples import build_samples, sample_benchmarks, sample_raw_dir, sample_video_ids

__all__ = [
    "BuildResult",
    "RawFormatError",
    "build_benchmark",
    "build_samples",
    "sample_benchmarks",
    "parse_raw",
    "sample_raw_dir",
    "sample_video_ids",
]
