"""Decoding only the sampled frames gives exactly the frames of the old all-frames decoder.

The reference below is an independent copy of the decoder as it was before (decode every frame,
keep them all, pick by the uniform / fps rule, PIL bicubic resize); every case compares arrays
for equality, so a changed position or pixel fails.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import hardneg.video as video
from hardneg.video import (DecodeStats, FrameSettings, VideoDecodeError, check_resolution, decode_frames,
                           probe_video, sample_positions)

# ----------------------------------------------------------------- the old decoder, copied as it was


def _old_uniform(total, n):
    return np.minimum(((np.arange(n) + 0.5) * total / n).astype(np.int64), total - 1)


def _old_grid(times, fps):
    if len(times) == 1:
        return np.zeros(1, np.int64)
    grid = np.arange(times[0], times[-1] + 1e-9, 1.0 / fps)
    pos = np.searchsorted(times, grid).clip(1, len(times) - 1)
    left_closer = (grid - times[pos - 1]) <= (times[pos] - grid)
    return np.unique(np.where(left_closer, pos - 1, pos))


def _old_rule(times, n, fps):
    candidates = np.arange(len(times))
    if fps is not None:
        candidates = _old_grid(np.asarray(times), fps)
    return candidates[_old_uniform(len(candidates), n)]


def _old_resize(img, size):
    if size is None:
        return img
    w, h = img.size
    scale = size / min(w, h)
    if scale == 1:
        return img
    return img.resize((max(1, round(w * scale)), max(1, round(h * scale))), resample=3)


def old_decode_frames(path, settings):
    import av

    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        frames, times = [], []
        for frame in container.decode(stream):
            frames.append(frame)
            times.append(float(frame.time) if frame.time is not None else len(times))
    picked = _old_rule(times, settings.n_frames, settings.fps)
    return np.stack([np.asarray(_old_resize(frames[i].to_image(), settings.resize).convert("RGB")) for i in picked]), len(frames)


# ------------------------------------------------------------------------------------ test videos


def _write(path, n=40, size=48, codec="libx264", fmt=None, rate=8, options=None, pts_ms=None, gop=None,
           pix_fmt="yuv420p"):
    """Frame t is a flat level 5t+20 with a bar of length t: each decoded frame says which it was."""
    import av

    with av.open(str(path), "w", format=fmt) as c:
        s = c.add_stream(codec, rate=rate)
        s.width = s.height = size
        s.pix_fmt = pix_fmt
        if options:
            s.options = options
        if gop:
            s.codec_context.gop_size = gop
        if pts_ms is not None:
            s.codec_context.time_base = Fraction(1, 1000)
        for t in range(n):
            img = np.full((size, size, 3), (5 * t + 20) % 256, np.uint8)
            img[: size // 4, : (t % size) + 1] = 255 - (5 * t) % 256
            frame = av.VideoFrame.from_ndarray(img, format="rgb24")
            if pts_ms is not None:
                frame.pts, frame.time_base = int(pts_ms[t]), Fraction(1, 1000)
            for p in s.encode(frame):
                c.mux(p)
        for p in s.encode():
            c.mux(p)
    return path


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    d = tmp_path_factory.mktemp("sampling")
    rng = np.random.default_rng(3)
    vfr = np.cumsum(rng.integers(20, 300, 40))
    out = {
        "h264-bframes.mp4": _write(d / "h264-bframes.mp4", options={"bf": "3"}),
        "h264-1frame.mp4": _write(d / "h264-1frame.mp4", n=1),
        "h264-7frames.mp4": _write(d / "h264-7frames.mp4", n=7),
        "vfr.mkv": _write(d / "vfr.mkv", pts_ms=vfr),  # variable frame rate, no frame count in the header
        "vfr.mp4": _write(d / "vfr.mp4", pts_ms=vfr),
        "no-timestamps.h264": _write(d / "no-timestamps.h264", fmt="h264"),  # raw stream: no packet timestamps
        "mpeg4.mp4": _write(d / "mpeg4.mp4", codec="mpeg4"),  # not a one-frame-per-packet codec: checked to the end
        "vp9.webm": _write(d / "vp9.webm", codec="libvpx-vp9"),
    }
    return out


SETTINGS = [FrameSettings(n_frames=n, fps=fps, resize=r) for n, fps, r in
            [(1, None, None), (3, None, None), (8, None, 24), (50, None, None), (4, 1.0, None), (8, 3.0, 24),
             (5, 30.0, None), (2, 0.25, None)]]


# ------------------------------------------------------------------------------------------ tests


def test_rule_matches_the_old_rule_for_many_lengths_rates_and_timings():
    rng = np.random.default_rng(0)
    for total in list(range(1, 40)) + [97, 250, 1001]:
        regular = np.arange(total) / 30.0
        variable = np.cumsum(rng.uniform(0.005, 0.2, total))
        positions = [float(i) for i in range(total)]  # frames without timestamps: their positions
        for times in (regular, variable, positions):
            for n in (1, 2, 3, 8, 16, 64):
                for fps in (None, 0.5, 2.0, 8.0, 29.97, 60.0):
                    got = sample_positions(list(times), FrameSettings(n_frames=n, fps=fps))
                    assert got.tolist() == _old_rule(list(times), n, fps).tolist(), (total, n, fps)


@pytest.mark.parametrize("name", ["h264-bframes.mp4", "h264-1frame.mp4", "h264-7frames.mp4", "vfr.mkv", "vfr.mp4",
                                  "no-timestamps.h264", "mpeg4.mp4", "vp9.webm"])
def test_decoded_frames_equal_the_old_decoder(videos, name):
    for settings in SETTINGS:
        want, total = old_decode_frames(videos[name], settings)
        stats = DecodeStats()
        got = decode_frames(videos[name], settings, stats=stats)
        assert got.dtype == np.uint8 and got.shape == want.shape, (name, settings)
        assert np.array_equal(got, want), (name, settings, stats)
        # never more distinct frames held than asked for, whatever the length
        assert stats.frames_kept <= min(settings.n_frames, total)


def test_index_is_used_and_decoding_stops_after_the_last_sampled_frame(videos):
    stats = DecodeStats()
    decode_frames(videos["h264-bframes.mp4"], FrameSettings(n_frames=2, resize=None), stats=stats)
    picks = _old_rule(range(40), 2, None)  # [10, 30]
    assert stats.method == "index" and stats.frames_in_index == 40
    assert stats.frames_decoded == picks.max() + 1 < 40  # frames 31..39 are never decoded
    stats = DecodeStats()
    decode_frames(videos["mpeg4.mp4"], FrameSettings(n_frames=2, resize=None), stats=stats)
    assert stats.method == "index+tail" and stats.frames_decoded == 40  # counted to the end: not a trusted codec
    stats = DecodeStats()
    decode_frames(videos["no-timestamps.h264"], FrameSettings(n_frames=2, resize=None), stats=stats)
    assert stats.method == "two-pass" and stats.passes == 2


def test_a_wrong_index_falls_back_to_two_passes_with_the_same_frames(videos, monkeypatch):
    real_scan = video._scan

    def lying_scan(container, stream):
        index = real_scan(container, stream)
        index.pts = index.pts[:5] + index.pts[6:]  # one frame missing from the index,
        index.keyframes = [0]  # before any sampled frame (no seek jumps over it)
        return index

    monkeypatch.setattr(video, "_scan", lying_scan)
    for settings in SETTINGS:
        stats = DecodeStats()
        got = decode_frames(videos["h264-bframes.mp4"], settings, stats=stats)
        assert stats.method == "two-pass", settings
        assert np.array_equal(got, old_decode_frames(videos["h264-bframes.mp4"], settings)[0])


def test_seeking_over_unused_stretches_gives_the_same_frames(tmp_path):
    closed = _write(tmp_path / "closed.mp4", n=200, size=32, gop=10, options={"bf": "2"})
    opened = _write(tmp_path / "open.mp4", n=200, size=32,
                    options={"x264-params": "open-gop=1:keyint=12:min-keyint=12:scenecut=0", "bf": "3"})
    for path in (closed, opened):
        for settings in (FrameSettings(n_frames=3, resize=None), FrameSettings(n_frames=4, fps=0.5, resize=16)):
            stats = DecodeStats()
            got = decode_frames(path, settings, stats=stats)
            assert stats.seeks > 0 and stats.method == "index" and stats.frames_decoded < 200, (path.name, stats)
            assert np.array_equal(got, old_decode_frames(path, settings)[0]), (path.name, settings)


def test_frames_held_do_not_grow_with_the_video_length(tmp_path):
    kept, decoded = {}, {}
    for n in (40, 400):
        path = _write(tmp_path / f"len{n}.mp4", n=n, size=32)
        stats = DecodeStats()
        frames = decode_frames(path, FrameSettings(n_frames=8, resize=None), stats=stats)
        assert frames.shape[0] == 8
        kept[n], decoded[n] = stats.frames_kept, stats.frames_decoded
        assert old_decode_frames(path, FrameSettings(n_frames=8, resize=None))[1] == n  # the old decoder held n
    assert kept == {40: 8, 400: 8}
    assert decoded[400] > decoded[40]  # work grows with the length, the frames held do not


def test_scaling_in_the_decoder_is_close_to_pil_and_changes_the_identity(videos):
    path = videos["h264-bframes.mp4"]
    pil = decode_frames(path, FrameSettings(n_frames=4, resize=24))
    sws = decode_frames(path, FrameSettings(n_frames=4, resize=24, scaler="swscale"))
    assert sws.shape == pil.shape
    diff = np.abs(sws.astype(int) - pil.astype(int))
    assert diff.mean() < 3 and not np.array_equal(sws, pil)  # close, but not the same pixels
    assert FrameSettings(scaler="swscale").identity() != FrameSettings().identity()


def test_identity_of_the_defaults_is_unchanged_and_any_change_is_a_new_cache(tmp_path):
    from hardneg.scoring import EmbeddingCache

    assert FrameSettings().identity() == {"n_frames": 8, "fps": None, "resize": 224, "decoder": "pyav"}
    variants = [FrameSettings(), FrameSettings(decoder="torchcodec"), FrameSettings(scaler="swscale"),
                FrameSettings(fps=2.0), FrameSettings(n_frames=16), FrameSettings(resize=None)]
    idents = [repr(sorted(v.identity().items())) for v in variants]
    assert len(set(idents)) == len(idents)
    caches = [EmbeddingCache(tmp_path, "model", v) for v in variants]
    caches[0].put("f" * 64, np.ones(3, np.float32))
    assert caches[0].get("f" * 64) is not None
    assert all(c.get("f" * 64) is None for c in caches[1:])  # never reused across settings
    with pytest.raises(ValueError, match="scaler"):
        FrameSettings(scaler="area")
    with pytest.raises(ValueError, match="pyav decoder only"):
        FrameSettings(decoder="torchcodec", scaler="swscale")


def test_probe_and_resolution_limit(videos, tmp_path):
    info = probe_video(videos["h264-bframes.mp4"])
    assert (info.width, info.height, info.n_frames, info.codec) == (48, 48, 40, "h264")
    assert info.duration == pytest.approx(5.0, abs=0.2)
    assert probe_video(videos["vfr.mkv"]).n_frames is None  # Matroska headers do not count frames
    decode_frames(videos["h264-bframes.mp4"], FrameSettings(n_frames=2), max_pixels=48 * 48)  # at the limit: fine
    with pytest.raises(VideoDecodeError, match=r"48x48 \(0.00 megapixels\), above the limit.*scale=") as err:
        decode_frames(videos["h264-bframes.mp4"], FrameSettings(n_frames=2), max_pixels=48 * 47)
    assert "h264-bframes.mp4" in str(err.value)
    with pytest.raises(VideoDecodeError, match="above the limit"):
        check_resolution("big.mp4", 3840, 2160, 1920 * 1080)
    (tmp_path / "junk.mp4").write_bytes(b"nothing here")
    with pytest.raises(VideoDecodeError, match="junk.mp4"):
        probe_video(tmp_path / "junk.mp4")


def test_decode_chunks_keeps_order_reports_bad_files_and_raises_setup_errors(videos, tmp_path, monkeypatch):
    import sys

    from hardneg.video import DecoderUnavailable, decode_chunks

    (tmp_path / "broken.mp4").write_bytes(b"not a video")
    paths = [videos["h264-bframes.mp4"], tmp_path / "broken.mp4", videos["vp9.webm"], videos["vfr.mkv"]]
    settings = FrameSettings(n_frames=3, resize=None)
    got = [r for chunk in decode_chunks(paths, settings, chunk=1) for r in chunk]
    assert isinstance(got[1], VideoDecodeError) and "broken.mp4" in str(got[1])
    for i in (0, 2, 3):
        assert np.array_equal(got[i], old_decode_frames(paths[i], settings)[0])
    monkeypatch.setitem(sys.modules, "torchcodec.decoders", None)  # as if torchcodec were not installed
    with pytest.raises(DecoderUnavailable, match=r"pip install -e '\.\[torchcodec\]'"):
        list(decode_chunks(paths[:1], FrameSettings(decoder="torchcodec")))
