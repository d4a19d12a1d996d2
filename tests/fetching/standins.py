"""Stand-ins for the services `hardneg fetch` talks to, on the loopback interface only.

`StandIn` is one HTTP server playing both:
* raw.githubusercontent.com: GET/HEAD `/<owner>/<repo>/<commit>/<path>` serves a release file (HTTP Range honoured,
  206 with Content-Range, as the real host does);
* the Hub: HEAD/GET `/<repo_type>s/<repo_id>/resolve/<revision>/<filename>` with the headers huggingface_hub's
  `get_hf_file_metadata` and `http_get` read (huggingface_hub/file_download.py): `X-Repo-Commit` (the pinned
  revision), `ETag` (quoted sha256, as for LFS files), `Content-Length`, and Range on GET; 404 with
  `X-Error-Code: EntryNotFound` for a missing file, as the Hub answers.
So `hardneg fetch --mirror http://127.0.0.1:PORT` (or HF_ENDPOINT) reaches it unchanged.

`hang_after`: {url path: n bytes}: a GET of that path sends n bytes, then stalls until the server stops (for the
kill -9 tests). `requests` logs (method, path, Range header).
"""

from __future__ import annotations

import hashlib
import io
import re
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from hardneg.video import write_synthetic_video

_RESOLVE = re.compile(r"^/(datasets|models|spaces)/(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<file>.+)$")


class StandIn:
    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}  # url path -> bytes (release files)
        self.hub: dict[tuple[str, str], bytes] = {}  # (repo_id, filename) -> bytes
        self.revisions: dict[str, str] = {}  # repo_id -> its commit
        self.hang_after: dict[str, int] = {}
        self.requests: list[tuple[str, str, str | None]] = []
        self._stop = threading.Event()
        handler = _handler(self)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> "StandIn":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self.server.shutdown()
        self.server.server_close()

    # -------------------------------------------------------------- content

    def serve_release(self, source, realdata_folder: Path, replace: dict[str, bytes] | None = None) -> None:
        """Each declared release file at its URL's path, with the bytes of the real file of the same name."""
        from urllib.parse import urlsplit

        for f in source.fetched_files:
            data = (replace or {}).get(f.raw_name)
            if data is None and (realdata_folder / f.raw_name).is_file():
                data = (realdata_folder / f.raw_name).read_bytes()
            if data is not None:  # a file ../shared/realdata lacks is not served (a 404, as for a wrong path)
                self.files[urlsplit(f.url).path] = data

    def serve_videos(self, source, video_ids, workdir: Path, corrupt: bool = False, skip: tuple[str, ...] = (),
                     part_of=None) -> None:
        """The declared archives of each Hub part, laid out as the real repo (member pattern), with small synthetic
        clips. `part_of(video id)` -> the index among the Hub parts holding it (default: the first)."""
        hub = [v for v in source.video_parts if v.kind == "hub"]
        for k, v in enumerate(hub):
            self.revisions[v.repo_id] = v.revision
            ids = [i for i in video_ids if i not in skip and (part_of(i) if part_of else 0) == k]
            per = max(1, -(-len(ids) // len(v.archives)))
            for j, archive in enumerate(v.archives):
                buf = io.BytesIO()
                with zipfile.ZipFile(buf, "w") as z:
                    for vid in ids[j * per:(j + 1) * per]:
                        clip = workdir / f"{vid}.mp4"
                        if not clip.is_file():
                            write_synthetic_video(clip, vid, n_frames=8, size=32)
                        z.write(clip, v.member_pattern.replace("{id}", vid))
                    z.writestr("README.txt", "not a video: outside the member pattern")
                data = buf.getvalue()
                if corrupt:
                    data = data[: len(data) // 2] + bytes(64) + data[len(data) // 2 + 64:]
                self.hub[(v.repo_id, archive.name)] = data

    def pins(self, source) -> dict[str, tuple[int, str]]:
        """{archive name: (size, sha256)} of the archives served: the stand-in's clips are synthetic, so a test
        pins these in place of the real archive's (`declaration_for`); the real pin is refused (a test says so)."""
        out = {}
        for v in source.video_parts:
            for a in v.archives:
                data = self.hub.get((v.repo_id, a.name))
                if data is not None:
                    out[a.name] = (len(data), hashlib.sha256(data).hexdigest())
        return out


def declaration_for(decl, pins: dict[str, tuple[int, str]]):
    """`decl` with its video archives pinned to the stand-in's bytes."""
    from dataclasses import replace

    src = decl.source
    parts = [replace(v, archives=tuple(replace(a, size=pins[a.name][0], sha256=pins[a.name][1])
                                       if a.name in pins else a for a in v.archives)) for v in src.video_parts]
    return replace(decl, source=replace(src, videos=tuple(parts) if len(parts) > 1 else parts[0]))


def prelude(name: str, pins: dict[str, tuple[int, str]]) -> str:
    """Python code that pins `name`'s archives to the stand-in's in a child process (kill tests, the demo)."""
    return (f"import sys; sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})\n"
            "from hardneg import benchmarks\nfrom standins import declaration_for\n"
            f"benchmarks.register(declaration_for(benchmarks.get({name!r}), {pins!r}), replace=True)\n")


def _handler(standin: StandIn):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # quiet
            pass

        def _find(self) -> tuple[bytes | None, dict[str, str]]:
            path = self.path.split("?", 1)[0]
            m = _RESOLVE.match(path)
            if m:
                repo, rev, name = m.group("repo"), m.group("rev"), m.group("file")
                commit = standin.revisions.get(repo)
                data = standin.hub.get((repo, name))
                if commit is None or rev not in (commit, "main") or data is None:
                    return None, {"X-Error-Code": "EntryNotFound" if commit else "RepoNotFound"}
                return data, {"X-Repo-Commit": commit, "ETag": f'"{hashlib.sha256(data).hexdigest()}"'}
            return standin.files.get(path), {}

        def _send(self, body: bool) -> None:
            standin.requests.append((self.command, self.path, self.headers.get("Range")))
            data, headers = self._find()
            if data is None:
                self.send_response(404)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            start, status = 0, 200
            rng = self.headers.get("Range")
            if rng and body:
                m = re.fullmatch(r"bytes=(\d+)-", rng.strip())
                if m:
                    start = int(m.group(1))
                    if start >= len(data):
                        self.send_response(416)
                        self.send_header("Content-Range", f"bytes */{len(data)}")
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    status = 206
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            if status == 206:
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            self.send_header("Content-Length", str(len(data) - start))
            self.send_header("Accept-Ranges", "bytes")
            self.end_headers()
            if not body:
                return
            hang = standin.hang_after.get(self.path.split("?", 1)[0])
            chunk = data[start:]
            if hang is not None and start < hang:
                self.wfile.write(chunk[: hang - start])
                self.wfile.flush()
                standin._stop.wait()  # stalls until the test ends (the client is killed meanwhile)
                return
            self.wfile.write(chunk)

        def do_GET(self) -> None:  # noqa: N802
            self._send(True)

        def do_HEAD(self) -> None:  # noqa: N802
            self._send(False)

    return Handler
