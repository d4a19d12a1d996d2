"""The leaderboard as one object: validate, recompute, store, mirror, moderate, build the board.

The Space (`spaces/leaderboard/app.py`) and `hardneg submit` with a local folder both
call this; it owns no global state, so tests build one per temporary folder.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

from hardneg.leaderboard.baselines import BLIND_MODEL, Baseline, blind_baseline, random_baseline
from hardneg import benchmarks as registry
from hardneg import vocabulary
from hardneg.leaderboard.board import (KINDS, BoardRow, Cell, Column, average_table, bar_chart, board_columns,
                                       cells_from_results, render)
from hardneg.leaderboard.eval_results import eval_results_files
from hardneg.leaderboard.items import ItemSet, load_benchmarks
from hardneg.leaderboard.recompute import recompute
from hardneg.leaderboard.identity import Identity, IdentityError, as_identity
from hardneg.leaderboard.mirror import strip_local_paths
from hardneg.leaderboard.store import Store, StoredSubmission
from hardneg.leaderboard.validate import MAX_FILE_BYTES, SubmissionError, quote, upload_limit, validate_submission

log = logging.getLogger(__name__)

ADMIN_TOKEN_ENV = "HARDNEG_ADMIN_TOKEN"


@dataclass
class SubmitOutcome:
    ok: bool
    message: str
    submission: StoredSubmission | None = None  # the first part stored
    submissions: list[StoredSubmission] | None = None  # every part of the file


class Leaderboard:
    """Submissions in, board tables out. `item_sets` come from built benchmark folders."""

    def __init__(self, data_dir: str | Path, item_sets: dict[tuple[str, str, str], ItemSet] | None = None,
                 benchmarks_dir: str | Path | None = None, n_resamples: int = 1000, max_bytes: int = MAX_FILE_BYTES,
                 mirror=None, blind_model=None, compute_blind: bool = True):
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

    @property
    def benchmarks(self) -> list[str]:
        order = registry.names()
        return sorted({b for b, _, _ in self.item_sets}, key=order.index)

    # --- submissions --------------------------------------------------------------------
    @property
    def upload_limit(self) -> int:
        """The largest file any config of this board can need (Gradio's `max_file_size` for the Space)."""
        return upload_limit(self.item_sets, self.max_bytes)

    def submit(self, data, submitter: Identity | str) -> SubmitOutcome:
        """Validate, recompute and store one predictions file; the message says what happened or what to fix.

        data: the file's bytes or its path. submitter: the verified identity (`hardneg.leaderboard.identity`);
        a plain name is a user with no organizations (a local board, tests). The same file under the same model
        name returns the versions it made before and stores nothing new. Never raises for a bad file: any
        unexpected error is logged here and answered with a plain message.
        """
        try:
            identity = as_identity(submitter)
        except IdentityError:
            return SubmitOutcome(False, "submission refused:\n- sign in with your Hugging Face account first; "
                                        "nothing was stored")
        try:
            return self._submit(data, identity)
        except Exception:  # a bug or an unexpected input: logged with its traceback, never shown to the submitter
            ref = uuid.uuid4().hex[:12]
            log.exception("submission by %s failed unexpectedly (reference %s)", identity.username, ref)
            return SubmitOutcome(False, "submission refused:\n- the board could not check this file (internal "
                                        f"error, reference {ref}); nothing was stored. Try again later, and report "
                                        "the reference if it persists")

    def _submit(self, data, identity: Identity) -> SubmitOutcome:
        try:
            sub = validate_submission(data, identity, self.item_sets, self.max_bytes)
        except SubmissionError as exc:
            return SubmitOutcome(False, str(exc))
        if not isinstance(data, (bytes, bytearray, memoryview)):
            data = Path(data).read_bytes()  # validated, so its size is bounded
        data = bytes(data)
        sha = hashlib.sha256(data).hexdigest()
        wanted = {(p.items.benchmark, p.items.config, p.items.split) for p in sub.parts}
        before = [s for s in self.store.find_file(sub.model_id, sha) if (s.benchmark, s.config, s.split) in wanted]
        if len(before) == len(wanted):  # a retry or a resubmission of the same file: nothing new
            return SubmitOutcome(True, self._already(before), before[0], before)
        results = [recompute(part.items, part.scores, part.mask, n_resamples=self.n_resamples) for part in sub.parts]
        stored, created = self.store.add_file(
            model_id=sub.model_id, submitter=identity.username, metadata=strip_local_paths(sub.metadata),
            file_bytes=data,
            parts=[dict(benchmark=p.items.benchmark, config=p.items.config, split=p.items.split,
                        data_revision=str(sub.metadata["data_revision"]), results=r.to_dict(),
                        per_example=r.per_example) for p, r in zip(sub.parts, results)],
        )
        if not created:  # an identical file landed between the check and the write
            return SubmitOutcome(True, self._already(stored), stored[0], stored)
        if self.mirror is not None:
            for s in stored:
                try:
                    self.mirror.push_submission(self.store, s)
                except Exception as exc:  # the store is the source of truth; `sync` retries later
                    log.warning("mirror push of %s failed: %s", s.id, exc)
        lines = []
        for s, r in zip(stored, results):
            head = ", ".join(f"{vocabulary.header(k)} {vocabulary.display_entry(k, v)}"
                             for k, v in list(r.metrics.items())[:4]
                             if v.get("estimate") is not None and v.get("low") is not None)
            lines.append(f"stored {s.model_id} v{s.version} on {s.benchmark}/{s.config}/{s.split} "
                         f"(submission {s.id}): {head}")
        return SubmitOutcome(True, "\n".join(lines), stored[0], stored)

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
        target = (target or "").strip()
        ids = [s.id for s in self.store.history(target)] or [target]
        for sub_id in ids:
            self.store.add_tombstone(sub_id, action, reason)
            if self.mirror is not None:
                try:
                    self.mirror.push_tombstone(sub_id, action, reason)
                except Exception as exc:
                    log.warning("mirror tombstone of %s failed: %s", sub_id, exc)
        return f"{action}: {len(ids)} submission(s) of {quote(target)}"

    def eval_results(self, model_id: str) -> dict[str, str]:
        return eval_results_files(self.store, model_id.strip())

    # --- the board ------------------------------------------------------------------------
    def baselines(self) -> dict[tuple, list[Baseline]]:
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

    def rows(self, benchmark: str) -> list[BoardRow]:
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
            results = {(s.config, s.split): s.results["metrics"] for s in subs}
            row = BoardRow(model, "submitted", cells_from_results(cols, results),
                           version=", ".join(f"{s.config}/{s.split} v{s.version}" for s in subs),
                           submitter=subs[0].submitter, submitted=max(s.created_at for s in subs)[:10],
                           link=f"https://huggingface.co/{model}" if "/" in model else "")
            for s in subs:
                per = self.store.per_example(s.id)
                items = self.item_sets[(benchmark, s.config, s.split)]
                n = next(iter(s.results["metrics"].values()), {}).get("n", len(items))
                row.coverage[f"{s.config}/{s.split}"] = f"{n}/{len(items)}"
                for c in by_part.get((s.config, s.split), []):
                    if c.metric in per:
                        row.per_example[c.name] = per[c.metric]
                        row.clusters[c.name] = items.clusters
            rows.append(row)
        # computed baselines: one row each, whatever the number of parts
        baselines = self.baselines()
        names: dict[str, BoardRow] = {}
        for key, items in self.item_sets.items():
            if key[0] != benchmark:
                continue
            for b in baselines[key]:
                row = names.setdefault(b.name, BoardRow(b.name, "baseline", {}, note=b.note))
                if b.result is None:
                    row.note = b.note
                    continue
                row.coverage[f"{key[1]}/{key[2]}"] = f"{len(items)}/{len(items)}"
                row.cells.update(cells_from_results(by_part.get((key[1], key[2]), []),
                                                    {(key[1], key[2]): b.result.metrics}))
                for c in by_part.get((key[1], key[2]), []):
                    if c.metric in b.result.per_example:
                        row.per_example[c.name] = b.result.per_example[c.metric]
                        row.clusters[c.name] = items.clusters
        rows.extend(names.values())
        # the papers' reported numbers (from the declaration): only columns this board has
        names_by_key = {(c.config, c.metric): c.name for c in cols}
        for rep in registry.get(benchmark).reported:
            cells = {names_by_key[k]: Cell(v) for k, v in rep.values.items() if k in names_by_key}
            if cells:
                rows.append(BoardRow(rep.model, "reported", cells, source=rep.source))
        return rows

    def table(self, benchmark: str, sort_by: str | None = None, descending: bool | None = None, search: str = "",
              kinds=KINDS, shown: list[str] | None = None):
        return render(self.rows(benchmark), self.columns(benchmark), sort_by, descending, search, kinds, shown)

    def chart(self, benchmark: str, column: str | None = None, search: str = "", kinds=KINDS):
        cols = self.columns(benchmark)
        col = next((c for c in cols if c.name == column), cols[0])
        needle = (search or "").lower()
        rows = [r for r in self.rows(benchmark) if r.kind in kinds and needle in r.model.lower()]
        return bar_chart(rows, col, registry.get(benchmark).title)

    def average(self):
        """The overall view: models with every benchmark, each benchmark's first headline metric, their mean."""
        return average_table({b: self.rows(b) for b in self.benchmarks}, {b: self.columns(b) for b in self.benchmarks})

    def counts(self) -> dict[str, int]:
        """Stored versions, and board rows of submitted models, per benchmark."""
        out = {"stored_versions": self.store.count()}
        for b in self.benchmarks:
            out[f"board_rows_{b}"] = len({s.model_id for s in self.store.current(b)})
            out[f"current_parts_{b}"] = len(self.store.current(b))
        return out
