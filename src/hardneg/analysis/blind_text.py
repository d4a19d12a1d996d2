"""Blind-text check: can a benchmark's positives be picked without looking at the video?

Two text-only baselines for any multiple-choice set: (a) any predictions file
from a text-only scorer (e.g. a language model's sentence plausibility from
`hardneg score` with a blind model), and (b) a classifier trained here on the
candidates' surface features (length, word overlap with the other options,
words unique to the option, bag of words) with grouped cross-validation (no
video in both train and test folds). A baseline whose 95% bootstrap interval
lies above chance means the negatives are spottable from text alone, and the
benchmark is flagged.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from hardneg.analysis.base import AnalysisResult
from hardneg.analysis.inputs import MCItems

_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
DENSE_FEATURES = ("n_words", "n_chars", "mean_word_len", "mean_jaccard", "max_jaccard", "word_support", "n_unique_words")


def _dense_features(captions: list[str]) -> tuple[np.ndarray, list[str]]:
    """Per-candidate surface features relative to the item's other candidates, and their tokens for hashing."""
    words = [_WORD.findall(c.lower()) for c in captions]
    sets = [set(w) for w in words]
    counts = Counter(w for s in sets for w in s)
    n = len(captions)
    feats, docs = [], []
    for i, (c, w, s) in enumerate(zip(captions, words, sets)):
        jac = [len(s & t) / max(1, len(s | t)) for j, t in enumerate(sets) if j != i] or [0.0]
        support = [(counts[x] - 1) / max(1, n - 1) for x in s] or [0.0]
        unique = [x for x in s if counts[x] == 1]
        feats.append([len(w), len(c), float(np.mean([len(x) for x in w])) if w else 0.0, float(np.mean(jac)),
                      float(np.max(jac)), float(np.mean(support)), len(unique)])
        docs.append(" ".join(w + ["U_" + x for x in unique]))
    f = np.asarray(feats, dtype=np.float64)
    f_rel = f - f.mean(axis=0, keepdims=True)  # position within the item: the choice is relative
    return np.hstack([f, f_rel]), docs


def surface_features(items: MCItems, n_hash: int = 2**14):
    """Sparse (total candidates, features) matrix, item index and is-positive label of each candidate row."""
    from scipy import sparse
    from sklearn.feature_extraction.text import HashingVectorizer

    dense, docs, item_of, is_pos = [], [], [], []
    for i, caps in enumerate(items.captions):
        f, d = _dense_features(caps)
        dense.append(f)
        docs += d
        item_of += [i] * len(caps)
        is_pos += [int(j == items.label[i]) for j in range(len(caps))]
    dense_m = np.vstack(dense)
    scale = dense_m.std(axis=0)
    dense_m = (dense_m - dense_m.mean(axis=0)) / np.where(scale > 0, scale, 1.0)
    hv = HashingVectorizer(n_features=n_hash, alternate_sign=False, binary=True, token_pattern=r"\S+", lowercase=False,
                           norm="l2")
    x = sparse.hstack([sparse.csr_matrix(dense_m), hv.transform(docs)]).tocsr()
    return x, np.asarray(item_of), np.asarray(is_pos)


def surface_classifier_scores(items: MCItems, folds: int = 5, seed: int = 0, c: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Out-of-fold P(positive) per candidate -> ((N, C) scores, (N, C) mask); folds group whole videos."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold

    x, item_of, y = surface_features(items)
    groups = np.asarray(items.video_ids)[item_of]
    n_groups = len(set(groups.tolist()))
    if n_groups < 2:
        raise ValueError("the surface classifier needs items from at least 2 videos for cross-validation")
    k = min(folds, n_groups)
    oof = np.zeros(y.size)
    splitter = GroupKFold(n_splits=k, shuffle=True, random_state=seed)
    for train, test in splitter.split(x, y, groups):
        if len(set(y[train].tolist())) < 2:
            oof[test] = 0.5
            continue
        clf = LogisticRegression(C=c, max_iter=2000, class_weight="balanced")
        clf.fit(x[train], y[train])
        oof[test] = clf.decision_function(x[test])
    width = max(len(cap) for cap in items.captions)
    scores = np.full((len(items), width), np.nan)
    mask = np.zeros((len(items), width), dtype=bool)
    pos_in_item = np.concatenate([np.arange(len(cap)) for cap in items.captions])
    scores[item_of, pos_in_item] = oof
    mask[item_of, pos_in_item] = True
    return scores, mask


@dataclass
class BlindTextResult(AnalysisResult):
    values: dict[str, dict[str, float]] = field(default_factory=dict)

    def extra(self) -> dict[str, Any]:
        return {"values": self.values}

    def figure_size(self):
        return (9.0, 2.5 + 0.8 * len(self.values))

    def _draw(self, fig) -> None:
        ax = fig.add_subplot(1, 1, 1)
        names = list(self.values)
        acc = np.asarray([100 * self.values[n]["accuracy"] for n in names])
        lo = np.asarray([100 * self.values[n]["ci_low"] for n in names])
        hi = np.asarray([100 * self.values[n]["ci_high"] for n in names])
        colours = [VERDICT_COLOURS[self.values[n]["verdict"]] for n in names]
        y = np.arange(len(names))
        ax.barh(y, acc, xerr=np.vstack([acc - lo, hi - acc]), color=colours, capsize=4)
        ax.axvline(100 * self.params["chance"], color="black", linestyle="--", label=f"chance ({100 * self.params['chance']:.1f}%)")
        ax.set_yticks(y, names)
        ax.set_xlabel("accuracy without the video (%) with 95% CI")
        ax.set_ylabel("text-only baseline")
        ax.set_xlim(0, 100)
        from matplotlib.patches import Patch

        handles, _ = ax.get_legend_handles_labels()
        # the legend uses the table's verdict words, one entry per verdict shown
        handles += [Patch(color=VERDICT_COLOURS[v], label=v) for v in VERDICT_COLOURS
                    if any(self.values[n]["verdict"] == v for n in names)]
        ax.legend(handles=handles, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncols=2)
        ax.set_title(f"Blind-text check ({self.params['items']} items)")


#: the verdicts of the table, and the chart colour of each (the chart's legend uses the same words)
VERDICT_COLOURS = {
    "FLAG: above chance (negatives spottable from text)": "C3",
    "not distinguishable from chance": "C0",
    "below chance: text prefers the negatives": "C1",
}


def verdict_of(low: float, high: float, chance: float) -> str:
    """One verdict from the interval and chance, used by both the table and the chart."""
    names = list(VERDICT_COLOURS)
    return names[0] if low > chance else names[2] if high < chance else names[1]


def blind_text_check(
    items: MCItems,
    baselines: Mapping[str, tuple[np.ndarray, np.ndarray]],
    ties: str = "expected",
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> BlindTextResult:
    """Accuracy (R@1) with a video-clustered bootstrap CI of each text-only baseline; flag those above chance.

    baselines: name -> ((N, C) scores, (N, C) mask) aligned to `items` (e.g. from `surface_classifier_scores`).
    """
    from hardneg.ranking import bootstrap_ci, multiple_choice

    if not baselines:
        raise ValueError("blind-text check needs at least one baseline (e.g. the surface classifier)")
    n_cand = np.asarray([len(c) for c in items.captions], dtype=float)
    chance = float(np.mean(1.0 / n_cand))
    values, rows = {}, []
    for name, (s, mask) in baselines.items():
        r = multiple_choice(s, items.label, mask=mask, ks=(1,), ties=ties)
        ci = bootstrap_ci(r.per_example["R@1"], items.video_ids, n_resamples=n_resamples, confidence=confidence, seed=seed)
        flagged = bool(ci.low > chance)
        verdict = verdict_of(ci.low, ci.high, chance)
        values[name] = {"accuracy": ci.estimate, "ci_low": ci.low, "ci_high": ci.high, "chance": chance,
                        "flagged": flagged, "verdict": verdict}
        rows.append({"baseline": name, "accuracy": ci.estimate, "ci_low": ci.low, "ci_high": ci.high, "chance": chance,
                     "verdict": verdict})
    return BlindTextResult(
        analysis="blind-text",
        title="Blind-text check: text-only accuracy vs chance",
        columns=["baseline", "accuracy", "ci_low", "ci_high", "chance", "verdict"],
        rows=rows,
        params={"chance": chance, "items": len(items), "confidence": confidence, "n_resamples": n_resamples, "ties": ties},
        values=values,
    )
