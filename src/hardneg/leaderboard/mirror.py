"""Mirror the store to a Hub results dataset repo, append-only, through `huggingface_hub`, and restore it.

The results repo is the board's source of truth (issue 36): the mirror gets one commit per
submission (its record JSON, the published Parquet and the per-item values, under the
generated id) and one file per tombstone (with its time and order), never an edit of an
existing file. `sync` pushes whatever has not been mirrored yet (submissions and tombstones),
so a Hub outage only delays the mirror. `restore` reads the repo back into a store that is
empty or behind it (a Space restarted on a wiped disk, a move to new hardware): same ids,
versions and moderations, nothing twice. The Open LLM Leaderboard treats its Hub datasets the
same way (its board is rebuilt from them at start).

Repo layout: `submissions/<benchmark>/<id>.json` (`submission_record`), `predictions/<id>.parquet`,
`per_example/<id>.npz` (the stored per-item values; older records without it are re-scored
from their Parquet when restored), `tombstones/<uuid>.json` ({submission_id, action, reason,
created_at, seq}).

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
import time
import uuid
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
    commit may still have landed (its reply was lost and the check failed too): the board then reads the repo
    back before it numbers anything again."""

    def __init__(self, message: str, unknown: bool):
        super().__init__(message)
        self.unknown = unknown


@dataclass(frozen=True)
class PublishPolicy:
    """How hard a commit is tried before the submitter is told it was not stored: `tries` commits, `backoff_s`
    doubled between them; after a failed try, whether the commit landed anyway is checked (`file_exists`)."""

    tries: int = 4
    backoff_s: float = 0.25


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
    seq = rec.get("seq")
    out["seq"] = None if seq is None else guards.whole(seq if not isinstance(seq, str) else None, "seq", lo=1,
                                                       hi=MAX_NUMBER, fix=fix)
    for key in ("file_sha256", "published_file_sha256"):
        value = rec.get(key)
        if (value is not None or key == "file_sha256") and (not isinstance(value, str) or not _HEX64.fullmatch(value)):
            raise guards.GuardError(key, f"{guards.shown(value)} is not a SHA-256", fix)
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
    seq = t.get("seq")
    return {"submission_id": sub_id, "action": t["action"],
            "reason": guards.text(t.get("reason", ""), "reason", max_len=2000, allow_empty=True, multiline=True,
                                  fix=fix),
            "created_at": guards.optional_text(t.get("created_at"), "created_at", max_len=200, fix=fix),
            "seq": None if seq is None else guards.whole(seq if not isinstance(seq, str) else None, "seq", lo=1,
                                                         hi=MAX_NUMBER, fix=fix),
            "repo_path": path}


def _numbered(file: Path, path: str) -> list[tuple]:
    """(model, benchmark, config, split, version, path) of a record that could not be restored, when it names them
    plainly (a model name as the Hub spells it, a version in range): its number stays taken."""
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
    """Pushes submissions and tombstones to `repo_id` (a dataset repo) with `api.create_commit`."""

    def __init__(self, repo_id: str = DEFAULT_RESULTS_REPO, api=None, token: str | None = None, private: bool = False,
                 policy: PublishPolicy = PublishPolicy(), tmp_root: str | Path | None = None):
        if api is None:
            from huggingface_hub import HfApi

            api = HfApi(token=token)
        self.api = api
        self.repo_id = repo_id
        self.private = private
        self.policy = policy
        self.tmp_root = Path(tmp_root) if tmp_root is not None else None
        self._repo_ready = False
        #: the last restore's report: counts, and (repo path, reason) of every record skipped
        self.report: dict = {}

    def _ensure_repo(self) -> None:
        if not self._repo_ready:
            self.api.create_repo(self.repo_id, repo_type="dataset", exist_ok=True, private=self.private)
            self._repo_ready = True

    def _commit(self, files: dict[str, bytes], message: str) -> None:
        from huggingface_hub import CommitOperationAdd

        self._ensure_repo()
        ops = [CommitOperationAdd(path_in_repo=path, path_or_fileobj=data) for path, data in files.items()]
        self.api.create_commit(repo_id=self.repo_id, repo_type="dataset", operations=ops, commit_message=message)

    def _landed(self, path: str) -> bool:
        exists = getattr(self.api, "file_exists", None)
        return bool(exists and exists(self.repo_id, path, repo_type="dataset"))

    def commit_confirmed(self, files: dict[str, bytes], message: str) -> None:
        """One commit, tried `policy.tries` times; a failed try whose commit landed anyway (a lost reply) counts as
        done. Raises PublishFailed when the Hub never confirmed it."""
        first = next(iter(files))
        unknown = False
        last: Exception | None = None
        for attempt in range(self.policy.tries):
            if attempt:
                time.sleep(self.policy.backoff_s * 2 ** (attempt - 1))
            try:
                if unknown and self._landed(first):
                    return
                self._commit(files, message)
                return
            except Exception as exc:  # noqa: BLE001 (any failure of the Hub client: retried, then reported)
                last = exc
                unknown = True  # from here on a landed commit is possible: checked before the next try
        try:
            if self._landed(first):
                return
            unknown = False
        except Exception:  # noqa: BLE001
            pass
        raise PublishFailed(f"{type(last).__name__}: {str(last)[:200]}", unknown)

    def publish(self, new: list) -> dict[str, str]:
        """The new rows of one submission [(row, file bytes, per-item .npz bytes)] in ONE confirmed commit (what
        `Store.add_files` calls inside its transaction); returns {id: record path}."""
        files, paths = {}, {}
        for sub, file_bytes, blob in new:
            path = f"submissions/{sub.benchmark}/{sub.id}.json"
            published = public_parquet(file_bytes)
            record = submission_record(sub, hashlib.sha256(published).hexdigest())
            files[path] = json.dumps(record, indent=1, sort_keys=True).encode()
            files[f"predictions/{sub.id}.parquet"] = published
            files[f"per_example/{sub.id}.npz"] = blob
            paths[sub.id] = path
        sub = new[0][0]
        self.commit_confirmed(files, f"Add {sub.model_id} v{sub.version} on {sub.benchmark}/{sub.config}/{sub.split}"
                                     + (f" (+{len(new) - 1} parts)" if len(new) > 1 else ""))
        return paths

    def publish_tombstone(self, tomb: dict) -> str:
        """One confirmed commit `tombstones/<seq>-<uuid>.json` (what `Store.add_tombstone` calls)."""
        path = f"tombstones/{int(tomb['seq']):012d}-{uuid.uuid4().hex}.json"
        body = {k: tomb[k] for k in ("submission_id", "action", "reason", "created_at", "seq")}
        self.commit_confirmed({path: json.dumps(body, sort_keys=True).encode()},
                              f"{tomb['action']} submission {tomb['submission_id']}")
        return path

    def push_submission(self, store: Store, sub: StoredSubmission) -> str:
        """One commit: `submissions/<benchmark>/<id>.json` and `predictions/<id>.parquet`; marks it mirrored."""
        record_path = f"submissions/{sub.benchmark}/{sub.id}.json"
        published = public_parquet(store.file_bytes(sub.id))
        record = submission_record(sub, hashlib.sha256(published).hexdigest())
        self._commit(
            {
                record_path: json.dumps(record, indent=1, sort_keys=True).encode(),
                f"predictions/{sub.id}.parquet": published,
                f"per_example/{sub.id}.npz": store.per_example_blob(sub.id),
            },
            f"Add {sub.model_id} v{sub.version} on {sub.benchmark}/{sub.config}/{sub.split}",
        )
        store.mark_mirrored(sub.id, record_path)
        return record_path

    def push_tombstone(self, submission_id: str, action: str, reason: str, created_at: str | None = None,
                       seq: int | None = None, store: Store | None = None) -> str:
        """One commit: `tombstones/<uuid>.json`; with `store` and `seq`, marked mirrored there (what `sync` reads)."""
        path = f"tombstones/{uuid.uuid4().hex}.json"
        body = {"submission_id": submission_id, "action": action, "reason": reason}
        if created_at is not None:
            body.update(created_at=created_at, seq=seq)
        self._commit({path: json.dumps(body, sort_keys=True).encode()}, f"{action} submission {submission_id}")
        if store is not None and seq is not None:
            store.mark_tombstone_mirrored(seq, path)
        return path

    def sync(self, store: Store) -> int:
        """Push every submission, then every tombstone, not yet mirrored (the outbox: rows a board stored before
        issue 42 without its repo, or a store carried over from a board without a mirror); returns how many."""
        pending = store.unmirrored()
        for sub in pending:
            self.push_submission(store, sub)
        tombs = store.unmirrored_tombstones()
        for t in tombs:
            self.push_tombstone(t["submission_id"], t["action"], t["reason"], t["created_at"], t["seq"], store)
        return len(pending) + len(tombs)

    # --- reading the repo back -------------------------------------------------------------
    def _files(self) -> list[str]:
        """Every file of the results repo; [] only when the Hub says, to a caller whose token it accepts, that the
        repo does not exist (a new board). huggingface_hub raises RepositoryNotFoundError for a 401 too (a private
        repo read without a valid token), so `whoami` tells the two apart; a 401/403 raises MirrorUnreadable."""
        from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError

        try:
            return list(self.api.list_repo_files(self.repo_id, repo_type="dataset"))
        except RepositoryNotFoundError as exc:
            status = getattr(getattr(exc, "response", None), "status_code", None)
            if status in (401, 403):
                raise MirrorUnreadable(f"the results repo {self.repo_id} refused the board's token (HTTP {status}): "
                                       "set HF_TOKEN to a token with read and write access to it") from None
            try:
                who = self.api.whoami()
            except Exception as exc2:  # noqa: BLE001 (no token, a wrong one, or the Hub down: not "no repo")
                raise MirrorUnreadable(f"the results repo {self.repo_id} was not found, and the board's token is "
                                       f"not accepted ({type(exc2).__name__}): set HF_TOKEN to a token with access "
                                       "to it") from None
            log.warning("results repo %s does not exist (checked as %s): a new board", self.repo_id,
                        (who or {}).get("name", "?"))
            return []
        except HfHubHTTPError as exc:
            status = getattr(getattr(exc, "response", None), "status_code", None)
            hint = (": set HF_TOKEN to a token with read and write access to it" if status in (401, 403) else "")
            raise MirrorUnreadable(f"the results repo {self.repo_id} could not be read (HTTP {status}, "
                                   f"{str(exc)[:120]}){hint}") from None

    def _download(self, patterns: list[str], folder: Path) -> None:
        """The files matching `patterns` under `folder` (one snapshot download: parallel, resumable)."""
        if patterns:
            self.api.snapshot_download(repo_id=self.repo_id, repo_type="dataset", allow_patterns=patterns,
                                       local_dir=str(folder))

    @staticmethod
    def _missing(store: Store, files: list[str]) -> tuple[list[str], list[str]]:
        have, linked = store.ids(), store.mirrored_tombstone_paths()
        records = [f for f in files if f.startswith("submissions/") and f.endswith(".json")
                   and Path(f).stem not in have]
        tombs = [f for f in files if f.startswith("tombstones/") and f.endswith(".json") and f not in linked]
        return records, tombs

    def restore(self, store: Store, check: Check) -> dict[str, int]:
        """Add to `store` every submission and tombstone of the repo it lacks (`Store.restore`: same ids, versions
        and sequence numbers, nothing twice). Every record passes the guards of a submission (`guarded_record`)
        and the board's `check` (the file validated, the scores recomputed from it: a record's own numbers are
        never used); one that fails is skipped, counted and named in `self.report`, and never stops the others."""
        remove_stale_folders(self.tmp_root)
        files = self._files()
        records, tombs = self._missing(store, files)
        counts = {"submissions": 0, "tombstones": 0, "conflicts": 0, "orphans": 0, "unreadable": 0,
                  "duplicates": 0}
        skipped: list[tuple[str, str]] = []
        self.report = {"counts": counts, "skipped": skipped}
        if not records and not tombs:
            return counts
        listed = set(files)
        ids = [Path(f).stem for f in records]
        wanted = records + tombs + [f"predictions/{i}.parquet" for i in ids if f"predictions/{i}.parquet" in listed]
        patterns = wanted if len(wanted) <= MAX_FILE_PATTERNS else ["submissions/*", "tombstones/*", "predictions/*"]
        subs, tombstones, reserved = [], [], []
        base = self.tmp_root if self.tmp_root is not None else Path(tempfile.gettempdir())
        base.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=f"{TMP_PREFIX}{os.getpid()}-", dir=base) as tmp:
            root = Path(tmp)
            self._download(patterns, root)
            for path in records:
                try:
                    rec = guarded_record(guards.json_text((root / path).read_bytes(), path), path)
                    parquet = (root / f"predictions/{rec['id']}.parquet").read_bytes()
                    stored_sha = hashlib.sha256(parquet).hexdigest()
                    if rec.get("published_file_sha256") and stored_sha != rec["published_file_sha256"]:
                        raise ValueError("its predictions file is not the one the record names (SHA-256 differs)")
                    results, per = check(rec, parquet)
                    subs.append({**rec, "results": results, "file": parquet, "per_example": per, "repo_path": path,
                                 "stored_file_sha256": None if stored_sha == rec["file_sha256"] else stored_sha})
                except Exception as exc:  # noqa: BLE001 (one unreadable record must not stop the others)
                    reserved += _numbered(root / path, path)
                    counts["unreadable"] += 1
                    skipped.append((path, f"{type(exc).__name__}: {str(exc)[:300]}"))
                    log.error("mirror record %s could not be restored: %s", path, exc)
            for path in tombs:
                try:
                    tombstones.append(guarded_tombstone(guards.json_text((root / path).read_bytes(), path), path))
                except Exception as exc:  # noqa: BLE001
                    counts["unreadable"] += 1
                    skipped.append((path, f"{type(exc).__name__}: {str(exc)[:300]}"))
                    log.error("mirror tombstone %s could not be read: %s", path, exc)
        more: list[tuple[str, str]] = []
        counts.update(store.restore(subs, tombstones, more, reserved))
        skipped += more
        return counts
