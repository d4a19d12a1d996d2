"""A handful of a benchmark's real examples with their real videos, fetched at start-up (the demo Space).

The release files are fetched and built as `hardneg fetch` does (a few MB); the first `n` videos the items
reference are read out of the video archive by HTTP Range (`hardneg.fetching.partial`); the examples kept are the
items of those videos, written as a small built folder beside the full one.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from hardneg.fetching.layout import FetchSettings


def real_examples(name: str, n: int, settings: FetchSettings) -> tuple[Path, Path]:
    """(built folder holding only the items of `n` fetched videos, their videos folder)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from hardneg.datasets.videos import video_ids_of_folder
    from hardneg.fetching.partial import fetch_members
    from hardneg.fetching.pipeline import fetch_benchmark, source_of, videos_of
    from hardneg.io import atomic_directory, atomic_write_parquet

    src = source_of(name)
    state = fetch_benchmark(name, FetchSettings(cache=settings.cache, mirror=settings.mirror, offline=settings.offline,
                                                progress=False, videos=False, decode_check=False))
    built = Path(state["built"])
    dest = settings.root / "examples" / "videos" / name
    ids = video_ids_of_folder(built)[: max(n * 4, n)]
    hub = [v for v in videos_of(src) if v.kind == "hub"]
    if not hub:
        raise ValueError(f"{name}: no public video source ({videos_of(src)[0].why}); the demo cannot show its real "
                         "videos")
    found = {}
    for videos in hub:
        found.update(fetch_members(videos, ids, dest, settings, limit=n - len(found)))
        if len(found) >= n:
            break
    keep = sorted(found)[:n]
    if not keep:
        raise ValueError(f"{name}: none of the videos {ids[:3]}... is in {', '.join(v.repo_id for v in hub)}; cannot show examples")
    subset = settings.root / "examples" / "built" / name
    with atomic_directory(subset, overwrite=True) as tmp:
        for p in built.rglob("*"):
            rel = p.relative_to(built)
            if p.is_dir():
                (tmp / rel).mkdir(parents=True, exist_ok=True)
            elif p.suffix == ".parquet" and "video_id" in pq.read_schema(p).names:
                t = pq.read_table(p)
                (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
                atomic_write_parquet(t.filter(pc.is_in(t.column("video_id"), value_set=_array(keep))), tmp / rel)
            else:
                (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(p, tmp / rel)
    return subset, dest


def _array(values):
    import pyarrow as pa

    return pa.array(values, pa.string())
