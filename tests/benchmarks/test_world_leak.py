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


def _strings(value) -> list[str]:
    """Every string inside one Parquet cell, however nested (lists, structs, lists of structs)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


def answer_key_guess(folder) -> tuple[float, float, int]:
    """(hit rate, chance, items) of the answer-key heuristic over EVERY Parquet file of a build.

    Why every file, whatever its columns: an answer key can hide in any config (issue 34: the `pairs`
    config's `test` split held each test video's true caption, and the old test read only files with
    a `captions` column). The heuristic: from every row of every file that names a test video, keep
    the captions the row states ALONE (a scalar string, not one candidate among several in a list);
    then answer each multiple-choice item with a candidate so stated for its video, if there is one.
    Without a key it can only guess, so its hit rate is chance."""
    import pyarrow.parquet as pq

    files = sorted(folder.rglob("*.parquet"))
    assert files, f"no Parquet file under {folder}"
    items, stated = [], {}
    for f in files:
        for row in pq.read_table(f).to_pylist():
            if isinstance(row.get("captions"), list) and isinstance(row.get("label"), int):
                items.append((row["video_id"], row["captions"], row["label"]))
            alone = [v for v in row.values() if isinstance(v, str)]
            nested = _strings([v for v in row.values() if not isinstance(v, str)])
            for vid in {s.split(":", 1)[-1] for s in alone + nested if "-test-" in s}:
                stated.setdefault(vid, set()).update(alone)
    hits, chance = [], []
    for vid, caps, label in items:
        known = [k for k, c in enumerate(caps) if c in stated.get(vid, ())]
        hits.append(1.0 / len(caps) if len(known) != 1 else float(known[0] == label))
        chance.append(1.0 / len(caps))
    return float(np.mean(hits)), float(np.mean(chance)), len(items)


def test_no_parquet_file_of_the_build_holds_the_test_answer_key(tmp_path):
    """Issue 34: a build of train AND test scenes; every Parquet file read, whatever its columns."""
    import json

    from hardneg.datasets import build_benchmark
    from hardneg.world import sample_scene

    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "scenes.jsonl").write_text("".join(json.dumps(sample_scene(0, split, i).to_dict(), sort_keys=True) + "\n"
                                              for split, n in (("train", 20), ("test", 45)) for i in range(n)))
    built = build_benchmark("world", raw, tmp_path / "built").out
    hit, chance, n = answer_key_guess(built)
    assert n == 45 + 25  # each test scene once in posrank/counterfactual/temporal, + the 25 part-of-speech copies
    assert hit < chance + 0.05, f"the build gives the test answers away: {hit:.2f} vs chance {chance:.2f}"


def test_the_answer_key_heuristic_catches_a_key():
    """Anchor: a file stating each test video's caption alone is caught (the pre-issue-34 `pairs` test split)."""
    import tempfile
    from pathlib import Path

    import pyarrow as pa
    import pyarrow.parquet as pq

    from hardneg.world import sample_scene
    from hardneg.world.grammar import render_spans
    from hardneg.world.negatives import benchmark_item

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        scenes = [sample_scene(0, "test", i) for i in range(18)]
        rows = []
        for s in scenes:
            it = benchmark_item(s)
            rows.append({"video_id": s.id, "label": 0, "captions": [render_spans(it.positive)[0]]
                         + [render_spans(c.caption)[0] for c in it.negatives]})
        pq.write_table(pa.Table.from_pylist(rows), tmp / "items.parquet")
        assert answer_key_guess(tmp)[0] < 0.6
        pq.write_table(pa.Table.from_pylist([{"id": f"pair:{s.id}", "text": s.text} for s in scenes]),
                       tmp / "other-config.parquet")
        assert answer_key_guess(tmp)[0] == 1.0


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
