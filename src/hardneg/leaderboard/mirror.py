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
import re
import tempfile
import uuid
from pathlib import Path
from typing import Any, Callable

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


#: the fields a record needs to be restored, with their types (the results are checked when drawn)
_RECORD_KEYS = {"id": str, "model_id": str, "submitter": str, "benchmark": str, "config": str, "split": str,
                "version": int, "data_revision": str, "file_sha256": str, "created_at": str, "metadata": (dict, list),
                "results": (dict, list, str, int, float, type(None))}


class HubMirror:
    """Pushes submissions and tombstones to `repo_id` (a dataset repo) with `api.create_commit`."""

    def __init__(self, repo_id: str = DEFAULT_RESULTS_REPO, api=None, token: str | None = None, private: bool = False):
        if api is None:
            from huggingface_hub import HfApi

            api = HfApi(token=token)
        self.api = api
        self.repo_id = repo_id
        self.private = private
        self._repo_ready = False

    def _ensure_repo(self) -> None:
        if not self._repo_ready:
            self.api.create_repo(self.repo_id, repo_type="dataset", exist_ok=True, private=self.private)
            self._repo_ready = True

    def _commit(self, files: dict[str, bytes], message: str) -> None:
        from huggingface_hub import CommitOperationAdd

        self._ensure_repo()
        ops = [CommitOperationAdd(path_in_repo=path, path_or_fileobj=data) for path, data in files.items()]
        self.api.create_commit(repo_id=self.repo_id, repo_type="dataset", operations=ops, commit_message=message)

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
        """Push every submission, then every tombstone, not yet mirrored; returns how many were pushed."""
        pending = store.unmirrored()
        for sub in pending:
            self.push_submission(store, sub)
        tombs = store.unmirrored_tombstones()
        for t in tombs:
            self.push_tombstone(t["submission_id"], t["action"], t["reason"], t["created_at"], t["seq"], store)
        return len(pending) + len(tombs)

    # --- reading the repo back -------------------------------------------------------------
    def _files(self) -> list[str]:
        """Every file of the results repo ([] when the repo does not exist yet: a new board)."""
        from huggingface_hub.errors import RepositoryNotFoundError

        try:
            return list(self.api.list_repo_files(self.repo_id, repo_type="dataset"))
        except RepositoryNotFoundError:
            return []

    def _download(self, paths: list[str], folder: Path) -> None:
        """The files at `paths` under `folder` (one snapshot download: parallel, resumable)."""
        if paths:
            self.api.snapshot_download(repo_id=self.repo_id, repo_type="dataset", allow_patterns=paths,
                                       local_dir=str(folder))

    @staticmethod
    def _missing(store: Store, files: list[str]) -> tuple[list[str], list[str]]:
        have, linked = store.ids(), store.mirrored_tombstone_paths()
        records = [f for f in files if f.startswith("submissions/") and f.endswith(".json")
                   and Path(f).stem not in have]
        tombs = [f for f in files if f.startswith("tombstones/") and f.endswith(".json") and f not in linked]
        return (records, tombs) if records or tombs else ([], [])

    def restore(self, store: Store, rescore: Callable[[dict, bytes], bytes] | None = None) -> dict[str, int]:
        """Add to `store` every submission and tombstone of the repo it lacks (`Store.restore`: same ids, versions
        and times, nothing twice). rescore(record, parquet bytes) -> .npz bytes: the per-item values of a record
        mirrored without them (before they were published); without it such a record is skipped and counted."""
        files = self._files()
        records, tombs = self._missing(store, files)
        counts = {"submissions": 0, "tombstones": 0, "conflicts": 0, "orphans": 0, "unreadable": 0}
        if not records and not tombs:
            return counts
        listed = set(files)
        ids = [Path(f).stem for f in records]
        wanted = records + tombs + [p for i in ids for p in (f"predictions/{i}.parquet", f"per_example/{i}.npz")
                                    if p in listed]
        subs, tombstones = [], []
        with tempfile.TemporaryDirectory(prefix="hardneg-mirror-") as tmp:
            root = Path(tmp)
            self._download(wanted, root)
            for path, sub_id in zip(records, ids):
                try:
                    rec = json.loads((root / path).read_text(encoding="utf-8"))
                    if not isinstance(rec, dict) or rec.get("id") != sub_id:
                        raise ValueError("it is not this submission's record")
                    lacking = [k for k in _RECORD_KEYS if not isinstance(rec.get(k), _RECORD_KEYS[k])]
                    if lacking or isinstance(rec["version"], bool):
                        raise ValueError(f"fields missing or of the wrong type: {', '.join(lacking) or 'version'}")
                    parquet = (root / f"predictions/{sub_id}.parquet").read_bytes()
                    npz = root / f"per_example/{sub_id}.npz"
                    per = npz.read_bytes() if npz.is_file() else (rescore(rec, parquet) if rescore else None)
                    if per is None:
                        raise ValueError("no per-item values and no way to re-score them")
                    subs.append({**rec, "file": parquet, "per_example": per, "repo_path": path})
                except Exception as exc:  # noqa: BLE001 (one unreadable record must not stop the others)
                    counts["unreadable"] += 1
                    log.error("mirror record %s could not be restored: %s", path, exc)
            for path in tombs:
                try:
                    t = json.loads((root / path).read_text(encoding="utf-8"))
                    tombstones.append({**t, "repo_path": path})
                except Exception as exc:  # noqa: BLE001
                    counts["unreadable"] += 1
                    log.error("mirror tombstone %s could not be read: %s", path, exc)
        counts.update(store.restore(subs, tombstones))
        return counts
