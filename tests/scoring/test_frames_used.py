"""The frames each video actually gave, and the decoding method, in the predictions' metadata and the result's
provenance (issue 40, item 7): per video its frame count, first frame's time and spacing in seconds."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from hardneg.evaluation import evaluate_predictions
from hardneg.schema import read_predictions_metadata
from hardneg.scoring import load_benchmark, score_benchmark
from hardneg.video import SAMPLING_RULE, FrameSettings, write_video

FRAMES = FrameSettings(n_frames=4, resize=None)


def _clip(path, n: int, fps: int) -> None:
    rng = np.random.default_rng(n * 100 + fps)
    write_video(path, [rng.integers(0, 255, (32, 32, 3), dtype=np.uint8) for _ in range(n)], fps=fps)


def _pts_seconds(path) -> list[float]:
    """Every frame's presentation time, read with PyAV directly (the reference)."""
    import av

    with av.open(str(path)) as c:
        return sorted(float(f.pts * f.time_base) for f in c.decode(video=0))


def test_per_video_frame_spacing_and_decoding_method_reach_the_results_provenance(tiny_clip, samples, sample_videos,
                                                                                   tmp_path):
    import pyarrow.parquet as pq

    videos = tmp_path / "videos"
    shutil.copytree(sample_videos, videos)
    ids = list(dict.fromkeys(load_benchmark(str(samples["feint6k"]), "msrvtt").items["video_id"].to_pylist()))
    long_id, short_id = ids[0], ids[1]
    _clip(videos / f"{long_id}.mp4", 20, 10)  # 2 s at 10 fps: 4 of 20 frames, 5 frames apart
    _clip(videos / f"{short_id}.mp4", 3, 4)  # 3 frames for 4 asked: frames repeat
    out = tmp_path / "p.parquet"
    score_benchmark("tiny-clip", str(samples["feint6k"]), "msrvtt", out, videos=str(videos), frames=FRAMES,
                    cache_dir=str(tmp_path / "cache"), progress=False, loaded_model=tiny_clip)
    meta = read_predictions_metadata(pq.read_table(out).schema)
    used = meta["frames_used"]
    assert used["videos"] == len(ids) and used["not_decoded"] == 0
    assert used["method"]["decoder"] == "pyav" and used["method"]["sampling"] == SAMPLING_RULE
    assert used["method"]["frames"] == FRAMES.identity()
    # the long clip: the segment midpoints 2, 7, 12, 17 of 20 frames (the rule in words), times read with PyAV
    pts = _pts_seconds(videos / f"{long_id}.mp4")
    n, first, spacing = used["per_video"][long_id]
    assert n == 4 and first == pytest.approx(pts[2], abs=1e-6)
    assert spacing == pytest.approx((pts[17] - pts[2]) / 3, abs=1e-6)
    assert spacing == pytest.approx(0.5, abs=1e-6)
    # the short clip: 4 frames, one repeated; its spacing spans its first to its last frame
    pts = _pts_seconds(videos / f"{short_id}.mp4")
    n, first, spacing = used["per_video"][short_id]
    assert n == 4 and first == pytest.approx(pts[0], abs=1e-6)
    assert spacing == pytest.approx((pts[2] - pts[0]) / 3, abs=1e-6)
    assert used["spacing_s"]["max"] == pytest.approx(0.5, abs=1e-6)
    assert used["count"] == {"min": 4, "median": 4, "max": 4}
    # the result engine copies it, with the decoding method, into the result's provenance
    result = evaluate_predictions(out, n_resamples=0)
    assert result["provenance"]["frames_used"] == used
    assert result["provenance"]["decoding"]["sampling"] == SAMPLING_RULE
    # a rerun takes every video from the embedding cache: none decoded, and it says so
    score_benchmark("tiny-clip", str(samples["feint6k"]), "msrvtt", tmp_path / "q.parquet", videos=str(videos),
                    frames=FRAMES, cache_dir=str(tmp_path / "cache"), progress=False, loaded_model=tiny_clip)
    again = read_predictions_metadata(pq.read_table(tmp_path / "q.parquet").schema)["frames_used"]
    assert again["videos"] == 0 and again["not_decoded"] == len(ids) and again["per_video"] == {}


def test_a_frame_recipe_names_its_own_sampling_rule():
    from hardneg.frames_used import RECIPE_RULES, sampling_rule

    assert sampling_rule(FrameSettings()) == SAMPLING_RULE
    for recipe in ("qwen-vl-utils", "qwen-vl-utils-nframes"):
        got = sampling_rule(FrameSettings(n_frames=32, resize=None, recipe=recipe))
        assert got == RECIPE_RULES[recipe] and "lmms-eval" in got
