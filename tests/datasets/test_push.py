"""Upload tested at the huggingface_hub boundary: the repo and commit operations that would be sent."""

from __future__ import annotations

import pytest

hub = pytest.importorskip("huggingface_hub")

from hardneg.datasets import build_benchmark, sample_raw_dir  # noqa: E402
from hardneg.datasets.push import push_folder  # noqa: E402


class FakeHfApi:
    """Records what HfApi would send; `existing` plays the files of an earlier build."""

    def __init__(self, existing=None, missing_repo=False):
        self.calls = []
        self.existing = existing or []
        self.missing_repo = missing_repo

    def create_repo(self, **kwargs):
        self.calls.append(("create_repo", kwargs))
        return f"https://huggingface.co/datasets/{kwargs['repo_id']}"

    def list_repo_files(self, **kwargs):
        self.calls.append(("list_repo_files", kwargs))
        if self.missing_repo:
            from huggingface_hub.errors import RevisionNotFoundError

            class Missing(RevisionNotFoundError):
                def __init__(self):  # the real one wants an HTTP response
                    Exception.__init__(self, "no such revision")

            raise Missing()
        return list(self.existing)

    def create_commit(self, **kwargs):
        self.calls.append(("create_commit", kwargs))
        return "commit-info"


def test_push_sends_one_commit_with_every_file(tmp_path):
    out = build_benchmark("feint6k", sample_raw_dir("feint6k"), tmp_path / "out").out
    api = FakeHfApi(existing=["README.md", "msrvtt/old-00000-of-00001.parquet", ".gitattributes"])
    assert push_folder(out, "video-hardneg/feint6k", api=api, private=True) == "commit-info"
    names = [c[0] for c in api.calls]
    assert names == ["create_repo", "list_repo_files", "create_commit"]
    create = api.calls[0][1]
    assert create == {"repo_id": "video-hardneg/feint6k", "repo_type": "dataset", "private": True, "exist_ok": True}
    commit = api.calls[2][1]
    assert commit["repo_id"] == "video-hardneg/feint6k" and commit["repo_type"] == "dataset"
    adds = [op for op in commit["operations"] if isinstance(op, hub.CommitOperationAdd)]
    deletes = [op for op in commit["operations"] if isinstance(op, hub.CommitOperationDelete)]
    assert [op.path_in_repo for op in adds] == [
        "README.md",
        "build_report.json",
        "msrvtt/test-00000-of-00001.parquet",
        "vatex/test-00000-of-00001.parquet",
    ]
    assert [op.path_in_repo for op in deletes] == ["msrvtt/old-00000-of-00001.parquet"]  # README, .gitattributes kept
    for op in adds:
        assert (out / op.path_in_repo).read_bytes() == open(op.path_or_fileobj, "rb").read()


def test_push_to_new_branch_and_bad_repo_id(tmp_path):
    out = build_benchmark("posrank", sample_raw_dir("posrank"), tmp_path / "out").out
    api = FakeHfApi(missing_repo=True)
    push_folder(out, "me/posrank", api=api, revision="v1")
    commit = api.calls[-1][1]
    assert commit["revision"] == "v1"
    assert not [op for op in commit["operations"] if isinstance(op, hub.CommitOperationDelete)]
    with pytest.raises(ValueError, match="<owner>/<name>"):
        push_folder(out, "posrank", api=FakeHfApi())


def test_push_refuses_a_folder_that_was_not_built(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="README.md"):
        push_folder(tmp_path / "empty", "me/x", api=FakeHfApi())
