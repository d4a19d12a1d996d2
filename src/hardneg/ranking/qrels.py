"""Sparse relevance judgements: (query index, item index, relevance) triplets."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Qrels:
    """Relevant items per query as sparse triplets; ``relevance > 0`` means relevant.

    Build with ``Qrels(query, item, relevance)``, ``Qrels.from_dense(bool_matrix)`` or
    ``Qrels.from_lists([[items of query 0], [items of query 1], ...])``.
    """

    query: np.ndarray
    item: np.ndarray
    relevance: np.ndarray | None = None

    def __post_init__(self):
        q = np.asarray(self.query)
        d = np.asarray(self.item)
        if q.ndim != 1 or d.ndim != 1 or q.shape != d.shape:
            raise ValueError(
                f"Qrels query and item must be 1-D arrays of the same length; got {q.shape} and {d.shape}"
            )
        for name, arr in (("query", q), ("item", d)):
            if arr.size and arr.dtype.kind not in "iu":
                raise ValueError(f"Qrels {name} must hold integer indices; got dtype {arr.dtype}")
        rel = np.ones(q.shape, dtype=np.float64) if self.relevance is None else np.asarray(self.relevance, dtype=np.float64)
        if rel.shape != q.shape:
            raise ValueError(f"Qrels relevance must have one value per pair ({q.shape[0]}); got shape {rel.shape}")
        if not np.isfinite(rel).all():
            raise ValueError("Qrels relevance has NaN/inf; use 0 for not relevant and > 0 for relevant")
        object.__setattr__(self, "query", q.astype(np.int64))
        object.__setattr__(self, "item", d.astype(np.int64))
        object.__setattr__(self, "relevance", rel)

    @classmethod
    def from_dense(cls, relevant) -> "Qrels":
        """From a (Q, V) bool (or 0/1, or graded) matrix."""
        arr = np.asarray(relevant)
        if arr.ndim != 2:
            raise ValueError(f"relevant must be a (queries x items) matrix; got shape {arr.shape}")
        q, d = np.nonzero(arr)
        return cls(q, d, arr[q, d].astype(np.float64))

    @classmethod
    def from_lists(cls, items_per_query) -> "Qrels":
        """From one list of relevant item indices per query."""
        lengths = np.fromiter((len(x) for x in items_per_query), dtype=np.int64)
        q = np.repeat(np.arange(lengths.size), lengths)
        d = np.fromiter((i for x in items_per_query for i in x), dtype=np.int64, count=int(lengths.sum()))
        return cls(q, d)

    def __len__(self) -> int:
        return int(self.query.size)

    def to_dense(self, shape: tuple[int, int]) -> np.ndarray:
        """A (Q, V) bool matrix of relevant pairs."""
        out = np.zeros(shape, dtype=bool)
        keep = self.relevance > 0
        out[self.query[keep], self.item[keep]] = True
        return out
