"""Tiny built-in raw releases of each benchmark (invented captions) for the quickstart and tests.

Each `hardneg/data/samples/<benchmark>/` holds raw files in the authors' exact
formats and a `videos.txt` listing the video ids they reference, so synthetic
videos with those ids can be made for end-to-end scoring.
"""

from __future__ import annotations

from pathlib import Path

from hardneg.datasets.builder import BENCHMARKS, build_benchmark

SAMPLES_ROOT = Path(__file__).resolve().parent.parent / "data" / "samples"
SAMPLE_BENCHMARKS = tuple(BENCHMARKS)


def sample_raw_dir(benchmark: str) -> Path:
    """Folder of the built-in raw sample of `benchmark`."""
    path = SAMPLES_ROOT / benchmark
    if benchmark not in BENCHMARKS or not path.is_dir():
        raise ValueError(f"no built-in sample for {benchmark!r}; choose one of {sorted(BENCHMARKS)}")
    return path


def sample_video_ids(benchmark: str) -> list[str]:
    """Video ids the sample references (its videos.txt), in file order."""
    text = (sample_raw_dir(benchmark) / "videos.txt").read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip()]


def build_samples(out_dir: str | Path, overwrite: bool = False, benchmarks: tuple[str, ...] = SAMPLE_BENCHMARKS) -> dict[str, Path]:
    """Build every sample into `out_dir/<benchmark>`; returns the folders."""
    out_dir = Path(out_dir)
    return {b: build_benchmark(b, sample_raw_dir(b), out_dir / b, overwrite=overwrite).out for b in benchmarks}
