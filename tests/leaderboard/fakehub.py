"""A local stand-in for the Hub API the results mirror calls (`HfApi`'s create_repo, create_commit, list_repo_files,
snapshot_download, file_exists, whoami), with the ways the real Hub fails, on demand (issue 42):

* `fail = True`: every call raises ConnectionError (the Hub is down); `fail_rate`: a random share of calls does
  (seeded: `seed`), half of the failing commits AFTER the commit landed (a reply lost on the way back);
* `delay`: every call sleeps that long first (a slow Hub);
* `unauthorised = 401 | 403`: reads and writes are refused as huggingface_hub raises them for a private repo
  read without a (valid) token: 401 as `RepositoryNotFoundError` (huggingface_hub maps it so), 403 as
  `HfHubHTTPError`; `whoami` then raises 401;
* `put(repo, path, data)`: a file written straight into the repo (malformed records, forged scores);
* `root`: the repo lives in a folder, one file per commit written atomically, so a stand-in killed with its board
  and started again on the same folder serves the same repo (a commit either landed whole or not at all).

`commits` records what was sent; `calls` counts the calls per method."""

from __future__ import annotations

import base64
import fnmatch
import json
import os
import random
import threading
import time
import uuid
from collections import Counter
from pathlib import Path


def _response(status: int, url: str):
    import httpx2

    return httpx2.Response(status, request=httpx2.Request("GET", url))


class FakeHub:
    def __init__(self, root: str | Path | None = None, fail_rate: float = 0.0, seed: int = 0, delay: float = 0.0):
        self.repos, self.commits, self.fail = [], [], False
        self.fail_rate, self.delay, self.unauthorised = fail_rate, delay, None
        self.rng = random.Random(seed)
        self.calls: Counter = Counter()
        self.root = Path(root) if root is not None else None
        self.files: dict[str, dict[str, bytes]] = {}
        self._lock = threading.Lock()
        if self.root is not None:
            self.root.mkdir(parents=True, exist_ok=True)
            self._load()

    # --- persistence (root): one JSON file per commit, replayed in order ---------------------------------------
    def _load(self) -> None:
        for path in sorted(self.root.glob("commit-*.json")):
            commit = json.loads(path.read_text())
            repo = self.files.setdefault(commit["repo_id"], {})
            for p, data in commit["files"].items():
                repo[p] = base64.b64decode(data)
        for path in sorted(self.root.glob("repo-*.json")):
            self.files.setdefault(json.loads(path.read_text())["repo_id"], {})

    def _persist(self, name: str, body: dict) -> None:
        if self.root is None:
            return
        tmp = self.root / f".{name}.{uuid.uuid4().hex}.tmp"
        tmp.write_text(json.dumps(body))
        os.replace(tmp, self.root / name)

    # --- failure modes -------------------------------------------------------------------------------------
    def _check(self, method: str, url: str = "https://huggingface.co/api/datasets/x") -> None:
        self.calls[method] += 1
        if self.delay:
            time.sleep(self.delay)
        if self.fail:
            raise ConnectionError("Hub unreachable")
        if self.unauthorised:
            from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError

            if self.unauthorised == 401:
                raise RepositoryNotFoundError("401 Client Error. Repository Not Found",
                                              response=_response(401, url))
            raise HfHubHTTPError(f"{self.unauthorised} Forbidden", response=_response(self.unauthorised, url))
        if method != "create_commit" and self.fail_rate and self.rng.random() < self.fail_rate:
            raise ConnectionError(f"Hub unreachable (random failure of {method})")

    def put(self, repo_id: str, path: str, data: bytes) -> None:
        """A file written into the repo behind the board's back (one commit)."""
        with self._lock:
            self.files.setdefault(repo_id, {})[path] = data
            self._persist(f"commit-{time.time_ns():020d}-{uuid.uuid4().hex[:8]}.json",
                          {"repo_id": repo_id, "files": {path: base64.b64encode(data).decode()}})

    # --- the HfApi methods the mirror calls ----------------------------------------------------------------
    def whoami(self, token=None, **kw) -> dict:
        self.calls["whoami"] += 1
        if self.fail:
            raise ConnectionError("Hub unreachable")
        if self.unauthorised:
            from huggingface_hub.errors import HfHubHTTPError

            raise HfHubHTTPError("401 Unauthorized: Invalid credentials in Authorization header",
                                 response=_response(401, "https://huggingface.co/api/whoami-v2"))
        return {"type": "user", "name": "board-bot"}

    def create_repo(self, repo_id, repo_type=None, exist_ok=False, private=False, **kw):
        self._check("create_repo")
        with self._lock:
            self.repos.append((repo_id, repo_type, exist_ok))
            if repo_id not in self.files:
                self.files[repo_id] = {}
                self._persist(f"repo-{uuid.uuid4().hex}.json", {"repo_id": repo_id})

    def create_commit(self, repo_id, operations, commit_message, repo_type=None, **kw):
        self._check("create_commit")
        fails = bool(self.fail_rate) and self.rng.random() < self.fail_rate
        lost_reply = fails and self.rng.random() < 0.5
        if fails and not lost_reply:
            raise ConnectionError("Hub unreachable (random failure of create_commit)")
        ops = list(operations)
        with self._lock:
            repo = self.files[repo_id]
            got = {}
            for op in ops:
                data = op.path_or_fileobj
                got[op.path_in_repo] = data if isinstance(data, bytes) else open(data, "rb").read()
            self._persist(f"commit-{time.time_ns():020d}-{uuid.uuid4().hex[:8]}.json",
                          {"repo_id": repo_id, "files": {p: base64.b64encode(d).decode() for p, d in got.items()}})
            repo.update(got)
            self.commits.append({"repo_id": repo_id, "repo_type": repo_type, "message": commit_message, "ops": ops})
        if lost_reply:
            raise ConnectionError("Hub reply lost (the commit landed)")

    def _repo(self, repo_id: str) -> dict[str, bytes]:
        if repo_id not in self.files:
            from huggingface_hub.errors import RepositoryNotFoundError

            raise RepositoryNotFoundError("404 Repository Not Found",
                                          response=_response(404, f"https://huggingface.co/api/datasets/{repo_id}"))
        return self.files[repo_id]

    def list_repo_files(self, repo_id, repo_type=None, **kw):
        self._check("list_repo_files")
        return sorted(self._repo(repo_id))

    def file_exists(self, repo_id, filename, repo_type=None, **kw) -> bool:
        self._check("file_exists")
        return filename in self._repo(repo_id)

    def snapshot_download(self, repo_id, repo_type=None, allow_patterns=None, local_dir=None, **kw):
        """As huggingface_hub filters (`filter_repo_objects`): every file against every pattern."""
        self._check("snapshot_download")
        if isinstance(allow_patterns, str):
            allow_patterns = [allow_patterns]
        for path, data in list(self._repo(repo_id).items()):
            if allow_patterns is None or any(fnmatch.fnmatch(path, p) for p in allow_patterns):
                out = Path(local_dir) / path
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(data)
        return local_dir
