"""A local stand-in for the Hub API the results mirror calls (`HfApi`'s create_repo, create_commit, list_repo_commits,
list_repo_files, get_paths_info, snapshot_download, file_exists, list_organization_members, whoami), behaving as
huggingface_hub 2.4 and the Hub do (read in /work/venv's huggingface_hub/hf_api.py and _commit_api.py; also
`repo_info(...).sha`, the head):

* a repo is a chain of commits; `create_repo` makes the initial commit (`.gitattributes`), as the Hub does;
* `create_commit(..., parent_commit=oid)` is compare-and-swap: when the branch head is not `oid` the Hub answers
  412 "A commit has happened since. Please refresh and try again.", which huggingface_hub raises as
  `HfHubHTTPError` with `response.status_code == 412` (the check is made when the commit is processed, so a late
  commit is refused too). A commit whose every file is already in the repo, byte for byte, is not made:
  huggingface_hub skips unchanged files and returns the head's `CommitInfo` (hf_api.py, "No files have been
  modified since last commit");
* `list_repo_commits` lists `GitCommitInfo` newest first; `get_paths_info(..., expand=True)` gives each file's
  `last_commit` (`RepoFile`); reads take `revision` (a commit id);
* `list_organization_members(org)` yields users with `.username` (`orgs`: {org: member names}).

The ways the real Hub fails, on demand (issues 42 and 49):

* `fail = True`: every call raises the HTTP client's ConnectError (the Hub is down: nothing sent); `fail_rate`: a
  random share of calls does (seeded: `seed`), half of the failing commits AFTER the commit landed (a reply lost
  on the way back: ConnectionError);
* `late_rate`: a share of commits time out at the client (`TimeoutError`) while the Hub goes on: the commit is
  processed `late_s` seconds later, in a thread (landing only if its parent is still the head, as the Hub checks);
* `lag_s`: `file_exists` does not see a file until `lag_s` seconds after its commit (a CDN-cached answer);
* `delay`: every call sleeps that long first (a slow Hub);
* `unauthorised = 401 | 403`: reads and writes are refused as huggingface_hub raises them for a private repo
  read without a (valid) token: 401 as `RepositoryNotFoundError` (huggingface_hub maps it so), 403 as
  `HfHubHTTPError`; `whoami` then raises 401;
* `put(repo, path, data)`: a file written straight into the repo (one commit, no parent check: an operator's edit);
* `root`: the repo lives in a folder, one file per commit (`<repo>-<n>.json`, created with a hard link so two
  processes can never both write commit n: compare-and-swap across processes), so a stand-in killed with its board
  and started again, or two board processes, share one repo; every call reads commits the others made.

`commits` records what this process sent and landed; `calls` counts the calls per method."""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import json
import os
import random
import threading
import time
import uuid
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace

#: the organizations of the test identities (helpers.ALICE is in org and alice-org)
ORGS = {"org": ["alice", "carol"], "alice-org": ["alice"], "big-corp": ["bob"]}


def _refused(message: str):
    """The error huggingface_hub's HTTP client raises when the Hub cannot be reached (nothing was sent)."""
    import httpx2

    return httpx2.ConnectError(message)


def _response(status: int, url: str):
    import httpx2

    return httpx2.Response(status, request=httpx2.Request("GET", url))


class _Repo:
    """One repo: its commits in order (each {id, parent, title, date, files}) and the files at its head."""

    def __init__(self):
        self.commits: list[dict] = []
        self.head_files: dict[str, bytes] = {}
        self.last: dict[str, int] = {}  # path -> index of the commit that last wrote it

    def add(self, commit: dict) -> None:
        k = len(self.commits)
        self.commits.append(commit)
        for p, data in commit["files"].items():
            self.head_files[p] = data
            self.last[p] = k

    @property
    def head(self) -> str | None:
        return self.commits[-1]["id"] if self.commits else None

    def index(self, revision: str | None) -> int:
        if revision in (None, "main") or not self.commits:
            return len(self.commits) - 1
        for k, c in enumerate(self.commits):
            if c["id"] == revision or (len(revision) >= 7 and c["id"].startswith(revision)):
                return k
        from huggingface_hub.errors import RevisionNotFoundError

        raise RevisionNotFoundError(f"404 Revision Not Found: {revision}", response=_response(404, "x"))

    def files_at(self, revision: str | None) -> dict[str, bytes]:
        k = self.index(revision)
        if k == len(self.commits) - 1:
            return self.head_files
        out: dict[str, bytes] = {}
        for c in self.commits[: k + 1]:
            out.update(c["files"])
        return out


class FakeHub:
    def __init__(self, root: str | Path | None = None, fail_rate: float = 0.0, seed: int = 0, delay: float = 0.0,
                 late_rate: float = 0.0, late_s: float = 0.5, lag_s: float = 0.0, orgs: dict | None = None):
        self.repos, self.commits, self.fail = [], [], False
        self.fail_rate, self.delay, self.unauthorised = fail_rate, delay, None
        self.late_rate, self.late_s, self.lag_s = late_rate, late_s, lag_s
        self.orgs = {k: list(v) for k, v in (orgs if orgs is not None else ORGS).items()}
        self.rng = random.Random(seed)
        self.calls: Counter = Counter()
        self.root = Path(root) if root is not None else None
        self._repos: dict[str, _Repo] = {}
        self._lock = threading.RLock()
        self.late_threads: list[threading.Thread] = []
        if self.root is not None:
            self.root.mkdir(parents=True, exist_ok=True)
            self._refresh()

    @property
    def files(self) -> dict[str, dict[str, bytes]]:
        """{repo id: {path: bytes}} at each repo's head (tests read and, for speed, write it directly)."""
        self._refresh()
        return {r: repo.head_files for r, repo in self._repos.items()}

    # --- persistence (root): one file per commit, numbered; read again before every call ------------------------
    @staticmethod
    def _key(repo_id: str) -> str:
        return hashlib.sha1(repo_id.encode()).hexdigest()[:12]

    def _refresh(self) -> None:
        if self.root is None:
            return
        with self._lock:
            for meta in self.root.glob("repo-*.json"):
                repo_id = json.loads(meta.read_text())["repo_id"]
                repo = self._repos.setdefault(repo_id, _Repo())
                while True:
                    path = self.root / f"{self._key(repo_id)}-{len(repo.commits):08d}.json"
                    if not path.exists():
                        break
                    body = json.loads(path.read_text())
                    repo.add({**body, "files": {p: base64.b64decode(d) for p, d in body["files"].items()}})

    def _land(self, repo_id: str, files: dict[str, bytes], title: str, parent: str | None) -> str:
        """Append one commit (compare-and-swap on `parent` when given); returns its id. Raises the Hub's 412."""
        with self._lock:
            self._refresh()
            repo = self._repos[repo_id]
            while True:
                moved = parent is not None and (repo.head is not None if parent == "" else not (
                    repo.head is not None and (repo.head == parent or (len(parent) >= 7 and repo.head.startswith(parent)))))
                if moved:
                    from huggingface_hub.errors import HfHubHTTPError

                    url = f"https://huggingface.co/api/datasets/{repo_id}/commit/main"
                    raise HfHubHTTPError(f"412 Client Error: Precondition Failed for url: {url}\n\nA commit has "
                                         "happened since. Please refresh and try again.", response=_response(412, url))
                commit = {"id": hashlib.sha1(uuid.uuid4().bytes).hexdigest(), "parent": repo.head, "title": title,
                          "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ"), "time": time.time(), "files": files}
                if self.root is None:
                    repo.add(commit)
                    return commit["id"]
                tmp = self.root / f".{uuid.uuid4().hex}.tmp"
                tmp.write_text(json.dumps({**commit, "files": {p: base64.b64encode(d).decode()
                                                               for p, d in files.items()}}))
                try:
                    os.link(tmp, self.root / f"{self._key(repo_id)}-{len(repo.commits):08d}.json")
                except FileExistsError:  # another process made commit n first: read it, decide again
                    self._refresh()
                    continue
                finally:
                    tmp.unlink()
                repo.add(commit)
                return commit["id"]

    # --- failure modes -------------------------------------------------------------------------------------
    def _check(self, method: str, url: str = "https://huggingface.co/api/datasets/x") -> None:
        self.calls[method] += 1
        if self.delay:
            time.sleep(self.delay)
        if self.fail:
            raise _refused("Hub unreachable")
        if self.unauthorised:
            from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError

            if self.unauthorised == 401:
                raise RepositoryNotFoundError("401 Client Error. Repository Not Found",
                                              response=_response(401, url))
            raise HfHubHTTPError(f"{self.unauthorised} Forbidden", response=_response(self.unauthorised, url))
        if method != "create_commit" and self.fail_rate and self.rng.random() < self.fail_rate:
            raise _refused(f"Hub unreachable (random failure of {method})")
        self._refresh()

    def put(self, repo_id: str, path: str, data: bytes) -> None:
        """A file written into the repo behind the board's back (one commit, no parent check)."""
        self._refresh()
        if repo_id not in self._repos:
            self.create_repo(repo_id, repo_type="dataset", exist_ok=True)
        self._land(repo_id, {path: data}, f"Upload {path}", None)

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

    def list_organization_members(self, organization, token=None):
        self._check("list_organization_members")
        if organization not in self.orgs:
            from huggingface_hub.errors import HfHubHTTPError

            raise HfHubHTTPError("404 Client Error: Not Found", response=_response(404, "x"))
        return iter([SimpleNamespace(username=u) for u in self.orgs[organization]])

    def create_repo(self, repo_id, repo_type=None, exist_ok=False, private=False, **kw):
        self._check("create_repo")
        with self._lock:
            self.repos.append((repo_id, repo_type, exist_ok))
            if repo_id in self._repos:
                return
            self._repos[repo_id] = _Repo()
            if self.root is not None:
                meta = self.root / f"repo-{self._key(repo_id)}.json"
                tmp = self.root / f".{uuid.uuid4().hex}.tmp"
                tmp.write_text(json.dumps({"repo_id": repo_id}))
                os.replace(tmp, meta)
            try:
                self._land(repo_id, {".gitattributes": b"*.parquet filter=lfs diff=lfs merge=lfs -text\n"},
                           "initial commit", parent="")
            except Exception:  # noqa: BLE001 (another process made the initial commit)
                pass

    def create_commit(self, repo_id, operations, commit_message, repo_type=None, parent_commit=None, **kw):
        from huggingface_hub import CommitInfo

        self._check("create_commit")
        fails = bool(self.fail_rate) and self.rng.random() < self.fail_rate
        lost_reply = fails and self.rng.random() < 0.5
        if fails and not lost_reply:
            raise _refused("Hub unreachable (random failure of create_commit)")
        ops = list(operations)
        got = {}
        for op in ops:
            data = op.path_or_fileobj
            got[op.path_in_repo] = data if isinstance(data, bytes) else open(data, "rb").read()
        repo = self._repo(repo_id)
        url = f"https://huggingface.co/datasets/{repo_id}/commit/"
        if all(repo.head_files.get(p) == d for p, d in got.items()):  # huggingface_hub: nothing changed, no commit
            return CommitInfo(commit_url=url + repo.head, commit_message=commit_message, commit_description="",
                              oid=repo.head)
        if self.late_rate and self.rng.random() < self.late_rate:  # the client times out; the Hub goes on
            def later():
                time.sleep(self.late_s)
                try:
                    self._land(repo_id, got, commit_message, parent_commit)
                    self.commits.append({"repo_id": repo_id, "message": commit_message, "ops": ops, "late": True})
                except Exception:  # noqa: BLE001 (refused at processing time: its parent moved)
                    pass

            t = threading.Thread(target=later, name="fakehub-late-commit", daemon=True)
            self.late_threads.append(t)
            t.start()
            raise TimeoutError("The read operation timed out (the Hub is still processing the commit)")
        oid = self._land(repo_id, got, commit_message, parent_commit)
        self.commits.append({"repo_id": repo_id, "repo_type": repo_type, "message": commit_message, "ops": ops})
        if lost_reply:
            raise ConnectionError("Hub reply lost (the commit landed)")
        return CommitInfo(commit_url=url + oid, commit_message=commit_message, commit_description="", oid=oid)

    def _repo(self, repo_id: str) -> _Repo:
        self._refresh()
        if repo_id not in self._repos:
            from huggingface_hub.errors import RepositoryNotFoundError

            raise RepositoryNotFoundError("404 Repository Not Found",
                                          response=_response(404, f"https://huggingface.co/api/datasets/{repo_id}"))
        return self._repos[repo_id]

    def repo_info(self, repo_id, repo_type=None, revision=None, **kw):
        """As `HfApi.repo_info`: the repo's id and its head's commit id (`sha`)."""
        self._check("repo_info")
        repo = self._repo(repo_id)
        return SimpleNamespace(id=repo_id, sha=repo.commits[repo.index(revision)]["id"] if repo.commits else None)

    def list_repo_commits(self, repo_id, repo_type=None, revision=None, **kw):
        from huggingface_hub.hf_api import GitCommitInfo

        self._check("list_repo_commits")
        repo = self._repo(repo_id)
        k = repo.index(revision)
        return [GitCommitInfo(commit_id=c["id"], authors=["board-bot"], created_at=datetime.strptime(c["date"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc),
                              title=c["title"], message="", formatted_title=None, formatted_message=None)
                for c in reversed(repo.commits[: k + 1])]

    def list_repo_files(self, repo_id, repo_type=None, revision=None, **kw):
        self._check("list_repo_files")
        return sorted(self._repo(repo_id).files_at(revision))

    def get_paths_info(self, repo_id, paths, expand=False, revision=None, repo_type=None, **kw):
        from huggingface_hub.hf_api import RepoFile

        self._check("get_paths_info")
        repo = self._repo(repo_id)
        k = repo.index(revision)
        files = repo.files_at(revision)
        out = []
        for p in [paths] if isinstance(paths, str) else paths:
            if p not in files:
                continue
            info = {"path": p, "size": len(files[p]), "oid": hashlib.sha1(files[p]).hexdigest()}
            if expand:
                # the last commit at or before `revision` that wrote it (a file a test wrote into `files` directly,
                # without a commit: the head)
                at = repo.last.get(p)
                c = repo.commits[at] if at is not None and at <= k else next(
                    (c for c in reversed(repo.commits[: k + 1]) if p in c["files"]), repo.commits[k])
                info["lastCommit"] = {"id": c["id"], "title": c["title"], "date": c["date"]}
            out.append(RepoFile(**info))
        return out

    def file_exists(self, repo_id, filename, repo_type=None, **kw) -> bool:
        self._check("file_exists")
        repo = self._repo(repo_id)
        if filename not in repo.head_files:
            return False
        k = repo.last.get(filename)
        return not (self.lag_s and k is not None and time.time() - repo.commits[k].get("time", 0) < self.lag_s)

    def snapshot_download(self, repo_id, repo_type=None, allow_patterns=None, local_dir=None, revision=None, **kw):
        """As huggingface_hub filters (`filter_repo_objects`): every file against every pattern."""
        self._check("snapshot_download")
        if isinstance(allow_patterns, str):
            allow_patterns = [allow_patterns]
        for path, data in list(self._repo(repo_id).files_at(revision).items()):
            if allow_patterns is None or any(fnmatch.fnmatch(path, p) for p in allow_patterns):
                out = Path(local_dir) / path
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(data)
        return local_dir
