"""Append-only submission store: SQLite in WAL mode in a data folder.

Why SQLite: one file, atomic transactions, readers never block the writer (WAL), and a
process killed mid-write leaves the last committed state. Rows are never updated or
deleted (triggers refuse it): a resubmission is a new version, hiding a row appends a
tombstone. The uploaded file lives inside the database under a generated id, so an
uploaded file name never becomes a path.

Submissions are idempotent: the same file (by SHA-256) under the same model name returns
the versions it already made and stores nothing new, checked inside the write
transaction, so a client that retries after a lost reply never makes a second version.
Who may write a model name is decided before the store (a verified Hub namespace, see
`hardneg.leaderboard.identity`); the `owners` table records the first submitter.
"""

from __future__ import annotations

import hashlib
import io
import json
import random
import sqlite3
import time
import uuid
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import numpy as np

DB_NAME = "leaderboard.sqlite"

#: publish([(row, file bytes, per-item .npz bytes)]) -> {submission id: repo path} (see `Store.add_files`)
Publish = Callable[[list], dict]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS owners (
    model_id TEXT PRIMARY KEY,
    submitter TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS submissions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    model_id TEXT NOT NULL REFERENCES owners(model_id),
    submitter TEXT NOT NULL,
    benchmark TEXT NOT NULL,
    config TEXT NOT NULL,
    split TEXT NOT NULL,
    version INTEGER NOT NULL,
    data_revision TEXT NOT NULL,
    metadata TEXT NOT NULL,
    results TEXT NOT NULL,
    per_example BLOB NOT NULL,
    file_sha256 TEXT NOT NULL,
    file BLOB NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (model_id, benchmark, config, split, version)
);
CREATE TABLE IF NOT EXISTS tombstones (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    submission_id TEXT NOT NULL REFERENCES submissions(id),
    action TEXT NOT NULL CHECK (action IN ('hide', 'delete', 'restore')),
    reason TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS mirrored (
    submission_id TEXT PRIMARY KEY REFERENCES submissions(id),
    repo_path TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tombstones_mirrored (
    tombstone_seq INTEGER PRIMARY KEY REFERENCES tombstones(seq),
    repo_path TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS reserved_versions (
    model_id TEXT NOT NULL,
    benchmark TEXT NOT NULL,
    config TEXT NOT NULL,
    split TEXT NOT NULL,
    version INTEGER NOT NULL,
    repo_path TEXT NOT NULL,
    PRIMARY KEY (model_id, benchmark, config, split, version)
);
CREATE TRIGGER IF NOT EXISTS submissions_no_update BEFORE UPDATE ON submissions
BEGIN SELECT RAISE(ABORT, 'submissions are append-only'); END;
CREATE TRIGGER IF NOT EXISTS submissions_no_delete BEFORE DELETE ON submissions
BEGIN SELECT RAISE(ABORT, 'submissions are append-only'); END;
CREATE TRIGGER IF NOT EXISTS tombstones_no_update BEFORE UPDATE ON tombstones
BEGIN SELECT RAISE(ABORT, 'tombstones are append-only'); END;
CREATE TRIGGER IF NOT EXISTS tombstones_no_delete BEFORE DELETE ON tombstones
BEGIN SELECT RAISE(ABORT, 'tombstones are append-only'); END;
CREATE INDEX IF NOT EXISTS submissions_part ON submissions (benchmark, config, split, model_id, version);
CREATE INDEX IF NOT EXISTS submissions_file ON submissions (model_id, file_sha256);
"""


class OwnershipError(ValueError):
    """The model name belongs to another submitter (kept for callers; names are now checked by namespace)."""


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def pack_arrays(arrays: dict[str, np.ndarray]) -> bytes:
    """Per-example values as an .npz (plain float arrays; read back without pickle)."""
    buf = io.BytesIO()
    np.savez_compressed(buf, **{k: np.asarray(v, dtype=np.float64) for k, v in arrays.items()})
    return buf.getvalue()


def unpack_arrays(blob: bytes) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(blob), allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


@dataclass
class StoredSubmission:
    """One stored version (the file bytes and per-example arrays load on request)."""

    id: str
    seq: int
    model_id: str
    submitter: str
    benchmark: str
    config: str
    split: str
    version: int
    data_revision: str
    metadata: dict
    results: dict
    file_sha256: str
    created_at: str
    state: str = "visible"  # visible | hide | delete
    #: the SHA-256 of the bytes this store holds when they are not the uploaded file's (`file_sha256`): a row
    #: restored from the results repo holds its published copy (local paths removed from its metadata; N22)
    stored_file_sha256: str | None = None

    @property
    def stored_sha256(self) -> str:
        """The hash of the file bytes as stored here (`file_bytes`)."""
        return self.stored_file_sha256 or self.file_sha256

    @property
    def model_meta(self) -> dict:
        """The model metadata given at submission (params, model_type, license, link, revision; see
        `hardneg.leaderboard.model_meta`): stored inside `metadata`, {} for older submissions."""
        meta = self.metadata.get("model_meta") if isinstance(self.metadata, dict) else None
        return meta if isinstance(meta, dict) else {}

    @property
    def local(self) -> bool:
        """Submitted in a board's local mode (no Hub sign-in): shown as "local"."""
        return isinstance(self.metadata, dict) and self.metadata.get("identity") == "local"

    @classmethod
    def from_row(cls, row: sqlite3.Row, state: str | None = None) -> "StoredSubmission":
        return cls(
            id=row["id"], seq=row["seq"], model_id=row["model_id"], submitter=row["submitter"],
            benchmark=row["benchmark"], config=row["config"], split=row["split"], version=row["version"],
            data_revision=row["data_revision"], metadata=_loads(row["metadata"], {}), results=_loads(row["results"], None),
            file_sha256=row["file_sha256"], created_at=row["created_at"],
            state="visible" if state in (None, "restore") else state,
            stored_file_sha256=row["stored_file_sha256"] if "stored_file_sha256" in row.keys() else None,
        )


def _loads(text, damaged):
    """A stored JSON column; `damaged` when it is not JSON (an edited store): a read of the store never fails on
    one row, and drawing shows that row as a placeholder (`drawing.validate_stored_results`)."""
    try:
        return json.loads(text)
    except (TypeError, ValueError, RecursionError):
        return damaged


_COLUMNS = ("seq, id, model_id, submitter, benchmark, config, split, version, data_revision, metadata, results, file_sha256,"
            " created_at, stored_file_sha256")
_STATE = (
    "(SELECT t.action FROM tombstones t WHERE t.submission_id = s.id ORDER BY t.seq DESC LIMIT 1) AS state"
)


def _in_order(rows: list[dict], order) -> list[dict]:
    """Rows as given when each carries its place in the results repo's commit history (`order`, issue 49: a
    writer cannot forge it), else sorted by their sequence numbers (`order`: stores and callers before issue 49)."""
    return list(rows) if all("order" in r for r in rows) else sorted(rows, key=order)


class Store:
    """The leaderboard's durable state; every method opens its own connection (thread-safe)."""

    def __init__(self, data_dir: str | Path, busy_timeout_s: float = 60.0, retries: int = 20,
                 before_commit: Callable[[], None] | None = None):
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.data_dir / DB_NAME
        self.busy_timeout_s = busy_timeout_s
        self.retries = retries
        self._before_commit = before_commit  # test hook: runs inside the write transaction
        with closing(self._connect()) as con:
            con.execute("PRAGMA journal_mode=WAL")
            self._write(lambda c: c.executescript("BEGIN IMMEDIATE;" + _SCHEMA + "COMMIT;"), con, script=True)
            if "stored_file_sha256" not in {r[1] for r in con.execute("PRAGMA table_info(submissions)")}:
                # a store made before issue 42: the hash of a restored row's stored (published) copy
                try:
                    self._write(lambda c: c.execute("ALTER TABLE submissions ADD COLUMN stored_file_sha256 TEXT"), con)
                except sqlite3.OperationalError as exc:  # another process added it first
                    if "duplicate column" not in str(exc):
                        raise

    def _connect(self) -> sqlite3.Connection:
        con = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None, check_same_thread=False)
        con.row_factory = sqlite3.Row
        con.execute(f"PRAGMA busy_timeout={int(self.busy_timeout_s * 1000)}")
        con.execute("PRAGMA synchronous=FULL")
        con.execute("PRAGMA foreign_keys=ON")
        return con

    def _write(self, work: Callable[[sqlite3.Connection], object], con: sqlite3.Connection | None = None, script=False):
        """Run `work` in one IMMEDIATE transaction, retrying when another writer holds the lock."""
        own = con is None
        con = con or self._connect()
        try:
            for attempt in range(self.retries + 1):
                try:
                    if script:
                        return work(con)
                    con.execute("BEGIN IMMEDIATE")
                    try:
                        out = work(con)
                        if self._before_commit is not None:
                            self._before_commit()
                        con.execute("COMMIT")
                        return out
                    except BaseException:
                        if con.in_transaction:
                            con.execute("ROLLBACK")
                        raise
                except sqlite3.OperationalError as exc:
                    if con.in_transaction:
                        con.execute("ROLLBACK")
                    if "locked" not in str(exc) and "busy" not in str(exc) or attempt == self.retries:
                        raise
                    time.sleep(min(1.0, 0.02 * 2**attempt) * (0.5 + random.random()))
        finally:
            if own:
                con.close()

    # --- writes ---------------------------------------------------------------------------
    def add_submission(self, *, model_id: str, submitter: str, benchmark: str, config: str, split: str,
                       data_revision: str, metadata: dict, results: dict, per_example: dict[str, np.ndarray],
                       file_bytes: bytes) -> StoredSubmission:
        """Store one validated, scored submission as the next version of its (model, part)."""
        return self.add_submissions(model_id=model_id, submitter=submitter, metadata=metadata, file_bytes=file_bytes,
                                    parts=[dict(benchmark=benchmark, config=config, split=split,
                                                data_revision=data_revision, results=results,
                                                per_example=per_example)])[0]

    def add_submissions(self, *, model_id: str, submitter: str, metadata: dict, file_bytes: bytes,
                        parts: list[dict]) -> list[StoredSubmission]:
        """Store the parts (benchmark, config, split, data_revision, results, per_example) of one
        file in one transaction: each becomes the next version of its (model, part), or none does.
        The same file under the same model name returns the versions it made before."""
        return self.add_file(model_id=model_id, submitter=submitter, metadata=metadata, file_bytes=file_bytes,
                             parts=parts)[0]

    def add_file(self, *, model_id: str, submitter: str, metadata: dict, file_bytes: bytes,
                 parts: list[dict]) -> tuple[list[StoredSubmission], bool]:
        """`add_submissions`, also saying whether anything new was stored (False: the same file was stored before
        under this model name; its versions are returned)."""
        return self.add_files(model_id=model_id, submitter=submitter,
                              files=[dict(metadata=metadata, file_bytes=file_bytes, parts=parts)])

    def add_files(self, *, model_id: str, submitter: str, files: list[dict], publish: Publish | None = None
                  ) -> tuple[list[StoredSubmission], bool]:
        """Store several files of one model (`metadata`, `file_bytes`, `parts` each: a `hardneg run` folder) in ONE
        transaction: every part of every file becomes the next version of its (model, part), or nothing is stored.
        A file stored before under this model name keeps its versions (returned, nothing new for it); the flag
        says whether anything new was stored.

        publish([(row, file bytes, per-item .npz bytes)]) -> {id: repo path}: called INSIDE the transaction once
        the new rows are numbered (a board with a results repo commits them there); when it raises, nothing is
        stored, so no version is ever acknowledged, or numbered, that the repo does not hold (issue 42, N12)."""
        prepared = []
        for f in files:
            sha = hashlib.sha256(f["file_bytes"]).hexdigest()
            rows = [(uuid.uuid4().hex, p, pack_arrays(p["per_example"]), json.dumps(p["results"], sort_keys=True))
                    for p in f["parts"]]
            prepared.append((sha, json.dumps(f["metadata"], sort_keys=True), f["file_bytes"], rows,
                             {(p["benchmark"], p["config"], p["split"]) for p in f["parts"]}))

        def work(con: sqlite3.Connection):
            ids, created, new = [], False, []
            for sha, meta_json, file_bytes, rows, wanted in prepared:
                before = self._same_file(con, model_id, sha)
                if before and wanted <= {(r["benchmark"], r["config"], r["split"]) for r in before}:
                    ids += [r["id"] for r in before if (r["benchmark"], r["config"], r["split"]) in wanted]
                    continue
                created = True
                if con.execute("SELECT 1 FROM owners WHERE model_id = ?", (model_id,)).fetchone() is None:
                    con.execute("INSERT INTO owners VALUES (?, ?, ?)", (model_id, submitter, now()))
                for sub_id, p, blob, results_json in rows:
                    version = con.execute(  # after every version stored, and every one the repo holds unread
                        "SELECT MAX(COALESCE((SELECT MAX(version) FROM submissions WHERE model_id=? AND benchmark=?"
                        " AND config=? AND split=?), 0), COALESCE((SELECT MAX(version) FROM reserved_versions WHERE"
                        " model_id=? AND benchmark=? AND config=? AND split=?), 0)) + 1",
                        (model_id, p["benchmark"], p["config"], p["split"]) * 2,
                    ).fetchone()[0]
                    at = now()
                    cur = con.execute(
                        "INSERT INTO submissions (id, model_id, submitter, benchmark, config, split, version,"
                        " data_revision, metadata, results, per_example, file_sha256, file, created_at)"
                        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        (sub_id, model_id, submitter, p["benchmark"], p["config"], p["split"], version,
                         p["data_revision"], meta_json, results_json, blob, sha, file_bytes, at),
                    )
                    ids.append(sub_id)
                    new.append((StoredSubmission(
                        id=sub_id, seq=cur.lastrowid, model_id=model_id, submitter=submitter, benchmark=p["benchmark"],
                        config=p["config"], split=p["split"], version=version, data_revision=p["data_revision"],
                        metadata=json.loads(meta_json), results=json.loads(results_json), file_sha256=sha,
                        created_at=at), file_bytes, blob))
            if new and publish is not None:
                for sub_id, path in publish(new).items():
                    con.execute("INSERT OR IGNORE INTO mirrored VALUES (?,?,?)", (sub_id, path, now()))
            return ids, created

        ids, created = self._write(work)
        return [self.get(sub_id) for sub_id in ids], created

    @staticmethod
    def _same_file(con: sqlite3.Connection, model_id: str, sha: str) -> list[sqlite3.Row]:
        """The earliest version per part of this exact file under this model name."""
        return con.execute(
            "SELECT id, benchmark, config, split FROM submissions WHERE model_id = ? AND file_sha256 = ?"
            " AND seq IN (SELECT MIN(seq) FROM submissions WHERE model_id = ? AND file_sha256 = ?"
            " GROUP BY benchmark, config, split) ORDER BY seq",
            (model_id, sha, model_id, sha),
        ).fetchall()

    def find_file(self, model_id: str, file_sha256: str) -> list[StoredSubmission]:
        """Versions the file with this hash made under this model name (empty when it was never stored)."""
        with closing(self._connect()) as con:
            ids = [r["id"] for r in self._same_file(con, model_id, file_sha256)]
        return [self.get(i) for i in ids]

    def add_tombstone(self, submission_id: str, action: str, reason: str,
                      publish: Callable[[dict], str] | None = None) -> dict:
        """Append a tombstone; returns it as the mirror publishes it (`seq` orders a model's moderations when the
        store is restored from the mirror). publish(tombstone) -> repo path: called inside the transaction, as
        in `add_files` (when it raises, nothing is stored)."""
        if action not in ("hide", "delete", "restore"):
            raise ValueError(f"action must be 'hide', 'delete' or 'restore'; got {str(action)[:40]!r}")

        def work(con):
            if con.execute("SELECT 1 FROM submissions WHERE id = ?", (submission_id,)).fetchone() is None:
                raise ValueError(f"no submission with id {str(submission_id)[:80]!r}; copy the id from the model's history")
            at = now()
            cur = con.execute("INSERT INTO tombstones (submission_id, action, reason, created_at) VALUES (?,?,?,?)",
                              (submission_id, action, reason or "", at))
            tomb = {"seq": cur.lastrowid, "submission_id": submission_id, "action": action, "reason": reason or "",
                    "created_at": at}
            if publish is not None:
                con.execute("INSERT INTO tombstones_mirrored VALUES (?,?,?)", (tomb["seq"], publish(tomb), now()))
            return tomb

        return self._write(work)

    def mark_mirrored(self, submission_id: str, repo_path: str) -> None:
        self._write(lambda con: con.execute("INSERT OR IGNORE INTO mirrored VALUES (?,?,?)", (submission_id, repo_path, now())))

    def mark_tombstone_mirrored(self, seq: int, repo_path: str) -> None:
        self._write(lambda con: con.execute("INSERT OR IGNORE INTO tombstones_mirrored VALUES (?,?,?)",
                                            (seq, repo_path, now())))

    def restore(self, submissions: list[dict], tombstones: list[dict], skipped: list | None = None,
                reserved: list[tuple] = ()) -> dict[str, int]:
        """Add what the mirror holds and this store lacks, in ONE transaction (issue 36: the Hub's results repo is
        the board's source of truth; a store on a wiped disk is rebuilt from it).

        submissions: mirror records that passed the board's guards (`mirror.HubMirror.restore`), with `file` (the
        published predictions bytes), `per_example` (recomputed .npz bytes), `stored_file_sha256` and `repo_path`;
        each keeps its id, version, submitter, file hash, time and sequence number. tombstones: {submission_id,
        action, reason, created_at, seq, repo_path}. Order is the sequence number written at submission
        (`seq`), never the wall-clock time alone (issue 42, N17: a clock stepped back undid a hide): a restored
        row keeps its `seq` (where this store has not used it), so later rows number after it.

        A record whose id is here already is linked, not inserted; one whose id came earlier in this restore is a
        duplicate, and one whose (model, part, version) is taken by another id a conflict: both are skipped,
        counted, and named in `skipped` ((repo path, reason) pairs). reserved: (model, benchmark, config, split,
        version, repo path) of records the repo holds but the board could not restore: no new version takes those
        numbers (version numbers are never reused, issue 42)."""
        skipped = skipped if skipped is not None else []

        def order(r: dict) -> tuple:
            seq = r.get("seq")
            known = isinstance(seq, int) and not isinstance(seq, bool)
            return (0 if known else 1, seq if known else 0, str(r.get("created_at") or ""), str(r.get("repo_path")))

        def work(con: sqlite3.Connection) -> dict[str, int]:
            skipped.clear()
            con.executemany("INSERT OR IGNORE INTO reserved_versions VALUES (?,?,?,?,?,?)", list(reserved))
            have = {r[0] for r in con.execute("SELECT id FROM submissions")}
            linked = {r[0] for r in con.execute("SELECT submission_id FROM mirrored")}
            counts = {"submissions": 0, "tombstones": 0, "conflicts": 0, "orphans": 0, "duplicates": 0}
            seen: set[str] = set()
            for rec in _in_order(submissions, order):
                if rec["id"] in seen:
                    counts["duplicates"] += 1
                    skipped.append((rec["repo_path"], f"a second record of submission {rec['id']}"))
                    continue
                seen.add(rec["id"])
                if rec["id"] in have:
                    if rec["id"] not in linked:
                        con.execute("INSERT OR IGNORE INTO mirrored VALUES (?,?,?)", (rec["id"], rec["repo_path"], now()))
                    continue
                taken = con.execute("SELECT id FROM submissions WHERE model_id=? AND benchmark=? AND config=? AND"
                                    " split=? AND version=?", (rec["model_id"], rec["benchmark"], rec["config"],
                                                                rec["split"], rec["version"])).fetchone()
                if taken:
                    counts["conflicts"] += 1
                    skipped.append((rec["repo_path"], f"{rec['model_id']} v{rec['version']} on {rec['benchmark']}/"
                                                      f"{rec['config']}/{rec['split']} is submission {taken[0]} already"))
                    continue
                seq = rec.get("seq")
                if seq is not None and con.execute("SELECT 1 FROM submissions WHERE seq = ?", (seq,)).fetchone():
                    seq = None  # used here by a row the repo lacks: numbered after it
                con.execute("INSERT OR IGNORE INTO owners VALUES (?, ?, ?)",
                            (rec["model_id"], rec["submitter"], rec["created_at"]))
                con.execute(
                    "INSERT INTO submissions (seq, id, model_id, submitter, benchmark, config, split, version,"
                    " data_revision, metadata, results, per_example, file_sha256, file, created_at, stored_file_sha256)"
                    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (seq, rec["id"], rec["model_id"], rec["submitter"], rec["benchmark"], rec["config"], rec["split"],
                     int(rec["version"]), rec["data_revision"], json.dumps(rec["metadata"], sort_keys=True),
                     json.dumps(rec["results"], sort_keys=True), rec["per_example"], rec["file_sha256"], rec["file"],
                     rec["created_at"], rec.get("stored_file_sha256")))
                con.execute("INSERT OR IGNORE INTO mirrored VALUES (?,?,?)", (rec["id"], rec["repo_path"], now()))
                have.add(rec["id"])
                counts["submissions"] += 1
            known = {r[0] for r in con.execute("SELECT repo_path FROM tombstones_mirrored")}
            # tombstones of this store the mirror holds under a path not linked here (pushed by an older board, or
            # a crash between the push and its mark): linked, not inserted twice
            unlinked: dict[tuple, list[int]] = {}
            for r in con.execute("SELECT seq, submission_id, action, reason FROM tombstones WHERE seq NOT IN"
                                 " (SELECT tombstone_seq FROM tombstones_mirrored) ORDER BY seq"):
                unlinked.setdefault((r[1], r[2], r[3]), []).append(r[0])
            for t in _in_order(tombstones, order):
                if t["repo_path"] in known:
                    continue
                same = unlinked.get((t["submission_id"], t["action"], str(t.get("reason") or "")))
                if same:
                    con.execute("INSERT INTO tombstones_mirrored VALUES (?,?,?)", (same.pop(0), t["repo_path"], now()))
                    known.add(t["repo_path"])
                    continue
                if t["submission_id"] not in have:
                    counts["orphans"] += 1
                    skipped.append((t["repo_path"], f"a {t['action']} of submission {t['submission_id']}, which the "
                                                    "repo does not hold"))
                    continue
                seq = t.get("seq")
                if seq is not None and con.execute("SELECT 1 FROM tombstones WHERE seq = ?", (seq,)).fetchone():
                    seq = None
                cur = con.execute("INSERT INTO tombstones (seq, submission_id, action, reason, created_at)"
                                  " VALUES (?,?,?,?,?)", (seq, t["submission_id"], t["action"],
                                                          str(t.get("reason") or ""), str(t.get("created_at") or now())))
                con.execute("INSERT INTO tombstones_mirrored VALUES (?,?,?)", (cur.lastrowid, t["repo_path"], now()))
                known.add(t["repo_path"])
                counts["tombstones"] += 1
            return counts

        return self._write(work)

    def max_version(self, model_id: str, benchmark: str, config: str, split: str) -> int:
        """The highest version of a (model, part) this store holds or keeps reserved (0: none)."""
        row = self._query("SELECT MAX(COALESCE((SELECT MAX(version) FROM submissions WHERE model_id=? AND benchmark=?"
                          " AND config=? AND split=?), 0), COALESCE((SELECT MAX(version) FROM reserved_versions WHERE"
                          " model_id=? AND benchmark=? AND config=? AND split=?), 0))",
                          (model_id, benchmark, config, split) * 2)
        return int(row[0][0] or 0)

    # --- reads ----------------------------------------------------------------------------
    def _query(self, sql: str, params=()) -> list[sqlite3.Row]:
        with closing(self._connect()) as con:
            return con.execute(sql, params).fetchall()

    def owner_of(self, model_id: str) -> str | None:
        rows = self._query("SELECT submitter FROM owners WHERE model_id = ?", (model_id,))
        return rows[0]["submitter"] if rows else None

    def get(self, submission_id: str) -> StoredSubmission:
        rows = self._query(f"SELECT {_COLUMNS}, {_STATE} FROM submissions s WHERE id = ?", (submission_id,))
        if not rows:
            raise KeyError(f"no submission with id {submission_id!r}")
        return StoredSubmission.from_row(rows[0], rows[0]["state"])

    def file_bytes(self, submission_id: str) -> bytes:
        rows = self._query("SELECT file FROM submissions WHERE id = ?", (submission_id,))
        if not rows:
            raise KeyError(f"no submission with id {submission_id!r}")
        return bytes(rows[0]["file"])

    def per_example(self, submission_id: str) -> dict[str, np.ndarray]:
        rows = self._query("SELECT per_example FROM submissions WHERE id = ?", (submission_id,))
        if not rows:
            raise KeyError(f"no submission with id {submission_id!r}")
        return unpack_arrays(bytes(rows[0]["per_example"]))

    def all_submissions(self, benchmark: str | None = None) -> list[StoredSubmission]:
        """Every stored version (hidden ones too, with their state), oldest first."""
        where, params = ("WHERE benchmark = ?", (benchmark,)) if benchmark else ("", ())
        rows = self._query(f"SELECT {_COLUMNS}, {_STATE} FROM submissions s {where} ORDER BY seq", params)
        return [StoredSubmission.from_row(r, r["state"]) for r in rows]

    def history(self, model_id: str) -> list[StoredSubmission]:
        rows = self._query(f"SELECT {_COLUMNS}, {_STATE} FROM submissions s WHERE model_id = ? ORDER BY seq", (model_id,))
        return [StoredSubmission.from_row(r, r["state"]) for r in rows]

    def current(self, benchmark: str | None = None) -> list[StoredSubmission]:
        """Per (model, benchmark, config, split): the newest version that is not hidden or deleted."""
        best: dict[tuple, StoredSubmission] = {}
        for s in self.all_submissions(benchmark):
            if s.state != "visible":
                continue
            key = (s.model_id, s.benchmark, s.config, s.split)
            if key not in best or s.version > best[key].version:
                best[key] = s
        return list(best.values())

    def unmirrored(self) -> list[StoredSubmission]:
        rows = self._query(
            f"SELECT {_COLUMNS}, {_STATE} FROM submissions s WHERE id NOT IN (SELECT submission_id FROM mirrored) ORDER BY seq"
        )
        return [StoredSubmission.from_row(r, r["state"]) for r in rows]

    def outbox_counts(self) -> dict[str, int]:
        """How many submissions and tombstones this store holds that its results repo does not (two counts)."""
        row = self._query("SELECT (SELECT COUNT(*) FROM submissions WHERE id NOT IN (SELECT submission_id FROM mirrored))"
                          " AS s, (SELECT COUNT(*) FROM tombstones WHERE seq NOT IN"
                          " (SELECT tombstone_seq FROM tombstones_mirrored)) AS t")[0]
        return {"submissions": int(row["s"]), "tombstones": int(row["t"])}

    def ids(self) -> set[str]:
        return {r["id"] for r in self._query("SELECT id FROM submissions")}

    def mirrored_tombstone_paths(self) -> set[str]:
        return {r["repo_path"] for r in self._query("SELECT repo_path FROM tombstones_mirrored")}

    def unmirrored_tombstones(self) -> list[dict]:
        """Tombstones not yet in the mirror (a Hub outage at moderation time), oldest first."""
        rows = self._query("SELECT seq, submission_id, action, reason, created_at FROM tombstones"
                           " WHERE seq NOT IN (SELECT tombstone_seq FROM tombstones_mirrored) ORDER BY seq")
        return [dict(r) for r in rows]

    def per_example_blob(self, submission_id: str) -> bytes:
        """The stored per-item values as stored (.npz bytes): what the mirror publishes beside the record."""
        rows = self._query("SELECT per_example FROM submissions WHERE id = ?", (submission_id,))
        if not rows:
            raise KeyError(f"no submission with id {submission_id!r}")
        return bytes(rows[0]["per_example"])

    def count(self) -> int:
        return int(self._query("SELECT COUNT(*) FROM submissions")[0][0])

    def state_token(self) -> tuple[int, int]:
        """(last submission seq, last tombstone seq): changes whenever what the board shows can change (the
        board's caches and the page's live refresh compare it; one indexed read)."""
        row = self._query("SELECT (SELECT COALESCE(MAX(seq), 0) FROM submissions) AS s,"
                          " (SELECT COALESCE(MAX(seq), 0) FROM tombstones) AS t")[0]
        return int(row["s"]), int(row["t"])

    def integrity_check(self) -> str:
        return str(self._query("PRAGMA integrity_check")[0][0])
