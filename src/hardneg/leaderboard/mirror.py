"""Mirror the store to a Hub results dataset repo, append-only, through `huggingface_hub`.

The local SQLite store stays the source of truth; the mirror gets one commit per
submission (its results JSON and the submitted Parquet, under the generated id) and
one file per tombstone, never an edit of an existing file. `sync` pushes whatever has
not been mirrored yet, so a Hub outage only delays the mirror.
"""

from __future__ import annotations

import json
import uuid

from hardneg.leaderboard.store import Store, StoredSubmission

DEFAULT_RESULTS_REPO = "video-hardneg/leaderboard-results"


def submission_record(sub: StoredSubmission) -> dict:
    """What the mirror stores about one submission (everything but the file bytes)."""
    return {
        "id": sub.id, "model_id": sub.model_id, "submitter": sub.submitter, "benchmark": sub.benchmark,
        "config": sub.config, "split": sub.split, "version": sub.version, "data_revision": sub.data_revision,
        "metadata": sub.metadata, "results": sub.results, "file_sha256": sub.file_sha256, "created_at": sub.created_at,
    }


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
        self._commit(
            {
                record_path: json.dumps(submission_record(sub), indent=1, sort_keys=True).encode(),
                f"predictions/{sub.id}.parquet": store.file_bytes(sub.id),
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
