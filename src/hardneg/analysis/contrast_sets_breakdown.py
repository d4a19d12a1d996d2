"""Contrast-sets Table 5: accuracy on verb-antonym negatives and on the most / least similar negatives.

Each item's contrast negative is its manipulated option (`manipulated_index`),
or else its first candidate that is neither the positive nor a random caption.
Items whose contrast negative swaps a verb for a WordNet antonym form the
antonym subset. The remaining items are ranked by the similarity of positive
and contrast negative under each text encoder (all-MiniLM-L6-v2 by default, or
a model's own text encoder), and the 15% most ("High") and least ("Low")
similar ones form the other subsets; antonyms are kept out of both so that
"close in embedding space" does not absorb antonyms. Accuracy is R@1 over all
of an item's options, from the ranking core, with a bootstrap interval.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from hardneg.analysis.base import AnalysisResult
from hardneg.analysis.inputs import MCItems

_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


def contrast_negative_index(items: MCItems) -> np.ndarray:
    """(N,) index of each item's contrast negative, -1 where the item has none."""
    out = np.full(len(items), -1, dtype=np.int64)
    for i in range(len(items)):
        m = items.manipulated_index[i]
        if m is not None and m != items.label[i] and 0 <= m < len(items.captions[i]):
            out[i] = m
            continue
        types = items.negative_types[i]
        for j, t in enumerate(types):
            if j != items.label[i] and t not in ("positive", "random"):
                out[i] = j
                break
    return out


def swapped_words(positive: str, negative: str) -> tuple[list[str], list[str]]:
    """(words only in the positive, words only in the negative), as multisets of lowercase words."""
    a, b = Counter(_WORD.findall(positive.lower())), Counter(_WORD.findall(negative.lower()))
    return list((a - b).elements()), list((b - a).elements())


def are_antonyms(word_a: str, word_b: str, wordnet: Any, pos: str = "v") -> bool:
    """True when some WordNet lemma of `word_a` (as `pos`) lists a lemma of `word_b` as antonym."""
    base_a = {wordnet.morphy(word_a, pos) or word_a}
    base_b = {wordnet.morphy(word_b, pos) or word_b}
    for lemma_name in base_a:
        for syn in wordnet.synsets(lemma_name, pos=pos):
            for lemma in syn.lemmas():
                if lemma.name() in base_a and any(ant.name() in base_b for ant in lemma.antonyms()):
                    return True
    return False


def antonym_flags(positives: Sequence[str], negatives: Sequence[str], wordnet: Any = None, pos: str = "v") -> np.ndarray:
    """(N,) bool: does the negative replace a word of the positive by a WordNet antonym (of part of speech `pos`)?"""
    if wordnet is None:
        from hardneg.resources import load_wordnet

        wordnet = load_wordnet()
    out = np.zeros(len(positives), dtype=bool)
    for i, (p, n) in enumerate(zip(positives, negatives)):
        removed, added = swapped_words(p, n)
        out[i] = any(are_antonyms(r, a, wordnet, pos) for r in removed for a in added)
    return out


def cosine_similarity(encode: Callable[[list[str]], np.ndarray], a: Sequence[str], b: Sequence[str]) -> np.ndarray:
    """(N,) cosine similarity of a[i] and b[i] under a text encoder `encode(list[str]) -> (n, d)`."""
    ea = np.asarray(encode(list(a)), dtype=np.float64)
    eb = np.asarray(encode(list(b)), dtype=np.float64)
    ea /= np.linalg.norm(ea, axis=1, keepdims=True).clip(1e-12)
    eb /= np.linalg.norm(eb, axis=1, keepdims=True).clip(1e-12)
    return (ea * eb).sum(axis=1)


def sentence_encoder(model_id: str | None = None, batch_size: int = 64) -> Callable[[list[str]], np.ndarray]:
    """A sentence-transformers encoder (default all-MiniLM-L6-v2, from the offline package when installed)."""
    from hardneg.resources import DEFAULT_SENTENCE_MODEL, load_sentence_model

    model = load_sentence_model(model_id or DEFAULT_SENTENCE_MODEL)
    return lambda texts: model.encode(texts, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False)


def extreme_subsets(similarity: np.ndarray, eligible: np.ndarray, fraction: float = 0.15) -> tuple[np.ndarray, np.ndarray]:
    """(high, low) bool masks: the ceil(fraction * n) most and least similar eligible items (stable order)."""
    if not 0 < fraction <= 0.5:
        raise ValueError(f"fraction {fraction} must be in (0, 0.5]")
    idx = np.nonzero(eligible)[0]
    k = math.ceil(fraction * idx.size)
    order = idx[np.argsort(similarity[idx], kind="stable")]
    high = np.zeros(similarity.size, dtype=bool)
    low = np.zeros(similarity.size, dtype=bool)
    if k:
        low[order[:k]] = True
        high[order[-k:]] = True
    return high, low


@dataclass
class ContrastBreakdownResult(AnalysisResult):
    values: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)  # model -> subset -> stats

    def extra(self) -> dict[str, Any]:
        return {"values": self.values}

    def figure_size(self):
        return (max(8.0, 1.6 * len(self.params["subsets"]) + 3), 5.0)

    def _draw(self, fig) -> None:
        ax = fig.add_subplot(1, 1, 1)
        subsets = self.params["subsets"]
        models = list(self.values)
        x = np.arange(len(subsets))
        width = 0.8 / max(1, len(models))
        for i, m in enumerate(models):
            acc = np.asarray([100 * self.values[m][s]["accuracy"] for s in subsets], dtype=float)
            lo = np.asarray([100 * self.values[m][s]["ci_low"] for s in subsets], dtype=float)
            hi = np.asarray([100 * self.values[m][s]["ci_high"] for s in subsets], dtype=float)
            pos = x - 0.4 + width * (i + 0.5)
            bars = ax.bar(pos, np.nan_to_num(acc), width, label=m, yerr=np.nan_to_num(np.vstack([acc - lo, hi - acc])),
                          capsize=3)
            ax.bar_label(bars, labels=["n/a" if np.isnan(a) else f"{a:.1f}" for a in acc], fontsize=7, padding=2)
        chance = self.params.get("chance")
        if chance:
            ax.axhline(100 * chance, color="gray", linestyle=":", label="chance")
        ax.set_xticks(x, [f"{s}\n(n={self.params['sizes'][s]})" for s in subsets], fontsize=8)
        ax.set_xlabel("subset of items")
        ax.set_ylabel("accuracy (%) with 95% CI")
        ax.set_ylim(0, 105)
        ax.set_title("Contrast-set breakdown: verb antonyms and most/least similar negatives")
        ax.legend(fontsize=8, loc="lower right")
        ax.grid(axis="y", alpha=0.3)


def contrast_breakdown(
    items: MCItems,
    scores: Mapping[str, tuple[np.ndarray, np.ndarray]],
    antonym: np.ndarray,
    similarities: Mapping[str, np.ndarray],
    fraction: float = 0.15,
    ties: str = "expected",
    n_resamples: int = 1000,
    seed: int = 0,
) -> ContrastBreakdownResult:
    """Accuracy per model on: all items, antonym items, and High/Low similar items per encoder.

    scores: model -> ((N, C) scores, (N, C) mask) aligned to `items`; antonym: (N,) bool;
    similarities: encoder name -> (N,) similarity of positive and contrast negative (NaN = no contrast negative).
    """
    from hardneg.ranking import bootstrap_ci, multiple_choice

    n = len(items)
    antonym = np.asarray(antonym, dtype=bool)
    if antonym.shape != (n,):
        raise ValueError(f"antonym flags must be one per item ({n}), got shape {antonym.shape}")
    has_contrast = contrast_negative_index(items) >= 0
    subsets: dict[str, np.ndarray] = {"all": np.ones(n, dtype=bool), "verb antonyms": antonym & has_contrast}
    for enc, sim in similarities.items():
        sim = np.asarray(sim, dtype=np.float64)
        if sim.shape != (n,):
            raise ValueError(f"similarities of {enc!r} must be one per item ({n}), got shape {sim.shape}")
        high, low = extreme_subsets(np.nan_to_num(sim, nan=0.0), has_contrast & ~antonym & np.isfinite(sim), fraction)
        subsets[f"{enc} High"] = high
        subsets[f"{enc} Low"] = low
    values: dict[str, dict[str, dict[str, float]]] = {}
    rows = []
    for model, (s, mask) in scores.items():
        r = multiple_choice(s, items.label, mask=mask, ks=(1,), ties=ties)
        correct = r.per_example["R@1"]
        values[model] = {}
        row: dict[str, Any] = {"model": model}
        for name, sel in subsets.items():
            if sel.any():
                ci = bootstrap_ci(correct[sel], np.asarray(items.video_ids)[sel], n_resamples=n_resamples, seed=seed)
                values[model][name] = {"accuracy": ci.estimate, "ci_low": ci.low, "ci_high": ci.high, "n": int(sel.sum())}
                row[name] = ci.estimate
            else:
                values[model][name] = {"accuracy": float("nan"), "ci_low": float("nan"), "ci_high": float("nan"), "n": 0}
                row[name] = float("nan")
        rows.append(row)
    chance = float(np.mean(1.0 / next(iter(scores.values()))[1].sum(axis=1))) if scores else None
    notes = [f"High/Low: the {fraction:.0%} most / least similar non-antonym items per encoder."]
    if not antonym.any():
        notes.append("no item's contrast negative is a WordNet verb antonym of its positive")
    return ContrastBreakdownResult(
        analysis="contrast-breakdown",
        title="Contrast-set breakdown: accuracy (R@1) on verb antonyms and High/Low similarity subsets",
        columns=["model"] + list(subsets),
        rows=rows,
        params={"fraction": fraction, "ties": ties, "subsets": list(subsets), "encoders": list(similarities),
                "sizes": {k: int(v.sum()) for k, v in subsets.items()}, "chance": chance, "items": n},
        notes=notes,
        values=values,
    )
