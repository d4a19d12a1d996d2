"""Small caption tables for the runner tests."""

from __future__ import annotations

import pyarrow as pa
import pytest

WORDS = "a man rides a red horse across the wide field while two dogs run behind him".split()


def make_captions(n: int = 53) -> pa.Table:
    """n captions of 1..8 words (every 9th has one word and is skipped by the tagger)."""
    ids = [f"c{i:04d}" for i in range(n)]
    texts = [" ".join(WORDS[(i + j) % len(WORDS)] for j in range(1 + i % 9)) for i in range(n)]
    # shuffle the id order against the row order so "sorted by id" is not "input order"
    order = sorted(range(n), key=lambda i: (i * 7919) % n)
    return pa.table({"id": [ids[i] for i in order], "text": [texts[i] for i in order]})


@pytest.fixture
def captions() -> pa.Table:
    return make_captions()
