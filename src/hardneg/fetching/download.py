"""One file over HTTP(S): resumable (HTTP Range on a `.part` file), hash-checked, moved into place atomically.

A kill -9 leaves at most `<name>.part` beside the target; the next call asks the server for the rest
(`Range: bytes=N-`) and, when the server ignores it (200 instead of 206), starts over. The finished bytes are
checked against the declared size and sha256 before the rename: a mismatch is refused naming the file and both
hashes, and the partial file is removed so a rerun downloads it afresh.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from hardneg.fetching.errors import FetchError

CHUNK = 1 << 16


def mirrored(url: str, mirror: str | None) -> str:
    """`url` with its scheme and host replaced by the mirror's (the mirror's own path prefix kept), path unchanged."""
    if not mirror:
        return url
    m, u = urlsplit(mirror.rstrip("/")), urlsplit(url)
    return urlunsplit((m.scheme, m.netloc, m.path + u.path, u.query, ""))


def git_blob_of(path: Path) -> str:
    """The file's git blob id: sha1 of "blob <size>\\0" + its bytes (`git hash-object`)."""
    h = hashlib.sha1(f"blob {path.stat().st_size}\0".encode())  # noqa: S324 (git's own id, an integrity pin)
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def sha256_of(path: Path) -> str:
    """The sha256 of a file's bytes (`hardneg.video.file_fingerprint`, the project's one file hash)."""
    from hardneg.video import file_fingerprint

    return file_fingerprint(path)


def check_free_space(folder: Path, need: int, what: str) -> None:
    """Refuse before downloading when the disk holding `folder` has less than `need` bytes free (plus 1%)."""
    folder.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(folder).free
    if free < need * 1.01:
        raise FetchError(f"not enough free space for {what}: needs {human(need)}, {human(free)} free on the disk of "
                         f"{folder}. Free some space, or point HARDNEG_CACHE at a larger disk, then rerun.")


def human(n: int | float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n} B"


def _open(url: str, start: int, timeout: float):
    request = urllib.request.Request(url, headers={"User-Agent": "video-hardneg-fetch",
                                                   **({"Range": f"bytes={start}-"} if start else {})})
    return urllib.request.urlopen(request, timeout=timeout)  # noqa: S310 (http(s) URLs from a declaration)


def _matches(path: Path, size: int | None, sha256: str, git_blob: str) -> tuple[bool, str, str]:
    """(whether the file is the pinned one, the check's name, the value found)."""
    if sha256:
        got = sha256_of(path)
        return got == sha256 and (size is None or path.stat().st_size == size), "sha256", got
    got = git_blob_of(path)
    return got == git_blob and (size is None or path.stat().st_size == size), "git blob id", got


def download(url: str, target: Path, size: int | None, sha256: str, *, git_blob: str = "", timeout: float = 60.0,
             progress: bool = True) -> Path:
    """`target` holding the bytes at `url`, checked against `size` and `sha256` (or, where the pin has no sha256,
    its git blob id); kept when it already matches."""
    if target.is_file() and _matches(target, size, sha256, git_blob)[0]:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(target.name + ".part")
    start = part.stat().st_size if part.is_file() else 0
    if size is not None and start > size:
        part.unlink()
        start = 0
    if size is None or start < size or size == 0:
        try:
            response = _open(url, start, timeout)
        except urllib.error.HTTPError as exc:
            if exc.code == 416 and start:  # the range is past the end: the part is whole or wrong; checked below
                response = None
            else:
                raise FetchError(f"{url}: HTTP {exc.code} {exc.reason} while downloading {target.name}; check the "
                                 "URL (or --mirror) and rerun") from None
        except (urllib.error.URLError, OSError) as exc:
            raise FetchError(f"{url}: cannot connect ({getattr(exc, 'reason', exc)}) while downloading "
                             f"{target.name}; check the network or --mirror, then rerun (the {start:,} bytes already "
                             "here are kept and resumed)") from None
        if response is not None:
            with response:
                if start and response.status != 206:  # the server ignored Range: start again
                    start = 0
                _copy(response, part, start, size, target.name, progress)
    ok, check, got = _matches(part, size, sha256, git_blob)
    if not ok:
        found = part.stat().st_size
        part.unlink(missing_ok=True)
        want = sha256 or git_blob
        raise FetchError(f"{target.name}: {check} mismatch, refused. expected {want}"
                         + (f" ({size:,} bytes)" if size is not None else "")
                         + f", got {got} ({found:,} bytes) from {url}. The download was deleted; a rerun downloads it "
                         "again. If this repeats, the file at the source changed: report it (the pin names the "
                         "commit).")
    os.replace(part, target)
    return target


def _copy(response, part: Path, start: int, size: int, name: str, progress: bool) -> None:
    from tqdm.auto import tqdm

    mode = "ab" if start else "wb"
    bar = tqdm(total=size, initial=start, unit="B", unit_scale=True, desc=name, disable=not progress, leave=False)
    try:
        with open(part, mode) as out:
            read = getattr(response, "read1", response.read)  # what has arrived, so a kill keeps it for resuming
            for chunk in iter(lambda: read(CHUNK), b""):
                out.write(chunk)
                bar.update(len(chunk))
            out.flush()
            os.fsync(out.fileno())
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            part.unlink(missing_ok=True)
            raise FetchError(f"the disk filled up while downloading {name} to {part.parent}; the partial file was "
                             "removed. Free some space (or set HARDNEG_CACHE to a larger disk) and rerun.") from None
        raise FetchError(f"{name}: the download stopped ({exc}); rerun to resume it from {part.stat().st_size:,} "
                         "bytes") from None
    finally:
        bar.close()
