"""One benchmark fetched end to end: release files, build, videos, coverage; and what a dry run prints."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hardneg import benchmarks as registry
from hardneg.benchmarks.base import VideoSource
from hardneg.fetching.download import check_free_space, download, human, mirrored
from hardneg.fetching.errors import FetchError
from hardneg.fetching.layout import FetchSettings, fetched_state
from hardneg.io import atomic_write_text


def source_of(name: str):
    """The declaration's pinned source; a benchmark without one is a clear error."""
    decl = registry.get(name)
    if decl.source is None:
        raise FetchError(f"{name} declares no pinned source: there is nothing to download (build it with "
                         f"`hardneg build {name}`; `hardneg build --help` lists its raw files)")
    return decl.source


#: what a source without a pinned video source says (Source.videos None): the reason, never a silent gap
NOT_PINNED = VideoSource("manual", official="no video source is pinned for it in this version of video-hardneg",
                         steps=("get the videos the items name (the release's README says where)",
                                "put them in one folder as <video_id>.mp4 and pass --videos DIR to hardneg run"),
                         why="no video source pinned in this version")


def videos_of(src) -> tuple[VideoSource, ...]:
    """The source's video parts, or (`NOT_PINNED`,)."""
    return src.video_parts or (NOT_PINNED,)


def size_text(parts) -> str:
    """What the hub parts download: exact where every archive's size is pinned, else what is known."""
    archives = [a for v in parts if v.kind == "hub" for a in v.archives]
    known = sum(a.size or 0 for a in archives)
    unknown = [a.approx or "size unknown" for a in archives if a.size is None]
    if not unknown:
        return human(known)
    return (f"{human(known)} + " if known else "") + ", ".join(f"about {u}" if u[0].isdigit() else u for u in unknown)


def fetchable() -> list[str]:
    """The benchmarks with a pinned source, in declaration order (`hardneg fetch all`)."""
    return [n for n, d in registry.all_benchmarks().items() if d.source is not None]


def download_size(name: str, videos: bool = True) -> int:
    """Bytes `hardneg fetch NAME` downloads (release files, plus the video archives when `videos`)."""
    src = source_of(name)
    return src.size + (sum(v.size for v in videos_of(src) if v.kind == "hub") if videos else 0)


def dry_run(name: str, settings: FetchSettings) -> list[str]:
    """What a fetch would download, without downloading: each file's URL, size and sha256, and the video source."""
    src = source_of(name)
    lines = [f"{name}: release {src.repo} @ {src.commit} ({src.license}); {len(src.fetched_files)} file(s), "
             f"{human(src.size)}"]
    if not src.files:
        lines.append(f"  release files: none pinned: {src.notes}")
    for f in src.files:
        size = f"size {f.size:,} bytes" if f.size is not None else "size unknown"
        check = f"sha256 {f.sha256}" if f.sha256 else f"git blob {f.git_blob} (no sha256 computed offline)"
        extra = (" (optional: listed, not fetched)" if f.optional else "") + (
            f" (saved as {f.raw_name})" if f.raw_name != f.path.rsplit("/", 1)[-1] else "")
        lines.append(f"  {mirrored(f.url, settings.mirror)}{extra}\n    {size}  {check}")
    for v in videos_of(src):
        part = f" ({v.part})" if v.part else ""
        if v.kind == "hub":
            lines.append(f"  videos{part}: Hub {v.repo_type} {v.repo_id} @ {v.revision}, {len(v.archives)} "
                         f"archive(s), {size_text([v])}; member {v.member_pattern!r} ({v.id_to_file})")
            for a in v.archives:
                size = f"size {a.size:,} bytes" if a.size is not None else f"size unknown (about {a.approx or '?'})"
                lines.append(f"    {a.name}  {size}" + (f"  sha256 {a.sha256}" if a.sha256 else ""))
            if v.cache_dir:
                lines.append(f"    reused instead when lmms-eval's $HF_HOME/{v.cache_dir} exists")
        else:
            lines.append(f"  videos{part}: none fetched: {v.why}\n    official source: {v.official}")
            lines += [f"    {i}. {step}" for i, step in enumerate(v.steps, 1)]
    if src.notes and src.files:
        lines.append(f"  note: {src.notes}")
    return lines


def not_fetched_hint(name: str) -> str:
    """The exact command that fetches `name`, with what it downloads (`hardneg run` prints it)."""
    src = source_of(name)
    what = f"{human(src.size)} of release files" if src.files else "no release files (none pinned: see --dry-run)"
    hub = [v for v in videos_of(src) if v.kind == "hub"]
    if hub:
        what += f" and {size_text(hub)} of videos from {', '.join(dict.fromkeys(v.repo_id for v in hub))}"
    for v in videos_of(src):
        if v.kind == "manual":
            what += f"; {v.part + ' ' if v.part else ''}videos not downloadable: {v.why}"
    return f"hardneg fetch {name}   # downloads {what}"


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def fetch_release(name: str, settings: FetchSettings) -> Path:
    """The release files downloaded (or kept) and checked; their folder."""
    src = source_of(name)
    folder = settings.release_dir(name, src.commit)
    if not src.files:
        raise FetchError(f"{name}: its release files have no hash-pinned source to download: {src.notes} Build it "
                         f"from the files you get with `hardneg build {name} --raw DIR`.")
    todo = [f for f in src.fetched_files if not (folder / f.raw_name).is_file()]
    if settings.offline and todo:
        raise FetchError("offline (HF_HUB_OFFLINE=1): these release files are not here yet: "
                         + "; ".join(f"{mirrored(f.url, settings.mirror)} ({human(f.size or 0)})" for f in todo)
                         + f". Run `hardneg fetch {name}` with the network, or put them in {folder}")
    if todo:
        check_free_space(folder, sum(f.size or 0 for f in todo), f"the release files of {name}")
    for f in src.fetched_files:
        target = folder / f.raw_name
        if f in todo:
            _log(f"{name}: {f.path} ({human(f.size or 0)})")
        download(mirrored(f.url, settings.mirror), target, f.size, f.sha256, git_blob=f.git_blob,
                 timeout=settings.timeout, progress=settings.progress)
    return folder


def fetch_benchmark(name: str, settings: FetchSettings | None = None) -> dict:
    """Fetch `name`: release files (sha256-checked), the built Hub folder, the videos, the coverage report.

    Returns the state written to `state/<name>.json`: source, commit, built folder, videos folder, coverage.
    Work already done is kept (a rerun after a kill completes it); a failure raises `FetchError` with the fix.
    """
    from hardneg.datasets.builder import build_benchmark
    from hardneg.datasets.videos import video_ids_of_folder
    from hardneg.fetching import coverage
    from hardneg.fetching.videos import fetch_videos

    settings = settings or FetchSettings()
    src = source_of(name)
    raw = fetch_release(name, settings)
    built = settings.built_dir(name)
    old = fetched_state(name, settings.cache) or {}
    if old.get("commit") != src.commit or not (built / "README.md").is_file():
        _log(f"{name}: building {built} from the release files")
        build_benchmark(name, raw, built, overwrite=True)
    video_ids = video_ids_of_folder(built)
    dest = settings.videos_dir(name)
    parts = videos_of(src)
    hows = []
    for v in parts:
        if v.kind == "hub" and settings.videos:
            hows.append(fetch_videos(v, dest, video_ids, settings))
        elif v.kind == "hub":
            hows.append({"how": f"{v.repo_id}: not fetched (--no-videos)"})
        else:
            hows.append({"how": f"{v.part + ': ' if v.part else ''}manual: {v.why}", "steps": list(v.steps),
                         "official": v.official})
    how = {"how": "; ".join(h["how"] for h in hows), "steps": [s for h in hows for s in h.get("steps", [])],
           "parts": hows}
    _log(f"{name}: checking the {len(video_ids):,} referenced videos")
    report = coverage.check(video_ids, dest, parts, decode=settings.decode_check)
    state = {"benchmark": name, "source": {"repo": src.repo, "commit": src.commit, "license": src.license,
                                           "files": [f.path for f in src.fetched_files]},
             "videos_source": [_video_record(v) for v in parts], "videos_fetch": how, "commit": src.commit,
             "built": str(built), "videos": str(dest), "coverage": report}
    path = settings.state_file(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(state, indent=2, sort_keys=True) + "\n")
    atomic_write_text(settings.root / "coverage" / f"{name}.json", json.dumps(report, indent=2, sort_keys=True) + "\n")
    return state


def _video_record(v) -> dict:
    if v.kind == "hub":
        return {"kind": "hub", "repo_id": v.repo_id, "revision": v.revision, "part": v.part,
                "archives": [a.name for a in v.archives]}
    return {"kind": "manual", "official": v.official, "part": v.part}


def source_record(folder: str | Path) -> dict | None:
    """For a built folder `hardneg fetch` wrote: the source, commit and video coverage it recorded (results carry
    it); None for any other folder."""
    folder = Path(folder)
    settings = FetchSettings(cache=folder.parent.parent.parent)
    if folder.parent.name != "built" or folder.parent.parent.name != "fetch":
        return None
    state = fetched_state(folder.name, settings.cache)
    if not state:
        return None
    c = state["coverage"]
    return {"repo": state["source"]["repo"], "commit": state["commit"], "videos_source": state["videos_source"],
            "coverage": {k: c[k] for k in ("referenced", "present", "coverage", "n_missing", "n_unreadable")}}
