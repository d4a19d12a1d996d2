"""Hub boundary: the mirror's commits (captured by a fake HfApi) and the `.eval_results` export."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from huggingface_hub import CommitOperationAdd

from hardneg.leaderboard import Leaderboard
from hardneg.leaderboard.example import predictions_bytes
from helpers import ALICE, FakeHub
from hardneg.leaderboard.mirror import HubMirror, PublishPolicy, record_path

FEINT = ("feint6k", "msrvtt", "test")


FakeHfApi = FakeHub  # the local stand-in for the Hub API (helpers.py)


def test_mirror_pushes_each_submission_append_only(tmp_path, item_sets, monkeypatch):
    monkeypatch.setenv("HARDNEG_ADMIN_TOKEN", "tok")
    api = FakeHfApi()
    board = Leaderboard(tmp_path, item_sets, n_resamples=50, compute_blind=False,
                        mirror=HubMirror("org/results", api=api, policy=PublishPolicy(tries=2, backoff_s=0.01)))
    data = predictions_bytes(item_sets[FEINT], "org/m", seed=1)
    sub = board.submit(data, ALICE).submission
    assert api.repos == [("org/results", "dataset", True)]
    (commit,) = api.commits
    assert commit["repo_type"] == "dataset" and "org/m v1" in commit["message"]
    ops = {op.path_in_repo: op for op in commit["ops"]}
    assert all(isinstance(op, CommitOperationAdd) for op in ops.values())
    path = record_path("feint6k", "msrvtt", "test", "org/m", 1, sub.id)
    assert set(ops) == {path, f"predictions/{sub.id}.parquet", f"per_example/{sub.id}.npz"}
    record = json.loads(ops[path].path_or_fileobj)
    assert record["results"]["metrics"]["R@1"] == sub.results["metrics"]["R@1"] and record["version"] == 1
    published = pq.read_table(pa.BufferReader(ops[f"predictions/{sub.id}.parquet"].path_or_fileobj))
    assert published.equals(pq.read_table(pa.BufferReader(data)))  # the same rows; metadata without local paths
    assert record["file_sha256"] == sub.file_sha256 and record["published_file_sha256"]
    # a Hub outage: nothing is acknowledged, stored or numbered that the repo does not hold (issue 42, N12)
    api.fail = True
    late = board.submit(predictions_bytes(item_sets[FEINT], "org/m", seed=2), ALICE)
    assert not late.ok and "did not confirm" in late.message and "nothing was stored" in late.message
    assert board.store.count() == 1
    api.fail = False
    late = board.submit(predictions_bytes(item_sets[FEINT], "org/m", seed=2), ALICE)
    assert late.ok and late.submission.version == 2 and board.store.unmirrored() == []
    board.moderate("tok", sub.id, "hide", "test")
    tomb = api.commits[-1]["ops"][0]
    assert tomb.path_in_repo == f"tombstones/{sub.id}/000001.json"  # the first moderation of that submission
    body = json.loads(tomb.path_or_fileobj)
    assert {k: body[k] for k in ("submission_id", "action", "reason")} == {"submission_id": sub.id, "action": "hide",
                                                                           "reason": "test"}
    assert body["created_at"] and "seq" not in body  # order comes from the repo's commit history (issue 49)
    paths = [op.path_in_repo for c in api.commits for op in c["ops"]]
    assert len(paths) == len(set(paths))  # never rewrites a file


def test_eval_results_yaml_format(board):
    items = board.item_sets[FEINT]
    sub = board.submit(predictions_bytes(items, "org/m", seed=1), ALICE).submission
    files = board.eval_results("org/m")
    assert list(files) == [".eval_results/hardneg-feint6k.yaml"]
    entries = yaml.safe_load(files[".eval_results/hardneg-feint6k.yaml"])
    by_task = {e["dataset"]["task_id"]: e for e in entries}
    assert isinstance(entries, list) and {"msrvtt/test/R@1", "msrvtt/test/R@2", "msrvtt/test/MeanR"} <= set(by_task)
    e = by_task["msrvtt/test/R@1"]
    assert set(e) == {"dataset", "value", "date", "source", "notes"}
    assert e["dataset"]["id"] == "video-hardneg/feint6k"
    # a machine output: the fraction itself (issue 27 item 8), never percent; ranks as ranks
    assert e["value"] == round(sub.results["metrics"]["R@1"]["estimate"], 6) and 0 <= e["value"] <= 1
    assert all(0 <= x["value"] <= 1 for t, x in by_task.items() if not t.endswith(("MeanR", "MedianR")))
    assert e["notes"].startswith("fraction;")
    assert set(e["source"]) == {"url", "name"} and e["date"] == sub.created_at[:10]
    assert e["source"]["url"] == "https://huggingface.co/spaces/video-hardneg/leaderboard"
    assert "interval" in e["notes"] and sub.data_revision in e["notes"]
    assert by_task["msrvtt/test/MeanR"]["value"] == round(sub.results["metrics"]["MeanR"]["estimate"], 6)


def test_eval_results_name_their_real_source(board, monkeypatch):
    """A local board's result does not claim the public Space; a Space names itself (SPACE_ID)."""
    from hardneg.leaderboard.identity import local_identity

    items = board.item_sets[FEINT]
    assert board.submit(predictions_bytes(items, "local/mine", seed=2), local_identity("me")).ok
    (entry, *_) = yaml.safe_load(board.eval_results("local/mine")[".eval_results/hardneg-feint6k.yaml"])
    assert "url" not in entry["source"] and "local" in entry["source"]["name"]
    assert "huggingface.co" not in json.dumps(entry["source"])
    assert board.submit(predictions_bytes(items, "org/theirs", seed=3), ALICE).ok
    monkeypatch.setenv("SPACE_ID", "someone/board-copy")
    (entry, *_) = yaml.safe_load(board.eval_results("org/theirs")[".eval_results/hardneg-feint6k.yaml"])
    assert entry["source"]["url"] == "https://huggingface.co/spaces/someone/board-copy"


def test_uploaded_bytes_are_stored_under_generated_ids(board):
    """The store holds the file in the database; no uploaded name ever reaches the file system."""
    items = board.item_sets[FEINT]
    before = sorted(p.name for p in board.store.data_dir.iterdir())
    board.submit(predictions_bytes(items, "../../etc/passwd", seed=1), ALICE)  # refused: invalid name
    out = board.submit(predictions_bytes(items, "org/m", seed=1), ALICE)
    after = sorted(p.name for p in board.store.data_dir.iterdir())
    assert set(after) - set(before) <= {"leaderboard.sqlite-wal", "leaderboard.sqlite-shm"}
    assert len(out.submission.id) == 32 and all(c in "0123456789abcdef" for c in out.submission.id)
    table = pq.read_table(pa.BufferReader(board.store.file_bytes(out.submission.id)))
    assert table.num_rows == len(items)


def test_nothing_machine_local_is_published(tmp_path, item_sets):
    """The dataset folder, a local model folder and paths inside messages never reach the store's metadata, the
    mirror's record or the published Parquet."""
    api = FakeHfApi()
    board = Leaderboard(tmp_path, item_sets, n_resamples=20, mirror=HubMirror("org/results", api=api), compute_blind=False)
    local = ["/home/alice/built/feint6k", "/home/alice/ckpt/clip", "C:\\Users\\alice\\v1.mp4", "~/videos/v2.mp4"]
    data = predictions_bytes(item_sets[FEINT], "org/m", seed=1, dataset_path=local[0], hub_id="video-hardneg/feint6k",
                             model={"name": local[1], "revision": None},
                             videos={"ok": 7, "unreadable_ids": {"v1": f"cannot open {local[2]}: EOF",
                                                                 "v2": f"{local[3]} is empty"}})
    sub = board.submit(data, ALICE).submission
    ops = {op.path_in_repo: op.path_or_fileobj for op in api.commits[0]["ops"]}
    record = ops[record_path("feint6k", "msrvtt", "test", "org/m", 1, sub.id)].decode()
    published = pq.read_schema(pa.BufferReader(ops[f"predictions/{sub.id}.parquet"])).metadata[b"hardneg"].decode()
    stored = json.dumps(board.store.get(sub.id).metadata)
    for text in (record, published, stored):
        assert not any(p in text or p.replace("\\", "\\\\") in text for p in local), text
        assert "alice/" not in text.replace("org/m", "") and "Users" not in text
        assert "video-hardneg/feint6k" in text and "<local path>" in text  # Hub ids stay; paths are marked
    assert "dataset_path" not in json.loads(record)["metadata"]
