"""PoSRank Figure 3: do captions differ by a single word, or are they all far apart?

For each part of speech and k = 1, 2, ...: remove k randomly chosen words of that
part of speech from every caption (all of them when it has fewer), and count the
share of captions whose remaining words equal another caption's remaining words.
Captions are lowercased and de-duplicated first, so exact repeats in the corpus
do not count as "becoming identical". A low share means single-word hard
negatives are genuinely new sentences, not other videos' captions.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from hardneg.analysis.base import AnalysisResult
from hardneg.schema import PARTS_OF_SPEECH

#: Universal POS tag -> PoSRank part of speech.
UPOS_TO_POS = {"NOUN": "noun", "PROPN": "noun", "VERB": "verb", "ADJ": "adj", "ADV": "adv", "ADP": "prep"}


def tag_captions(captions: Sequence[str], batch_size: int = 256) -> tuple[list[list[str]], list[list[str | None]]]:
    """Lowercased tokens and PoSRank part of speech (None for other words) per caption, with spaCy."""
    from hardneg.resources import load_spacy

    nlp = load_spacy(("ner", "parser", "lemmatizer"))
    tokens, tags = [], []
    for doc in nlp.pipe([c.lower() for c in captions], batch_size=batch_size):
        toks = [t for t in doc if not t.is_space and not t.is_punct]
        tokens.append([t.text for t in toks])
        tags.append([UPOS_TO_POS.get(t.pos_) for t in toks])
    return tokens, tags


def unique_captions(tokens: list[list[str]], tags: list[list[str | None]]) -> tuple[list[list[str]], list[list[str | None]]]:
    """Keep the first of captions with identical token sequences."""
    seen, t_out, g_out = set(), [], []
    for t, g in zip(tokens, tags):
        key = tuple(t)
        if key not in seen:
            seen.add(key)
            t_out.append(t)
            g_out.append(g)
    return t_out, g_out


def duplicate_share(reduced: list[tuple[str, ...]]) -> float:
    """Share of captions whose reduced form equals at least one other caption's."""
    counts = Counter(reduced)
    return sum(counts[r] > 1 for r in reduced) / max(1, len(reduced))


def remove_words(tokens: list[str], tags: list[str | None], pos: str, k: int, rng: np.random.Generator) -> tuple[str, ...]:
    """The caption with k random words of part of speech `pos` removed (all of them when fewer)."""
    where = [i for i, g in enumerate(tags) if g == pos]
    drop = set(where) if len(where) <= k else set(rng.choice(where, size=k, replace=False).tolist())
    return tuple(t for i, t in enumerate(tokens) if i not in drop)


@dataclass
class DuplicatesResult(AnalysisResult):
    shares: dict[str, list[float]] = field(default_factory=dict)  # pos -> share for k = 1..max_k

    def extra(self) -> dict[str, Any]:
        return {"shares": self.shares}

    def _draw(self, fig) -> None:
        ax = fig.add_subplot(1, 1, 1)
        ks = np.arange(1, self.params["max_removed"] + 1)
        markers, styles = "osD^v", ("-", "--", "-.", ":", "-")
        for i, (pos, v) in enumerate(self.shares.items()):
            ax.plot(ks, 100 * np.asarray(v), marker=markers[i % 5], linestyle=styles[i % 5], label=pos, color=f"C{i}",
                    markersize=9 - i, alpha=0.85)
        ax.set_xticks(ks)
        ax.set_xlabel("words of that part of speech removed")
        ax.set_ylabel("captions identical to another caption (%)")
        ax.set_title(f"Duplicate analysis: {self.params['captions']} unique captions")
        ax.legend(title="part of speech", fontsize=8)
        ax.grid(alpha=0.3)


def duplicate_analysis(
    tokens: list[list[str]],
    tags: list[list[str | None]],
    parts_of_speech: Sequence[str] = PARTS_OF_SPEECH,
    max_removed: int = 4,
    seed: int = 0,
    dedupe: bool = True,
) -> DuplicatesResult:
    """Share of captions identical to another after removing k words of each part of speech (k = 1..max_removed)."""
    if len(tokens) != len(tags) or any(len(t) != len(g) for t, g in zip(tokens, tags)):
        raise ValueError("tokens and tags must have the same shape: one tag per token of each caption")
    if max_removed < 1:
        raise ValueError("max_removed must be at least 1")
    n_in = len(tokens)
    if dedupe:
        tokens, tags = unique_captions(tokens, tags)
    rng = np.random.default_rng(seed)
    shares: dict[str, list[float]] = {}
    rows = []
    for pos in parts_of_speech:
        with_pos = sum(pos in g for g in tags)
        shares[pos] = []
        row: dict[str, Any] = {"pos": pos, "captions_with_pos": with_pos}
        for k in range(1, max_removed + 1):
            share = duplicate_share([remove_words(t, g, pos, k, rng) for t, g in zip(tokens, tags)])
            shares[pos].append(share)
            row[f"k={k}"] = share
        rows.append(row)
    return DuplicatesResult(
        analysis="duplicates",
        title="PoSRank duplicate analysis: share of captions identical to another after removing k words",
        columns=["pos", "captions_with_pos"] + [f"k={k}" for k in range(1, max_removed + 1)],
        rows=rows,
        params={"max_removed": max_removed, "seed": seed, "captions": len(tokens), "captions_before_dedupe": n_in,
                "dedupe": dedupe, "parts_of_speech": list(parts_of_speech)},
        shares=shares,
    )
