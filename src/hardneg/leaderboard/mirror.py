"""Mirror the store to a Hub results dataset repo, append-only, through `huggingface_hub`.

The local SQLite store stays the source of truth; the mirror gets one commit per
submission (its results JSON and the submitted Parquet, under the generated id) and
one file per tombstone, never an edit of an existing file. `sync` pushes whatever has
not been mirrored yet, so a Hub outage only delays the mirror.

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
import re
import uuid
from typing import Any

from hardneg.leaderboard.store import Store, StoredSubmission

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
        "created_at": sub.created_at,
    }
    if published_sha256:
        record["published_file_sha256"] = published_sha256
    return record


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
            },
            f"Add {sub.model_id} v{sub.version} on {sub.benchmark}/{sub.config}/{sub.split}",
        )
        store.mark_mirrored(sub.id, record_path)
        return record_path

    def push_tombstone(self, submission_id: str, action: str, reason: str) -> str:
        path = f"tombstones/{uuid.uuid4().hex}.json"
        body = {"submission_id": submission_id, "action": action, "reason": reason}
        self._commit({path: json.dumps(body, sort_keys=True).encode()}, f"{action} submission {submission_id}")
        return path

    def sync(self, store: Store) -> int:
        """Push every submission not yet mirrored; returns how many were pushed."""
        pending = store.unmirrored()
        for sub in pending:
            self.push_submission(store, sub)
        return len(pending)
