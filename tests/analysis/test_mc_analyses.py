"""Contrast-set breakdown, Δs sensitivity and the blind-text check on hand-built items."""

from __future__ import annotations

import numpy as np
import pytest

from hardneg.analysis import blind_text_check, contrast_breakdown, sensitivity, surface_classifier_scores
from hardneg.analysis.contrast_sets_breakdown import (
    antonym_flags,
    are_antonyms,
    contrast_negative_index,
    extreme_subsets,
    swapped_words,
)
from hardneg.analysis.inputs import MCItems


def make_items(captions, types, manipulated=None, videos=None):
    n = len(captions)
    return MCItems(
        ids=[f"i{i}" for i in range(n)],
        video_ids=videos or [f"v{i}" for i in range(n)],
        captions=captions,
        label=np.zeros(n, dtype=np.int64),
        negative_types=types,
        manipulated_index=manipulated or [None] * n,
        category=[None] * n,
        provenance=[[] for _ in range(n)],
    )


class FakeLemma:
    def __init__(self, name, antonyms=()):
        self._name, self._ant = name, antonyms

    def name(self):
        return self._name

    def antonyms(self):
        return [FakeLemma(a) for a in self._ant]


class FakeWordNet:
    """push <-> pull and open <-> close only; morphy strips -ing."""

    ANT = {"push": ["pull"], "pull": ["push"], "open": ["close"], "close": ["open"]}

    def morphy(self, word, pos):
        return word[:-3] if word.endswith("ing") else word

    def synsets(self, word, pos):
        return [type("S", (), {"lemmas": lambda self, w=word: [FakeLemma(w, FakeWordNet.ANT.get(w, []))]})()]


def test_contrast_negative_and_swapped_words():
    items = make_items([["a b", "c", "d"], ["x", "y", "z"]], [["positive", "random", "verb_lm"], ["positive", "random", "random"]],
                       manipulated=[None, None])
    assert contrast_negative_index(items).tolist() == [2, -1]
    assert swapped_words("a man is pushing a cart", "a man is pulling a cart") == (["pushing"], ["pulling"])


def test_antonym_flags_with_a_controlled_wordnet():
    wn = FakeWordNet()
    flags = antonym_flags(["a man is pushing a cart", "a girl is opening the door", "a man rides a horse"],
                          ["a man is pulling a cart", "a girl is painting the door", "a man washes a horse"], wordnet=wn)
    assert flags.tolist() == [True, False, False]


def test_antonyms_with_real_wordnet():
    from hardneg.resources import MissingResourceError, load_wordnet

    try:
        wn = load_wordnet()
    except MissingResourceError as exc:
        pytest.skip(str(exc))
    assert are_antonyms("pushing", "pulling", wn)
    assert are_antonyms("raise", "lower", wn)
    assert not are_antonyms("riding", "washing", wn)


def test_extreme_subsets_take_fifteen_percent_of_eligible():
    sim = np.arange(20, dtype=float)
    eligible = np.ones(20, dtype=bool)
    eligible[[0, 19]] = False  # e.g. antonyms: excluded from both ends
    high, low = extreme_subsets(sim, eligible, 0.15)  # ceil(0.15 * 18) = 3
    assert np.nonzero(low)[0].tolist() == [1, 2, 3]
    assert np.nonzero(high)[0].tolist() == [16, 17, 18]


def test_contrast_breakdown_hand_computed(artifacts_dir):
    # 20 items, 3 options, contrast negative at index 1. Items 0-3 are antonym swaps.
    n = 20
    caps = [[f"p{i}", f"n{i}", f"r{i}"] for i in range(n)]
    items = make_items(caps, [["positive", "verb_lm", "random"]] * n, manipulated=[1] * n)
    antonym = np.zeros(n, dtype=bool)
    antonym[:4] = True
    sim = np.linspace(0, 1, n)  # non-antonyms 4..19: Low = 4, 5, 6 ; High = 17, 18, 19 (ceil(0.15 * 16) = 3)
    scores = np.tile([1.0, 0.0, -1.0], (n, 1))  # correct everywhere ...
    scores[[0, 1, 17, 18], 1] = 2.0  # ... except two antonym items and two High items
    r = contrast_breakdown(items, {"m": (scores, np.ones((n, 3), bool))}, antonym, {"enc": sim}, n_resamples=200)
    row = r.rows[0]
    assert row["all"] == pytest.approx(16 / 20)
    assert row["verb antonyms"] == pytest.approx(2 / 4)
    assert row["enc High"] == pytest.approx(1 / 3)
    assert row["enc Low"] == pytest.approx(1.0)
    assert r.params["sizes"] == {"all": 20, "verb antonyms": 4, "enc High": 3, "enc Low": 3}
    assert r.params["chance"] == pytest.approx(1 / 3)
    r.plot(artifacts_dir / "analysis_contrast_breakdown.png")


def test_sensitivity_delta_hand_computed(artifacts_dir):
    items = make_items([["p", "obj", "act", "rnd"]] * 2, [["positive", "noun", "verb", "random"]] * 2)
    s = np.array([[0.5, 0.1, 0.45, 0.0], [0.4, 0.2, 0.5, 0.1]])
    r = sensitivity(items, {"m": (s, np.ones_like(s, bool))})
    rows = {row["kind"]: row for row in r.rows}
    assert rows["object"]["mean_Δs"] == pytest.approx(((0.1 - 0.5) + (0.2 - 0.4)) / 2)
    assert rows["action"]["mean_Δs"] == pytest.approx(((0.45 - 0.5) + (0.5 - 0.4)) / 2)
    assert rows["action"]["share_Δs>0"] == 0.5 and rows["object"]["share_Δs<0"] == 1.0
    assert rows["random"]["n"] == 2
    assert np.allclose(sorted(r.deltas["m"]["object"]), [-0.4, -0.2])
    r.plot(artifacts_dir / "analysis_sensitivity.png")


def test_sensitivity_custom_kinds_and_note():
    items = make_items([["p", "a", "b"]], [["positive", "counterfactual", "counterfactual"]])
    s = np.array([[1.0, 0.0, 2.0]])
    r = sensitivity(items, {"m": (s, np.ones_like(s, bool))})
    assert [row["kind"] for row in r.rows] == ["action"] and r.notes  # object swaps missing: said so
    r2 = sensitivity(items, {"m": (s, np.ones_like(s, bool))}, kinds={"counterfactual": "object"})
    assert [row["kind"] for row in r2.rows] == ["object"]


def _vocab_items(rng, n, positive_longer):
    words = [f"w{i}" for i in range(40)]
    caps = []
    for _ in range(n):
        opts = [" ".join(rng.choice(words, size=5)) for _ in range(4)]
        if positive_longer:
            opts[0] += " " + " ".join(rng.choice(words, size=4))
        caps.append(opts)
    return make_items(caps, [["positive", "verb", "verb", "verb"]] * n, videos=[f"v{i // 2}" for i in range(n)])


def test_surface_classifier_spots_length_artifact(artifacts_dir):
    items = _vocab_items(np.random.default_rng(0), 80, positive_longer=True)
    scores = surface_classifier_scores(items, folds=4, seed=0)
    r = blind_text_check(items, {"surface": scores}, n_resamples=300)
    v = r.values["surface"]
    assert v["accuracy"] > 0.9 and v["flagged"] and r.params["chance"] == 0.25
    r.plot(artifacts_dir / "analysis_blind_text.png")


def test_surface_classifier_at_chance_without_artifacts():
    items = _vocab_items(np.random.default_rng(1), 80, positive_longer=False)
    r = blind_text_check(items, {"surface": surface_classifier_scores(items, folds=4, seed=0)}, n_resamples=300)
    v = r.values["surface"]
    assert not v["flagged"] and v["ci_low"] <= 0.25 <= v["ci_high"]


def test_blind_check_of_given_scores_and_chance_with_ragged_items():
    items = make_items([["a", "b"], ["a", "b", "c", "d"]], [["positive", "verb"], ["positive"] + ["verb"] * 3])
    s = np.array([[1.0, 0.0, np.nan, np.nan], [0.0, 1.0, 0.5, 0.2]])
    mask = ~np.isnan(s)
    r = blind_text_check(items, {"lm": (s, mask)}, n_resamples=100)
    assert r.params["chance"] == pytest.approx((1 / 2 + 1 / 4) / 2)
    assert r.values["lm"]["accuracy"] == pytest.approx(0.5)


def test_blind_chart_legend_uses_the_tables_verdict_words():
    """The chart and the table say the same thing: the legend labels are exactly the table's verdicts."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    items = make_items([["a", "b"]] * 40, [["positive", "verb"]] * 40)
    below = (np.tile([0.0, 1.0], (40, 1)), None)  # always prefers the negative
    r = blind_text_check(items, {"wrong": below}, n_resamples=100)
    verdicts = {v["verdict"] for v in r.values.values()}
    fig = plt.figure()
    r._draw(fig)
    labels = {t.get_text() for t in fig.axes[0].get_legend().get_texts()}
    assert verdicts == {"below chance: text prefers the negatives"} and verdicts <= labels
