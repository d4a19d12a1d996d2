"""One entry point per benchmark: validate every raw file, then write the repo folder atomically."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hardneg import benchmarks
from hardneg.datasets.hub_layout import BenchmarkBuild, write_hub_folder
from hardneg.io import refuse_overwrite



@dataclass
class BuildResult:
    """Where the repo folder is, and what the build found."""

    out: Path
    build: BenchmarkBuild
    report: dict[str, Any]


def parse_raw(benchmark: str, raw: str | Path) -> BenchmarkBuild:
    """Read and validate the raw release of `benchmark`; raises before anything is written."""
    decl = benchmarks.get(benchmark)  # a clear error for an unknown name
    raw = Path(raw)
    if not raw.is_dir():
        raise FileNotFoundError(f"raw folder {raw} does not exist; pass the folder holding the authors' release files")
    return decl.parse_function()(raw)


def build_benchmark(
    benchmark: str,
    raw: str | Path,
    out: str | Path,
    overwrite: bool = False,
    videos: str | Path | None = None,
) -> BuildResult:
    """Validate the raw files of `benchmark` and write its Hub repo folder to `out`.

    `videos`: optional local video folder; its coverage of the referenced videos goes in the report.
    """
    out_abs, raw_abs = Path(out).resolve(), Path(raw).resolve()
    if out_abs == raw_abs or out_abs in raw_abs.parents:
        raise ValueError(f"--out {out} would replace the raw files in {raw}; write the build to another folder")
    refuse_overwrite(out, overwrite)  # fail fast, before parsing a large release
    build = parse_raw(benchmark, raw)
    extra: dict[str, Any] = {}
    if videos is not None:
        from hardneg.datasets.videos import coverage_report

        ids = sorted({v for c in build.configs for t in c.splits.values() if "video_id" in t.column_names for v in t.column("video_id").to_pylist()})
        cov = coverage_report(ids, videos)
        cov["video_dir"] = Path(videos).name
        extra["video_coverage"] = cov
    path = write_hub_folder(build, out, overwrite=overwrite, extra_report=extra)
    report = json.loads((Path(path) / "build_report.json").read_text())
    return BuildResult(Path(path), build, report)
