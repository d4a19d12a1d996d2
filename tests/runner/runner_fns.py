"""Caption tables and batch functions for the runner tests (importable by spawned processes and Ray workers)."""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import pyarrow as pa

from hardneg.runner import row_seed

WORDS = "a man rides a red horse across the wide field while two dogs run behind him".split()


def make_captions(n: int = 53) -> pa.Table:
    """n captions of 1..8 words (every 9th has one word and is skipped by the tagger)."""
    ids = [f"c{i:04d}" for i in range(n)]
    texts = [" ".join(WORDS[(i + j) % len(WORDS)] for j in range(1 + i % 9)) for i in range(n)]
    # shuffle the id order against the row order so "sorted by id" is not "input order"
    order = sorted(range(n), key=lambda i: (i * 7919) % n)
    return pa.table({"id": [ids[i] for i in order], "text": [texts[i] for i in order]})


def reference_row(row_id: str, text: str, seed: int = 0) -> dict:
    """What `make_tagger` must produce for one row, computed without the runner."""
    rng = random.Random(row_seed(seed, row_id))
    words = text.split()
    if len(words) < 2:
        return {"id": row_id, "negative": None, "n_words": len(words), "skipped": True, "skip_reason": "too short"}
    i, j = rng.sample(range(len(words)), 2)
    words[i], words[j] = words[j], words[i]
    return {"id": row_id, "negative": " ".join(words), "n_words": len(words), "skipped": False, "skip_reason": None}


def make_tagger(seed: int = 0):
    """Swap two random words per caption (seeded by row id); one-word captions are skipped."""

    def fn(batch: dict) -> dict:
        rows = [reference_row(i, t, seed) for i, t in zip(batch["id"], batch["text"])]
        return {k: [r[k] for r in rows] for k in ("id", "negative", "n_words", "skipped", "skip_reason")}

    return fn


def make_two_per_row():
    """Two output rows per input row (like two negatives per caption)."""

    def fn(batch: dict) -> dict:
        ids = [i for i in batch["id"] for _ in range(2)]
        return {"id": ids, "k": [k for _ in batch["id"] for k in range(2)]}

    return fn


class FailingAfter:
    """Factory whose function raises on its (k+1)-th batch, and logs every id it processed."""

    def __init__(self, k: int):
        self.k = k
        self.seen: list = []

    def __call__(self):
        calls = {"n": 0}
        inner = make_tagger()

        def fn(batch):
            calls["n"] += 1
            if calls["n"] > self.k:
                raise RuntimeError("simulated crash")
            self.seen.extend(batch["id"])
            return inner(batch)

        return fn


class Recording:
    """Factory that records the ids its function processed (in-process runs only)."""

    def __init__(self):
        self.seen: list = []

    def __call__(self):
        inner = make_tagger()

        def fn(batch):
            self.seen.extend(batch["id"])
            return inner(batch)

        return fn


def make_failing_on(bad_id: str):
    """Raise on the batch holding `bad_id` (picklable, for process pools)."""
    inner = make_tagger()

    def fn(batch):
        if bad_id in batch["id"]:
            raise ValueError(f"cannot handle {bad_id}")
        return inner(batch)

    return fn


def make_slow(seconds: float, log_dir: str | None = None):
    """The tagger, sleeping per batch; optionally leaves one file per processed batch."""
    inner = make_tagger()

    def fn(batch):
        time.sleep(seconds)
        if log_dir:
            Path(log_dir, f"{batch['id'][0]}.{os.getpid()}.{time.time_ns()}").touch()
        return inner(batch)

    return fn


def make_killing_once(marker: str, victim_id: str, log_dir: str):
    """Kill this worker process the first time the batch with `victim_id` comes in."""
    inner = make_tagger()

    def fn(batch):
        Path(log_dir, f"{batch['id'][0]}.{os.getpid()}.{time.time_ns()}").touch()
        if victim_id in batch["id"] and not os.path.exists(marker):
            Path(marker).touch()
            os._exit(1)
        return inner(batch)

    return fn


def make_bad_output(kind: str):
    def fn(batch):
        if kind == "no_id":
            return {"text": batch["text"]}
        if kind == "foreign_id":
            return {"id": [f"x{i}" for i in batch["id"]]}
        if kind == "ragged":
            return {"id": batch["id"], "x": [1]}
        return 42

    return fn
