"""A benchmark's videos: its Hub archives downloaded with huggingface_hub and unpacked, or lmms-eval's copy reused.

Downloads go through `huggingface_hub.hf_hub_download` at the pinned revision (its own cache resumes an interrupted
download from its `.incomplete` file; `--mirror` is passed as its `endpoint`, else HF_ENDPOINT holds). Unpacking
writes each member under a staging folder, then renames it into `videos/<benchmark>/` (whole files only); a
marker listing the archive's videos is written last, so a kill -9 mid-unpack makes the next run unpack again.
A member is taken only when its path matches the declared `member_pattern` (no absolute path, no `..`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tarfile
import zipfile
import zlib
from pathlib import Path

from hardneg.benchmarks.base import VideoArchive, VideoSource
from hardneg.fetching.download import check_free_space, human, sha256_of
from hardneg.fetching.errors import FetchError
from hardneg.fetching.layout import FetchSettings, hf_home
from hardneg.io import atomic_write_text

MARKERS = ".unpacked"


def member_regex(pattern: str) -> re.Pattern:
    """`videos/{id}.mp4` -> a regex whose group `id` is the video id (one path part, not starting with a dot)."""
    head, _, tail = pattern.partition("{id}")
    return re.compile(re.escape(head) + r"(?P<id>[^/.][^/]*?)" + re.escape(tail))


def _marker(dest: Path, archive: VideoArchive) -> Path:
    return dest / MARKERS / (re.sub(r"[^A-Za-z0-9_.-]", "_", archive.name) + ".json")


def unpacked(dest: Path, archive: VideoArchive, wanted: set[str] | None = None) -> dict[str, str] | None:
    """{video id: path under dest} of an archive unpacked completely for `wanted` (None: every video), or None
    (never, for fewer ids, or a file since removed)."""
    try:
        record = json.loads(_marker(dest, archive).read_text(encoding="utf-8"))
        members, asked = record["videos"], record.get("asked")
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if asked is not None and (wanted is None or not wanted <= set(asked)):
        return None
    return members if all((dest / p).is_file() for p in members.values()) else None


def known_members(dest: Path) -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
    """({video id: (archive, path)} of every archive unpacked into dest, whether or not its files remain;
    {video id: archive} of the ids asked of an archive that does not hold them)."""
    found: dict[str, tuple[str, str]] = {}
    absent: dict[str, str] = {}
    for marker in sorted((dest / MARKERS).glob("*.json")) if (dest / MARKERS).is_dir() else []:
        try:
            record = json.loads(marker.read_text(encoding="utf-8"))
            found.update({vid: (record["archive"], p) for vid, p in record["videos"].items()})
            absent.update({vid: record["archive"] for vid in record.get("asked") or () if vid not in record["videos"]})
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return found, {vid: a for vid, a in absent.items() if vid not in found}


def download_archive(source: VideoSource, archive: VideoArchive, settings: FetchSettings) -> Path:
    """The archive's local path in the hub cache (downloaded now unless already there)."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import (EntryNotFoundError, HfHubHTTPError, LocalEntryNotFoundError,
                                        RepositoryNotFoundError, RevisionNotFoundError)

    where = f"{source.repo_id}@{source.revision[:12]}:{archive.name}"
    try:
        path = Path(hf_hub_download(source.repo_id, archive.name, repo_type=source.repo_type,
                                    revision=source.revision, cache_dir=str(settings.hub_cache()),
                                    endpoint=settings.mirror.rstrip("/") if settings.mirror else None,
                                    local_files_only=settings.offline, etag_timeout=settings.timeout))
    except LocalEntryNotFoundError:
        if settings.offline:
            raise FetchError(f"offline (HF_HUB_OFFLINE=1): {where} ({_size(archive)}) is not in "
                             f"{settings.hub_cache()}; run once with the network (unset HF_HUB_OFFLINE)") from None
        raise FetchError(f"cannot reach the Hub for {where}; check the network (or --mirror / HF_ENDPOINT) and "
                         "rerun: an interrupted download resumes") from None
    except (RepositoryNotFoundError, RevisionNotFoundError, EntryNotFoundError) as exc:
        raise FetchError(f"{where}: {type(exc).__name__}: the pinned video source is gone from the Hub; report "
                         "it (the declaration pins this revision)") from None
    except HfHubHTTPError as exc:
        raise FetchError(f"{where}: {exc}; rerun later (an interrupted download resumes)") from None
    if archive.sha256:
        got = sha256_of(path)
        if got != archive.sha256:
            _drop(path)
            raise FetchError(f"{archive.name}: sha256 mismatch, refused. expected {archive.sha256}, got {got} "
                             f"({where}). The download was deleted; a rerun downloads it again.")
    return path


def _drop(path: Path) -> None:
    """Remove a cached archive (the snapshot link and the blob it points to) so that a rerun downloads it again."""
    blob = path.resolve()
    path.unlink(missing_ok=True)
    if blob != path:
        blob.unlink(missing_ok=True)


def _members(path: Path):
    """(opened archive, [(name, reader)]): each regular file with a function opening its bytes."""
    if zipfile.is_zipfile(path):
        z = zipfile.ZipFile(path)
        return z, [(i.filename, (lambda i=i: z.open(i))) for i in z.infolist() if not i.is_dir()]
    t = tarfile.open(path, "r:*")
    return t, [(m.name, (lambda m=m: t.extractfile(m))) for m in t.getmembers() if m.isfile()]


def extract_member(reader, target: Path) -> None:
    """One member's bytes to `target` (a file in the staging folder)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with reader() as src, open(target, "wb") as out:
        shutil.copyfileobj(src, out, 1 << 20)


def unpack(path: Path, archive: VideoArchive, source: VideoSource, dest: Path,
           wanted: set[str] | None = None) -> dict[str, str]:
    """Unpack the videos of one archive into `dest` (only the ids in `wanted`, when given: a benchmark needs 2,990
    of MSR-VTT's 10,000); {video id: path under dest}. A corrupt archive is deleted from the cache (a rerun
    downloads it again) and refused naming it."""
    regex = member_regex(source.member_pattern)
    staging = dest.parent / f".unpack-{dest.name}-{_marker(dest, archive).stem}"
    shutil.rmtree(staging, ignore_errors=True)  # what a killed unpack left
    videos: dict[str, str] = {}
    try:
        handle, members = _members(path)
        with handle:
            for name, reader in members:
                match = regex.fullmatch(name.lstrip("./") if name.startswith("./") else name)
                if match is None or (wanted is not None and match.group("id") not in wanted):
                    continue
                rel = match.group(0)
                extract_member(reader, staging / rel)
                videos[match.group("id")] = rel
    except (zipfile.BadZipFile, tarfile.TarError, zlib.error, EOFError, OSError, RuntimeError) as exc:
        shutil.rmtree(staging, ignore_errors=True)
        _drop(path)
        raise FetchError(f"archive {archive.name} of {source.repo_id}@{source.revision[:12]} is corrupt or "
                         f"truncated ({type(exc).__name__}: {exc}); it was deleted from the cache, a rerun downloads "
                         "it again") from None
    if not videos and wanted is None:
        shutil.rmtree(staging, ignore_errors=True)
        raise FetchError(f"archive {archive.name} of {source.repo_id} holds no file matching "
                         f"{source.member_pattern!r}; the repo's layout changed: report it")
    for rel in videos.values():  # whole files only, each in one rename
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        os.replace(staging / rel, dest / rel)
    marker = _marker(dest, archive)
    marker.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(marker, json.dumps({"archive": archive.name, "repo_id": source.repo_id,
                                          "revision": source.revision, "videos": videos,
                                          "asked": None if wanted is None else sorted(wanted)}, sort_keys=True) + "\n")
    shutil.rmtree(staging, ignore_errors=True)
    return videos


def lmms_eval_dir(source: VideoSource) -> Path | None:
    """lmms-eval's unpacked copy of these videos ($HF_HOME/<cache_dir>), when the user has one."""
    if not source.cache_dir:
        return None
    folder = hf_home() / source.cache_dir
    return folder if folder.is_dir() else None


def link_lmms_eval(folder: Path, dest: Path, video_ids: list[str]) -> int:
    """Link each referenced video found in lmms-eval's folder into `dest` (nothing copied); how many were found."""
    from hardneg.video import VideoFolder

    found = VideoFolder(folder)
    linked = 0
    for vid in video_ids:
        src = found.path(vid)
        if src is None:
            continue
        link = dest / f"{vid}{src.suffix}"
        if not link.exists():
            link.parent.mkdir(parents=True, exist_ok=True)
            tmp = link.with_name(f".{link.name}.{os.getpid()}.tmp")
            tmp.unlink(missing_ok=True)
            tmp.symlink_to(src.resolve())
            os.replace(tmp, link)
        linked += 1
    return linked


def fetch_videos(source: VideoSource, dest: Path, video_ids: list[str], settings: FetchSettings) -> dict:
    """Every archive of one hub source downloaded and the referenced videos unpacked into `dest` (skipping archives
    already unpacked for them), or lmms-eval's copy linked; returns how they were had."""
    reuse = lmms_eval_dir(source) if settings.reuse_lmms_eval else None
    if reuse is not None:
        n = link_lmms_eval(reuse, dest, video_ids)
        return {"how": f"reused lmms-eval's {reuse} ({n} of {len(video_ids)} referenced videos there)",
                "reused": str(reuse)}
    wanted = set(video_ids)
    todo = [a for a in source.archives if unpacked(dest, a, wanted) is None]
    where = f"{source.repo_id}@{source.revision[:12]}"
    if settings.offline:
        missing = [a for a in todo if not _cached(source, a, settings)]
        if missing:
            raise FetchError("offline (HF_HUB_OFFLINE=1): these video archives are not here yet: "
                             + "; ".join(f"{where}:{a.name} ({_size(a)})" for a in missing)
                             + f". Run `hardneg fetch` with the network, or copy lmms-eval's unpacked videos to "
                               f"{hf_home() / (source.cache_dir or '<cache_dir>')}")
    need = sum(a.size or 0 for a in todo if not _cached(source, a, settings)) + sum(a.size or 0 for a in todo)
    if need:
        check_free_space(dest.parent, need, f"{len(todo)} video archive(s) of {source.repo_id} (download + unpack)")
    for a in todo:
        path = download_archive(source, a, settings)
        unpack(path, a, source, dest, wanted)
    return {"how": f"{source.repo_id}@{source.revision} ({len(source.archives)} archive(s), "
                   f"{len(todo)} unpacked now)", "archives": [a.name for a in source.archives]}


def _size(a: VideoArchive) -> str:
    return human(a.size) if a.size is not None else (f"about {a.approx}" if a.approx else "size unknown")


def _cached(source: VideoSource, archive: VideoArchive, settings: FetchSettings) -> bool:
    from huggingface_hub import try_to_load_from_cache

    hit = try_to_load_from_cache(source.repo_id, archive.name, cache_dir=str(settings.hub_cache()),
                                 revision=source.revision, repo_type=source.repo_type)
    return isinstance(hit, str)
