"""Find a benchmark's videos in a local folder and say which are missing.

The Hub datasets reference videos by id and never copy them; MSR-VTT, MSVD and
VATEX videos keep disappearing from YouTube, so every result must state its
denominator. This resolver and coverage report give it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

VIDEO_EXTENSIONS = (".mp4", ".webm", ".mkv", ".avi", ".mov", ".gif")


def index_video_folder(video_dir: str | Path, extensions: Iterable[str] = VIDEO_EXTENSIONS) -> dict[str, Path]:
    """Map video id (file name without extension) to its file, searching sub-folders; first by sorted path wins."""
    root = Path(video_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"video folder {root} does not exist; pass the folder that holds <video_id>.mp4 files")
    exts = {e.lower() for e in extensions}
    found: dict[str, Path] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.suffix.lower() in exts:
            found.setdefault(path.stem, path)
    return found


def resolve_videos(video_ids: Iterable[str], video_dir: str | Path, extensions: Iterable[str] = VIDEO_EXTENSIONS) -> dict[str, Path | None]:
    """Path of each video id in `video_dir`, or None when it is missing."""
    index = index_video_folder(video_dir, extensions)
    return {vid: index.get(vid) for vid in dict.fromkeys(video_ids)}


def coverage_report(video_ids: Iterable[str], video_dir: str | Path, extensions: Iterable[str] = VIDEO_EXTENSIONS) -> dict:
    """How many of the referenced videos are present: n, found, missing ids (sorted), coverage share."""
    resolved = resolve_videos(video_ids, video_dir, extensions)
    missing = sorted(v for v, p in resolved.items() if p is None)
    n = len(resolved)
    return {
        "video_dir": str(video_dir),
        "n_videos": n,
        "n_found": n - len(missing),
        "n_missing": len(missing),
        "coverage": (n - len(missing)) / n if n else 1.0,
        "missing": missing,
    }


def video_ids_of_folder(built: str | Path) -> list[str]:
    """All video ids referenced by the Parquet files of a built repo folder, sorted."""
    import pyarrow.parquet as pq

    ids: set[str] = set()
    for path in sorted(Path(built).rglob("*.parquet")):
        schema = pq.read_schema(path)
        if "video_id" in schema.names:
            ids.update(pq.read_table(path, columns=["video_id"]).column("video_id").to_pylist())
    return sorted(ids)
