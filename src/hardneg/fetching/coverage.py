"""Which referenced videos a fetch produced: present and decodable, or missing and why (the coverage report)."""

from __future__ import annotations

from pathlib import Path

from hardneg.benchmarks.base import VideoSource
from hardneg.fetching.videos import known_members


def check(video_ids: list[str], dest: Path, sources: tuple[VideoSource, ...], decode: bool = True,
          max_listed: int = 200) -> dict:
    """{"present", "referenced", "missing": {id: why}, "unreadable": {id: why}} for the ids the items reference."""
    from hardneg.video import FrameSettings, VideoDecodeError, VideoFolder, decode_frames

    folder = VideoFolder(dest) if dest.is_dir() else None
    members, absent = known_members(dest)
    missing: dict[str, str] = {}
    unreadable: dict[str, str] = {}
    present = 0
    probe = FrameSettings(n_frames=1, resize=32)
    for vid in video_ids:
        path = folder.path(vid) if folder is not None else None
        if path is None:
            missing[vid] = _why_missing(vid, members, absent, sources)
            continue
        if decode:
            try:
                decode_frames(path, probe)
            except (VideoDecodeError, OSError) as exc:
                unreadable[vid] = f"{path.name}: {exc}"
                continue
        present += 1
    return {"referenced": len(video_ids), "present": present, "coverage": present / len(video_ids) if video_ids else 1.0,
            "n_missing": len(missing), "n_unreadable": len(unreadable),
            "missing": dict(sorted(missing.items())[:max_listed]),
            "unreadable": dict(sorted(unreadable.items())[:max_listed]), "videos": str(dest)}


def _why_missing(vid: str, members: dict[str, tuple[str, str]], absent: dict[str, str],
                 sources: tuple[VideoSource, ...]) -> str:
    if vid in members:
        archive, rel = members[vid]
        return f"unpacked from {archive} as {rel}, then deleted: rerun `hardneg fetch` to restore it"
    hub = [s for s in sources if s.kind == "hub"]
    manual = [s for s in sources if s.kind == "manual"]
    if vid in absent or (hub and members):
        names = ", ".join(f"{s.repo_id}@{s.revision[:12]}" for s in hub)
        why = f"not in the pinned archives of {names} (the source lacks it)"
    elif hub:
        why = "not fetched (no archive unpacked here)"
    else:
        why = ""
    for s in manual:
        why += ("; or " if why else "") + f"{s.part + ': ' if s.part else ''}no redistributable copy ({s.why})"
    return why or "no video source"


def summary(report: dict) -> str:
    """'410 of 410 videos present' plus the first few missing ids and why."""
    line = f"{report['present']} of {report['referenced']} referenced videos present and decodable"
    if report["n_missing"]:
        vid, why = next(iter(report["missing"].items()))
        line += f"; {report['n_missing']} missing (e.g. {vid}: {why})"
    if report["n_unreadable"]:
        vid, why = next(iter(report["unreadable"].items()))
        line += f"; {report['n_unreadable']} unreadable (e.g. {vid}: {why})"
    return line
