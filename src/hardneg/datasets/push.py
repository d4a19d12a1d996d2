"""Upload a built repo folder to the Hugging Face Hub as one commit.

Uses the user's token (argument, `HF_TOKEN`, or `hf auth login`) through
`huggingface_hub.HfApi`: `create_repo(..., repo_type="dataset", exist_ok=True)`
then `create_commit` with one `CommitOperationAdd` per file and a
`CommitOperationDelete` for stale data files of an earlier build.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def commit_operations(folder: str | Path, existing: list[str] | None = None) -> list:
    """The operations that make the repo equal to `folder` (sorted, hidden files skipped)."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    root = Path(folder)
    if not (root / "README.md").exists():
        raise FileNotFoundError(f"{root} has no README.md; build it first with `hardneg build <benchmark> --out {root}`")
    files = sorted(p for p in root.rglob("*") if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts))
    rel = [p.relative_to(root).as_posix() for p in files]
    ops: list = [CommitOperationAdd(path_in_repo=r, path_or_fileobj=str(p)) for r, p in zip(rel, files)]
    keep = set(rel)
    for old in sorted(existing or []):
        if old not in keep and (old.endswith(".parquet") or old == "build_report.json"):
            ops.append(CommitOperationDelete(path_in_repo=old))
    return ops


def push_folder(
    folder: str | Path,
    repo_id: str,
    *,
    token: str | None = None,
    private: bool = False,
    revision: str | None = None,
    commit_message: str | None = None,
    api: Any = None,
):
    """Create the dataset repo if needed and upload `folder` in one commit; returns the CommitInfo."""
    if "/" not in repo_id:
        raise ValueError(f"--push {repo_id!r}: give the repo as <owner>/<name>, e.g. video-hardneg/feint6k")
    commit_operations(folder)  # refuse a folder that was not built before touching the Hub
    if api is None:
        from huggingface_hub import HfApi

        api = HfApi(token=token)
    api.create_repo(repo_id=repo_id, repo_type="dataset", private=private, exist_ok=True)
    from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError

    try:
        existing = api.list_repo_files(repo_id=repo_id, repo_type="dataset", revision=revision)
    except (RepositoryNotFoundError, RevisionNotFoundError):  # a new branch has nothing to delete
        existing = []
    ops = commit_operations(folder, existing)
    return api.create_commit(
        repo_id=repo_id,
        repo_type="dataset",
        operations=ops,
        commit_message=commit_message or f"Build {Path(folder).name} with video-hardneg",
        revision=revision,
    )
