"""Short clips score on Qwen2.5-VL (issue 40, item 4).

A clip with fewer frames than asked (or too few left after `--fps`) comes back from the decoder with frames repeated;
their times repeat. The frames' spacing is then reckoned as the model's own processor reckons it: transformers'
`VideoMetadata.sampled_fps` (frames sampled / total frames x the video's fps), called here as the reference. A video
the model cannot take is reported and the run goes on.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from hardneg.models.vlm.families import seconds_per_frame
from hardneg.video import FrameSettings, UnscorableVideo, sample_positions


def _sampled(total: int, video_fps: float, settings: FrameSettings) -> tuple[list[int], list[float]]:
    """(frame indices, their times) the decoder keeps for a clip of `total` frames at `video_fps`."""
    times = np.arange(total) / video_fps
    picks = sample_positions(times, settings).tolist()
    return picks, [float(times[i]) for i in picks]


@pytest.mark.parametrize("total, video_fps, settings", [
    (3, 8.0, FrameSettings(n_frames=8)),  # a 3-frame clip, 8 asked
    (20, 2.0, FrameSettings(n_frames=8, fps=0.5)),  # a 10 s clip at --fps 0.5: 5 frames left, 8 asked
    (2, 8.0, FrameSettings(n_frames=8)),
    (64, 8.0, FrameSettings(n_frames=8)),  # no repeat, 8 frames per pick: the picks' spacing is the same number
])
def test_frame_spacing_is_the_model_processors_frames_over_duration(total, video_fps, settings):
    from transformers.video_utils import VideoMetadata

    picks, times = _sampled(total, video_fps, settings)
    want = 1.0 / VideoMetadata(total_num_frames=total, fps=video_fps, frames_indices=picks).sampled_fps
    if settings.fps is None:
        assert seconds_per_frame(times) == pytest.approx(want, rel=1e-9)
    else:  # --fps first resamples the clip to a grid: the processor sees that grid as the video
        grid = sorted(set(picks))
        meta = VideoMetadata(total_num_frames=len(grid), fps=settings.fps,
                             frames_indices=[grid.index(p) for p in picks])
        assert seconds_per_frame(times) == pytest.approx(1.0 / meta.sampled_fps, rel=1e-9)


def test_times_that_go_back_are_unscorable():
    with pytest.raises(UnscorableVideo, match="must not go back"):
        seconds_per_frame([0.0, 1.0, 0.5])
    assert seconds_per_frame([2.0, 2.0, 2.0]) is None  # one distinct frame: the model's default spacing


@pytest.fixture()
def short_clip_run(tmp_path, monkeypatch):
    """`hardneg run` on the TempCompass sample with a 3-frame clip, a 10 s clip and one more video; `bad` names a
    video whose frames the model refuses (its frames are 40 pixels high, so not 64 wide after --resize 48)."""
    from hardneg.datasets import build_benchmark, sample_video_ids
    from hardneg.datasets.samples import sample_raw_dir
    from hardneg.video import write_video

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    ids = sample_video_ids("tempcompass")
    data = build_benchmark("tempcompass", sample_raw_dir("tempcompass"), tmp_path / "data").out
    videos = tmp_path / "videos"
    videos.mkdir()
    rng = np.random.default_rng(0)
    shapes = {ids[0]: (3, 8, 48), ids[1]: (20, 2, 48), ids[2]: (20, 2, 40)}  # frames, fps, height
    for v, (n, fps, h) in shapes.items():
        write_video(videos / f"{v}.mp4", [rng.integers(0, 255, (h, 64, 3), dtype=np.uint8) for _ in range(n)], fps=fps)

    def run(bad: bool, *extra: str):
        from hardneg.cli import main
        from hardneg.models.vlm import families

        if bad:
            real = families.QwenVL.video_inputs

            def refuse_40(self, frames, dtype, device, timestamps=None):
                if np.asarray(frames).shape[2] != 64:  # 40x64 frames come back 48x76 (--resize 48)
                    raise UnscorableVideo("refused on purpose (test)")
                return real(self, frames, dtype, device, timestamps=timestamps)

            monkeypatch.setattr(families.QwenVL, "video_inputs", refuse_40)
        out = tmp_path / ("R-bad" if bad else "R")
        rc = main(["run", "--model", "tiny-vlm:qwen2.5-vl", "--benchmarks", "tempcompass", "--data", str(data),
                   "--videos", str(videos), "--out", str(out), "--resamples", "0", "--no-charts", "--no-progress",
                   "--device", "cpu", "--resize", "48", *extra])
        return rc, json.loads((out / "results.json").read_text())

    return run, ids


@pytest.mark.slow
def test_a_3_frame_clip_and_a_10s_clip_at_fps_half_score_on_qwen25(short_clip_run):
    run, ids = short_clip_run
    for extra in ([], ["--fps", "0.5"]):
        rc, results = run(False, *extra)
        assert rc == 0
        res = results["tempcompass/all"]
        assert res["coverage"] == 1.0 and res["videos"]["ok"] == 3, extra


@pytest.mark.slow
def test_a_video_that_cannot_be_scored_is_reported_and_the_run_goes_on(short_clip_run, capsys):
    run, ids = short_clip_run
    rc, results = run(True)
    assert rc == 0
    res = results["tempcompass/all"]
    assert res["videos"]["ok"] == 2 and res["videos"]["unreadable"] == 1
    assert 0 < res["coverage"] < 1.0
    assert "1 bad" in capsys.readouterr().out
