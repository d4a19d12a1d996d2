"""One entry point per benchmark: validate every raw file, then write the repo folder atomically."""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hardneg import benchmarks
from hardneg.datasets.hub_layout import BenchmarkBuild, with_declaration, write_hub_folder
from hardneg.datasets.table_checks import check_tables
from hardneg.datasets.videos import coverage_report
from hardneg.io import aside_path, recover_interrupted_replace, refuse_overwrite

log = logging.getLogger("hardneg.build")



@dataclass
class BuildResult:
    """Where the repo folder is, and what the build found."""

    out: Path
    build: BenchmarkBuild
    report: dict[str, Any]


def parse_raw(benchmark, raw: str | Path) -> BenchmarkBuild:
    """Read and validate the raw release of `benchmark` (a name or its `Benchmark` declaration); raises before
    anything is written.

    The one build path: the declaration's parser reads the files, the declaration's card facts are added
    (`with_declaration`), and every table gets the shared checks (`table_checks.check_tables`: no NUL byte in
    any string, only declared negative types), so a new benchmark's parser is covered without calling them.
    """
    decl = benchmarks.get(benchmark) if isinstance(benchmark, str) else benchmark  # a clear error for an unknown name
    raw = Path(raw)
    if not raw.is_dir():
        raise FileNotFoundError(f"raw folder {raw} does not exist; pass the folder holding the authors' release files")
    try:
        build = decl.parse_function()(raw)
    except RecursionError:  # the readers bound JSON nesting; this is the last line of defence
        raise ValueError(
            f"{raw}: a {decl.name} raw file is nested too deeply to read (damaged JSON?); re-download the release files"
        ) from None
    with_declaration(build, decl)
    check_tables(build, raw)
    if "files" not in build.report:
        build.report["files"] = file_report(raw, build.raw_files, decl.name)
    return build


def file_report(raw: str | Path, used: list[str], benchmark: str) -> list[dict[str, str]]:
    """Every file under `raw`: "used" if the parser lists it in `raw_files`, else "ignored" (for parsers that
    do not classify files themselves; the four built-in ones do, with their reasons)."""
    raw = Path(raw)
    used_set = set(used)
    out = []
    for dirpath, dirnames, filenames in os.walk(raw):
        dirnames.sort()
        for name in sorted(filenames):
            rel = (Path(dirpath) / name).relative_to(raw).as_posix()
            if rel in used_set or name in used_set:
                out.append({"path": rel, "status": "used", "reason": f"read by the {benchmark} parser"})
            else:
                out.append({"path": rel, "status": "ignored", "reason": f"not read by the {benchmark} parser"})
    return sorted(out, key=lambda e: e["path"])


def check_strict(build: BenchmarkBuild, raw: str | Path) -> None:
    """--strict: every file of the raw folder must be used; raise listing the ignored ones and why."""
    ignored = [e for e in build.report.get("files", []) if e["status"] != "used"]
    if ignored:
        listing = "; ".join(f"{e['path']} ({e['reason']})" for e in ignored)
        raise ValueError(
            f"--strict: {len(ignored)} file{'s' if len(ignored) > 1 else ''} in {raw} would not be used: {listing}. "
            "Remove or move them out of the raw folder (or rename a release file the builder did not recognize), "
            "or build without --strict"
        )


def build_benchmark(
    benchmark,
    raw: str | Path,
    out: str | Path,
    overwrite: bool = False,
    videos: str | Path | None = None,
    strict: bool = False,
) -> BuildResult:
    """Validate the raw files of `benchmark` (a name or its declaration) and write its Hub repo folder to `out`.

    `videos`: optional local video folder; its coverage of the referenced videos goes in the report.
    `strict`: fail when any file of `raw` would be ignored (the report's `files` list says why each one is).
    """
    out_abs, raw_abs = Path(out).resolve(), Path(raw).resolve()
    if out_abs == raw_abs or out_abs in raw_abs.parents:
        raise ValueError(f"--out {out} would replace the raw files in {raw}; write the build to another folder")
    if recover_interrupted_replace(out) == "restored":  # a kill mid --overwrite: the old build comes back first
        log.warning("%s was restored from %s, left by an interrupted --overwrite", out, aside_path(out).name)
    refuse_overwrite(out, overwrite)  # fail fast, before parsing a large release
    build = parse_raw(benchmark, raw)
    if strict:
        check_strict(build, raw)
    extra: dict[str, Any] = {}
    if videos is not None:
        ids = sorted({v for c in build.configs for t in c.splits.values() if "video_id" in t.column_names for v in t.column("video_id").to_pylist()})
        cov = coverage_report(ids, videos)
        cov["video_dir"] = Path(videos).name
        extra["video_coverage"] = cov
    path = write_hub_folder(build, out, overwrite=overwrite, extra_report=extra)
    report = json.loads((Path(path) / "build_report.json").read_text())
    return BuildResult(Path(path), build, report)
