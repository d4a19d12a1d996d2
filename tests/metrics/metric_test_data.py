"""Small random inputs for the metric module tests (ties forced by quantizing scores)."""

from __future__ import annotations

import numpy as np

MC_MODULES = ("rcad_accuracy", "mean_rank", "posrank", "accuracy")
RETRIEVAL_MODULES = ("correct_at_k", "mean_average_precision")


def mc_data(rng: np.random.Generator, n: int, c: int, levels: int | None = None):
    """Random multiple-choice scores; `levels` quantizes them to force ties."""
    scores = rng.random((n, c))
    if levels:
        scores = np.floor(scores * levels) / levels
    positive = rng.integers(0, c, n)
    videos = np.array([f"v{i}" for i in rng.integers(0, max(n // 3, 1), n)])
    return scores, positive, videos


def retrieval_data(rng: np.random.Generator, q: int, v: int, levels: int | None = None, max_rel: int = 4):
    scores = rng.random((q, v))
    if levels:
        scores = np.floor(scores * levels) / levels
    relevant = [sorted(rng.choice(v, size=int(rng.integers(1, max_rel + 1)), replace=False).tolist()) for _ in range(q)]
    original = np.array([r[int(rng.integers(0, len(r)))] for r in relevant])
    videos = np.array([f"v{i}" for i in rng.integers(0, max(q // 2, 1), q)])
    return scores, relevant, original, videos


def kwargs_for(name: str, rng: np.random.Generator, n: int = 60, levels: int | None = 4):
    """Inputs for `compute` of module `name` on random data (ties forced by default)."""
    if name in RETRIEVAL_MODULES:
        scores, relevant, original, videos = retrieval_data(rng, n, 12, levels)
        return {"predictions": scores, "references": relevant, "original": original, "video_ids": videos}
    scores, positive, videos = mc_data(rng, n, 6, levels)
    out = {"predictions": scores, "references": positive, "video_ids": videos}
    if name == "posrank":
        out["pos"] = rng.choice(["noun", "verb", "adjective", "adverb", "preposition"], n)
    if name == "accuracy":
        out["groups"] = rng.choice(["direction", "sequence", "type"], n)
    return out

