"""A few videos out of a large zip on the Hub, without downloading the zip: HTTP Range reads of its directory and
of the chosen members only (the demo Space fetches its examples' videos this way: a few MB, not 418).

The archive's URL and size come from huggingface_hub (`hf_hub_url`, `get_hf_file_metadata`, at the pinned revision;
`--mirror` or HF_ENDPOINT as for a full fetch); `zipfile` reads through `RangeFile`, which asks the server for the
blocks it needs. Each member is written to a temporary name and renamed into place (whole files only).
"""

from __future__ import annotations

import io
import os
import urllib.request
import zipfile
from pathlib import Path

from hardneg.benchmarks.base import VideoSource
from hardneg.fetching.errors import FetchError
from hardneg.fetching.layout import FetchSettings
from hardneg.fetching.videos import member_regex

BLOCK = 1 << 18


class RangeFile(io.RawIOBase):
    """A read-only, seekable file over HTTP Range requests (whole blocks, the last few kept)."""

    def __init__(self, url: str, size: int, timeout: float = 60.0, headers: dict | None = None) -> None:
        self.url, self.size, self.timeout, self.pos = url, size, timeout, 0
        self.headers = dict(headers or {})
        self._blocks: dict[int, bytes] = {}
        self.requests = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = {0: offset, 1: self.pos + offset, 2: self.size + offset}[whence]
        return self.pos

    def _block(self, k: int) -> bytes:
        if k not in self._blocks:
            start, end = k * BLOCK, min(self.size, (k + 1) * BLOCK) - 1
            request = urllib.request.Request(self.url, headers={**self.headers, "Range": f"bytes={start}-{end}"})
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310
                data = response.read()
            if response.status != 206 and len(data) != end - start + 1:  # a server that ignores Range
                data = data[start:end + 1]
            self.requests += 1
            if len(self._blocks) > 64:
                self._blocks.pop(next(iter(self._blocks)))
            self._blocks[k] = data
        return self._blocks[k]

    def readinto(self, buffer) -> int:
        if self.pos >= self.size:
            return 0
        n = min(len(buffer), self.size - self.pos)
        out = bytearray()
        while len(out) < n:
            k, off = divmod(self.pos + len(out), BLOCK)
            out += self._block(k)[off:off + n - len(out)]
        buffer[:n] = out
        self.pos += n
        return n


def fetch_members(source: VideoSource, video_ids: list[str], dest: Path, settings: FetchSettings,
                  limit: int | None = None) -> dict[str, Path]:
    """{video id: file} for the ids found in the source's zip archives (at most `limit`), read by HTTP Range
    (nothing else fetched)."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_url

    if settings.offline:
        raise FetchError("offline (HF_HUB_OFFLINE=1): the example videos are not here and cannot be fetched; "
                         "run once with the network")
    regex = member_regex(source.member_pattern)
    wanted, found = set(video_ids), {}
    limit = len(wanted) if limit is None else min(limit, len(wanted))
    endpoint = settings.mirror.rstrip("/") if settings.mirror else None
    for archive in source.archives:
        if len(found) >= limit:
            break
        url = hf_hub_url(source.repo_id, archive.name, repo_type=source.repo_type, revision=source.revision,
                         endpoint=endpoint)
        try:
            meta = get_hf_file_metadata(url, timeout=settings.timeout)
            with zipfile.ZipFile(io.BufferedReader(RangeFile(meta.location, meta.size, settings.timeout),
                                                   BLOCK)) as z:
                for info in z.infolist():
                    m = regex.fullmatch(info.filename)
                    if len(found) >= limit:
                        break
                    if m is None or m.group("id") not in wanted or m.group("id") in found:
                        continue
                    target = dest / m.group(0)
                    if not target.is_file():
                        target.parent.mkdir(parents=True, exist_ok=True)
                        tmp = target.with_name(f".{target.name}.{os.getpid()}.part")
                        with z.open(info) as src, open(tmp, "wb") as out:
                            out.write(src.read())
                        os.replace(tmp, target)
                    found[m.group("id")] = target
        except zipfile.BadZipFile as exc:
            raise FetchError(f"{source.repo_id}:{archive.name} is not a readable zip ({exc}); its videos cannot be "
                             "read one by one: use `hardneg fetch` (the whole archive)") from None
        except OSError as exc:
            raise FetchError(f"cannot read {source.repo_id}:{archive.name} ({exc}); check the network (or "
                             "--mirror / HF_ENDPOINT) and restart") from None
    return found
