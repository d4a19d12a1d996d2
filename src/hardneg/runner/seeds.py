"""Per-row random seeds, so random choices do not depend on how rows are split among workers.

A batch function that draws from one RNG per worker gives different answers at different
worker counts; seeding from (run seed, row id) gives the same answer everywhere.
"""

from __future__ import annotations

import hashlib


def row_seed(seed: int, row_id: object) -> int:
    """A 64-bit seed determined only by the run seed and the row's id (stable across processes)."""
    digest = hashlib.blake2b(f"{int(seed)}\x1f{row_id}".encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little")
