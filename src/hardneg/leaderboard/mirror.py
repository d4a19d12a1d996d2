"""Mirror the store to a Hub results dataset repo, append-only, through `huggingface_hub`, and restore it.

The results repo is the board's source of truth (issue 36): the mirror gets one commit per
submission (its record JSON, the published Parquet and the per-item values, under the
generated id) and one file per tombstone (with its time and order), never an edit of an
existing file. `sync` pushes whatever has not been mirrored yet (submissions and tombstones),
so a Hub outage only delays the mirror. `restore` reads the repo back into a store that is
empty or behind it (a Space restarted on a wiped disk, a move to new hardware): same ids,
versions and moderations, nothing twice. The Open LLM Leaderboard treats its Hub datasets the
same way (its board is rebuilt from them at start).

Repo layout (issue 49): `submissions/<benchmark>/<config>/<split>/<namespace>/<name>/v<version>/<id>.json`
(`submission_record`; `record_path`), `predictions/<id>.parquet`, `per_example/<id>.npz` (the stored per-item
values), `tombstones/<submission id>/<n>.json` (the n-th moderation of that submission; {submission_id, action,
reason, created_at}). A record's id is derived from what it is (`derive_id`: model, part and the file's SHA-256)
and its path from who and which version it is, so a retry of the same submission is "already stored", a broken
record still reserves the version its path names, and two writers can never both take a version: every commit is
made with `parent_commit` (compare-and-swap; `HubMirror.commit`, `hardneg.leaderboard.writer`). Order comes from
the repo's commit history (`list_repo_commits`, each file's `last_commit`), never from a field a writer can forge.
Records of the layout before issue 49 (`submissions/<benchmark>/<id>.json`, `tombstones/<...>.json`) are read too.

Nothing machine-local is published: `strip_local_paths` removes the submitter's local
paths (the dataset folder `hardneg score` records, a local model folder, paths inside
error messages) from the metadata, both in the record and in the Parquet the mirror
uploads (its 'hardneg' metadata is rewritten; `file_sha256` stays the hash of the file as
uploaded, `published_file_sha256` is that of the published copy).
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from hardneg import guards
from hardneg.leaderboard.store import Store, StoredSubmission

log = logging.getLogger(__name__)

DEFAULT_RESULTS_REPO = "video-hardneg/leaderboard-results"

#: what replaces a local path
LOCAL = "<local path>"
#: metadata keys that only ever hold a local path (dropped whole)
_LOCAL_KEYS = re.compile(r"(^|_)(path|paths|dir|dirs|folder|root|cache|cache_dir|videos_dir)$", re.I)
#: absolute or home-relative local paths inside any text: POSIX (two segments at least, not part of a URL or
#: a Hub id), ~/..., Windows drive and UNC paths, file:// URLs
_LOCAL_TEXT = re.compile(
    r"file://\S+"
    r"|(?<![\w.:/~-])/(?:[^\s/'\"<>|]+/)+[^\s/'\"<>|,;:)]*"
    r"|(?<![\w])~[\w.-]*/[^\s'\"<>|,;)]*"
    r"|(?<![\w])[A-Za-z]:[\\/][^\s'\"<>|,;)]*"
    r"|\\\\[^\s'\"<>|,;)]+"
)


def strip_local_paths(value: Any) -> Any:
    """A copy of metadata with every local path removed: keys named like paths (`dataset_path`, `cache_dir`, ...)
    dropped when they hold text, local paths inside any other text replaced by '<local path>'."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            key = _LOCAL_TEXT.sub(LOCAL, k) if isinstance(k, str) else k
            if isinstance(k, str) and _LOCAL_KEYS.search(k) and (isinstance(v, str) or v is None):
                continue
            out[key] = strip_local_paths(v)
        return out
    if isinstance(value, list):
        return [strip_local_paths(v) for v in value]
    if isinstance(value, str):
        return _LOCAL_TEXT.sub(LOCAL, value)
    return value


def public_parquet(file_bytes: bytes) -> bytes:
    """The stored predictions file as published: the same columns, metadata with local paths removed (only the
    'hardneg' key kept)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from hardneg.schema import PREDICTIONS_METADATA_KEY

    table = pq.read_table(pa.BufferReader(file_bytes))
    raw = (table.schema.metadata or {}).get(PREDICTIONS_METADATA_KEY, b"{}")
    meta = strip_local_paths(json.loads(raw))
    table = table.replace_schema_metadata({PREDICTIONS_METADATA_KEY: json.dumps(meta, sort_keys=True).encode()})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def submission_record(sub: StoredSubmission, published_sha256: str | None = None) -> dict:
    """What the mirror stores about one submission (everything but the file bytes; no local paths)."""
    record = {
        "id": sub.id, "model_id": sub.model_id, "submitter": sub.submitter, "benchmark": sub.benchmark,
        "config": sub.config, "split": sub.split, "version": sub.version, "data_revision": sub.data_revision,
        "metadata": strip_local_paths(sub.metadata), "results": sub.results, "file_sha256": sub.file_sha256,
        "created_at": sub.created_at, "seq": sub.seq,
    }
    if published_sha256:
        record["published_file_sha256"] = published_sha256
    return record


class MirrorUnreadable(RuntimeError):
    """The results repo exists (or may) but cannot be read: a 401/403 (no token, a wrong token, no access), or
    the Hub down. Never taken for "no repo yet": an unreadable repo is not an empty one (issue 42, N14)."""


class PublishFailed(RuntimeError):
    """A commit the Hub did not confirm, after every try: nothing is acknowledged. `unknown` is True when the
    commit may still land (a timeout or a lost reply, and the repo's head has not moved past the commit's parent
    since: the Hub could still process it); False only when it is known that it did not and never will (the head
    moved on without it, or the Hub refused it before it was sent)."""

    def __init__(self, message: str, unknown: bool):
        super().__init__(message)
        self.unknown = unknown


class HeldUnreadable(RuntimeError):
    """A submission the results repo holds already (its id, derived from the file, is there) that this board could
    not restore (the restore report says why): it is neither stored again nor numbered again."""


class HeadMoved(RuntimeError):
    """The Hub refused a commit made with `parent_commit` because the branch moved (HTTP 412, or 409 while another
    commit is in progress): nothing of it landed; read the repo again and renumber."""


@dataclass(frozen=True)
class PublishPolicy:
    """How hard a commit is tried before the submitter is told it was not stored: `tries` failed tries (a Hub error,
    a timeout), `backoff_s` doubled between them; `conflicts` refusals because another writer committed first (each
    followed by a read of the repo and a renumbering) before the commit counts one failed try."""

    tries: int = 4
    backoff_s: float = 0.25
    conflicts: int = 20


def derive_id(model_id: str, benchmark: str, config: str, split: str, file_sha256: str) -> str:
    """A submission's id, from what it is: the same file under the same model name and part is the same
    submission wherever and however often it is sent (a retry after a lost reply is "already stored")."""
    key = "\n".join([model_id.lower(), benchmark, config, split, file_sha256])
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def _model_dirs(model_id: str) -> str:
    ns, sep, name = model_id.partition("/")
    return f"{ns}/{name}" if sep else f"-/{model_id}"  # '-' is no Hub namespace: a name without one


def record_path(benchmark: str, config: str, split: str, model_id: str, version: int, sub_id: str) -> str:
    """Where a submission's record lives: the path names the (model, part, version) it takes."""
    return f"submissions/{benchmark}/{config}/{split}/{_model_dirs(model_id)}/v{int(version)}/{sub_id}.json"


def tombstone_path(submission_id: str, n: int) -> str:
    """The n-th moderation (1, 2, ...) of a submission: two writers cannot both write the n-th."""
    return f"tombstones/{submission_id}/{int(n):06d}.json"


_RECORD_PATH = re.compile(r"submissions/(?P<b>[^/]+)/(?P<c>[^/]+)/(?P<s>[^/]+)/(?P<ns>[^/]+)/(?P<name>[^/]+)/"
                          r"v(?P<v>[1-9][0-9]{0,15})/(?P<id>[0-9a-f]{32})\.json")
_TOMB_PATH = re.compile(r"tombstones/(?P<id>[0-9a-f]{32})/(?P<n>[0-9]{6,16})\.json")


def parse_record_path(path: str) -> tuple | None:
    """(model, benchmark, config, split, version, id) a new-layout record path names, or None."""
    m = _RECORD_PATH.fullmatch(path)
    if m is None:
        return None
    model = m["name"] if m["ns"] == "-" else f"{m['ns']}/{m['name']}"
    return model, m["b"], m["c"], m["s"], int(m["v"]), m["id"]


def parse_tombstone_path(path: str) -> tuple[str, int] | None:
    """(submission id, n) a new-layout tombstone path names, or None."""
    m = _TOMB_PATH.fullmatch(path)
    return (m["id"], int(m["n"])) if m else None


def not_sent(exc: BaseException) -> bool:
    """Whether a Hub call failed before its request reached the Hub (the connection was refused or never made:
    httpx's ConnectError / ConnectTimeout, as huggingface_hub raises them): such a commit cannot land."""
    return isinstance(exc, ConnectionRefusedError) or type(exc).__name__ in ("ConnectError", "ConnectTimeout")


def is_conflict(exc: BaseException) -> bool:
    """Whether a Hub error is the refusal of a `parent_commit` that is no longer the head (412; 409 while another
    commit is in progress, as `datasets` treats it), looking through chained errors."""
    seen = 0
    while exc is not None and seen < 5:
        status = getattr(getattr(exc, "response", None), "status_code", None)
        if status in (409, 412):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


#: the temporary folders of restores (`<prefix><pid>-<random>`): those of a process no longer running are removed
#: when the next restore starts (a restore killed mid-download leaves its folder behind; issue 42, N22)
TMP_PREFIX = "hardneg-mirror-"

#: above this many missing files, a restore downloads whole folders (`submissions/*`, ...) rather than one pattern
#: per file: huggingface_hub matches every file against every pattern (issue 42, N18: quadratic)
MAX_FILE_PATTERNS = 64

_HEX32 = re.compile(r"[0-9a-f]{32}")
_HEX64 = re.compile(r"[0-9a-f]{64}")
#: a record's submitter: a Hub user name, or a local board's identity name (`identity.local_identity`)
_SUBMITTER = re.compile(r"[A-Za-z0-9._\-]{1,96}")
#: the largest version and sequence number a record may hold (SQLite's INTEGER is 64-bit; N15: 2**63 overflowed)
MAX_NUMBER = 2**53


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def remove_stale_folders(root: str | Path | None = None) -> int:
    """Remove the temporary folders of restores whose process is gone; returns how many were removed."""
    base = Path(root) if root is not None else Path(tempfile.gettempdir())
    removed = 0
    for folder in base.glob(TMP_PREFIX + "*"):
        pid = folder.name[len(TMP_PREFIX):].split("-", 1)[0]
        if folder.is_dir() and (not pid.isdigit() or not _alive(int(pid))):
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    if removed:
        log.warning("removed %d temporary folder(s) left by an interrupted restore", removed)
    return removed


def guarded_record(rec: Any, path: str) -> dict:
    """A submission record read from the repo, through the same guards as a submission's values
    (`hardneg.guards`): ids and hashes as the board writes them, a model name as the Hub spells it, whole versions
    and sequence numbers in range, texts without control or invisible characters. Raises GuardError."""
    if not isinstance(rec, dict):
        raise guards.GuardError(path, f"is a {type(rec).__name__}, not a record", "restore a record the board wrote")
    fix = "the record was not written by the board; fix or remove it in the results repo"
    sub_id = rec.get("id")
    if not isinstance(sub_id, str) or not _HEX32.fullmatch(sub_id) or Path(path).stem != sub_id:
        raise guards.GuardError("id", f"{guards.shown(sub_id)} is not this record's submission id", fix)
    named = parse_record_path(path)
    out = dict(rec)
    out["model_id"] = guards.model_id(rec.get("model_id"), "model_id")
    submitter = guards.text(rec.get("submitter"), "submitter", max_len=96, fix=fix)
    if not _SUBMITTER.fullmatch(submitter):
        raise guards.GuardError("submitter", f"{guards.shown(submitter)} is not a user name", fix)
    out["submitter"] = submitter
    for key in ("benchmark", "config", "split", "data_revision", "created_at"):
        out[key] = guards.text(rec.get(key), key, max_len=200, fix=fix)
    if not path.startswith(f"submissions/{out['benchmark']}/"):
        raise guards.GuardError("benchmark", f"{guards.shown(out['benchmark'])} is not the record's folder", fix)
    out["version"] = guards.whole(rec.get("version") if not isinstance(rec.get("version"), str) else None,
                                  "version", lo=1, hi=MAX_NUMBER, fix=fix)
    if named is None and path != f"submissions/{out['benchmark']}/{sub_id}.json":
        raise guards.GuardError("path", f"{guards.shown(path, 120)} is not where the board writes a record", fix)
    if named is not None and path != record_path(out["benchmark"], out["config"], out["split"], out["model_id"],
                                                 out["version"], sub_id):
        raise guards.GuardError("path", f"{guards.shown(path, 120)} does not name the record's model, part and "
                                        f"version ({out['model_id']} v{out['version']})", fix)
    seq = rec.get("seq")
    out["seq"] = None if seq is None else guards.whole(seq if not isinstance(seq, str) else None, "seq", lo=1,
                                                       hi=MAX_NUMBER, fix=fix)
    for key in ("file_sha256", "published_file_sha256"):
        value = rec.get(key)
        if (value is not None or key == "file_sha256") and (not isinstance(value, str) or not _HEX64.fullmatch(value)):
            raise guards.GuardError(key, f"{guards.shown(value)} is not a SHA-256", fix)
    if named is not None and sub_id != derive_id(out["model_id"], out["benchmark"], out["config"], out["split"],
                                                 rec["file_sha256"]):
        raise guards.GuardError("id", f"{sub_id} is not the id of this model, part and file", fix)
    meta = rec.get("metadata")
    if not isinstance(meta, dict):
        raise guards.GuardError("metadata", f"is a {type(meta).__name__}, not an object", fix)
    out["metadata"] = guards.json_tree(meta, "metadata", fix=fix)
    return out


def guarded_tombstone(t: Any, path: str) -> dict:
    """A tombstone read from the repo, through the guards (N15: a list id, no action, a huge seq stopped the
    whole restore)."""
    fix = "the tombstone was not written by the board; fix or remove it in the results repo"
    if not isinstance(t, dict):
        raise guards.GuardError(path, f"is a {type(t).__name__}, not a tombstone", fix)
    sub_id = t.get("submission_id")
    if not isinstance(sub_id, str) or not _HEX32.fullmatch(sub_id):
        raise guards.GuardError("submission_id", f"{guards.shown(sub_id)} is not a submission id", fix)
    if t.get("action") not in ("hide", "delete", "restore"):
        raise guards.GuardError("action", f"{guards.shown(t.get('action'))} is not hide, delete or restore", fix)
    named = parse_tombstone_path(path)
    if named is not None and named[0] != sub_id:
        raise guards.GuardError("submission_id", f"{sub_id} is not the submission its path names ({named[0]})", fix)
    seq = t.get("seq")
    return {"submission_id": sub_id, "action": t["action"],
            "reason": guards.text(t.get("reason", ""), "reason", max_len=2000, allow_empty=True, multiline=True,
                                  fix=fix),
            "created_at": guards.optional_text(t.get("created_at"), "created_at", max_len=200, fix=fix),
            "seq": None if seq is None else guards.whole(seq if not isinstance(seq, str) else None, "seq", lo=1,
                                                         hi=MAX_NUMBER, fix=fix),
            "repo_path": path}


def _numbered(file: Path, path: str) -> list[tuple]:
    """(model, benchmark, config, split, version, path) of a record that could not be restored: what its path names
    (issue 49, N25: even a record too broken to read keeps its number), else, for a record of the layout before,
    what it names plainly (a model name as the Hub spells it, a version in range): its number stays taken."""
    named = parse_record_path(path)
    if named is not None:
        return [(*named[:5], path)]
    try:
        rec = json.loads(file.read_bytes()[: 1 << 20])
        key = (guards.model_id(rec["model_id"]), *(guards.text(rec[k], k, max_len=200)
                                                  for k in ("benchmark", "config", "split")))
        version = rec["version"]
        if isinstance(version, int) and not isinstance(version, bool) and 1 <= version <= MAX_NUMBER:
            return [(*key, version, path)]
    except Exception:  # noqa: BLE001 (nothing readable: nothing to keep)
        pass
    return []


#: check(record, published parquet bytes) -> (results, per-item .npz bytes): the board's own validation and
#: recomputation of a restored record (raises when the file does not pass)
Check = Callable[[dict, bytes], tuple]


class HubMirror:
    """The board's results repo (a dataset repo): read back into a store (`restore`) and written with
    compare-and-swap commits (`commit`, used by `hardneg.leaderboard.writer.RepoWriter`).

    `head` is the commit the store was last brought up to, `paths` the repo's files at it; `lock` is held by whoever
    reads the repo into the store or numbers and commits against `head`."""

    def __init__(self, repo_id: str = DEFAULT_RESULTS_REPO, api=None, token: str | None = None, private: bool = False,
                 policy: PublishPolicy = PublishPolicy(), tmp_root: str | Path | None = None):
        import threading

        if api is None:
            from huggingface_hub import HfApi

            api = HfApi(token=token)
        self.api = api
        self.repo_id = repo_id
        self.private = private
        self.policy = policy
        self.tmp_root = Path(tmp_root) if tmp_root is not None else None
        self._repo_ready = False
        self.lock = threading.RLock()
        #: the commit the store is synced to (None: not read yet, or no repo yet) and the repo's files at it
        self.head: str | None = None
        self.paths: set[str] = set()
        #: the highest version each (model, benchmark, config, split) takes in the repo at `head` (from the paths)
        self.versions: dict[tuple, int] = {}
        #: the highest moderation number of each submission in the repo at `head` (from the paths)
        self.moderations: dict[str, int] = {}
        #: submission id -> its record's path, of every record in the repo at `head` (restored or not)
        self.record_ids: dict[str, str] = {}
        #: the last restore's report: counts, and (repo path, reason) of every record skipped
        self.report: dict = {}

    def _ensure_repo(self) -> None:
        if not self._repo_ready:
            self.api.create_repo(self.repo_id, repo_type="dataset", exist_ok=True, private=self.private)
            self._repo_ready = True

    def commit(self, files: dict[str, bytes], message: str, parent: str | None) -> str:
        """One commit of `files`, made only if the branch head is still `parent` (`parent_commit`: the Hub answers
        412 otherwise, raised here as HeadMoved); returns the new commit's id. Any other error leaves its outcome
        unknown (the caller reads the repo back)."""
        from huggingface_hub import CommitOperationAdd

        ops = [CommitOperationAdd(path_in_repo=path, path_or_fileobj=data) for path, data in files.items()]
        try:
            info = self.api.create_commit(repo_id=self.repo_id, repo_type="dataset", operations=ops,
                                          commit_message=message, parent_commit=parent)
        except Exception as exc:
            if is_conflict(exc):
                raise HeadMoved(f"the results repo moved past {str(parent)[:12]}: another writer committed first") \
                    from exc
            raise
        oid = getattr(info, "oid", None)
        if not isinstance(oid, str) or not oid:
            raise RuntimeError("the Hub's answer to a commit has no commit id")
        return oid

    def note_landed(self, oid: str, paths) -> None:
        """A commit of ours landed on `head` (its parent): the repo's head is now `oid`, with `paths` added."""
        self.head = oid
        for p in paths:
            self._index(p)

    def _index(self, path: str) -> None:
        self.paths.add(path)
        if path.startswith("submissions/") and path.endswith(".json"):
            self.record_ids.setdefault(Path(path).stem, path)
        named = parse_record_path(path)
        if named is not None:
            key = named[:4]
            self.versions[key] = max(self.versions.get(key, 0), named[4])
        tomb = parse_tombstone_path(path)
        if tomb is not None:
            self.moderations[tomb[0]] = max(self.moderations.get(tomb[0], 0), tomb[1])

    def sync(self, store: Store) -> int:
        """Push every submission, then every tombstone, the store holds and the repo lacks (a store carried over from
        a board without a results repo, or from before issue 42), with compare-and-swap commits (`push_outbox`);
        returns how many."""
        return push_outbox(self, store)

    # --- reading the repo back -------------------------------------------------------------
    def _unreadable(self, exc) -> Exception:
        """A read error as the board reports it: [] only when the Hub says, to a caller whose token it accepts, that
        the repo does not exist (a new board: None here). huggingface_hub raises RepositoryNotFoundError for a 401
        too (a private repo read without a valid token), so `whoami` tells the two apart; a 401/403 raises
        MirrorUnreadable."""
        from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError

        if isinstance(exc, RepositoryNotFoundError):
            status = getattr(getattr(exc, "response", None), "status_code", None)
            if status in (401, 403):
                return MirrorUnreadable(f"the results repo {self.repo_id} refused the board's token (HTTP {status}): "
                                        "set HF_TOKEN to a token with read and write access to it")
            try:
                who = self.api.whoami()
            except Exception as exc2:  # noqa: BLE001 (no token, a wrong one, or the Hub down: not "no repo")
                return MirrorUnreadable(f"the results repo {self.repo_id} was not found, and the board's token is "
                                        f"not accepted ({type(exc2).__name__}): set HF_TOKEN to a token with access "
                                        "to it")
            log.warning("results repo %s does not exist (checked as %s): a new board", self.repo_id,
                        (who or {}).get("name", "?"))
            return None
        if isinstance(exc, HfHubHTTPError):
            status = getattr(getattr(exc, "response", None), "status_code", None)
            hint = (": set HF_TOKEN to a token with read and write access to it" if status in (401, 403) else "")
            return MirrorUnreadable(f"the results repo {self.repo_id} could not be read (HTTP {status}, "
                                    f"{str(exc)[:120]}){hint}")
        return exc

    def _head(self) -> str | None:
        """The branch head's commit id (`repo_info(...).sha`), or None when the repo does not exist."""
        try:
            return getattr(self.api.repo_info(self.repo_id, repo_type="dataset"), "sha", None)
        except Exception as exc:  # noqa: BLE001
            err = self._unreadable(exc)
            if err is None:
                return None
            raise err from None

    def _history(self) -> list[str] | None:
        """The ids of the repo's commits, oldest first (None: the repo does not exist, the caller's token accepted)."""
        try:
            commits = list(self.api.list_repo_commits(self.repo_id, repo_type="dataset"))
        except Exception as exc:  # noqa: BLE001
            err = self._unreadable(exc)
            if err is None:
                return None
            raise err from None
        return [c.commit_id for c in reversed(commits)]

    def _files(self, revision: str | None = None) -> list[str]:
        """Every file of the results repo at `revision`."""
        try:
            return list(self.api.list_repo_files(self.repo_id, repo_type="dataset", revision=revision))
        except Exception as exc:  # noqa: BLE001
            err = self._unreadable(exc)
            if err is None:
                return []
            raise err from None

    def _positions(self, paths: list[str], history: list[str], head: str) -> dict[str, int]:
        """Each path's place in the commit history (the index of the commit that last wrote it; `get_paths_info`
        with `expand`): the order of records no writer can forge (N27). A path the Hub gives no commit for is
        placed last."""
        where = {oid: k for k, oid in enumerate(history)}
        out: dict[str, int] = {}
        for k in range(0, len(paths), 500):
            for info in self.api.get_paths_info(self.repo_id, paths[k:k + 500], expand=True, revision=head,
                                                repo_type="dataset"):
                last = getattr(info, "last_commit", None)
                out[info.path] = where.get(getattr(last, "oid", None), len(history))
        return out

    def _download(self, patterns: list[str], folder: Path, revision: str | None = None) -> None:
        """The files matching `patterns` under `folder` (one snapshot download: parallel, resumable)."""
        if patterns:
            self.api.snapshot_download(repo_id=self.repo_id, repo_type="dataset", allow_patterns=patterns,
                                       local_dir=str(folder), revision=revision)

    @staticmethod
    def _missing(store: Store, files: list[str]) -> tuple[list[str], list[str]]:
        have, linked = store.ids(), store.mirrored_tombstone_paths()
        records = [f for f in files if f.startswith("submissions/") and f.endswith(".json")
                   and Path(f).stem not in have]
        tombs = [f for f in files if f.startswith("tombstones/") and f.endswith(".json") and f not in linked]
        return records, tombs

    def _owner_check(self):
        """owns(model_id, submitter) -> None or the reason it is refused: the live board's rule (`Identity.may_write`:
        the namespace is the submitter's name or an organization they belong to, asked of the Hub with
        `list_organization_members`), applied to a restored record (N27: a record by 'mallory' under 'alice/')."""
        from huggingface_hub.errors import HfHubHTTPError

        from hardneg.leaderboard.identity import Identity

        members: dict[str, set[str]] = {}

        def owns(model_id: str, submitter: str) -> str | None:
            ns = model_id.partition("/")[0]
            if ns.lower() == submitter.lower():
                return None
            if ns.lower() not in members:
                try:
                    members[ns.lower()] = {str(getattr(u, "username", "")).lower()
                                           for u in self.api.list_organization_members(ns)}
                except Exception as exc:  # noqa: BLE001 (only a 404 is an answer; anything else: not read yet)
                    if not (isinstance(exc, HfHubHTTPError)
                            and getattr(getattr(exc, "response", None), "status_code", None) == 404):
                        # a Hub error is not a refusal: the restore fails and is retried, never skips the record
                        raise MirrorUnreadable(f"the members of {ns!r} could not be read ({type(exc).__name__}: "
                                               f"{str(exc)[:80]})") from None
                    members[ns.lower()] = set()  # not an organization: a user's namespace
            orgs = (ns,) if submitter.lower() in members[ns.lower()] else ()
            if Identity(submitter, orgs).may_write(model_id):
                return None
            return (f"its submitter {guards.shown(submitter)} does not own the namespace {guards.shown(ns)} (not the "
                    "user, nor a member of the organization): the board would have refused it")

        return owns

    def restore(self, store: Store, check: Check) -> dict[str, int]:
        """Bring `store` up to the repo's head: every submission and tombstone of the repo it lacks (`Store.restore`:
        same ids and versions, nothing twice), in the order of the repo's commit history. Every record passes the
        guards of a submission (`guarded_record`), its submitter must own its namespace, and it passes the board's
        `check` (the file validated, the scores recomputed from it: a record's own numbers are never used); one that
        fails is skipped, counted and named in `self.report`, keeps the version its path names, and never stops the
        others. When the head is the one the store was last brought to, this is one `repo_info` read."""
        counts = {"submissions": 0, "tombstones": 0, "conflicts": 0, "orphans": 0, "unreadable": 0,
                  "duplicates": 0}
        with self.lock:
            if self.head is not None and self._head() == self.head:  # one cheap read when nothing changed
                return dict(counts)
            history = self._history()
            head = history[-1] if history else None
            if head is not None and head == self.head:
                return dict(counts)
            remove_stale_folders(self.tmp_root)
            files = self._files(head) if head is not None else []
            records, tombs = self._missing(store, files)
            skipped: list[tuple[str, str]] = []
            self.report = {"counts": counts, "skipped": skipped}
            if records or tombs:
                self._restore_files(store, check, (records, tombs, files, history, head), counts, skipped)
            self.head, self.paths, self.versions, self.moderations, self.record_ids = head, set(), {}, {}, {}
            for f in files:
                self._index(f)
            return counts

    def _restore_files(self, store: Store, check: Check, repo: tuple, counts: dict, skipped: list) -> None:
        records, tombs, files, history, head = repo
        place = self._positions(records + tombs, history, head)
        listed = set(files)
        ids = [Path(f).stem for f in records]
        wanted = records + tombs + [f"predictions/{i}.parquet" for i in ids if f"predictions/{i}.parquet" in listed]
        patterns = wanted if len(wanted) <= MAX_FILE_PATTERNS else ["submissions/*", "tombstones/*", "predictions/*"]
        subs, tombstones, reserved = [], [], []
        owns = self._owner_check()
        base = self.tmp_root if self.tmp_root is not None else Path(tempfile.gettempdir())
        base.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=f"{TMP_PREFIX}{os.getpid()}-", dir=base) as tmp:
            root = Path(tmp)
            self._download(patterns, root, head)
            for path in records:
                try:
                    rec = guarded_record(guards.json_text((root / path).read_bytes(), path), path)
                    refused = owns(rec["model_id"], rec["submitter"])
                    if refused:
                        raise ValueError(refused)
                    parquet = (root / f"predictions/{rec['id']}.parquet").read_bytes()
                    stored_sha = hashlib.sha256(parquet).hexdigest()
                    if rec.get("published_file_sha256") and stored_sha != rec["published_file_sha256"]:
                        raise ValueError("its predictions file is not the one the record names (SHA-256 differs)")
                    results, per = check(rec, parquet)
                    subs.append({**rec, "results": results, "file": parquet, "per_example": per, "repo_path": path,
                                 "stored_file_sha256": None if stored_sha == rec["file_sha256"] else stored_sha,
                                 "seq": None, "order": (place.get(path, len(history)), path)})
                except MirrorUnreadable:
                    raise
                except Exception as exc:  # noqa: BLE001 (one unreadable record must not stop the others)
                    reserved += _numbered(root / path, path)
                    counts["unreadable"] += 1
                    skipped.append((path, f"{type(exc).__name__}: {str(exc)[:300]}"))
                    log.error("mirror record %s could not be restored: %s", path, exc)
            for path in tombs:
                try:
                    t = guarded_tombstone(guards.json_text((root / path).read_bytes(), path), path)
                    tombstones.append({**t, "seq": None, "forged_seq": t.get("seq"),
                                       "order": (place.get(path, len(history)), path)})
                except Exception as exc:  # noqa: BLE001
                    counts["unreadable"] += 1
                    skipped.append((path, f"{type(exc).__name__}: {str(exc)[:300]}"))
                    log.error("mirror tombstone %s could not be read: %s", path, exc)
        subs.sort(key=lambda r: r["order"])
        tombstones.sort(key=lambda r: r["order"])
        skipped += _reordered(tombstones)
        more: list[tuple[str, str]] = []
        counts.update(store.restore(subs, tombstones, more, reserved))
        skipped += more


def _reordered(tombstones: list[dict]) -> list[tuple[str, str]]:
    """Tombstones whose own `seq` field disagrees with the commit history (an edited repo, N27): the field is
    ignored, and each is named in the restore report."""
    out, last = [], {}
    for t in tombstones:
        seq, sub = t.get("forged_seq"), t["submission_id"]
        if isinstance(seq, int):
            if sub in last and seq < last[sub]:
                out.append((t["repo_path"], f"its seq {seq} puts it before a moderation committed earlier; ignored: "
                                            "moderations are ordered by the repo's commit history"))
            last[sub] = max(seq, last.get(sub, seq))
    return out


def push_outbox(mirror: HubMirror, store: Store) -> int:
    """Publish what `store` holds and the repo lacks (rows of a board without a results repo, or from before issue
    42) under compare-and-swap: a submission under the layout before issue 49 (its version was numbered without the
    repo; one the repo holds already under another id is left out and logged), a moderation as the next one of its
    submission. Stops at the first refusal or error (the next restore tries again); returns how many were pushed."""
    pushed = 0
    with mirror.lock:
        if mirror.head is None:
            return 0
        for sub in store.unmirrored():
            key = (sub.model_id, sub.benchmark, sub.config, sub.split)
            if mirror.versions.get(key, 0) >= sub.version:
                log.error("not published: %s v%s on %s/%s/%s (submission %s): the repo holds that version already",
                          *key[:1], sub.version, *key[1:], sub.id)
                continue
            path = f"submissions/{sub.benchmark}/{sub.id}.json"
            published = public_parquet(store.file_bytes(sub.id))
            record = submission_record(sub, hashlib.sha256(published).hexdigest())
            files = {path: json.dumps(record, indent=1, sort_keys=True).encode(),
                     f"predictions/{sub.id}.parquet": published, f"per_example/{sub.id}.npz": store.per_example_blob(sub.id)}
            mirror.note_landed(mirror.commit(files, f"Add {sub.model_id} v{sub.version} (outbox)", mirror.head), files)
            store.mark_mirrored(sub.id, path)
            pushed += 1
        for t in store.unmirrored_tombstones():
            n = mirror.moderations.get(t["submission_id"], 0) + 1
            path = tombstone_path(t["submission_id"], n)
            body = {k: t[k] for k in ("submission_id", "action", "reason", "created_at")}
            files = {path: json.dumps(body, sort_keys=True).encode()}
            mirror.note_landed(mirror.commit(files, f"{t['action']} submission {t['submission_id']} (outbox)",
                                             mirror.head), files)
            store.mark_tombstone_mirrored(t["seq"], path)
            pushed += 1
    return pushed
