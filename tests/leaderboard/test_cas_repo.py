"""The results repo as the one truth for versions (issue 49): compare-and-swap commits (`parent_commit`), ids and
paths derived from what a record is, order from the commit history. Each test plays one finding of the issue
(N23-N27, N30) against the stand-in for the Hub (fakehub.FakeHub: commit history, 412 on a moved head, late
landings, a lagging `file_exists`)."""

from __future__ import annotations

import json
import threading

import pytest

from hardneg.leaderboard import Leaderboard
from hardneg.leaderboard.example import predictions_bytes
from hardneg.leaderboard.mirror import HubMirror, PublishPolicy, tombstone_path
from helpers import ALICE, FakeHub

FEINT = ("feint6k", "msrvtt", "test")
REPO = "org/results"


@pytest.fixture(autouse=True)
def _admin(monkeypatch):
    monkeypatch.setenv("HARDNEG_ADMIN_TOKEN", "tok")
    monkeypatch.setattr(Leaderboard, "restore_retry_s", (0.2, 0.5))


def board_on(path, item_sets, hub, tries=3) -> Leaderboard:
    return Leaderboard(path, item_sets, n_resamples=20, compute_blind=False,
                       mirror=HubMirror(REPO, api=hub, policy=PublishPolicy(tries=tries, backoff_s=0.01)))


def records(hub) -> list[dict]:
    return [json.loads(d) for p, d in hub.files[REPO].items() if p.startswith("submissions/") and p.endswith(".json")]


def versions(hub, model="org/m") -> list[int]:
    return sorted(r["version"] for r in records(hub) if r["model_id"] == model)


def data(item_sets, seed, model="org/m"):
    return predictions_bytes(item_sets[FEINT], model, seed=seed)


def stored(out) -> bool:
    return out.ok and out.message.startswith("stored")


def test_the_stand_in_refuses_a_moved_parent_as_the_hub_does():
    """huggingface_hub raises HfHubHTTPError with status 412 ("A commit has happened since") when the branch moved
    from `parent_commit`; the stand-in does the same, and keeps a history newest first."""
    from huggingface_hub import CommitOperationAdd
    from huggingface_hub.errors import HfHubHTTPError

    hub = FakeHub()
    hub.create_repo(REPO, repo_type="dataset")
    first = hub.list_repo_commits(REPO, repo_type="dataset")[0].commit_id
    hub.create_commit(REPO, [CommitOperationAdd(path_in_repo="a", path_or_fileobj=b"1")], "a", parent_commit=first)
    with pytest.raises(HfHubHTTPError) as err:
        hub.create_commit(REPO, [CommitOperationAdd(path_in_repo="b", path_or_fileobj=b"2")], "b", parent_commit=first)
    assert err.value.response.status_code == 412 and "A commit has happened since" in str(err.value)
    assert [c.title for c in hub.list_repo_commits(REPO, repo_type="dataset")] == ["a", "initial commit"]


def test_n24_two_replicas_never_take_the_same_version(tmp_path, item_sets):
    """Two boards on one repo, sequential calls (N24: both numbered v1 on their own)."""
    hub = FakeHub()
    a, b = board_on(tmp_path / "a", item_sets, hub), board_on(tmp_path / "b", item_sets, hub)
    outs = [x.submit(data(item_sets, k), ALICE) for k, x in enumerate([a, b, a, b])]
    assert all(stored(o) for o in outs) and [o.submission.version for o in outs] == [1, 2, 3, 4]
    assert versions(hub) == [1, 2, 3, 4]
    # a hide on one replica and a restore on the other, in turn: both in the repo, the last one wins everywhere
    sub = outs[0].submission
    assert "hide: 1" in b.moderate("tok", sub.id, "hide", "spam")
    assert "restore: 1" in a.moderate("tok", sub.id, "restore", "fine")
    assert sorted(p for p in hub.files[REPO] if p.startswith(f"tombstones/{sub.id}/")) == [
        tombstone_path(sub.id, 1), tombstone_path(sub.id, 2)]
    wiped = board_on(tmp_path / "c", item_sets, hub)
    assert wiped.store.get(sub.id).state == "visible" and wiped.store.count() == 4


def test_n24_two_replicas_at_the_same_moment(tmp_path, item_sets):
    """Eight submissions of one model through two replicas at once, each commit slowed: versions 1-8 once each."""
    hub = FakeHub(delay=0.02)
    boards = [board_on(tmp_path / n, item_sets, hub, tries=5) for n in "ab"]
    files = [data(item_sets, k) for k in range(8)]
    outs = [None] * 8

    def send(k):
        outs[k] = boards[k % 2].submit(files[k], ALICE)

    threads = [threading.Thread(target=send, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(stored(o) for o in outs), [o.message for o in outs if not stored(o)]
    assert sorted(o.submission.version for o in outs) == list(range(1, 9)) and versions(hub) == list(range(1, 9))


def test_n23_a_late_landing_is_reconciled_never_lost_or_reused(tmp_path, item_sets):
    """The client times out while the Hub goes on, and the commit lands after the board gave up: the submitter is
    never told "nothing was stored"; the version is not reused; a wiped restart holds it once."""
    hub = FakeHub(late_rate=1.0, late_s=0.3)
    board = board_on(tmp_path / "a", item_sets, hub, tries=1)
    out = board.submit(data(item_sets, 1), ALICE)
    assert not out.ok and "may still land" in out.message and "nothing was stored" not in out.message
    for t in hub.late_threads:
        t.join()
    hub.late_rate = 0.0
    again = board.submit(data(item_sets, 1), ALICE)  # the same file again: it landed late
    assert again.ok and again.message.startswith("already stored") and again.submission.version == 1
    nxt = board.submit(data(item_sets, 2), ALICE)
    assert stored(nxt) and nxt.submission.version == 2 and versions(hub) == [1, 2]
    wiped = board_on(tmp_path / "b", item_sets, hub)
    assert sorted(s.version for s in wiped.store.all_submissions()) == [1, 2]


def test_n23_a_commit_that_can_no_longer_land_is_refused_and_its_version_reused_safely(tmp_path, item_sets):
    """A timed-out commit whose parent is gone (another writer committed meanwhile) can never land: the board
    retries on the new head and acknowledges once."""
    hub = FakeHub(late_rate=1.0, late_s=0.4)
    a, b = board_on(tmp_path / "a", item_sets, hub, tries=3), board_on(tmp_path / "b", item_sets, FakeHub())
    b.mirror.api = hub  # the same repo, a reliable client
    done = {}
    t = threading.Thread(target=lambda: done.setdefault("a", a.submit(data(item_sets, 1), ALICE)))
    t.start()
    hub.late_rate = 0.5
    t.join()
    for th in hub.late_threads:
        th.join()
    out = done["a"]
    if out.ok:
        assert versions(hub).count(out.submission.version) == 1
    assert len(versions(hub)) == len(set(versions(hub)))
    assert [r["id"] for r in records(hub)].count(out.submission.id if out.ok else "") <= 1


def test_a_lagging_file_exists_is_not_asked(tmp_path, item_sets):
    """file_exists lags seconds behind a commit on the Hub: a lost reply is reconciled from the commit history."""
    hub = FakeHub(lag_s=60)
    board = board_on(tmp_path / "a", item_sets, hub)
    real = hub.create_commit
    lost = {"n": 1}

    def commit_then_lose_reply(*a, **kw):
        info = real(*a, **kw)
        if lost["n"]:
            lost["n"] -= 1
            raise ConnectionError("reply lost")
        return info

    hub.create_commit = commit_then_lose_reply
    out = board.submit(data(item_sets, 1), ALICE)
    assert stored(out) and out.submission.version == 1 and versions(hub) == [1]
    assert stored(board.submit(data(item_sets, 2), ALICE)) and versions(hub) == [1, 2]


def test_n23_a_late_tombstone_is_never_called_refused(tmp_path, item_sets):
    hub = FakeHub()
    board = board_on(tmp_path / "a", item_sets, hub, tries=1)
    sub = board.submit(data(item_sets, 1), ALICE).submission
    hub.late_rate, hub.late_s = 1.0, 0.3
    msg = board.moderate("tok", sub.id, "hide", "spam")
    assert "may still land" in msg and "not applied" not in msg.split("\n")[0]
    for t in hub.late_threads:
        t.join()
    hub.late_rate = 0.0
    again = board.moderate("tok", sub.id, "hide", "spam")  # the moderator tries again: one tombstone
    assert again.startswith("hide: 1") and "already" in again
    assert [p for p in hub.files[REPO] if p.startswith("tombstones/")] == [tombstone_path(sub.id, 1)]
    assert board_on(tmp_path / "b", item_sets, hub).store.get(sub.id).state == "hide"


def test_n26_a_repeated_hide_stores_one_tombstone(tmp_path, item_sets):
    hub = FakeHub()
    board = board_on(tmp_path / "a", item_sets, hub)
    sub = board.submit(data(item_sets, 1), ALICE).submission
    for _ in range(3):
        assert board.moderate("tok", sub.id, "hide", "spam").startswith("hide: 1")
    assert [p for p in hub.files[REPO] if p.startswith("tombstones/")] == [tombstone_path(sub.id, 1)]


def test_n25_a_broken_record_keeps_the_version_its_path_names(tmp_path, item_sets):
    hub = FakeHub()
    board = board_on(tmp_path / "a", item_sets, hub)
    first = board.submit(data(item_sets, 1), ALICE).submission
    path = next(p for p in hub.files[REPO] if p.endswith(f"/{first.id}.json"))
    hub.put(REPO, path, b"{ not json")  # too broken to name anything inside
    wiped = board_on(tmp_path / "b", item_sets, hub)
    assert wiped.restored["unreadable"] == 1 and path in dict(map(tuple, wiped.mirror_status()["skipped"]))
    nxt = wiped.submit(data(item_sets, 2), ALICE)
    assert stored(nxt) and nxt.submission.version == 2  # v1 stays taken by the broken record
    hub.put(REPO, path, json.dumps({"fixed": False}).encode())  # still broken; v1 still reserved
    assert board_on(tmp_path / "c", item_sets, hub).submit(data(item_sets, 3), ALICE).submission.version == 3


def test_n27_forged_seq_and_submitter_are_ignored_or_refused_and_named(tmp_path, item_sets):
    hub = FakeHub()
    board = board_on(tmp_path / "a", item_sets, hub)
    sub = board.submit(data(item_sets, 1, "alice/m"), ALICE).submission
    board.moderate("tok", sub.id, "hide", "spam")
    # a writer with write access adds a "restore" that claims to come first (seq 0... 1), then a hide claiming seq 99
    hub.put(REPO, tombstone_path(sub.id, 2), json.dumps({"submission_id": sub.id, "action": "restore", "reason": "x",
                                                         "seq": 99}).encode())
    hub.put(REPO, tombstone_path(sub.id, 3), json.dumps({"submission_id": sub.id, "action": "hide", "reason": "y",
                                                         "seq": 1}).encode())
    # a record by mallory under alice/: the file is valid, the namespace is not hers
    mallory = predictions_bytes(item_sets[FEINT], "alice/m", seed=9)
    forged = board_on(tmp_path / "m", item_sets, FakeHub())  # makes a genuine-looking record elsewhere
    out = forged.submit(mallory, "mallory")
    assert not out.ok  # the live board refuses it: the namespace is alice's
    rec_src = json.loads(next(d for p, d in hub.files[REPO].items() if p.endswith(f"/{sub.id}.json")))
    from hardneg.leaderboard.mirror import derive_id, record_path

    sha = rec_src["file_sha256"]
    fake_id = derive_id("alice/m", "feint6k", "msrvtt", "test", "0" * 64)
    fake = {**rec_src, "id": fake_id, "submitter": "mallory", "version": 2, "file_sha256": "0" * 64}
    fake_path = record_path("feint6k", "msrvtt", "test", "alice/m", 2, fake_id)
    hub.put(REPO, fake_path, json.dumps(fake).encode())
    hub.put(REPO, f"predictions/{fake_id}.parquet", hub.files[REPO][f"predictions/{sub.id}.parquet"])
    assert sha
    wiped = board_on(tmp_path / "b", item_sets, hub)
    # order is the commit history: hide (1), restore (2), hide (3): hidden, whatever the seq fields say
    assert wiped.store.get(sub.id).state == "hide"
    skipped = dict(map(tuple, wiped.mirror_status()["skipped"]))
    assert "mallory" in skipped[fake_path] and "does not own" in skipped[fake_path]
    assert "seq" in skipped[tombstone_path(sub.id, 3)]
    assert fake_id not in wiped.store.ids()
    # the next genuine submission does not take mallory's v2 (its path reserves it) nor any other
    assert wiped.submit(data(item_sets, 2, "alice/m"), ALICE).submission.version == 3


def test_n30_a_slow_hub_commits_waiting_submissions_together(tmp_path, item_sets):
    """Five submissions at once through a slow Hub (every call 0.3 s): they share commits instead of queueing one
    commit each behind one lock, and the page says how many wait."""
    hub = FakeHub()
    board = board_on(tmp_path / "a", item_sets, hub)
    assert stored(board.submit(data(item_sets, 0), ALICE))
    hub.delay = 0.3
    before = len(hub.commits)
    seen = []
    outs = [None] * 5

    def send(k):
        outs[k] = board.submit(data(item_sets, k + 1, f"org/m{k}"), ALICE)

    threads = [threading.Thread(target=send, args=(k,)) for k in range(5)]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        seen.append(board.mirror_status()["waiting"])
        threads[0].join(0.05)
    for t in threads:
        t.join()
    assert all(stored(o) for o in outs)
    assert len(hub.commits) - before <= 3, "each submission made its own commit, one after another"
    assert max(seen) >= 2 and "waiting for the Hub" in _line_with_waiting(board)


def _line_with_waiting(board) -> str:
    board.writer._in_flight = 3  # the footer as a page sees it while three wait
    try:
        return board.status_line()
    finally:
        board.writer._in_flight = 0
