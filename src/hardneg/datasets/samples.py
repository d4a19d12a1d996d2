"""Tiny built-in raw releases of each benchmark (invented captions) for the quickstart and tests.

Each `hardneg/data/samples/<benchmark>/` holds raw files in the authors' exact
formats and a `videos.txt` listing the video ids they reference, so synthetic
videos with those ids can be made for end-to-end scoring.
"""

from __future__ import annotations

from pathlib import Path

from hardneg import benchmarks as registry
from hardneg.datasets.builder import build_benchmark


def sample_benchmarks() -> tuple[str, ...]:
    """Every declared benchmark that ships a built-in sample."""
    return tuple(n for n, b in registry.all_benchmarks().items() if b.sample)


def sample_raw_dir(benchmark: str) -> Path:
    """Folder of the built-in raw sample of `benchmark` (from its declaration)."""
    path = registry.get(benchmark).sample_dir()
    if not path.is_dir():
        raise ValueError(f"no built-in sample for {benchmark!r}; benchmarks with one: {', '.join(sample_benchmarks())}")
    return path


def sample_video_ids(benchmark: str) -> list[str]:
    """Video ids the sample references (its videos.txt), in file order."""
    text = (sample_raw_dir(benchmark) / "videos.txt").read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip()]


def build_samples(out_dir: str | Path, overwrite: bool = False, benchmarks: tuple[str, ...] | None = None) -> dict[str, Path]:
    """Build the samples of `benchmarks` (default: every one that has a sample) into `out_dir/<benchmark>`."""
    out_dir = Path(out_dir)
    names = benchmarks or sample_benchmarks()
    return {b: build_benchmark(b, sample_raw_dir(b), out_dir / b, overwrite=overwrite).out for b in names}
