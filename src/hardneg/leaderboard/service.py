"""The leaderboard as one object: validate, recompute, store, mirror, moderate, build the board.

The Space (`spaces/leaderboard/app.py`) and `hardneg submit` with a local folder both
call this; it owns no global state, so tests build one per temporary folder.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import logging
import os
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path

from hardneg.leaderboard.baselines import BLIND_MODEL, Baseline, blind_baseline, random_baseline
from hardneg import benchmarks as registry
from hardneg import vocabulary
from hardneg.leaderboard import overall as overall_view
from hardneg.leaderboard.board import (KINDS, BoardRow, Cell, Column, bar_chart, board_columns, cells_from_results,
                                       machine_table, mark_ties, negative_type_chart, number_cell, number_parts,
                                       number_values, render)
from hardneg.leaderboard.drawing import (DAMAGED, DAMAGED_NAME, NOT_ON_BOARD, NOT_ON_BOARD_NAME, Placeholder, shown_name,
                                         validate_stored_results)
from hardneg.leaderboard.eval_results import eval_results_files, space_url_from_env
from hardneg.leaderboard.items import ItemSet, load_benchmarks
from hardneg.leaderboard.recompute import recompute
from hardneg.leaderboard.identity import Identity, IdentityError, as_identity
from hardneg.leaderboard.mirror import strip_local_paths
from hardneg.leaderboard.model_meta import clean_model_meta, shown_model_meta
from hardneg.leaderboard.store import Store, StoredSubmission
from hardneg.leaderboard.subsets import add_subset_parts
from hardneg.truncation import cut_count
from hardneg.leaderboard.validate import MAX_FILE_BYTES, SubmissionError, quote, upload_limit, validate_submission

log = logging.getLogger(__name__)

ADMIN_TOKEN_ENV = "HARDNEG_ADMIN_TOKEN"
#: the mirror's state, written into the data folder for `hardneg leaderboard status`
STATUS_FILE = "mirror-status.json"


@dataclass
class SubmitOutcome:
    ok: bool
    message: str
    submission: StoredSubmission | None = None  # the first part stored
    submissions: list[StoredSubmission] | None = None  # every part of the file


class LazyValues(dict):
    """column name -> per-item values, read from the store on first use (a page load of a board with many
    submissions reads only the rows its paired tests compare)."""

    def __init__(self, load):
        super().__init__()
        self._load = load
        self._refs: dict[str, tuple[str, str]] = {}

    def refer(self, column: str, submission_id: str, metric: str) -> None:
        self._refs[column] = (submission_id, metric)

    def refer_parts(self, column: str, refs: list[tuple[str, str]], combine) -> None:
        """A column whose values are made from several submissions' (a benchmark's number over several parts):
        combine([values of each (submission id, metric)]) -> values or None, run on first use."""
        self._refs[column] = (tuple(refs), combine)

    def _fetch(self, column: str):
        if column in self._refs and not dict.__contains__(self, column):
            sub_id, metric = self._refs[column]
            if isinstance(sub_id, tuple):  # refer_parts
                got = metric([self._load(s).get(m) for s, m in sub_id])
                values = None if got is None else got[0]
            else:
                values = self._load(sub_id).get(metric)
            if values is None:
                del self._refs[column]
                return
            dict.__setitem__(self, column, values)

    def __contains__(self, column) -> bool:
        return column in self._refs or dict.__contains__(self, column)

    def __getitem__(self, column):
        self._fetch(column)
        return dict.__getitem__(self, column)

    def get(self, column, default=None):
        self._fetch(column)
        return dict.get(self, column, default)


def model_meta(subs: list[StoredSubmission]) -> dict:
    """The model metadata stored with the newest part (`model_meta`: params, model_type, license, link, revision)."""
    for s in sorted(subs, key=lambda s: s.created_at, reverse=True):
        meta = getattr(s, "model_meta", None) or (s.metadata or {}).get("model_meta")
        if isinstance(meta, dict):
            return shown_model_meta(meta)  # only checked fields reach a table, whatever the store holds
    return {}


def model_link(model: str, subs: list[StoredSubmission]) -> str:
    """The link the submitter gave (http(s) only), else the model's Hub page."""
    link = model_meta(subs).get("link")
    if isinstance(link, str) and link.lower().startswith(("https://", "http://")):
        return link
    if any(s.local for s in subs):  # a local board's name (local/NAME) has no Hub page
        return ""
    return f"https://huggingface.co/{model}" if "/" in model else ""


def _type_chance(items, negative_type: str) -> float:
    """Chance of 'the positive above every negative of this type' for items that have one: mean of 1/(1+k)."""
    import numpy as np

    ks = [sum(t == negative_type for t in types) for types in (items.negative_types or [])]
    ks = [k for k in ks if k]
    return float(np.mean([1.0 / (1 + k) for k in ks])) if ks else None


def _pool(entries: list[dict]) -> dict:
    """One value per negative type over a benchmark's parts: item-weighted mean; the interval from the parts'
    (independent items: standard errors from the 95% half-widths, combined in quadrature, as Overall does).
    Each entry holds the engine's top-1 value under its benchmark's own key (R@1 or Accuracy)."""
    import math

    from hardneg.leaderboard.overall import Z95

    def top1(e: dict) -> dict:
        return next(v for k, v in e.items() if isinstance(v, dict) and k != "MRR")

    total = sum(e["n"] for e in entries)
    est = sum(e["n"] * top1(e)["value"] for e in entries) / total
    low = high = None
    if all(top1(e).get("low") is not None for e in entries):
        if len(entries) == 1:
            low, high = top1(entries[0])["low"], top1(entries[0])["high"]
        else:
            se = math.sqrt(sum((e["n"] / total * (top1(e)["high"] - top1(e)["low"]) / (2 * Z95)) ** 2
                               for e in entries))
            low, high = est - Z95 * se, est + Z95 * se
    chances = [(e["n"], e["chance"]) for e in entries if e.get("chance") is not None]
    chance = sum(n * c for n, c in chances) / sum(n for n, _ in chances) if chances else None
    return {"estimate": est, "low": low, "high": high, "n": total, "chance": chance}


def _add_number(row: BoardRow, benchmark: str, cols: list[Column], results: dict, parts) -> None:
    """The row's cell of the benchmark's one number where it is a computed column (a mean or pooled over configs;
    a one-config number is that config's own cell already)."""
    col = next((c for c in cols if c.overall), None)
    if col is not None and not col.config:
        cell = number_cell(benchmark, results, parts)
        if cell is not None:
            row.cells[col.name] = cell


def refusal_of_files(refused: list[tuple[int, SubmissionError]], n_files: int) -> str:
    """One refusal for several files: a problem every refused file shares (a model name without a namespace in
    all 44 files of a `hardneg run` folder) is said once, then what each file has of its own (issue 33)."""
    if n_files == 1:
        return str(refused[0][1])
    shared = [p for p in refused[0][1].problems if all(p in exc.problems for _, exc in refused[1:])]
    lines = []
    if shared and len(refused) > 1:
        which = "every file" if len(refused) == n_files else f"{len(refused)} of the {n_files} files"
        lines.append(f"submission refused ({which}):\n- " + "\n- ".join(shared))
    else:
        shared = []
    for k, exc in refused:
        own = [p for p in exc.problems if p not in shared]
        if own:
            lines.append(f"file {k + 1} of {n_files}: submission refused:\n- " + "\n- ".join(own))
    return "\n".join(lines) + "\nnothing was stored"


class Leaderboard:
    """Submissions in, board tables out. `item_sets` come from built benchmark folders."""

    #: the background restore's first and longest wait between tries, in seconds (doubling in between)
    restore_retry_s = (1.0, 60.0)

    def __init__(self, data_dir: str | Path, item_sets: dict[tuple[str, str, str], ItemSet] | None = None,
                 benchmarks_dir: str | Path | None = None, n_resamples: int = 1000, max_bytes: int = MAX_FILE_BYTES,
                 mirror=None, blind_model=None, compute_blind: bool = True, restore: bool | str = True):
        if item_sets is None:
            if benchmarks_dir is None:
                raise ValueError("pass item_sets or benchmarks_dir (a folder of `hardneg build` outputs)")
            item_sets = load_benchmarks(benchmarks_dir)
        self.item_sets = item_sets
        self.store = Store(data_dir)
        self.n_resamples = n_resamples
        self.max_bytes = max_bytes
        self.mirror = mirror
        self._blind_model = blind_model
        self._compute_blind = compute_blind
        self._baselines: dict[tuple, list[Baseline]] | None = None
        self._rows_cache: dict[str, tuple[tuple, list[BoardRow]]] = {}
        self._pvalues: dict = {}
        self._rows_lock = threading.RLock()
        self._baselines_lock = threading.Lock()
        self._by_type: dict = {}
        self._per_cache: dict[str, dict] = {}
        self._details: tuple | None = None
        self._restore_error: str | None = None
        self._restore_lock = threading.Lock()
        self._retry_thread: threading.Thread | None = None
        self._threads: list[threading.Thread] = []  # warm-up threads (joined by `close`)
        self._closed = threading.Event()
        self.restored: dict[str, int] = {}
        self.last_publish_failure: str | None = None
        #: commits submissions and moderations to the results repo (compare-and-swap, group commits; issue 49)
        self.writer = None
        if mirror is not None:
            from hardneg.leaderboard.writer import RepoWriter

            self.writer = RepoWriter(mirror, self.store, self._check_record)
        if mirror is not None and restore == "background":
            # a Space: the page serves (saying "restoring") while the repo is read back; submissions wait for it
            self._restore_error = "the restore at start is running"
            self._retry_restore_later(first_wait=0.0)
        elif mirror is not None and restore:
            if not self.restore_from_mirror():
                self._retry_restore_later()

    def close(self, timeout: float = 30.0) -> None:
        """Stop this board's background work and wait for it: the restore retry, the p-values thread, the
        warm-up threads. After it returns nothing of the board reads its store, so the store may be removed (issue
        42, N21: a benchmark removed its store while the board's threads still read it)."""
        self._closed.set()
        close = getattr(self._pvalues, "close", None)
        if close is not None:
            close(timeout)
        for t in [self._retry_thread, *self._threads]:
            if t is not None and t is not threading.current_thread():
                t.join(timeout)

    # --- the results repo as the source of truth ------------------------------------------
    def restore_from_mirror(self) -> bool:
        """Bring the store up to its mirror (the Hub results repo) when it is empty or behind: every submission and
        tombstone, same ids and versions, nothing twice; then push what the store has and the mirror lacks. On a
        Space without persistent storage a restart wipes the store; this is what brings the board back (issue 36).
        A failure (Hub down) is logged and remembered: submissions are refused until a retry succeeds, so no new
        version can take a number the mirror already holds."""
        with self._restore_lock:
            try:
                self.restored = self.mirror.restore(self.store, self._check_record)
                self._restore_error = None
            except Exception as exc:  # noqa: BLE001 (the board still serves what it has)
                self._restore_error = f"the results repo could not be read yet: {type(exc).__name__}: {exc}"
                log.error("restoring the store from the results repo %s failed: %s", getattr(self.mirror, "repo_id", "?"),
                          self._restore_error)
                self._write_status()
                return False
            for path, why in (getattr(self.mirror, "report", None) or {}).get("skipped", []):
                log.error("results repo: %s not restored: %s", path, why)
            if any(self.restored.get(k) for k in ("submissions", "tombstones")):
                log.warning("restored from the results repo: %s", self.restored)
            if self.restored.get("conflicts") or self.restored.get("unreadable"):
                log.error("results repo records not restored: %s", self.restored)
            try:
                self.mirror.sync(self.store)
            except Exception as exc:  # noqa: BLE001 (retried by the next restore; the store keeps them)
                log.warning("pushing unmirrored rows to the results repo failed: %s", exc)
            self._write_status()
            return True

    def _retry_restore_later(self, first_wait: float | None = None) -> None:
        """Retry the restore in the background until it succeeds (issue 42, N13: a board started while the Hub was
        down stayed empty after the Hub came back, until someone submitted): waits double from
        `restore_retry_s[0]` up to `restore_retry_s[1]` seconds."""
        if self._retry_thread is not None and self._retry_thread.is_alive():
            return

        def loop():
            wait, longest = self.restore_retry_s
            if first_wait is not None and not self._closed.is_set() and self.restore_from_mirror():
                return
            while self._restore_error is not None and not self._closed.wait(wait):
                if self.restore_from_mirror():
                    log.warning("results repo read back in the background: %s", self.restored)
                    return
                wait = min(longest, wait * 2)

        self._retry_thread = threading.Thread(target=loop, name="hardneg-board-restore", daemon=True)
        self._retry_thread.start()

    def _check_record(self, record: dict, parquet: bytes) -> tuple[dict, bytes]:
        """A record read back from the results repo, checked as a submission is (issue 42, N17): its predictions
        file passes `validate_submission` under the record's model name, and its scores and per-item values are
        recomputed from it with this board's items; the record's own numbers are never used. Raises when the file
        does not pass or its part is not on this board."""
        from hardneg.leaderboard.identity import Identity
        from hardneg.leaderboard.store import pack_arrays

        key = (record["benchmark"], record["config"], record["split"])
        if key not in self.item_sets:
            raise ValueError(f"{'/'.join(key)} is not on this board (kept in the repo; restored by a board that has it)")
        ns = str(record["model_id"]).partition("/")[0]
        try:
            sub = validate_submission(parquet, Identity(ns, local=True), self.item_sets, self.max_bytes)
        except SubmissionError as exc:
            raise ValueError(f"its predictions file is refused: {'; '.join(exc.problems)[:300]}") from None
        if sub.model_id != record["model_id"]:
            raise ValueError(f"its predictions file names {quote(sub.model_id, 80)}, not {quote(record['model_id'], 80)}")
        add_subset_parts([sub], self.item_sets)
        part = next((p for p in sub.parts if (p.items.benchmark, p.items.config, p.items.split) == key), None)
        if part is None:
            raise ValueError(f"its predictions file has no rows for {'/'.join(key)}")
        result = recompute(part.items, part.scores, part.mask, n_resamples=self.n_resamples)
        return result.to_dict(), pack_arrays(result.per_example)

    # --- what the operator sees of the mirror ------------------------------------------------
    def mirror_status(self) -> dict:
        """The results repo's state as the operator reads it (page footer, `hardneg leaderboard status`): whether
        the store was read back, the last restore's report (counts, and every record skipped with its reason),
        and what the store holds that the repo lacks (the outbox)."""
        if self.mirror is None:
            return {"repo": None}
        report = getattr(self.mirror, "report", None) or {}
        return {
            "repo": getattr(self.mirror, "repo_id", "?"),
            "restore": f"restoring ({self._restore_error})" if self._restore_error else "restored",
            "restored": dict(self.restored),
            "skipped": [list(p) for p in report.get("skipped", [])][:200],
            "outbox": self.store.outbox_counts(),
            "last_publish_failure": self.last_publish_failure,
            "waiting": self.writer.waiting if self.writer is not None else 0,
        }

    def status_line(self) -> str:
        """One line for the page footer ("" on a board without a results repo: nothing to say there)."""
        st = self.mirror_status()
        if st["repo"] is None:
            return ""
        out = f"Results repo {st['repo']}: {st['restore']}"
        skipped = len(st["skipped"])
        if skipped:
            out += f"; {skipped} record(s) in the repo not restored (see `hardneg leaderboard status`)"
        if st.get("waiting"):
            out += f"; {st['waiting']} submission(s) or moderation(s) waiting for the Hub to confirm them"
        box = st["outbox"]
        if box["submissions"] or box["tombstones"]:
            out += f"; outbox: {box['submissions']} submission(s), {box['tombstones']} moderation(s) not yet published"
        return out + "."

    def _write_status(self) -> None:
        """mirror_status() written atomically into the data folder (`mirror-status.json`), for the status command."""
        from hardneg.io import atomic_write_text

        try:
            atomic_write_text(self.store.data_dir / STATUS_FILE, json.dumps(self.mirror_status(), indent=1))
        except Exception:  # noqa: BLE001 (a status file never stops the board)
            log.exception("writing %s failed", STATUS_FILE)

    @property
    def benchmarks(self) -> list[str]:
        order = registry.names()
        return sorted({b for b, _, _ in self.item_sets}, key=order.index)

    # --- submissions --------------------------------------------------------------------
    @property
    def upload_limit(self) -> int:
        """The largest file any config of this board can need (Gradio's `max_file_size` for the Space)."""
        return upload_limit(self.item_sets, self.max_bytes)

    def submit(self, data, submitter: Identity | str, model_meta: dict | None = None) -> SubmitOutcome:
        """Validate, recompute and store one predictions file; the message says what happened or what to fix.

        data: the file's bytes or its path. submitter: the verified identity (`hardneg.leaderboard.identity`);
        a plain name is a user with no organizations (a local board, tests). model_meta: the model's metadata
        (`hardneg.leaderboard.model_meta`), stored with it. The same file under the same model name returns the
        versions it made before and stores nothing new. Never raises for a bad file: any unexpected error is
        logged here and answered with a plain message.
        """
        return self.submit_files([data], submitter, model_meta)

    def submit_files(self, files: list, submitter: Identity | str, model_meta: dict | None = None) -> SubmitOutcome:
        """Several predictions files of ONE model (a `hardneg run` folder) as one submission: every file is
        checked and scored first, then all are stored in one transaction, or none is (a refusal lists every
        file's problems)."""
        try:
            identity = as_identity(submitter)
        except IdentityError:
            return SubmitOutcome(False, "submission refused:\n- sign in with your Hugging Face account first; "
                                        "nothing was stored")
        try:
            meta = clean_model_meta(model_meta)
        except ValueError as exc:
            return SubmitOutcome(False, f"submission refused:\n- {quote(str(exc), 300)}; nothing was stored")
        if not files:
            return SubmitOutcome(False, "submission refused:\n- no predictions file; nothing was stored")
        if self._restore_error is not None and not self.restore_from_mirror():
            self._retry_restore_later()
            return SubmitOutcome(False, "submission refused:\n- the board is being restored: it could not read its "
                                        "results repo back from the Hub yet (it would risk numbering a version "
                                        "twice); nothing was stored. Try again in a few minutes")
        try:
            return self._submit(list(files), identity, meta)
        except Exception:  # a bug or an unexpected input: logged with its traceback, never shown to the submitter
            ref = uuid.uuid4().hex[:12]
            log.exception("submission by %s failed unexpectedly (reference %s)", identity.username, ref)
            return SubmitOutcome(False, "submission refused:\n- the board could not check this file (internal "
                                        f"error, reference {ref}); nothing was stored. Try again later, and report "
                                        "the reference if it persists")

    def _submit(self, files: list, identity: Identity, model_meta: dict) -> SubmitOutcome:
        checked, refused = [], []
        for k, data in enumerate(files):
            try:
                sub = validate_submission(data, identity, self.item_sets, self.max_bytes)
            except SubmissionError as exc:
                refused.append((k, exc))
                continue
            if not isinstance(data, (bytes, bytearray, memoryview)):
                data = Path(data).read_bytes()  # validated, so its size is bounded
            checked.append((sub, bytes(data)))
        if refused:
            return SubmitOutcome(False, refusal_of_files(refused, len(files)))
        models = sorted({sub.model_id for sub, _ in checked})
        if len(models) > 1:
            return SubmitOutcome(False, "submission refused:\n- the files name different models ("
                                        f"{', '.join(quote(m, 80) for m in models[:5])}); one submission is one "
                                        "model: pass --model-id to name them all, or submit them apart; nothing "
                                        "was stored")
        parts_seen: dict[tuple, int] = {}
        for sub, _ in checked:
            for p in sub.parts:
                key = (p.items.benchmark, p.items.config, p.items.split)
                parts_seen[key] = parts_seen.get(key, 0) + 1
        twice = [k for k, n in parts_seen.items() if n > 1]
        if twice:
            return SubmitOutcome(False, "submission refused:\n- " + "; ".join("/".join(k) for k in twice[:5]) +
                                 " is in more than one file; keep one file per part; nothing was stored")
        # a declared subset config (ATP-Hard's causal, temporal) is scored from the same file as its larger config
        derived = add_subset_parts([sub for sub, _ in checked], self.item_sets)
        model_id = models[0]
        before_all, todo = [], []
        for sub, data in checked:
            sha = hashlib.sha256(data).hexdigest()
            wanted = {(p.items.benchmark, p.items.config, p.items.split) for p in sub.parts}
            before = [s for s in self.store.find_file(model_id, sha) if (s.benchmark, s.config, s.split) in wanted]
            if len(before) == len(wanted):  # a retry or a resubmission of the same file: nothing new
                before_all += before
            else:
                todo.append((sub, data))
        if not todo:
            return SubmitOutcome(True, self._already(before_all), before_all[0], before_all)
        given = {k: v for k, v in model_meta.items() if v is not None}  # checked; wins over the file's own
        files, all_results = [], []
        for sub, data in todo:
            in_file = sub.metadata.get("model_meta")  # checked by validate_submission; stored as cleaned
            in_file = {k: v for k, v in clean_model_meta(in_file).items() if v is not None}
            extra = {"identity": "local" if identity.local else "hub", "model_meta": {**in_file, **given}}
            results = [recompute(part.items, part.scores, part.mask, n_resamples=self.n_resamples)
                       for part in sub.parts]
            all_results += results
            files.append(dict(
                metadata={**strip_local_paths(sub.metadata), **extra}, file_bytes=data,
                parts=[dict(benchmark=p.items.benchmark, config=p.items.config, split=p.items.split,
                            data_revision=str(sub.metadata["data_revision"]), results=r.to_dict(),
                            per_example=r.per_example) for p, r in zip(sub.parts, results)]))
        from hardneg.leaderboard.mirror import PublishFailed

        if self.writer is None:
            stored, created = self.store.add_files(model_id=model_id, submitter=identity.username, files=files)
        else:  # a version is numbered from the repo's head and stored once the repo holds it (issues 42 and 49)
            from hardneg.leaderboard.mirror import HeldUnreadable

            try:
                ids, created = self.writer.submit(model_id, identity.username, files)
            except PublishFailed as exc:
                return SubmitOutcome(False, self._not_published(exc, "submission"))
            except HeldUnreadable as exc:
                return SubmitOutcome(False, f"submission refused:\n- {exc}")
            stored = [self.store.get(i) for i in ids]
        if not created:  # identical files landed between the check and the write
            everything = before_all + stored
            return SubmitOutcome(True, self._already(everything), everything[0], everything)
        new_ids = {s.id for s in before_all}
        self._warm_later()  # a running board prepares the new tables now, not at the next visitor's page load
        lines = []
        for s, r in zip(stored, all_results):
            if s.id in new_ids:
                continue
            head = ", ".join(f"{vocabulary.header(k)} {vocabulary.display_entry(k, v)}"
                             for k, v in list(r.metrics.items())[:4]
                             if v.get("estimate") is not None and v.get("low") is not None)
            lines.append(f"stored {s.model_id} v{s.version} on {s.benchmark}/{s.config}/{s.split} "
                         f"(submission {s.id}){' [local]' if identity.local else ''}: {head}")
        if derived:
            lines.append("scored from the file's own rows: " + "; ".join(derived))
        if before_all:
            lines.append(self._already(before_all))
        return SubmitOutcome(True, "\n".join(lines), stored[0], before_all + stored)

    def _not_published(self, exc, what: str) -> str:
        """The refusal when the results repo did not confirm a commit; when it may have landed (a lost reply), the
        board reads the repo back before it numbers anything again."""
        self.last_publish_failure = f"{what}: {exc}"
        log.error("publishing a %s to the results repo failed: %s", what, exc)
        self._write_status()
        head = (f"{what} not confirmed:\n- the board's results repo on the Hub did not confirm it after "
                f"{self.mirror.policy.tries} tries ({quote(str(exc), 160)})")
        if getattr(exc, "unknown", False):  # never "not stored" while the Hub may still process it (issue 49, N23)
            return (f"{head}; it may still land: the Hub may be processing it. Send it again in a few minutes: the "
                    "same file is then answered 'already stored' if it landed, and stored once if it did not "
                    "(a retry never makes a second version)")
        return f"{head}; nothing was stored. Try again in a few minutes"

    @staticmethod
    def _already(subs: list[StoredSubmission]) -> str:
        return "\n".join(f"already stored {s.model_id} v{s.version} on {s.benchmark}/{s.config}/{s.split} "
                         f"(submission {s.id}): this exact file was submitted before under this model name; "
                         "nothing new was stored" for s in subs)

    def history(self, model_id: str) -> list[dict]:
        """Every version of a model, hidden ones included (marked), oldest first."""
        return [
            {"id": s.id, "benchmark": s.benchmark, "config": s.config, "split": s.split, "version": s.version,
             "state": s.state, "created_at": s.created_at, "data_revision": s.data_revision}
            for s in self.store.history(model_id.strip())
        ]

    def moderate(self, token: str, target: str, action: str, reason: str = "") -> str:
        """Hide / delete / restore a submission id, or every version of a model id; needs the admin token."""
        expected = os.environ.get(ADMIN_TOKEN_ENV, "")
        if not expected:
            raise PermissionError(f"moderation is off: set {ADMIN_TOKEN_ENV} in the Space's secrets")
        if not hmac.compare_digest((token or "").encode(), expected.encode()):
            raise PermissionError("wrong admin token")
        from hardneg.leaderboard.mirror import PublishFailed

        target = (target or "").strip()
        if self._restore_error is not None and self.mirror is not None and not self.restore_from_mirror():
            return (f"{action} not applied: the board is being restored (its results repo could not be read yet); "
                    "try again in a few minutes")
        ids = [s.id for s in self.store.history(target)] or [target]
        already = 0
        for k, sub_id in enumerate(ids):
            try:  # a moderation goes the same path as a submission: applied once the repo holds it
                if self.writer is None:
                    self.store.add_tombstone(sub_id, action, reason)
                else:  # a repeated one (a retry after a lost answer) stores nothing new (issue 49, N26)
                    already += not self.writer.moderate(sub_id, action, reason)["applied"]
            except PublishFailed as exc:
                return (f"{action}: {k} of {len(ids)} submission(s) of {quote(target)} done; "
                        + self._not_published(exc, action).replace("nothing was stored", "the rest were not applied"))
        note = f" ({already} of them in that state already: nothing new stored for those)" if already else ""
        return f"{action}: {len(ids)} submission(s) of {quote(target)}{note}"

    def eval_results(self, model_id: str) -> dict[str, str]:
        return eval_results_files(self.store, model_id.strip(), space_url_from_env())

    # --- the board ------------------------------------------------------------------------
    def baselines(self) -> dict[tuple, list[Baseline]]:
        with self._baselines_lock:  # computed once, by whichever of a page load and the warm-up comes first
            return self._compute_baselines()

    def _compute_baselines(self) -> dict[tuple, list[Baseline]]:
        if self._baselines is None:
            blind_model = self._blind_model
            out: dict[tuple, list[Baseline]] = {}
            for key, items in self.item_sets.items():
                rows = [random_baseline(items, self.n_resamples)]
                if self._compute_blind:
                    if blind_model is None:
                        blind_model = self._load_blind()
                    rows.append(blind_baseline(items, blind_model, self.n_resamples) if blind_model is not False
                                else Baseline(f"text-only ({BLIND_MODEL})", f"pending: {self._blind_error}", None))
                out[key] = rows
            self._baselines = out
        return self._baselines

    def _load_blind(self):
        """The text-only model once per board; False (baseline pending) when it cannot load here."""
        try:
            from hardneg.models import load_model

            self._blind_model = load_model(BLIND_MODEL)
            return self._blind_model
        except Exception as exc:  # the models extra or its word list is missing
            self._blind_error = f"{type(exc).__name__}: {exc}"
            return False

    def columns(self, benchmark: str) -> list[Column]:
        return board_columns(benchmark, self.item_sets)

    def _number_parts(self, benchmark: str) -> list[tuple[str, str]]:
        return number_parts(benchmark, self.item_sets)

    def _per_example(self, submission_id: str) -> dict:
        """A submission's stored per-item values (cached: a stored submission never changes)."""
        hit = self._per_cache.get(submission_id)
        if hit is None:
            hit = self._per_cache[submission_id] = self.store.per_example(submission_id)
            if len(self._per_cache) > 4096:  # bounded: the oldest reads go first
                self._per_cache.pop(next(iter(self._per_cache)))
        return hit

    def state(self) -> tuple[int, ...]:
        """Changes whenever a submission or a moderation lands, or background p-values land (what the page's live
        refresh watches)."""
        return (*self.store.state_token(), getattr(self._pvalues, "generation", 0))

    def start_background(self) -> None:
        """A running board (the Space app): paired p-values are computed in a background thread rather than
        during a page load (`hardneg.leaderboard.pvalues`), and every table's rows and p-values are prepared
        now and after each submission, so a visitor's page load only reads caches (issue 29)."""
        from hardneg.leaderboard.pvalues import BackgroundPValues

        if not isinstance(self._pvalues, BackgroundPValues):
            cache = BackgroundPValues()
            cache.update(self._pvalues)
            self._pvalues = cache
        self._warm_later()

    def _warm_later(self) -> None:
        import threading

        if getattr(self._pvalues, "schedule", None) is None or self._closed.is_set():
            return
        t = threading.Thread(target=self._warm, name="hardneg-board-warm", daemon=True)
        self._threads = [x for x in self._threads if x.is_alive()] + [t]
        t.start()

    def _warm(self) -> None:
        """Rows of every benchmark read, and the default table's p-values queued (errors logged, never raised)."""
        try:
            self.baselines()  # the item sets' baselines (computed once per board)
            for bench in self.benchmarks:
                cols = self.columns(bench)
                sort_col = next((c for c in cols if c.headline), None)
                if sort_col is not None:
                    mark_ties(self.rows(bench), sort_col, cache=self._pvalues)
        except Exception:  # noqa: BLE001 (the page computes what is missing; this only saves it the wait)
            log.exception("preparing the board in the background failed")

    def rows(self, benchmark: str) -> list[BoardRow]:
        """The board's rows of one benchmark, read from the store as it is now (cached until it changes)."""
        with self._rows_lock:  # one reader computes them; a page load and the background warm-up do not both
            token = self.store.state_token()
            hit = self._rows_cache.get(benchmark)
            if hit is not None and hit[0] == token:
                return hit[1]
            rows = self._rows(benchmark)
            self._rows_cache[benchmark] = (token, rows)
            return rows

    def _refer_number(self, row: BoardRow, benchmark: str, cols: list[Column], ids: dict) -> None:
        """The per-item values of the benchmark's number where it is computed over several parts (a mean or pooled
        over configs), read on first use: the paired test of "p vs #1" on that column (`board.number_values`)."""
        col = next((c for c in cols if c.overall and not c.config), None)
        parts = self._number_parts(benchmark)
        if col is None or len(parts) < 2 or any(p not in ids for p in parts):
            return
        combine = functools.partial(number_values, benchmark, self.item_sets)
        row.per_example.refer_parts(col.name, [(ids[p], col.metric) for p in parts], combine)
        got_clusters = [self.item_sets[(benchmark, c, s)].clusters for c, s in parts]
        import numpy as np

        row.clusters[col.name] = np.concatenate([np.asarray(c) for c in got_clusters])

    def _rows(self, benchmark: str) -> list[BoardRow]:
        cols = self.columns(benchmark)
        by_part: dict[tuple[str, str], list[Column]] = {}
        for c in cols:
            by_part.setdefault((c.config, c.split), []).append(c)
        rows: list[BoardRow] = []
        # submitted models: newest visible version per part
        per_model: dict[str, list[StoredSubmission]] = {}
        for s in self.store.current(benchmark):
            per_model.setdefault(s.model_id, []).append(s)
        for model, subs in sorted(per_model.items()):
            missing = [s for s in subs if (benchmark, s.config, s.split) not in self.item_sets]
            if missing:  # N16: parts this board does not have (a rebuild without them): a placeholder names them
                rows.append(self._not_on_board(model, missing))
                subs = [s for s in subs if s not in missing]
                if not subs:
                    continue
            checked = {s.id: validate_stored_results(s) for s in subs}
            damaged = [p for p in checked.values() if isinstance(p, Placeholder)]
            if damaged:  # N1: the row names the damaged submission(s); every other row is drawn as usual
                ids = ", ".join(p.id for p in damaged)
                rows.append(BoardRow(DAMAGED_NAME.format(model=shown_name(model), ids=ids), "submitted", {},
                                     note=DAMAGED.format(ids=ids, reason="; ".join(p.reason for p in damaged)),
                                     version=", ".join(f"{s.config}/{s.split} v{s.version}" for s in subs),
                                     ids=tuple(sorted(s.id for s in subs))))
                continue
            results = {(s.config, s.split): checked[s.id] for s in subs}
            row = BoardRow(model, "submitted", cells_from_results(cols, results),
                           version=", ".join(f"{s.config}/{s.split} v{s.version}" for s in subs),
                           submitter="local" if any(s.local for s in subs) else subs[0].submitter,
                           source="local" if any(s.local for s in subs) else "",
                           submitted=max(s.created_at for s in subs)[:10],
                           link=model_link(model, subs), model_meta=model_meta(subs),
                           ids=tuple(sorted(s.id for s in subs)),
                           cuts=sum(cut_count((s.metadata or {}).get("text_cuts")) for s in subs))
            _add_number(row, benchmark, cols, results, self._number_parts(benchmark))
            row.per_example = LazyValues(self._per_example)  # read only for the rows a paired test needs
            self._refer_number(row, benchmark, cols, {(s.config, s.split): s.id for s in subs})
            for s in subs:
                items = self.item_sets[(benchmark, s.config, s.split)]
                n = next(iter(checked[s.id].values()), {}).get("n", len(items))
                row.coverage[f"{s.config}/{s.split}"] = f"{n}/{len(items)}"
                for c in by_part.get((s.config, s.split), []):
                    if c.metric in checked[s.id]:
                        row.per_example.refer(c.name, s.id, c.metric)
                        row.clusters[c.name] = items.clusters
            rows.append(row)
        # computed baselines: one row each, whatever the number of parts
        baselines = self.baselines()
        names: dict[str, BoardRow] = {}
        baseline_results: dict[str, dict] = {}
        baseline_values: dict[str, dict] = {}
        for key, items in self.item_sets.items():
            if key[0] != benchmark:
                continue
            for b in baselines[key]:
                row = names.setdefault(b.name, BoardRow(b.name, "baseline", {}, note=b.note))
                if b.result is None:
                    row.note = b.note
                    continue
                row.coverage[f"{key[1]}/{key[2]}"] = f"{len(items)}/{len(items)}"
                baseline_results.setdefault(b.name, {})[(key[1], key[2])] = b.result.metrics
                row.cells.update(cells_from_results(by_part.get((key[1], key[2]), []),
                                                    {(key[1], key[2]): b.result.metrics}))
                for c in by_part.get((key[1], key[2]), []):
                    if c.metric in b.result.per_example:
                        row.per_example[c.name] = b.result.per_example[c.metric]
                        row.clusters[c.name] = items.clusters
                baseline_values.setdefault(b.name, {})[(key[1], key[2])] = b.result.per_example
        for name, row in names.items():
            _add_number(row, benchmark, cols, baseline_results.get(name, {}), self._number_parts(benchmark))
            col = next((c for c in cols if c.overall and not c.config), None)
            per_part = baseline_values.get(name, {})
            if col is not None:
                got = number_values(benchmark, self.item_sets, [per_part.get(p, {}).get(col.metric)
                                                                for p in self._number_parts(benchmark)])
                if got is not None:
                    row.per_example[col.name], row.clusters[col.name] = got
        rows.extend(names.values())
        # the papers' reported numbers (from the declaration): only columns this board has
        names_by_key = {(c.config, c.metric): c.name for c in cols}
        for rep in registry.get(benchmark).reported:
            cells = {names_by_key[k]: Cell(v) for k, v in rep.values.items() if k in names_by_key}
            if cells:
                rows.append(BoardRow(rep.model, "reported", cells, source=rep.source))
        return rows

    @staticmethod
    def _not_on_board(model: str, subs: list[StoredSubmission]) -> BoardRow:
        """The placeholder of a model's stored parts that this board has no items for (issue 42, N16): like a
        damaged row (N1), it names them and draws no value; the rest of the board is unaffected."""
        parts = ", ".join(f"{s.benchmark}/{s.config}/{s.split} v{s.version}" for s in subs)
        ids = ", ".join(s.id for s in subs)
        return BoardRow(NOT_ON_BOARD_NAME.format(model=shown_name(model), parts=shown_name(parts)), "submitted", {},
                        note=NOT_ON_BOARD.format(parts=shown_name(parts), ids=ids), version=parts,
                        ids=tuple(sorted(s.id for s in subs)))

    def table(self, benchmark: str, sort_by: str | None = None, descending: bool | None = None, search: str = "",
              kinds=KINDS, shown: list[str] | None = None):
        return render(self.rows(benchmark), self.columns(benchmark), sort_by, descending, search, kinds, shown,
                      pvalue_cache=self._pvalues)

    def table_frame(self, benchmark: str, search: str = "", kinds=KINDS):
        """The download of one benchmark's board: fractions with their intervals (machine output)."""
        return machine_table(self.rows(benchmark), self.columns(benchmark), search, kinds)

    def chance(self, benchmark: str, column: str) -> float | None:
        """The exact chance value of one column (the random baseline's, computed by the core)."""
        row = next((r for r in self.rows(benchmark) if r.kind == "baseline" and r.model.startswith("random")), None)
        cell = row.cells.get(column) if row else None
        return None if cell is None else cell.estimate

    def chart(self, benchmark: str, column: str | None = None, search: str = "", kinds=KINDS):
        cols = self.columns(benchmark)
        col = next((c for c in cols if c.name == column), cols[0])
        needle = (search or "").lower()
        rows = [r for r in self.rows(benchmark) if r.kind in kinds and needle in r.model.lower()]
        return bar_chart(rows, col, registry.get(benchmark).title, chance=self.chance(benchmark, col.name))

    # --- Overall ------------------------------------------------------------------------------
    def overall_rows(self) -> list[overall_view.OverallRow]:
        rows = overall_view.overall_rows({b: self.rows(b) for b in self.benchmarks},
                                         {b: self.columns(b) for b in self.benchmarks})
        # rows of a benchmark this board does not have at all (N16): one placeholder per model, in Overall, `show`
        # and the CSV
        known = set(self.benchmarks)
        away: dict[str, list[StoredSubmission]] = {}
        for s in self.store.current():
            if s.benchmark not in known:
                away.setdefault(s.model_id, []).append(s)
        n = len(self.overall_names())
        for model, subs in sorted(away.items()):
            row = self._not_on_board(model, subs)
            rows.append(overall_view.OverallRow(row.model, "submitted", {}, 0, n, None, {}, "",
                                                max(str(s.created_at) for s in subs)[:10]))
        return rows

    def overall_names(self) -> list[str]:
        """The benchmarks Overall averages: every benchmark on this board with a fraction headline metric."""
        return [b for b in self.benchmarks if overall_view.overall_metric(b) is not None]

    def overall(self, sort_by: str = overall_view.AVERAGE, descending: bool = True, search: str = "", types=None,
                sizes=None, kinds=("submitted", "baseline"), links: bool = True):
        """The Overall table a person sees (see `hardneg.leaderboard.overall`); `links=False`: plain model names
        (a terminal, `hardneg leaderboard show`)."""
        names = self.overall_names()
        rows = overall_view.select(self.overall_rows(), names, sort_by, descending, search, types, sizes, kinds)
        return overall_view.render_overall(rows, names, links)

    def overall_frame(self, sort_by: str = overall_view.AVERAGE, descending: bool = True, search: str = "",
                      types=None, sizes=None, kinds=("submitted", "baseline")):
        """The Overall download: fractions with intervals, coverage, metadata."""
        names = self.overall_names()
        rows = overall_view.select(self.overall_rows(), names, sort_by, descending, search, types, sizes, kinds)
        return overall_view.machine_overall(rows, names)

    def average(self):
        """The Overall table with its default order and plain model names (every model, coverage, the average
        over fully covered models): what a terminal prints."""
        return self.overall(links=False)

    # --- per-item details ---------------------------------------------------------------------
    def model_ids(self) -> list[str]:
        """The models with a shown submission, sorted (the drill-down's choices, sent with every page load): read
        once per store state, not at every page load (1,000 stored rows parsed each time otherwise)."""
        token = self.store.state_token()
        hit = getattr(self, "_model_ids", None)
        if hit is None or hit[0] != token:
            hit = self._model_ids = (token, sorted({s.model_id for s in self.store.current()}))
        return list(hit[1])

    def parts_of(self, model_id: str) -> list[StoredSubmission]:
        """The current (shown) submissions of a model, one per part this board has items for."""
        return [s for s in self.store.current() if s.model_id == model_id
                and (s.benchmark, s.config, s.split) in self.item_sets]

    def details_parquet(self, model_id: str | None = None) -> bytes:
        """Per-item scores and values of every stored submission (or one model's), as Parquet; built once per
        store state (repeated clicks, many visitors: one build)."""
        from hardneg.leaderboard.details import details_parquet

        key = (self.state(), model_id or "")
        if self._details is not None and self._details[0] == key:
            return self._details[1]
        subs = self.store.all_submissions() if not model_id else self.store.history(model_id)
        subs = [s for s in subs if s.state == "visible"]  # hidden or deleted by a moderator: not published
        data = details_parquet(self.store, subs, self.item_sets)
        self._details = (key, data)
        return data

    def failures(self, model_id: str, benchmark: str, config: str, split: str, limit: int = 200):
        """The drill-down: the items of one part where the model's positive was beaten or tied."""
        from hardneg.leaderboard.details import failures

        sub = next((s for s in self.parts_of(model_id) if (s.benchmark, s.config, s.split) == (benchmark, config, split)),
                   None)
        if sub is None:
            raise ValueError(f"{model_id} has no shown submission on {benchmark}/{config}/{split}")
        return failures(self.store, sub, self.item_sets[(benchmark, config, split)], limit)

    def by_negative_type(self, benchmark: str, search: str = "", limit: int = 8) -> dict[str, dict[str, dict]]:
        """Per model (the `limit` best by the first column), accuracy of the positive against each negative type
        alone, over every multiple-choice part, with interval and chance: the engine's `by_negative_type`."""
        from hardneg.evaluation import by_negative_type
        from hardneg.items import Aligned
        from hardneg.leaderboard.details import stored_scores

        if registry.get(benchmark).is_retrieval:
            return {}
        cols = self.columns(benchmark)
        first = next((c for c in cols if c.headline), None)
        needle = (search or "").lower()
        rows = [r for r in self.rows(benchmark) if r.kind == "submitted" and needle in r.model.lower()]
        if first is not None:
            rows.sort(key=lambda r: r.cells[first.name].estimate if first.name in r.cells else -1, reverse=True)
        out: dict[str, dict[str, dict]] = {}
        for r in rows[:limit]:
            per: dict[str, list] = {}
            for sub in self.parts_of(r.model):
                if sub.benchmark != benchmark:
                    continue
                key = (sub.id, self.n_resamples)
                if key not in self._by_type:
                    items = self.item_sets[(sub.benchmark, sub.config, sub.split)]
                    scores, mask = stored_scores(self.store, sub, items)
                    types, _ = by_negative_type(Aligned(items, scores, mask, len(items)), "expected",
                                                min(self.n_resamples, 500), 0, 0.95)
                    for t, e in types.items():
                        e["chance"] = _type_chance(items, t)
                    self._by_type[key] = types
                for t, e in self._by_type[key].items():
                    per.setdefault(t, []).append(e)
            out[r.model] = {t: _pool(es) for t, es in per.items()}
        return out

    def negative_type_chart(self, benchmark: str, search: str = ""):
        from hardneg.benchmarks import Metric

        return negative_type_chart(self.by_negative_type(benchmark, search), registry.get(benchmark).title,
                                   Metric("Accuracy", "R@1", "the positive above every negative of one type"))

    def counts(self) -> dict[str, int]:
        """Stored versions, and board rows of submitted models, per benchmark."""
        out = {"stored_versions": self.store.count()}
        for b in self.benchmarks:
            out[f"board_rows_{b}"] = len({s.model_id for s in self.store.current(b)})
            out[f"current_parts_{b}"] = len(self.store.current(b))
        return out
