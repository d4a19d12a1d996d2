"""The world's test split does not give the positive away by how often a caption appears (issue 28)."""

from __future__ import annotations

import numpy as np
import pytest


def _built_items(tmp_path, n=72, seed=0):
    """Every multiple-choice item of every config file of a world build of n test scenes (no videos)."""
    import json

    import pyarrow.parquet as pq

    from hardneg.datasets import build_benchmark
    from hardneg.world import sample_scene

    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "scenes.jsonl").write_text("".join(json.dumps(sample_scene(seed, "test", i).to_dict(), sort_keys=True)
                                              + "\n" for i in range(n)))
    built = build_benchmark("world", raw, tmp_path / "built").out
    items, labels = [], []
    for f in sorted(built.glob("*/test-*.parquet")):
        t = pq.read_table(f).to_pydict()
        if "captions" in t:
            items += t["captions"]
            labels += t["label"]
    return items, labels


def test_frequency_heuristic_is_at_chance_on_the_built_test_split(tmp_path):
    from hardneg.ranking import bootstrap_ci
    from hardneg.world.leakage import chance, frequency_guess

    items, labels = _built_items(tmp_path)
    assert len(items) >= 72
    hits = frequency_guess(items, labels)
    ci = bootstrap_ci(hits - chance(items), n_resamples=2000)
    assert ci.low <= 0.0 <= ci.high or ci.estimate <= 0, (ci.estimate, ci.low, ci.high)
    assert abs(hits.mean() - chance(items).mean()) < 0.02


def test_the_heuristic_can_fail_on_several_items_per_scene():
    """Anchor: the old layout (every family's items from each scene) gives the positive away."""
    from hardneg.world import sample_scene
    from hardneg.world.grammar import render_spans
    from hardneg.world.leakage import chance, frequency_guess
    from hardneg.world.negatives import scene_items

    items = []
    for i in range(20):
        for family in scene_items(sample_scene(0, "test", i)).values():
            for it in family:
                items.append([render_spans(it.positive)[0]] + [render_spans(c.caption)[0] for c in it.negatives])
    assert frequency_guess(items).mean() > chance(items).mean() + 0.5


def test_one_item_per_scene_cycles_through_every_category():
    from hardneg.world import sample_scene
    from hardneg.world.negatives import CATEGORY_ORDER, benchmark_item

    got = [benchmark_item(sample_scene(0, "test", i)).category for i in range(54)]
    assert set(got) == set(CATEGORY_ORDER)
    assert got[0] == CATEGORY_ORDER[0] and got[5] == "action"


def test_bag_of_words_trained_on_train_scenes_is_at_chance_on_test():
    from hardneg.world import sample_scene
    from hardneg.world.grammar import render_spans
    from hardneg.world.leakage import BagOfWords, chance
    from hardneg.world.negatives import benchmark_item

    def items(split, n):
        out = []
        for i in range(n):
            it = benchmark_item(sample_scene(0, split, i))
            out.append([render_spans(it.positive)[0]] + [render_spans(c.caption)[0] for c in it.negatives])
        return out

    model = BagOfWords().fit(items("train", 300))
    test = items("test", 300)
    hits = model.score(test)
    se = hits.std() / np.sqrt(len(hits))
    assert hits.mean() <= chance(test).mean() + 3 * se
