"""Text-only attacks on a multiple-choice file: can the positive be found without the video?

Two attacks that hold the whole test file (issue 28):
* `frequency_guess`: pick the candidate that appears most often across all the items given
  (every config file of a build together). When one scene gave several items, its positive was the
  one caption shared by all of them: this picked it every time.
* `BagOfWords`: a logistic regression on word counts, trained on items made from TRAIN scenes
  (positive = 1, negatives = 0), scoring test candidates; it learns any word that true captions
  hold more often than negatives.

Both return, per item, the expected accuracy of their pick (ties count 1/k, as the ranking core's
"expected" tie rule), so a blind guess lands on chance exactly.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Sequence

import numpy as np

_WORD = re.compile(r"[a-z]+")


def expected_hits(scores: np.ndarray, label: int = 0) -> float:
    """1/k when the label is among the k top-scored candidates, else 0."""
    top = np.flatnonzero(scores == scores.max())
    return 1.0 / len(top) if label in top else 0.0


def frequency_guess(items: Sequence[Sequence[str]], labels: Sequence[int] | None = None) -> np.ndarray:
    """Per item, the expected accuracy of "the candidate that appears most often across all items"."""
    counts = Counter(c for caps in items for c in caps)
    labels = [0] * len(items) if labels is None else labels
    return np.asarray([expected_hits(np.asarray([counts[c] for c in caps], np.float64), lab)
                       for caps, lab in zip(items, labels)])


class BagOfWords:
    """Logistic regression on word counts (numpy, full-batch gradient descent, L2): positive vs negative."""

    def __init__(self, steps: int = 300, lr: float = 0.5, l2: float = 1e-3):
        self.steps, self.lr, self.l2 = steps, lr, l2
        self.vocab: dict[str, int] = {}
        self.w = np.zeros(0)

    def _x(self, texts: Sequence[str]) -> np.ndarray:
        x = np.zeros((len(texts), len(self.vocab) + 1))
        x[:, -1] = 1.0
        for i, t in enumerate(texts):
            for w in _WORD.findall(t.lower()):
                if w in self.vocab:
                    x[i, self.vocab[w]] += 1.0
        return x

    def fit(self, items: Sequence[Sequence[str]], labels: Sequence[int] | None = None) -> "BagOfWords":
        labels = [0] * len(items) if labels is None else labels
        texts = [c for caps in items for c in caps]
        y = np.asarray([float(j == lab) for caps, lab in zip(items, labels) for j in range(len(caps))])
        self.vocab = {w: i for i, w in enumerate(sorted({w for t in texts for w in _WORD.findall(t.lower())}))}
        x = self._x(texts)
        weight = np.where(y == 1, 0.5 / max(y.sum(), 1), 0.5 / max((1 - y).sum(), 1))  # balanced classes
        self.w = np.zeros(x.shape[1])
        for _ in range(self.steps):
            p = 1 / (1 + np.exp(-(x @ self.w)))
            self.w -= self.lr * (x.T @ (weight * (p - y)) + self.l2 * self.w)
        return self

    def score(self, items: Sequence[Sequence[str]], labels: Sequence[int] | None = None) -> np.ndarray:
        """Per item, the expected accuracy of the top-scored candidate."""
        labels = [0] * len(items) if labels is None else labels
        return np.asarray([expected_hits(np.round(self._x(caps) @ self.w, 9), lab) for caps, lab in zip(items, labels)])


def chance(items: Sequence[Sequence[str]]) -> np.ndarray:
    return np.asarray([1.0 / len(caps) for caps in items])
