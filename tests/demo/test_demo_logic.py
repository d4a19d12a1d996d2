"""The demo's computations without a browser: examples, ranking, diffs, Δs, upload checks."""

from __future__ import annotations

import random

import numpy as np
import pytest

import demo_logic as dl
from hardneg.video import write_synthetic_video


def test_word_diff_marks_only_changed_words():
    assert dl.word_diff("a man opens the door", "a man closes the door") == [
        ("a ", None), ("man ", None), ("closes ", "changed"), ("the ", None), ("door ", None)]
    assert [w for w, lab in dl.word_diff("a man runs", "a tall man runs fast") if lab] == ["tall ", "fast "]


def test_rank_candidates_and_highlights():
    caps = ["pos one", "neg two", "neg three"]
    order, rows = dl.rank_candidates(np.array([0.2, 0.5, 0.1]), caps, 0, ["positive", "verb", "noun"])
    assert order == [1, 0, 2]
    assert [r[0] for r in rows] == [1, 2, 3] and rows[1][1] == "✓ positive" and rows[0][2] == "neg two"
    hl = dl.diff_highlights(caps, 0, order)
    assert ("#1: ", None) in hl and ("#3: ", None) in hl and ("#2: ", None) not in hl


def test_delta_s_splits_object_and_action_swaps():
    text = dl.delta_s_text(np.array([0.5, 0.3, 0.7, 0.1]), 0, ["positive", "noun", "verb", "counterfactual"])
    assert "object swap** Δs mean -0.2000 (negative for 1/1)" in text
    assert "action swap** Δs mean -0.1000 (negative for 1/2)" in text
    assert "no negatives marked" in dl.delta_s_text(np.array([1.0, 0.0]), 0, ["positive", "random"])


def test_example_store_search_and_random(demo_data):
    _, data, _ = demo_data
    store = dl.ExampleStore.load(data)
    from hardneg import benchmarks

    # every declared multiple-choice benchmark found in the folder, in the registry's order
    expected = [n for n, b in benchmarks.all_benchmarks().items() if not b.is_retrieval and (data / n).is_dir()]
    assert store.benchmarks() == expected and {"feint6k", "contrast_sets", "posrank"} <= set(expected)
    ids = store.ids("feint6k", "msrvtt", "door")
    assert ids and all(any("door" in c for c in store.get("feint6k", "msrvtt", i).captions) for i in ids)
    assert store.ids("feint6k", "msrvtt", "no such words here") == []
    assert store.random_id("feint6k", "msrvtt", random.Random(1)) in store.ids("feint6k", "msrvtt")
    with pytest.raises(dl.DemoInputError, match="pick one"):
        store.get("feint6k", "msrvtt", "nope")


def test_upload_checks_give_clear_messages(tmp_path, monkeypatch):
    good = write_synthetic_video(tmp_path / "ok.mp4", "x", n_frames=8)
    assert 0 < dl.check_upload(str(good)) < 5
    with pytest.raises(dl.DemoInputError, match="upload a video"):
        dl.check_upload(None)
    (tmp_path / "notes.txt").write_text("hi")
    with pytest.raises(dl.DemoInputError, match="not a supported video format"):
        dl.check_upload(str(tmp_path / "notes.txt"))
    (tmp_path / "bad.mp4").write_bytes(b"junk")
    with pytest.raises(dl.DemoInputError, match="cannot be read"):
        dl.check_upload(str(tmp_path / "bad.mp4"))
    monkeypatch.setattr(dl, "MAX_DURATION_S", 0.5)
    with pytest.raises(dl.DemoInputError, match="s long; the limit"):
        dl.check_upload(str(good))
    monkeypatch.setattr(dl, "MAX_UPLOAD_BYTES", 10)
    with pytest.raises(dl.DemoInputError, match="MB; the limit"):
        dl.check_upload(str(good))


def test_parse_captions():
    assert dl.parse_captions("a\n\n b \n") == ["a", "b"]
    with pytest.raises(dl.DemoInputError, match="at least two"):
        dl.parse_captions("only one")
