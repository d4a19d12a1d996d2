"""The Hub results repo as a real source of truth (issue 42): nothing acknowledged is lost, nothing forged comes
back, any repo restores. Each test plays one of the hostile cases of the issue (N12-N18, N22) against the local
stand-in for the Hub (fakehub.FakeHub: down, slow, unauthorised, malformed on demand, killed and restarted on the
same folder); each fails on the board before issue 42."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from hardneg.leaderboard import Leaderboard
from hardneg.leaderboard.example import predictions_bytes
from hardneg.leaderboard.mirror import HubMirror
from helpers import ALICE, BOB, FakeHub

FEINT = ("feint6k", "msrvtt", "test")
VATEX = ("feint6k", "vatex", "test")
REPO = "org/results"
HERE = Path(__file__).parent


def mirror(hub) -> HubMirror:
    m = HubMirror(REPO, api=hub)
    if hasattr(m, "policy"):
        from hardneg.leaderboard.mirror import PublishPolicy

        m.policy = PublishPolicy(tries=2, backoff_s=0.01)
    return m


def open_board(store, item_sets, hub) -> Leaderboard:
    return Leaderboard(store, item_sets, n_resamples=30, compute_blind=False, mirror=mirror(hub))


def records(hub) -> dict[str, dict]:
    return {p: json.loads(d) for p, d in hub.files.get(REPO, {}).items()
            if p.startswith("submissions/") and p.endswith(".json")}


def rpath(hub, sub_id: str) -> str:
    """The repo path of a submission's record (its layout names the model, part and version: issue 49)."""
    return next(p for p in hub.files[REPO] if p.startswith("submissions/") and p.endswith(f"/{sub_id}.json"))


def stored(out) -> bool:
    return out.ok and "stored" in out.message and "already" not in out.message


@pytest.fixture(autouse=True)
def _admin(monkeypatch):
    monkeypatch.setenv("HARDNEG_ADMIN_TOKEN", "tok")
    monkeypatch.setattr(Leaderboard, "restore_retry_s", (0.2, 0.5), raising=False)


# --- N12: an acknowledgement means the repo holds it ----------------------------------------------------------------
def test_n12_nothing_is_acknowledged_that_the_repo_lacks(tmp_path, item_sets):
    hub = FakeHub()
    board = open_board(tmp_path / "a", item_sets, hub)
    assert stored(board.submit(predictions_bytes(item_sets[FEINT], "org/m", seed=1), ALICE))
    hub.fail = True  # every push fails
    out = board.submit(predictions_bytes(item_sets[FEINT], "org/m", seed=2), ALICE)
    acked = [out] if stored(out) else []
    hub.fail = False
    # a Space without persistent storage restarts: whatever was acknowledged must come back
    board = open_board(tmp_path / "wiped", item_sets, hub)
    for o in acked:
        assert board.store.get(o.submission.id), "an acknowledged submission was lost"
    assert not acked and "did not confirm" in out.message and "nothing was stored" in out.message
    # the next submission is v2, and v2 is in the repo once
    nxt = board.submit(predictions_bytes(item_sets[FEINT], "org/m", seed=3), ALICE)
    assert stored(nxt) and nxt.submission.version == 2
    versions = sorted(r["version"] for r in records(hub).values() if r["model_id"] == "org/m")
    assert versions == [1, 2]


def test_n12_a_lost_reply_is_checked_not_repeated(tmp_path, item_sets):
    """The commit landed but its reply was lost: the board checks the repo, acknowledges once, stores once."""
    hub = FakeHub()
    board = open_board(tmp_path / "a", item_sets, hub)
    real = hub.create_commit
    lost = {"n": 1}

    def commit_then_lose_reply(*a, **kw):
        real(*a, **kw)
        if lost["n"]:
            lost["n"] -= 1
            raise ConnectionError("reply lost")

    hub.create_commit = commit_then_lose_reply
    out = board.submit(predictions_bytes(item_sets[FEINT], "org/m", seed=1), ALICE)
    assert stored(out) and len(records(hub)) == 1 and board.store.unmirrored() == []


def test_n12_a_moderation_goes_the_same_path(tmp_path, item_sets):
    hub = FakeHub()
    board = open_board(tmp_path / "a", item_sets, hub)
    sub = board.submit(predictions_bytes(item_sets[FEINT], "org/m", seed=1), ALICE).submission
    hub.fail = True
    msg = board.moderate("tok", sub.id, "hide", "spam")
    applied = board.store.get(sub.id).state == "hide"
    hub.fail = False
    wiped = open_board(tmp_path / "wiped", item_sets, hub)
    assert not applied or wiped.store.get(sub.id).state == "hide", "an applied moderation was lost"
    assert "not applied" in msg
    assert "hide: 1" in board.moderate("tok", sub.id, "hide", "spam")
    assert open_board(tmp_path / "wiped2", item_sets, hub).store.get(sub.id).state == "hide"


# --- N13: a Hub down at start ---------------------------------------------------------------------------------------
def test_n13_the_restore_is_retried_in_the_background(tmp_path, item_sets):
    hub = FakeHub()
    first = open_board(tmp_path / "a", item_sets, hub)
    sub = first.submit(predictions_bytes(item_sets[FEINT], "org/m", seed=1), ALICE).submission
    hub.fail = True
    board = open_board(tmp_path / "b", item_sets, hub)
    assert board.store.count() == 0
    out = board.submit(predictions_bytes(item_sets[FEINT], "org/m", seed=2), ALICE)
    assert not out.ok
    status = board.mirror_status()["restore"] if hasattr(board, "mirror_status") else ""
    hub.fail = False  # the Hub comes back; nobody submits
    deadline = time.time() + 20
    while board.store.count() == 0 and time.time() < deadline:
        time.sleep(0.1)
    getattr(board, "close", lambda: None)()
    assert [s.id for s in board.store.all_submissions()] == [sub.id]
    assert "restoring" in status and "being restored" in out.message  # the page and the refusal say why
    assert board.mirror_status()["restore"] == "restored" and "restored" in board.status_line()


# --- N14: 401/403 is not "no repo yet" ------------------------------------------------------------------------------
@pytest.mark.parametrize("status", [401, 403])
def test_n14_an_unreadable_repo_never_becomes_an_empty_one(tmp_path, item_sets, status):
    hub = FakeHub()
    first = open_board(tmp_path / "a", item_sets, hub)
    assert stored(first.submit(predictions_bytes(item_sets[FEINT], "alice/m", seed=1), ALICE))
    hub.unauthorised = status  # a private repo, read without a valid token
    board = open_board(tmp_path / "b", item_sets, hub)
    out = board.submit(predictions_bytes(item_sets[FEINT], "alice/m", seed=2), ALICE)
    getattr(board, "close", lambda: None)()
    hub.unauthorised = None
    v1 = [r for r in records(hub).values() if r["model_id"] == "alice/m" and r["version"] == 1]
    assert len(v1) == 1, "the repo holds two alice/m v1 records"
    assert not out.ok and "being restored" in out.message
    assert "token" in board.mirror_status()["restore"]


def test_n14_a_missing_repo_with_an_accepted_token_is_a_new_board(tmp_path, item_sets):
    hub = FakeHub()
    board = open_board(tmp_path / "a", item_sets, hub)
    assert board.restored.get("submissions") == 0 and board.mirror_status()["restore"] == "restored"
    assert stored(board.submit(predictions_bytes(item_sets[FEINT], "alice/m", seed=1), ALICE))


# --- N15 and N17: restore what can be restored, through the guards ----------------------------------------------------
def _filled(tmp_path, item_sets):
    hub = FakeHub()
    board = open_board(tmp_path / "a", item_sets, hub)
    subs = [board.submit(predictions_bytes(item_sets[FEINT], "org/m", seed=s), ALICE).submission for s in (1, 2)]
    subs.append(board.submit(predictions_bytes(item_sets[VATEX], "bob/x", seed=3), BOB).submission)
    return hub, board, subs


def test_n15_malformed_records_are_skipped_counted_and_named(tmp_path, item_sets, capsys):
    hub, board, subs = _filled(tmp_path, item_sets)
    path = rpath(hub, subs[1].id)
    rec = json.loads(hub.files[REPO][path])
    hub.put(REPO, path, json.dumps({**rec, "version": 2**63}).encode())  # OverflowError before
    hub.put(REPO, "tombstones/listid.json", json.dumps({"submission_id": [subs[0].id], "action": "hide"}).encode())
    hub.put(REPO, "tombstones/noaction.json", json.dumps({"submission_id": subs[0].id}).encode())
    hub.put(REPO, "tombstones/notjson.json", b"{nope")
    hub.put(REPO, "submissions/feint6k/" + "f" * 32 + ".json", b"[1, 2]")
    fresh = open_board(tmp_path / "b", item_sets, hub)
    assert {s.id for s in fresh.store.all_submissions()} == {subs[0].id, subs[2].id}
    report = fresh.mirror_status()
    assert report["restore"] == "restored" and report["restored"]["unreadable"] == 5
    named = {p for p, _ in report["skipped"]}
    assert {path, "tombstones/listid.json", "tombstones/noaction.json", "tombstones/notjson.json"} <= named
    assert "5 record(s)" in fresh.status_line()
    from hardneg.cli import main as hardneg_main

    assert hardneg_main(["leaderboard", "status", "--data", str(tmp_path / "b")]) == 1
    printed = capsys.readouterr().out
    assert f"skipped: {path}" in printed and "tombstones/listid.json" in printed and "outbox: 0 submission(s)" in printed
    # the board takes submissions again (before, it refused every one until someone edited the repo)
    out = fresh.submit(predictions_bytes(item_sets[FEINT], "org/m", seed=4), ALICE)
    assert stored(out) and out.submission.version == 3  # the v2 record says 2**63, but its path names v2 (N25)
    # a record that cannot be restored keeps the number its path names: no new version takes it
    rec = json.loads(hub.files[REPO][rpath(hub, out.submission.id)])
    hub.put(REPO, rpath(hub, out.submission.id), json.dumps({**rec, "file_sha256": "x"}).encode())
    again = open_board(tmp_path / "c", item_sets, hub)
    nxt = again.submit(predictions_bytes(item_sets[FEINT], "org/m", seed=5), ALICE)
    assert stored(nxt) and nxt.submission.version == 4


def test_n17_forged_scores_names_and_submitters_never_come_back(tmp_path, item_sets):
    hub, board, subs = _filled(tmp_path, item_sets)
    genuine = board.store.get(subs[0].id).results
    path = rpath(hub, subs[0].id)
    rec = json.loads(hub.files[REPO][path])
    forged = json.loads(json.dumps(rec))
    for m in forged["results"]["metrics"].values():
        m["estimate"] = 0.999
    hub.put(REPO, path, json.dumps(forged).encode())
    for k, (field, value) in enumerate([("model_id", "org/m\u202egnp.exe"), ("submitter", "<script>x</script>"),
                                        ("submitter", "alice\u200b")]):
        sid = f"{k:032x}"
        hub.put(REPO, f"submissions/feint6k/{sid}.json", json.dumps({**rec, "id": sid, field: value,
                                                                     "version": 10 + k}).encode())
        hub.put(REPO, f"predictions/{sid}.parquet", hub.files[REPO][f"predictions/{subs[0].id}.parquet"])
    fresh = open_board(tmp_path / "b", item_sets, hub)
    assert fresh.store.get(subs[0].id).results == genuine  # recomputed from the file, not read from the record
    assert fresh.store.count() == 3 and fresh.restored["unreadable"] == 3
    table = fresh.table("feint6k").to_csv()
    assert "0.999" not in table and "99.9" not in table and "script" not in table


def test_n17_order_is_the_commit_history_not_the_clock(tmp_path, item_sets):
    """A clock stepped back between a hide and its undo must not reorder them; duplicates are counted and named."""
    hub, board, subs = _filled(tmp_path, item_sets)
    board.moderate("tok", subs[0].id, "hide", "first")
    board.moderate("tok", subs[0].id, "restore", "second")
    board.moderate("tok", subs[0].id, "hide", "third, with the clock stepped back")
    last = f"tombstones/{subs[0].id}/000003.json"  # the third moderation of that submission
    tomb = json.loads(hub.files[REPO][last])
    hub.put(REPO, last, json.dumps({**tomb, "created_at": "2001-01-01T00:00:00.000+00:00"}).encode())
    # the same submission's record a second time, under another folder
    path = rpath(hub, subs[0].id)
    hub.put(REPO, f"submissions/contrast_sets/{subs[0].id}.json", hub.files[REPO][path])
    fresh = open_board(tmp_path / "b", item_sets, hub)
    assert fresh.store.get(subs[0].id).state == "hide"
    skipped = dict(map(tuple, fresh.mirror_status()["skipped"]))
    assert f"submissions/contrast_sets/{subs[0].id}.json" in skipped


# --- N18: linear restore --------------------------------------------------------------------------------------------
def test_n18_a_large_restore_downloads_folders_not_one_pattern_per_file(tmp_path, item_sets):
    hub, board, subs = _filled(tmp_path, item_sets)
    rec = json.loads(hub.files[REPO][rpath(hub, subs[0].id)])
    parquet = hub.files[REPO][f"predictions/{subs[0].id}.parquet"]
    for k in range(150):  # many records (the forged copies are refused, which is not what this test counts)
        sid = f"{k + 100:032x}"
        hub.files[REPO][f"submissions/feint6k/{sid}.json"] = json.dumps({**rec, "id": sid}).encode()
        hub.files[REPO][f"predictions/{sid}.parquet"] = parquet
    seen = []
    real = hub.snapshot_download
    hub.snapshot_download = lambda *a, **kw: (seen.append(kw.get("allow_patterns")), real(*a, **kw))[1]
    open_board(tmp_path / "b", item_sets, hub)
    assert len(seen) == 1 and len(seen[0]) <= 4, f"{len(seen[0])} patterns for {len(hub.files[REPO])} files"


# --- N22: temporary folders and the stored file's hash ----------------------------------------------------------------
KILLED_RESTORE = """
import sys, time
sys.path.insert(0, {helpers!r})
from fakehub import FakeHub
from hardneg.leaderboard import Leaderboard, load_benchmarks
from hardneg.leaderboard.mirror import HubMirror
hub = FakeHub(root={hub!r})
real = hub.snapshot_download
def slow(*a, **kw):
    print("downloading", flush=True)
    real(*a, **kw)
    time.sleep(60)
hub.snapshot_download = slow
Leaderboard({store!r}, load_benchmarks({bench!r}), n_resamples=10, compute_blind=False, mirror=HubMirror({repo!r}, api=hub))
"""


def test_n22_a_killed_restore_leaves_no_temporary_folder_after_the_next_start(tmp_path, item_sets, bench_root,
                                                                              monkeypatch):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    hub = FakeHub(root=tmp_path / "hub")
    board = open_board(tmp_path / "a", item_sets, hub)
    assert stored(board.submit(predictions_bytes(item_sets[FEINT], "org/m", seed=1), ALICE))
    script = KILLED_RESTORE.format(helpers=str(HERE), hub=str(tmp_path / "hub"), store=str(tmp_path / "b"),
                                   bench=str(bench_root), repo=REPO)
    env = {**os.environ, "TMPDIR": str(tmp)}
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, env=env, text=True)
    try:
        assert proc.stdout.readline().strip() == "downloading"
        time.sleep(0.3)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    left = [p.name for p in tmp.glob("hardneg-mirror-*")]
    assert left, "the killed restore left no folder (the test did not kill it mid-restore)"
    open_board(tmp_path / "c", item_sets, FakeHub(root=tmp_path / "hub"))
    assert not list(tmp.glob("hardneg-mirror-*")), "a killed restore's temporary folder was left behind"


def test_n22_the_stored_file_matches_its_recorded_hash_after_a_restore(tmp_path, item_sets):
    hub, board, subs = _filled(tmp_path, item_sets)
    fresh = open_board(tmp_path / "b", item_sets, hub)
    for s in fresh.store.all_submissions():
        recorded = getattr(s, "stored_sha256", s.file_sha256)
        assert hashlib.sha256(fresh.store.file_bytes(s.id)).hexdigest() == recorded
        assert s.file_sha256 == board.store.get(s.id).file_sha256  # the uploaded file's hash is kept (dedupe)
    # a predictions file that is not the one its record names is refused, and named
    hub.put(REPO, f"predictions/{subs[2].id}.parquet", hub.files[REPO][f"predictions/{subs[0].id}.parquet"])
    other = open_board(tmp_path / "c", item_sets, hub)
    assert subs[2].id not in other.store.ids()
    assert any(subs[2].id in p for p, _ in other.mirror_status()["skipped"])


# --- N21: a board stops before its store is removed ---------------------------------------------------------------
def test_n21_close_stops_every_thread_that_reads_the_store(tmp_path, item_sets):
    import threading

    before = set(threading.enumerate())
    board = Leaderboard(tmp_path / "a", item_sets, n_resamples=30, compute_blind=False)
    board.start_background()
    for seed in range(3):
        assert stored(board.submit(predictions_bytes(item_sets[FEINT], f"org/m{seed}", seed=seed), ALICE))
    board.rows("feint6k")
    getattr(board, "close", lambda: None)()  # the previous main had no way to stop them
    mine = [t for t in threading.enumerate() if t not in before and t.name.startswith("hardneg-")]
    assert mine == [], [t.name for t in mine]


def test_a_slow_hub_serialises_versions_without_losing_or_doubling_any(tmp_path, item_sets):
    """Concurrent submissions of one model while every Hub call takes 50 ms: each is numbered and committed inside
    the store's write transaction, so versions 1-4 each exist once, in the store and in the repo."""
    from concurrent.futures import ThreadPoolExecutor

    hub = FakeHub(delay=0.05)
    board = open_board(tmp_path / "a", item_sets, hub)
    files = [predictions_bytes(item_sets[FEINT], "org/m", seed=s) for s in range(4)]
    with ThreadPoolExecutor(4) as pool:
        outs = list(pool.map(lambda f: board.submit(f, ALICE), files))
    assert all(stored(o) for o in outs)
    assert sorted(o.submission.version for o in outs) == [1, 2, 3, 4]
    assert sorted(r["version"] for r in records(hub).values()) == [1, 2, 3, 4]


def test_a_space_serves_while_its_repo_is_read_back(tmp_path, item_sets):
    """restore="background" (the Space): the board is built at once and says "restoring"; a submission waits for
    the restore and is numbered after what the repo holds."""
    hub = FakeHub()
    first = open_board(tmp_path / "a", item_sets, hub)
    assert stored(first.submit(predictions_bytes(item_sets[FEINT], "org/m", seed=1), ALICE))
    hub.delay = 0.3  # a slow Hub: the restore takes a while
    board = Leaderboard(tmp_path / "b", item_sets, n_resamples=30, compute_blind=False, mirror=mirror(hub),
                        restore="background")
    assert board.mirror_status()["restore"].startswith("restoring")
    hub.delay = 0.0
    out = board.submit(predictions_bytes(item_sets[FEINT], "org/m", seed=2), ALICE)
    board.close()
    assert stored(out) and out.submission.version == 2 and board.mirror_status()["restore"] == "restored"
