"""PoSRank's chance for a model that cannot see the video (issue 50's negative control).

H(K+1) / (K+1) (`training_paper.chance`) is the mean reciprocal rank of an *exchangeable* scorer: one whose
scores of the caption and its K negatives are i.i.d., so the caption's rank is uniform in 1..K+1. A video-text
model that has learned nothing about the videos is not such a scorer: it still scores the texts, and PoSRank's
T_i^p are one-word edits of the caption in several slots (the first and the second object's noun; the two
objects' size and colour; the two verbs). A text scorer that adds up its words' contributions ranks the caption
as the sum of its ranks within each slot's edits, so the caption sits in the middle of its negatives more often
than at the top (a triangular, not uniform, rank): its MRR is lower than H(K+1) / (K+1) although its mean rank is
the same. The negative control (captions shuffled against videos), an untrained model and a random bag-of-words
scorer all land there (docs/training.md, "The controls run"), so the negative control is judged against this level.

`posrank_blind_chance` is that level: the mean over `draws` random bag-of-words scorers (i.i.d. normal weight per
word, the text's score the sum over its words; one score per text whatever the video) of PoSRank^p, with the
evaluation's tie rule (a negative that ties the caption ranks above it)."""

from __future__ import annotations

import numpy as np


def posrank_blind_chance(tokens: np.ndarray, captions: np.ndarray, cand: np.ndarray, draws: int = 64,
                         seed: int = 50) -> list[float]:
    """PoSRank^p of a video-blind bag-of-words scorer, per part of speech (NaN where no scene has a negative).

    tokens (T, L) the text table's token ids (0 = padding); captions (n,) the scenes' caption rows; cand
    (n, P, K) the scenes' negatives per part of speech (text rows, -1 = none)."""
    tokens, captions, cand = np.asarray(tokens), np.asarray(captions), np.asarray(cand)
    if cand.ndim != 3 or len(cand) != len(captions):
        raise ValueError(f"cand must be (scenes, parts of speech, K) with one row per caption; got {cand.shape} "
                         f"for {len(captions)} captions")
    rng = np.random.default_rng([seed, draws])
    valid = cand >= 0
    has = valid.any(2)
    total = np.zeros(cand.shape[:2])
    for _ in range(draws):
        w = rng.standard_normal(int(tokens.max()) + 1)
        w[0] = 0.0  # padding adds nothing
        s = w[tokens].sum(1)
        above = ((s[np.clip(cand, 0, None)] >= s[captions][:, None, None]) & valid).sum(2)
        total += 1.0 / (1 + above)
    mrr = np.where(has, total / draws, np.nan)
    return [float(np.nanmean(mrr[:, p])) if has[:, p].any() else float("nan") for p in range(cand.shape[1])]
