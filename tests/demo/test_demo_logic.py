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

    # every declared benchmark found in the folder (what `hardneg list` names, retrieval included), in order
    expected = [n for n in benchmarks.names() if (data / n).is_dir()]
    assert store.benchmarks() == expected and {"feint6k", "contrast_sets", "posrank", "fire"} <= set(expected)
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
    marked = [ln for ln in text.splitlines() if ln.startswith("✓")]
    assert marked == ["✓ caption 3   (positive)"] and len(text.splitlines()) == 21
    scores = np.linspace(1, 0, 21)
    scores[3] = -1.0  # the positive ranked last
    order, rows = dl.rank_candidates(scores, caps, 3, None)
    verdict = dl.verdict_text(order, 3, 21, scores)
    assert verdict.startswith("### ✗ Fooled — the true caption ranked 21 of 21") and "✓" not in verdict
    assert rows[-1][1] == "✓ positive" and rows[-1][2] == "caption 3"
    assert dl.verdict_text(order, None, 21) == ""


def test_verdict_mark_agrees_with_its_words():
    """✓ only when the positive is first alone; a shared top score is a tie; anything else is ✗ fooled."""
    for scores, mark, words in (([0.9, 0.1, 0.2], "✓", "Correct"), ([0.5, 0.5, 0.1], "=", "Tie"),
                                ([0.1, 0.5, 0.2], "✗", "Fooled")):
        order, _ = dl.rank_candidates(np.array(scores), ["a", "b", "c"], 0, None)
        text = dl.verdict_text(order, 0, 3, np.array(scores))
        assert text.startswith(f"### {mark} {words}"), text
        assert ("fooled" in text.lower()) == (mark == "✗") and ("prefers it" in text) == (mark == "✓")


def test_chart_bars_start_at_zero_and_name_the_score():
    """Log-probabilities are negative: every bar starts at 0 and extends left, and the axis says what the score
    is (the model's score_name), not 'cosine'."""
    scores = np.array([-3.2, -1.5, -7.0])
    order = [int(j) for j in np.argsort(-scores, kind="stable")]
    fig = dl.score_bar_chart(scores, ["a", "b", "c"], 0, order, "t", "mean word log-probability (text only)")
    ax = fig.axes[0]
    bars = ax.patches
    assert all(b.get_x() == 0.0 for b in bars) and sorted(b.get_width() for b in bars) == sorted(scores.tolist())
    lo, hi = ax.get_xlim()
    assert lo < -7.0 and hi >= 0.0
    assert "log-probability" in ax.get_xlabel() and "cosine" not in ax.get_xlabel()


def test_models_say_what_their_score_is():
    from hardneg.models import load_model
    from hardneg.models.protocol import as_model

    assert "log-probability" in load_model("blind-unigram").score_name
    assert load_model("tiny-clip").score_name == "cosine similarity"

    class Mine:
        score_name = "log-probability of the caption"

        def score(self, video, captions):
            return np.zeros(len(captions))

    assert as_model(Mine()).score_name == "log-probability of the caption"
    assert as_model(lambda video, captions: np.zeros(len(captions))).score_name == "the model's own score"


def test_special_lines_follow_the_declaration_not_the_name():
    """Δs shows on a benchmark whose declaration names it in `example_views` (Feint6K), on no other, even with
    the same negative types."""
    from hardneg import benchmarks

    scores, types = np.array([0.5, 0.3, 0.7]), ["positive", "noun", "verb"]
    for name, decl in benchmarks.all_benchmarks().items():
        text = dl.example_views(name, scores, 0, types)
        assert ("Δs" in text) == ("delta_s" in decl.example_views), name
    assert "delta_s" in benchmarks.get("feint6k").example_views


def test_python_model_spec_loads_a_class(tmp_path, monkeypatch):
    """module:Class is imported and wrapped; adapter prefixes (st:, random:) are not taken for modules."""
    (tmp_path / "my_demo_model.py").write_text(
        "import numpy as np\n"
        "class Model:\n"
        "    model_id = 'me/mine'\n"
        "    score_name = 'my score'\n"
        "    def score(self, video, captions):\n"
        "        return np.arange(len(captions), dtype=float)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert dl.is_python_spec("my_demo_model:Model") and not dl.is_python_spec("random:7")
    assert not dl.is_python_spec("openai/clip-vit-base-patch32")
    pool = dl.ModelPool()
    model = pool.get("my_demo_model:Model")
    assert model.score_name == "my score" and list(model.score(np.zeros((2, 4, 4, 3), np.uint8), ["a", "b"])) == [0, 1]
    with pytest.raises(dl.DemoInputError, match="cannot import"):
        pool.get("no_such_module_here:Model")


def test_retrieval_examples_rank_the_collection(demo_data):
    """FIRE is in the picker through its declaration: an example is a query, its own video and the collection."""
    _, data, _ = demo_data
    store = dl.ExampleStore.load(data)
    config = store.configs("fire")[0]
    assert not any(c.endswith(("-queries", "-videos")) for c in store.configs("fire"))
    ex = store.get("fire", config, store.ids("fire", config)[0])
    assert ex.is_retrieval and ex.candidates[ex.label] == ex.video_id and ex.label in ex.relevant
    assert ex.query and "its own video" in dl.retrieval_text(ex)


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


def test_a_large_collection_ranks_its_own_the_relevant_and_a_fixed_draw():
    ex = dl.Example("fire", "c", "test", "q7", "v50", ["a query"], 50, [], task="retrieval",
                    candidates=[f"v{j}" for j in range(1000)], relevant=[3, 50, 999])
    videos, own, relevant = dl.retrieval_subset(ex, limit=32)
    assert len(videos) == 32 and videos[own] == "v50" and [videos[j] for j in relevant] == ["v3", "v50", "v999"]
    assert videos == sorted(videos, key=lambda v: int(v[1:]))  # collection order
    assert dl.retrieval_subset(ex, limit=32) == (videos, own, relevant)  # the same draw every time
    assert "32 of the collection's 1000 videos" in dl.retrieval_text(ex, limit=32)
    small = dl.Example("fire", "c", "test", "q", "v1", ["q"], 1, [], task="retrieval", candidates=["v0", "v1"],
                       relevant=[1])
    assert dl.retrieval_subset(small) == (["v0", "v1"], 1, [1])


def test_retrieval_scores_reuse_each_video_embedding(demo_data, monkeypatch):
    """Video embeddings are computed once per (model, file): the second query decodes nothing."""
    _, data, videos = demo_data
    import app

    from hardneg.video import VideoFolder

    store = dl.ExampleStore.load(data)
    config = store.configs("fire")[0]
    ids = store.ids("fire", config)
    pool = dl.ModelPool()
    folder = VideoFolder(videos)
    calls = []
    real = dl.video_frames
    monkeypatch.setattr(dl, "video_frames", lambda p: calls.append(p) or real(p))
    for qid in ids[:2]:
        ex = store.get("fire", config, qid)
        ranked, own, _ = dl.retrieval_subset(ex)
        paths = [str(folder.path(v)) for v in ranked]
        scores = app._score_videos(pool, "tiny-clip", paths, ex.query)
        assert scores.shape == (len(ranked),) and np.isfinite(scores).all()
        model = pool.get("tiny-clip")
        direct = model.score(real(paths[own]), [ex.query])[0]
        assert scores[own] == pytest.approx(direct, abs=1e-5)  # the same number as scoring the pair
    assert len(calls) == len(set(calls))  # each video decoded once across both queries
