"""Per-item details of stored submissions: a Parquet download (like the Open LLM board's details datasets) and
the drill-down into one model's failures on one benchmark part.

Everything is read back from the store: the submitted file's scores (aligned to the items with the same
`align_scores` the validator used) and the per-item values the board's recompute kept. A submission never
changes once stored, so what is read is cached by submission id.
"""

from __future__ import annotations

import io
import json
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from hardneg.items import ItemSet
from hardneg.leaderboard.store import Store, StoredSubmission
from hardneg.leaderboard.validate import align_scores, open_parquet, open_source, read_metadata

#: per-item columns of the details file (besides one column per stored per-item metric value)
DETAIL_COLUMNS = ("submission_id", "model_id", "version", "benchmark", "config", "split", "id", "video_id",
                  "n_candidates", "positive", "scores", "positive_rank")


class _LRU(OrderedDict):
    def __init__(self, size: int):
        super().__init__()
        self.size = size

    def put(self, key, value):
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.size:
            self.popitem(last=False)
        return value


_SCORES = _LRU(64)
_PROVENANCE = _LRU(32)


def stored_scores(store: Store, sub: StoredSubmission, items: ItemSet) -> tuple[np.ndarray, np.ndarray | None]:
    """The submission's scores as an (N, C) matrix in item order (and the ragged mask), from its stored file."""
    key = (str(store.path), sub.id)
    if key in _SCORES:
        return _SCORES[key]
    source, size = open_source(store.file_bytes(sub.id))
    pf = open_parquet(source, size)
    problems: list[str] = []
    meta = read_metadata(pf, problems) or {}
    table = pf.read(columns=["id", "scores"])
    scores, mask = align_scores(table.column("id").to_pylist(), table.column("scores").combine_chunks(), items, meta,
                                problems)
    if scores is None:
        raise ValueError(f"stored submission {sub.id} no longer matches {items.config}/{items.split}: {problems}")
    return _SCORES.put(key, (scores, mask))


def positive_ranks(scores: np.ndarray, mask: np.ndarray | None, items: ItemSet) -> np.ndarray:
    """Optimistic-free rank of the positive (1 + candidates strictly above it), the view the drill-down uses."""
    target = items.label if items.task == "multiple_choice" else items.original
    s = np.where(mask, scores, -np.inf) if mask is not None else scores
    pos = s[np.arange(len(items)), target][:, None]
    return 1 + (s > pos).sum(axis=1)


def details_table(store: Store, subs: list[StoredSubmission], item_sets: dict) -> pa.Table:
    """One row per (submission, item): its scores, the positive's index and rank, and every per-item value the
    board kept (fractions / ranks as the results engine computes them)."""
    tables = []
    for sub in subs:
        items = item_sets.get((sub.benchmark, sub.config, sub.split))
        if items is None:
            continue
        scores, mask = stored_scores(store, sub, items)
        n = len(items)
        rows = [scores[i, : int(items.n_candidates[i])].tolist() for i in range(n)] if items.task == "multiple_choice" \
            else scores.tolist()
        target = items.label if items.task == "multiple_choice" else items.original
        cols = {
            "submission_id": [sub.id] * n, "model_id": [sub.model_id] * n, "version": [sub.version] * n,
            "benchmark": [sub.benchmark] * n, "config": [sub.config] * n, "split": [sub.split] * n,
            "id": items.ids.tolist(), "video_id": items.clusters.tolist(),
            "n_candidates": items.n_candidates.astype(np.int64), "positive": np.asarray(target, np.int64),
            "scores": pa.array(rows, pa.list_(pa.float64())),
            "positive_rank": positive_ranks(scores, mask, items).astype(np.int64),
        }
        for k, v in sorted(store.per_example(sub.id).items()):
            if len(v) == n:
                cols[f"value:{k}"] = np.asarray(v, np.float64)
        tables.append(pa.table(cols))
    if not tables:
        return pa.table({c: pa.array([], pa.string()) for c in DETAIL_COLUMNS})
    return pa.concat_tables(tables, promote_options="permissive")


def details_parquet(store: Store, subs: list[StoredSubmission], item_sets: dict) -> bytes:
    buf = io.BytesIO()
    table = details_table(store, subs, item_sets)
    meta = {"hardneg_details": json.dumps({"submissions": [s.id for s in subs],
                                           "columns": "value:<metric> are per-item values of the stored results"})}
    pq.write_table(table.replace_schema_metadata(meta), buf)
    return buf.getvalue()


# --- drill-down --------------------------------------------------------------------------------------------
def _item_table(items: ItemSet, wanted: tuple[str, ...]) -> dict[str, dict]:
    """id -> the wanted columns of the item's row, read from the built files behind the item set."""
    key = (items.key, tuple(str(f) for f in items.files), wanted)
    if key in _PROVENANCE:
        return _PROVENANCE[key]
    out: dict[str, dict] = {}
    for f in items.files:
        schema = pq.read_schema(f)
        id_col = "id" if "id" in schema.names else "query_id" if "query_id" in schema.names else None
        cols = [c for c in wanted if c in schema.names]
        if id_col is None or not cols or id_col == "query_id" and "text" not in schema.names and "text" in wanted:
            continue
        for rec in pq.read_table(f, columns=[id_col, *cols]).to_pylist():
            out.setdefault(str(rec[id_col]), {}).update({c: rec[c] for c in cols})
    return _PROVENANCE.put(key, out)


def _relevance(items: ItemSet) -> dict[tuple[str, str], dict]:
    """(query id, video id) -> its qrel row (label, source, judgments), for retrieval items."""
    key = (items.key, tuple(str(f) for f in items.files), "qrels")
    if key in _PROVENANCE:
        return _PROVENANCE[key]
    out: dict[tuple[str, str], dict] = {}
    for f in items.files:
        schema = pq.read_schema(f)
        if {"query_id", "video_id", "label", "source"} <= set(schema.names):
            for rec in pq.read_table(f).to_pylist():
                out[(str(rec["query_id"]), str(rec["video_id"]))] = rec
    return _PROVENANCE.put(key, out)


def provenance_text(prov: dict | None) -> str:
    """A provenance record as one line: origin, generator and version, rule, the replaced span."""
    if not prov:
        return ""
    parts = [f"{k}={prov[k]}" for k in ("origin", "generator", "generator_version", "rule", "pos", "replacement",
                                        "span", "seed") if prov.get(k) not in (None, "", [])]
    if prov.get("details"):
        parts.append(f"details={str(prov['details'])[:120]}")
    return ", ".join(parts)


@dataclass
class Failure:
    """One item the model got wrong: what it saw, the positive, the candidate that beat (or tied) it."""

    item_id: str
    video_id: str
    query: str  # multiple choice: the positive caption; retrieval: the query text
    positive: str  # multiple choice: the positive caption; retrieval: the query's own video
    positive_score: float
    winner: str  # the caption or video that scored highest among the others
    winner_score: float
    outcome: str  # "beaten" | "tied"
    positive_rank: int
    negative_type: str
    provenance: str


def failures(store: Store, sub: StoredSubmission, items: ItemSet, limit: int = 200) -> list[Failure]:
    """Items where something other than the positive scored at least as high, worst (lowest rank) first."""
    scores, mask = stored_scores(store, sub, items)
    s = np.where(mask, scores, -np.inf) if mask is not None else scores.copy()
    n = len(items)
    target = items.label if items.task == "multiple_choice" else items.original
    pos = s[np.arange(n), target]
    others = s.copy()
    others[np.arange(n), target] = -np.inf
    best = others.argmax(axis=1)
    best_score = others[np.arange(n), best]
    ranks = positive_ranks(scores, mask, items)
    bad = np.nonzero(best_score >= pos)[0]
    bad = bad[np.lexsort((items.ids[bad].astype(str), -ranks[bad]))][:limit]
    out: list[Failure] = []
    if items.task == "multiple_choice":
        extra = _item_table(items, ("provenance",))
        for i in bad.tolist():
            j, lab = int(best[i]), int(items.label[i])
            caps = items.captions[i]
            types = items.negative_types[i] if items.negative_types else []
            prov = (extra.get(str(items.ids[i]), {}).get("provenance") or [None] * len(caps))
            out.append(Failure(str(items.ids[i]), str(items.clusters[i]), caps[lab], caps[lab], float(pos[i]), caps[j],
                               float(best_score[i]), "tied" if best_score[i] == pos[i] else "beaten", int(ranks[i]),
                               types[j] if j < len(types) else "", provenance_text(prov[j] if j < len(prov) else None)))
    else:
        texts = _item_table(items, ("text",))
        qrels = _relevance(items)
        for i in bad.tolist():
            qid, j = str(items.ids[i]), int(best[i])
            won = items.video_ids[j]
            rel = qrels.get((qid, won))
            note = ("judged relevant (FIRE label): counts as correct for C@k" if j in set(items.relevant[i])
                    else "judged not relevant" if rel is not None else "not judged")
            prov = "" if rel is None else f"source={rel.get('source')}, label={rel.get('label')}, " \
                                          f"judgments={rel.get('n_judgments')}, agreement={rel.get('agreement')}"
            out.append(Failure(qid, items.video_ids[int(items.original[i])], str(texts.get(qid, {}).get("text", "")),
                               items.video_ids[int(items.original[i])], float(pos[i]), won, float(best_score[i]),
                               "tied" if best_score[i] == pos[i] else "beaten", int(ranks[i]), note, prov))
    return out


__all__ = ["DETAIL_COLUMNS", "Failure", "details_parquet", "details_table", "failures", "positive_ranks",
           "provenance_text", "stored_scores"]
