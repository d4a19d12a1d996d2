"""Frame sampling and decoding: counts, uniform positions, resizing, bad and missing files."""

from __future__ import annotations

import numpy as np
import pytest

from hardneg.video import FrameSettings, VideoFolder, VideoReport, decode_frames, uniform_indices


def _ramp_video(path, n_frames=16, size=32):
    """Frame t is a flat grey of level 12*t + 20, so a decoded frame tells which frame it was."""
    import av

    with av.open(str(path), mode="w") as c:
        s = c.add_stream("mpeg4", rate=8)
        s.width = s.height = size
        s.pix_fmt = "yuv420p"
        s.options = {"qscale": "2"}
        for t in range(n_frames):
            img = np.full((size, size, 3), 12 * t + 20, np.uint8)
            for p in s.encode(av.VideoFrame.from_ndarray(img, format="rgb24")):
                c.mux(p)
        for p in s.encode():
            c.mux(p)
    return path


def test_uniform_indices_are_segment_midpoints():
    assert uniform_indices(16, 4).tolist() == [2, 6, 10, 14]
    assert uniform_indices(10, 10).tolist() == list(range(10))
    assert uniform_indices(1, 3).tolist() == [0, 0, 0]
    assert uniform_indices(3, 6).tolist() == [0, 0, 1, 1, 2, 2]
    with pytest.raises(ValueError):
        uniform_indices(0, 4)


def test_decoded_frames_are_the_uniformly_sampled_ones(tmp_path):
    path = _ramp_video(tmp_path / "ramp.mp4")
    frames = decode_frames(path, FrameSettings(n_frames=4, resize=None))
    assert frames.shape == (4, 32, 32, 3) and frames.dtype == np.uint8
    levels = frames.reshape(4, -1).mean(1)
    expected = 12 * np.array([2, 6, 10, 14]) + 20
    assert np.abs(levels - expected).max() < 4, levels


def test_fps_resampling_and_resize(tmp_path):
    path = _ramp_video(tmp_path / "ramp.mp4")  # 16 frames at 8 fps = 2 s
    frames = decode_frames(path, FrameSettings(n_frames=2, fps=2, resize=16))
    assert frames.shape == (2, 16, 16, 3)
    # a 2 fps grid over t=0..1.875 s picks frames 0, 4, 8, 12; two uniform picks of those: 4 and 12
    levels = frames.reshape(2, -1).mean(1)
    assert np.abs(levels - (12 * np.array([4, 12]) + 20)).max() < 4, levels


def test_frame_settings_validate_and_identify():
    assert FrameSettings(8, None, 224).identity() == {"n_frames": 8, "fps": None, "resize": 224, "decoder": "pyav"}
    for bad in ({"n_frames": 0}, {"fps": -1.0}, {"resize": 0}, {"decoder": "opencv"}):
        with pytest.raises(ValueError):
            FrameSettings(**bad)


def test_missing_and_unreadable_videos_are_counted(tmp_path):
    _ramp_video(tmp_path / "good.mp4")
    (tmp_path / "broken.mp4").write_bytes(b"not a video at all")
    (tmp_path / "empty.webm").write_bytes(b"")
    folder, report, settings = VideoFolder(tmp_path), VideoReport(), FrameSettings(n_frames=2, resize=None)
    assert folder.load("good", settings, report).shape[0] == 2
    assert folder.load("broken", settings, report) is None
    assert folder.load("empty", settings, report) is None
    assert folder.load("nowhere", settings, report) is None
    assert (report.ok, report.missing, sorted(report.unreadable)) == (1, ["nowhere"], ["broken", "empty"])
    d = report.to_dict()
    assert (d["ok"], d["missing"], d["unreadable"]) == (1, 1, 2)
    assert "broken.mp4" in report.unreadable["broken"]


def test_video_folder_finds_nested_ids_and_rejects_missing_root(tmp_path):
    (tmp_path / "sub").mkdir()
    _ramp_video(tmp_path / "sub" / "vid1.mkv", n_frames=2)
    assert VideoFolder(tmp_path).path("vid1").name == "vid1.mkv"
    assert VideoFolder(tmp_path).path("sub/vid1").name == "vid1.mkv"
    with pytest.raises(FileNotFoundError, match="--videos"):
        VideoFolder(tmp_path / "nope")
