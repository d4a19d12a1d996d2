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


def test_upload_over_1080p_is_refused_from_the_header(tmp_path):
    import av

    path = tmp_path / "big.mp4"
    with av.open(str(path), "w") as c:  # 2 frames of 2560x1440, enough for the header
        s = c.add_stream("mpeg4", rate=5)
        s.width, s.height, s.pix_fmt = 2560, 1440, "yuv420p"
        for _ in range(2):
            frame = av.VideoFrame.from_ndarray(np.zeros((1440, 2560, 3), np.uint8), format="rgb24")
            for packet in s.encode(frame):
                c.mux(packet)
        for packet in s.encode():
            c.mux(packet)
    with pytest.raises(dl.DemoInputError, match="the video is 2560x1440; the limit is 1920x1080") as err:
        dl.check_upload(str(path))
    assert str(tmp_path) not in str(err.value)  # no server path in a message


def test_typed_text_in_messages_is_quoted_cut_and_escaped():
    assert dl.echo("<b>x</b>") == "&#x27;&lt;b&gt;x&lt;/b&gt;&#x27;"
    assert len(dl.echo("a" * 10_000)) < 120


def test_positive_is_marked_and_its_rank_always_stated():
    caps = [f"caption {j}" for j in range(21)]
    text = dl.candidates_text(caps, 3)
    assert text.splitlines()[3].startswith("✓ caption 3") and sum(ln.startswith("✓") for ln in text.splitlines()) == 1
    scores = np.linspace(1, 0, 21)
    scores[3] = -1.0  # the positive ranked last
    order, rows = dl.rank_candidates(scores, caps, 3, None)
    assert dl.verdict_text(order, 3, 21).startswith("### ✓ Positive ranked 21 of 21")
    assert rows[-1][1] == "✓ positive" and rows[-1][2] == "caption 3"
    assert dl.verdict_text(order, None, 21) == ""


def test_chart_labels_wrap_and_fit_with_21_candidates():
    long = "A person slowly lifts a green cup from the table and then puts it down near the window"
    assert dl.wrap_label(long).count("\n") == 1 and all(len(x) <= dl.LABEL_WIDTH for x in dl.wrap_label(long).split("\n"))
    assert dl.wrap_label("x " * 200).endswith("…")
    caps = [f"{long} {j}" for j in range(21)]
    scores = np.linspace(0, 1, 21)
    order = [int(j) for j in np.argsort(-scores, kind="stable")]
    fig = dl.score_bar_chart(scores, caps, 0, order, "t")
    fig.canvas.draw()
    ax = fig.axes[0]
    labels = ax.get_yticklabels()
    assert len(labels) == 21 and labels[-1].get_text().startswith("✓ ")  # the positive (lowest score) at the bottom
    assert labels[-1].get_fontweight() == "bold"
    # every label is inside the figure (nothing cut at the left edge) and labels do not overlap
    boxes = [lab.get_window_extent() for lab in labels]
    assert min(b.x0 for b in boxes) >= 0
    ys = sorted((b.y0, b.y1) for b in boxes)
    assert all(a[1] <= b[0] + 1 for a, b in zip(ys, ys[1:]))
