"""Items batched across videos (issue 35, `hardneg.models.vlm.batch`): the same scores as one item at a time and as
one forward per caption, for every protocol on two families (Qwen2-VL's 3-D positions, LLaVA-OneVision's 1-D ones),
prefixes of different lengths in one padded forward; out-of-memory gives smaller batches, never a failure."""

from __future__ import annotations

import numpy as np
import pytest

from hardneg.models import load_model
from hardneg.models.vlm.model import DEFAULT_PROMPTS
from hardneg.models.vlm.batch import BatchScorer

FAMILIES = ("tiny-vlm", "tiny-vlm:llava-onevision")
CAPTIONS = [["a man opens the door", "a man closes the door slowly", "the dog runs across the park"],
            ["the dog runs across the park", "the dog runs across the road quickly"],
            ["a cat", "a woman lifts a heavy box onto the table", "two kids"],
            ["a man closes the door"]]


@pytest.fixture(scope="module", params=FAMILIES)
def model(request):
    return load_model(request.param, device="cpu")


@pytest.fixture(scope="module")
def items():
    rng = np.random.default_rng(0)
    counts = (8, 4, 8, 6)  # different frame counts: prefixes of different lengths
    return [(rng.integers(0, 256, (t, 40, 56, 3), dtype=np.uint8), caps) for t, caps in zip(counts, CAPTIONS)]


def _cut(scorer, by: dict[int, int]):
    """Make item i's shared prefix `by[i]` tokens shorter (still shared: any shorter prefix is), so items whose
    videos stack still reach the prefill with different lengths, padded."""
    real = scorer._prepare

    def prepare(items, spec, *rest):
        got = real(items, spec, *rest)
        for it in got:
            it.start -= by.get(it.index, 0)
        return got

    scorer._prepare = prepare


@pytest.mark.parametrize("protocol", list(DEFAULT_PROMPTS))
def test_batched_items_equal_one_item_at_a_time_and_naive(model, items, protocol):
    spec = DEFAULT_PROMPTS[protocol]
    model.spec = spec
    scorer = BatchScorer(model.engine, max_rows=3)  # caption forwards mix rows of different items
    _cut(scorer, {2: 5})
    got = scorer.score_items(items, spec)
    starts = [it.start for it in scorer._prepare(items, spec)]
    assert len(set(starts)) >= 3, starts  # prefixes of different lengths
    assert max(scorer.stats.prefill_sizes) >= 2 and max(scorer.stats.caption_rows) >= 2  # really batched
    for (frames, caps), scores in zip(items, got):
        assert scores.shape == (len(caps),) and np.isfinite(scores).all()
        np.testing.assert_allclose(scores, model.score(frames, caps), rtol=0, atol=1e-4)
        np.testing.assert_allclose(scores, model.score(frames, caps, naive=True), rtol=0, atol=1e-4)


def test_a_wrong_position_in_the_batch_is_caught(model, items):
    """Padding without each item's own positions moves the scores: the equality above can fail."""
    spec = DEFAULT_PROMPTS["caption-likelihood"]
    model.spec = spec
    scorer = BatchScorer(model.engine)
    _cut(scorer, {0: 5})
    real = scorer._positions
    scorer._positions = lambda ids, video: real(ids, video) + 3  # positions shifted, as padding would shift them
    got = scorer.score_items(items, spec)
    assert max(np.abs(g - model.score(f, c)).max() for (f, c), g in zip(items, got)) > 1e-3


def test_out_of_memory_halves_the_batch_and_the_scores_stay(model, items):
    """A simulated memory limit: any forward over more than 2 rows (prefill items or caption rows) raises torch's
    OutOfMemoryError. The scorer halves and retries, and every score equals the unbatched one."""
    import torch

    spec = DEFAULT_PROMPTS["caption-likelihood"]
    model.spec = spec
    eng_model = model.engine.model
    real = eng_model.forward
    refused = []

    def limited(*args, **kw):
        rows = kw["input_ids"].shape[0]
        if rows > 2:
            refused.append(rows)
            raise torch.OutOfMemoryError(f"simulated: {rows} rows over the limit of 2")
        return real(*args, **kw)

    eng_model.forward = limited
    try:
        scorer = BatchScorer(model.engine, max_items=4, max_rows=8)
        same = [it for it in items if len(it[0]) == 8]  # these stack: one group of 2 items, 6 captions
        got = scorer.score_items(same + same, spec)
    finally:
        del eng_model.forward
    assert refused and scorer.stats.out_of_memory >= 2
    assert max(scorer.stats.prefill_sizes) == 2 and max(scorer.stats.caption_rows) <= 2  # under the limit, halved
    for (frames, caps), scores in zip(same + same, got):
        np.testing.assert_allclose(scores, model.score(frames, caps), rtol=0, atol=1e-4)


def test_batch_size_follows_the_free_memory(model, items, monkeypatch):
    import hardneg.models.vlm.batch as vb

    spec = DEFAULT_PROMPTS["caption-likelihood"]
    scorer = BatchScorer(model.engine, max_items=64)
    prepared = scorer._prepare(items, spec)
    monkeypatch.setattr(vb, "free_bytes", lambda device: 1 << 40)
    assert scorer.items_per_batch(prepared) == 64
    assert scorer.rows_per_forward(prepared) == sum(len(c) for c in CAPTIONS)  # every row in one forward
    monkeypatch.setattr(vb, "free_bytes", lambda device: 1)
    assert scorer.items_per_batch(prepared) == 1 and scorer.rows_per_forward(prepared) == 1  # never zero


def test_the_scorer_batches_a_video_llms_videos(model, items):
    """`similarity` with several videos (a retrieval query, or items the scorer groups) goes through the batch."""
    spec = DEFAULT_PROMPTS["yes-probability"]
    model.spec = spec
    caps = CAPTIONS[0]
    vids = model.encode_video([f for f, _ in items])
    texts = model.encode_text(caps)
    got = model.similarity(vids, texts)
    assert got.shape == (len(items), len(caps))
    for row, (frames, _) in zip(got, items):
        np.testing.assert_allclose(row, model.score(frames, caps).astype(np.float32), rtol=0, atol=1e-4)


def test_batched_items_keep_each_videos_frame_times(tmp_path):
    """Qwen2.5-VL spaces its positions by the frames' times: through the scorer's batch (several videos at once)
    each video keeps its own times, as one item at a time does (clips at 1 and 4 frames per second)."""
    from hardneg.scoring import encode_videos
    from hardneg.video import FrameSettings, VideoFolder, VideoReport, decode_frames, write_synthetic_video

    settings = FrameSettings(n_frames=8, resize=None)
    write_synthetic_video(tmp_path / "slow.mp4", "slow", n_frames=16, size=48, fps=1)
    write_synthetic_video(tmp_path / "fast.mp4", "fast", n_frames=16, size=48, fps=4)
    m = load_model("tiny-vlm:qwen2.5-vl", device="cpu")
    m.spec = DEFAULT_PROMPTS["caption-likelihood"]
    emb, status, _ = encode_videos(m, VideoFolder(tmp_path), ["slow", "fast"], settings, None, VideoReport())
    assert status == {"slow": "ok", "fast": "ok"}
    caps = CAPTIONS[0]
    got = m.similarity_many([emb["slow"], emb["fast"]], [m.encode_text(caps)] * 2)
    for vid, row in zip(("slow", "fast"), got):
        frames = decode_frames(tmp_path / f"{vid}.mp4", settings)
        right = m.score(np.asarray(frames), caps, timestamps=frames.times)
        np.testing.assert_allclose(row, right, rtol=0, atol=1e-4)
    default = m.score(np.asarray(decode_frames(tmp_path / "slow.mp4", settings)), caps)
    assert np.abs(got[0] - default).max() > 1e-3  # a dropped time would be caught


def test_caption_forwards_of_a_recurrent_model_keep_items_whole():
    """Issue 52: for models with recurrent state a caption forward ends at an item's last row when it holds one
    item whole (63 rows of three 21-row items as 21 + 21 + 21, not 32 + 31); an item longer than a forward is cut."""
    from hardneg.models.vlm.batch import whole_items

    sizes = [21, 21, 21]
    rows = [(b, k) for b, n in enumerate(sizes) for k in range(n)]
    assert whole_items(rows[:32], sizes) == rows[:21]
    assert whole_items(rows[:42], sizes) == rows[:42]
    assert whole_items(rows[21:53], sizes) == rows[21:42]
    assert whole_items([(0, k) for k in range(8)], [40]) == [(0, k) for k in range(8)]  # no item whole: as given
