"""Decoding and preprocessing on threads: same answer as one thread, errors kept per video."""

from __future__ import annotations

import numpy as np
import pytest

from hardneg.threads import chunks, default_threads, thread_map


def test_thread_map_keeps_order_and_raises():
    assert thread_map(lambda x: x * x, list(range(50)), threads=4) == [x * x for x in range(50)]
    assert thread_map(str, [], threads=4) == []

    def boom(x):
        if x == 3:
            raise KeyError("three")
        return x

    with pytest.raises(KeyError, match="three"):
        thread_map(boom, list(range(6)), threads=3)
    assert [list(c) for c in chunks(list(range(7)), 3)] == [[0, 1, 2], [3, 4, 5], [6]]


def test_thread_count_from_environment(monkeypatch):
    monkeypatch.setenv("HARDNEG_THREADS", "3")
    assert default_threads() == 3
    monkeypatch.setenv("HARDNEG_THREADS", "zero")
    with pytest.raises(ValueError, match="HARDNEG_THREADS"):
        default_threads()
    monkeypatch.setenv("HARDNEG_THREADS", "0")
    with pytest.raises(ValueError, match="at least 1"):
        default_threads()


def test_chunked_preprocessing_equals_one_call(tiny_clip):
    from hardneg.models.clip import preprocess_frames

    rng = np.random.default_rng(0)
    frames = rng.integers(0, 256, (37, 40, 52, 3), dtype=np.uint8)
    whole = tiny_clip.processor(images=list(frames), return_tensors="pt")["pixel_values"]
    pieces = preprocess_frames(tiny_clip.processor, frames, per_thread=5)
    assert pieces.shape == whole.shape and bool((pieces == whole).all())


def test_threaded_decoding_matches_one_thread_and_reports_bad_files(tmp_path, sample_videos, tiny_clip, monkeypatch):
    from hardneg.scoring import EmbeddingCache, encode_videos
    from hardneg.video import FrameSettings, VideoFolder, VideoReport

    ids = sorted(p.stem for p in sample_videos.glob("*.mp4"))[:6]
    folder = tmp_path / "videos"
    folder.mkdir()
    for v in ids:
        (folder / f"{v}.mp4").write_bytes((sample_videos / f"{v}.mp4").read_bytes())
    (folder / "broken.mp4").write_bytes(b"not a video")
    frames = FrameSettings(n_frames=4)
    results = {}
    for threads in ("1", "4"):
        monkeypatch.setenv("HARDNEG_THREADS", threads)
        report = VideoReport()
        cache = EmbeddingCache(tmp_path / f"cache{threads}", tiny_clip.cache_key(), frames)
        emb, status, _ = encode_videos(tiny_clip, VideoFolder(folder), ids + ["broken", "absent"], frames, cache, report)
        results[threads] = (emb, status, report)
    (e1, s1, r1), (e4, s4, r4) = results["1"], results["4"]
    assert s1 == s4 and s4["broken"] == "unreadable" and s4["absent"] == "missing"
    assert r4.ok == r1.ok == len(ids) and r4.missing == r1.missing == ["absent"] and "broken" in r4.unreadable
    for v in ids:
        np.testing.assert_array_equal(e1[v], e4[v])
