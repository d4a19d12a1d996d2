"""Baselines on the board from the start, computed by the same core as submissions.

* random: a scorer that cannot tell candidates apart (constant scores). Under the
  core's exact tie rule this is exactly chance (R@1 = 1/C, MeanR = (C+1)/2).
* text-only (blind): `hardneg.models`' `blind-unigram` scores each caption without
  the video. On retrieval (FIRE) a text-only score is the same for every video of a
  query, so it is exactly chance there too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hardneg.leaderboard.items import ItemSet
from hardneg.leaderboard.recompute import PartResult, constant_scores, recompute

BLIND_MODEL = "blind-unigram"


@dataclass
class Baseline:
    """One computed baseline row of one item set, or why it could not be computed."""

    name: str
    note: str
    result: PartResult | None


def random_baseline(items: ItemSet, n_resamples: int = 1000) -> Baseline:
    scores, mask = constant_scores(items)
    return Baseline("random (exact chance)", "constant scorer, exact expected ties", recompute(items, scores, mask, n_resamples))


def blind_scores(items: ItemSet, model) -> tuple[np.ndarray, np.ndarray | None]:
    """Scores of a text-only model: per caption (multiple choice); per query, same for every video (retrieval)."""
    if items.task == "retrieval":
        return constant_scores(items)
    from hardneg.items import pad_rows

    return pad_rows([model.score(None, caps) for caps in items.captions])


def blind_baseline(items: ItemSet, model=None, n_resamples: int = 1000) -> Baseline:
    """The text-only baseline; pending (result None) when `hardneg.models` cannot load it here."""
    name = f"text-only ({BLIND_MODEL})"
    if model is None:
        try:
            from hardneg.models import load_model

            model = load_model(BLIND_MODEL)
        except Exception as exc:  # the models extra or its word list is missing
            return Baseline(name, f"pending: {type(exc).__name__}: {exc}", None)
    scores, mask = blind_scores(items, model)
    note = "text only, no video" + ("; equals chance on retrieval" if items.task == "retrieval" else "")
    return Baseline(name, note, recompute(items, scores, mask, n_resamples))
