"""Writing submissions and moderations to the results repo: compare-and-swap commits, many writers (issue 49).

Why: the repo is the one truth for versions. A version is assigned only from the repo state that the commit is
conditioned on (`create_commit(..., parent_commit=head)`: the Hub refuses the commit when the branch moved), so two
boards, or two replicas of one Space, on one repo never take the same version: the one refused reads the repo
again (`HubMirror.restore`) and renumbers. A record's id and path are derived from what it is (`mirror.derive_id`,
`record_path`, `tombstone_path`), so a retry is idempotent: a repeated submission is "already stored", a repeated
hide is one tombstone.

After a failure whose outcome is unknown (a timeout while the Hub goes on, a 5xx, a lost reply), nothing is
answered or reused before the repo is read again: either the record landed (acknowledged), or the head moved on
without it (then it can never land: its parent is gone), and only then is "not stored" said. While the head is
still the commit's parent, the outcome stays unknown and the submitter is told so (a resubmission of the same file
is safe). `file_exists`, which lags a few seconds behind a commit on the Hub, is not asked.

A slow Hub does not serialise everyone behind one lock held across the Hub call: submissions queue, and whoever
commits takes every queued one into ONE commit (a group commit); each caller waits for its own confirmation.
`RepoWriter.waiting` is how many wait (the page says it).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from hardneg.leaderboard.mirror import (HeadMoved, HeldUnreadable, HubMirror, PublishFailed, derive_id, not_sent, public_parquet,
                                        record_path, strip_local_paths, tombstone_path)
from hardneg.leaderboard.store import Store, now, pack_arrays

log = logging.getLogger(__name__)

#: the state each moderation leaves a submission in
TARGET = {"hide": "hide", "delete": "delete", "restore": "visible"}


@dataclass
class _Job:
    """One caller's submission (`kind` "submit": model_id, submitter, files) or moderation ("moderate":
    submission_id, action, reason), waiting for its confirmation."""

    kind: str
    payload: dict
    created_at: str = field(default_factory=now)
    done: threading.Event = field(default_factory=threading.Event)
    result: Any = None
    error: BaseException | None = None
    prepared: list | None = None  # submit: [(id, part, file dict, sha, blob, published bytes, published sha)]
    before: set | None = None  # submit: its ids the store held before its first try (answered "already stored")
    unknown: bool = False  # a commit carrying it failed with an unknown outcome (it may have landed)

    def finish(self, result: Any = None, error: BaseException | None = None) -> None:
        if not self.done.is_set():
            self.result, self.error = result, error
            self.done.set()


class RepoWriter:
    """Commits submissions and moderations to `mirror`'s repo with compare-and-swap, keeping `store` the repo's
    copy. check(record, parquet) -> (results, per-item bytes): the board's check of a record read back."""

    def __init__(self, mirror: HubMirror, store: Store, check):
        self.mirror, self.store, self.check = mirror, store, check
        self._cv = threading.Condition()
        self._queue: list[_Job] = []
        self._leading = False
        self._in_flight = 0
        self._stale = False
        #: the last read of the repo done while committing: (counts, skipped) for the board's status
        self.last_sync: dict | None = None

    @property
    def waiting(self) -> int:
        """Submissions and moderations sent and not yet confirmed by the Hub (queued or in the commit under way)."""
        with self._cv:
            return len(self._queue) + self._in_flight

    # --- what callers call ------------------------------------------------------------------------------------
    def submit(self, model_id: str, submitter: str, files: list[dict]) -> tuple[list[str], bool]:
        """Store the parts of `files` (each {metadata, file_bytes, parts}) as the next versions of their (model,
        part), in the repo first; returns (the submission ids, in part order; whether any was new). Raises
        PublishFailed when the Hub did not confirm it (`unknown`: it may still land)."""
        return self._run(_Job("submit", {"model_id": model_id, "submitter": submitter, "files": files}))

    def moderate(self, submission_id: str, action: str, reason: str) -> dict:
        """One moderation, in the repo first: {"path", "applied"} (applied False: the submission was in that state
        already, nothing new stored). Raises ValueError for an unknown id, PublishFailed as `submit`."""
        if action not in TARGET:
            raise ValueError(f"action must be 'hide', 'delete' or 'restore'; got {str(action)[:40]!r}")
        return self._run(_Job("moderate", {"submission_id": submission_id, "action": action,
                                           "reason": reason or ""}))

    def _run(self, job: _Job):
        with self._cv:
            self._queue.append(job)
            lead = not self._leading
            self._leading = True
        if lead:  # this caller commits every queued job, in batches, until none is left
            while True:
                with self._cv:
                    batch, self._queue = self._queue, []
                    if not batch:
                        self._leading = False
                        break
                    self._in_flight = len(batch)
                try:
                    self._commit_batch(batch)
                except BaseException as exc:  # noqa: BLE001 (a bug: every waiter is answered, none hangs)
                    log.exception("committing to the results repo failed unexpectedly")
                    for j in batch:
                        j.finish(error=exc)
                finally:
                    with self._cv:
                        self._in_flight = 0
        job.done.wait()
        if job.error is not None:
            raise job.error
        return job.result

    # --- one commit of a batch --------------------------------------------------------------------------------
    def _sync(self) -> None:
        m = self.mirror
        if m.head is None:
            m._ensure_repo()
        counts = m.restore(self.store, self.check)
        self._stale = False
        if any(counts.values()):
            self.last_sync = {"counts": counts, "skipped": list((m.report or {}).get("skipped", []))}

    def _commit_batch(self, batch: list[_Job]) -> None:
        m, pol = self.mirror, self.mirror.policy
        failures, conflicts, pending, last = 0, 0, set(), None
        # a moderation found "in that state already" must be judged on the repo's head, not on what this replica
        # read last (another replica may have moved it): the head is read first (one call when nothing changed)
        fresh = any(j.kind == "moderate" for j in batch)
        with m.lock:
            while failures < pol.tries:
                if failures:
                    time.sleep(pol.backoff_s * 2 ** (failures - 1))
                try:
                    if m.head is None or self._stale or fresh:
                        self._sync()
                        fresh = False
                    plan = self._plan(batch)
                    if plan is None:
                        return
                    files, message, land, wanted = plan
                    parent = m.head
                    try:
                        oid = m.commit(files, message, parent)
                    except HeadMoved:
                        self._stale, conflicts = True, conflicts + 1
                        failures += conflicts % max(1, pol.conflicts) == 0
                        continue
                    except Exception as exc:  # noqa: BLE001 (outcome unknown: it may land; the repo is read again)
                        if not not_sent(exc):
                            pending.add(parent)
                            for j in wanted:
                                j.unknown = True
                        self._stale = True
                        raise
                    land(oid)
                    return
                except Exception as exc:  # noqa: BLE001 (a Hub error: retried, then reported)
                    last, failures = exc, failures + 1
                    self._stale = True
            unknown = bool(pending)
            try:  # the last word: did it land, or did the head move on without it?
                self._sync()
                if self._plan(batch) is None:
                    return
                unknown = m.head in pending
            except Exception as exc:  # noqa: BLE001 (the repo cannot be read: what was sent stays unknown)
                log.warning("reading the results repo after a failed commit failed: %s", exc)
        err = PublishFailed(f"{type(last).__name__}: {str(last)[:200]}", unknown)
        for j in batch:
            j.finish(error=err)

    def _plan(self, batch: list[_Job]):
        """The commit that would make every unfinished job of `batch` true at the repo's head, or None when every
        job is finished (stored already, landed, or refused). Returns (files, message, land(oid), the jobs
        the commit carries)."""
        files: dict[str, bytes] = {}
        subs, tombs, titles, wanted = [], [], [], []
        next_version: dict[tuple, int] = {}
        moderations: dict[str, int] = {}
        states: dict[str, str] = {}
        have = self.store.ids()
        planned: set[str] = set()
        for job in batch:
            if job.done.is_set():
                continue
            if job.kind == "submit":
                self._plan_submit(job, have, planned, next_version, (files, subs, titles, wanted))
            else:
                self._plan_moderation(job, states, moderations, (files, tombs, titles, wanted))
        if not wanted:
            return None
        message = titles[0] if len(titles) == 1 else f"{len(titles)} changes: " + "; ".join(titles)[:400]

        def land(oid: str) -> None:
            skipped: list = []
            counts = self.store.restore(subs, tombs, skipped, ())
            if skipped:
                log.error("rows of a landed commit not stored: %s (%s)", skipped, counts)
            self.mirror.note_landed(oid, files)
            have_now = self.store.ids()
            for job in wanted:
                if job.kind == "submit":
                    ids = [p[0] for p in job.prepared]
                    if all(i in have_now for i in ids):
                        job.finish((ids, not job.payload.get("carried") and any(i not in job.before for i in ids)))
                    else:
                        job.finish(error=RuntimeError("a landed submission was not stored; see the log"))
                else:
                    job.finish({"path": job.payload["path"], "applied": True})

        return files, message, land, wanted

    def _prepare(self, job: _Job) -> None:
        p = job.payload
        job.prepared = []
        for f in p["files"]:
            sha = hashlib.sha256(f["file_bytes"]).hexdigest()
            published = public_parquet(f["file_bytes"])
            for part in f["parts"]:
                sub_id = derive_id(p["model_id"], part["benchmark"], part["config"], part["split"], sha)
                job.prepared.append((sub_id, part, f, sha, pack_arrays(part["per_example"]), published,
                                     hashlib.sha256(published).hexdigest()))

    def _plan_submit(self, job: _Job, have: set, planned: set, next_version: dict, out: tuple) -> None:
        files, subs, titles, wanted = out
        if job.prepared is None:
            self._prepare(job)
            job.before = {p[0] for p in job.prepared} & have
        p = job.payload
        ids = [x[0] for x in job.prepared]
        if all(i in have for i in ids):  # stored before (by anyone), or ours landed late or on a lost reply
            job.finish((ids, job.unknown and any(i not in job.before for i in ids)))
            return
        if any(i in planned for i in ids):  # the same file sent twice at once: the other job carries it
            p["carried"] = True  # answered "already stored" once it lands
            wanted.append(job)
            return
        held = [i for i in ids if i not in have and i in self.mirror.record_ids]
        if held:  # in the repo, not restorable here: never a second record of it (issue 49)
            job.finish(error=HeldUnreadable(f"the results repo holds this file already ({self.mirror.record_ids[held[0]]}"
                                            "), but this board could not read it back (see `hardneg leaderboard "
                                            "status`); nothing new was stored"))
            return
        for sub_id, part, f, sha, blob, published, published_sha in job.prepared:
            if sub_id in have:
                continue
            key = (p["model_id"], part["benchmark"], part["config"], part["split"])
            version = max(self.store.max_version(*key), self.mirror.versions.get(key, 0),
                          next_version.get(key, 0)) + 1
            next_version[key] = version
            record = {"id": sub_id, "model_id": p["model_id"], "submitter": p["submitter"],
                      "benchmark": part["benchmark"], "config": part["config"], "split": part["split"],
                      "version": version, "data_revision": part["data_revision"],
                      "metadata": strip_local_paths(f["metadata"]), "results": part["results"], "file_sha256": sha,
                      "created_at": job.created_at, "published_file_sha256": published_sha,
                      "attempt": uuid.uuid4().hex}  # a retry's bytes differ: never an empty (no-op) commit
            path = record_path(part["benchmark"], part["config"], part["split"], p["model_id"], version, sub_id)
            files[path] = json.dumps(record, indent=1, sort_keys=True).encode()
            files[f"predictions/{sub_id}.parquet"] = published
            files[f"per_example/{sub_id}.npz"] = blob
            subs.append({**record, "metadata": f["metadata"], "file": f["file_bytes"], "per_example": blob,
                         "repo_path": path, "stored_file_sha256": None, "seq": None, "order": len(subs)})
            planned.add(sub_id)
            titles.append(f"Add {p['model_id']} v{version} on {part['benchmark']}/{part['config']}/{part['split']}")
        wanted.append(job)

    def _plan_moderation(self, job: _Job, states: dict, moderations: dict, out: tuple) -> None:
        files, tombs, titles, wanted = out
        p = job.payload
        sub_id = p["submission_id"]
        if sub_id not in states:
            try:
                states[sub_id] = self.store.get(sub_id).state
            except KeyError:
                job.finish(error=ValueError(f"no submission with id {str(sub_id)[:80]!r}; copy the id from the "
                                            "model's history"))
                return
        if states[sub_id] == TARGET[p["action"]]:  # in that state already (a retry that landed, or a repeat)
            job.finish({"path": self._last_tombstone(sub_id), "applied": job.unknown})
            return
        n = max(self.mirror.moderations.get(sub_id, 0), moderations.get(sub_id, 0)) + 1
        moderations[sub_id] = n
        states[sub_id] = TARGET[p["action"]]
        path = tombstone_path(sub_id, n)
        body = {"submission_id": sub_id, "action": p["action"], "reason": p["reason"], "created_at": job.created_at,
                "attempt": uuid.uuid4().hex}
        files[path] = json.dumps(body, sort_keys=True).encode()
        tombs.append({**body, "seq": None, "repo_path": path, "order": len(tombs)})
        p["path"] = path
        titles.append(f"{p['action']} submission {sub_id}")
        wanted.append(job)

    def _last_tombstone(self, sub_id: str) -> str | None:
        rows = self.store._query("SELECT m.repo_path FROM tombstones t JOIN tombstones_mirrored m ON"
                                 " m.tombstone_seq = t.seq WHERE t.submission_id = ? ORDER BY t.seq DESC LIMIT 1",
                                 (sub_id,))
        return rows[0][0] if rows else None
