"""The pool of decoding processes gives exactly the frames of one process, in order, with per-video
errors; a worker killed mid-video fails only that video; the scorer and the trainer's loader use it."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import hardneg.decoding as decoding
import pool_fns
from hardneg.decoding import decode_stream, resolve_decoder
from hardneg.pool import WorkerDied, WorkerPool, default_workers
from hardneg.video import (DecodeStats, FrameSettings, VideoDecodeError, decode_frames, uniform_indices,
                           write_synthetic_video)

SETTINGS = [FrameSettings(n_frames=4, resize=32), FrameSettings(n_frames=8, fps=4.0, resize=None),
            FrameSettings(n_frames=3, resize=24, scaler="swscale"), FrameSettings(n_frames=1, resize=None)]


@pytest.fixture(scope="module")
def clips(tmp_path_factory) -> list[Path]:
    d = tmp_path_factory.mktemp("pool-clips")
    paths = [write_synthetic_video(d / f"h264-{i}.mp4", f"pool{i}", n_frames=12 + i, size=40) for i in range(5)]
    paths.append(write_synthetic_video(d / "vp9.webm", "pool-vp9", n_frames=10, size=32))
    paths.append(write_synthetic_video(d / "mpeg4.avi", "pool-mpeg4", n_frames=9, size=32, codec="mpeg4"))
    (d / "broken.mp4").write_bytes(b"not a video")
    paths.insert(2, d / "broken.mp4")
    paths.insert(4, d / "absent.mp4")
    return paths


def _one_process(path, settings):
    try:
        return decode_frames(path, settings)
    except VideoDecodeError as exc:
        return exc


@pytest.mark.parametrize("settings", SETTINGS, ids=lambda s: str(s.identity()))
def test_pool_gives_the_frames_of_one_process_in_order(clips, settings):
    want = [_one_process(p, settings) for p in clips]
    for workers in (1, 3):
        got = list(decode_stream(clips, settings, workers=workers, backend="process"))
        assert len(got) == len(want)
        for p, g, w in zip(clips, got, want):
            if isinstance(w, Exception):
                assert isinstance(g, VideoDecodeError) and p.name in str(g), (p, g)
            else:
                assert isinstance(g, np.ndarray) and np.array_equal(g, w), p


def test_pool_pins_the_frame_positions(tmp_path):
    """Frame t of this clip is a flat grey of level 12*t + 20: the decoded levels say which frames came back."""
    import av

    path = tmp_path / "ramp.mp4"
    with av.open(str(path), mode="w") as c:
        s = c.add_stream("mpeg4", rate=8)
        s.width = s.height = 32
        s.pix_fmt = "yuv420p"
        s.options = {"qscale": "2"}
        for t in range(16):
            for pkt in s.encode(av.VideoFrame.from_ndarray(np.full((32, 32, 3), 12 * t + 20, np.uint8), format="rgb24")):
                c.mux(pkt)
        for pkt in s.encode():
            c.mux(pkt)
    for n in (1, 4, 5, 16):
        frames = next(iter(decode_stream([path], FrameSettings(n_frames=n, resize=None), workers=2, backend="process")))
        got = np.round((frames.reshape(n, -1).mean(1) - 20) / 12).astype(int)
        assert got.tolist() == uniform_indices(16, n).tolist()


def test_a_worker_killed_mid_video_fails_that_video_only(clips, monkeypatch):
    victim = clips[0].with_name("victim.mp4")
    victim.write_bytes(clips[0].read_bytes())
    paths = [clips[1], victim, clips[3], clips[5], clips[6]]
    settings = SETTINGS[0]
    monkeypatch.setattr(decoding, "_decode_task", pool_fns.decode_or_die)
    got = list(decode_stream(paths, settings, workers=2, backend="process"))
    assert isinstance(got[1], VideoDecodeError)
    assert "victim.mp4" in str(got[1]) and "died" in str(got[1]) and "SIGKILL" in str(got[1])
    for i in (0, 2, 3, 4):
        assert np.array_equal(got[i], decode_frames(paths[i], settings)), paths[i]
    # the pool lives on: the next videos decode on the replacement worker
    again = list(decode_stream(paths[:1] + paths[2:], settings, workers=2, backend="process"))
    assert all(isinstance(a, np.ndarray) for a in again)


def test_a_worker_killed_from_outside_is_replaced_and_the_rest_finish(tmp_path):
    """Killed in its first worker and again in the fresh one it is retried in: the item is a WorkerDied."""
    marker = tmp_path / "running"
    items = [(str(marker), "victim")] + list(range(1, 9))
    with WorkerPool(2, name="test-kill") as pool:
        def kill_when_running():
            for _ in range(2):  # the first worker, then the fresh one the item is retried in
                for _ in range(600):
                    if marker.exists():
                        pid = int(marker.read_text())
                        marker.unlink()
                        os.kill(pid, signal.SIGKILL)
                        break
                    time.sleep(0.05)

        killer = threading.Thread(target=kill_when_running)
        killer.start()
        got = list(pool.imap(pool_fns.sleepy, items, describe=lambda x: f"item {x!r}"))
        killer.join()
        assert isinstance(got[0], WorkerDied) and "victim" in str(got[0]) and "SIGKILL" in str(got[0])
        assert "twice" in str(got[0])
        assert got[1:] == [x * x for x in range(1, 9)]
        assert pool.restarts == 2 and pool.retried == 1 and len(pool.pids()) == 2


def test_an_item_whose_worker_is_killed_once_is_retried_in_a_fresh_worker(tmp_path):
    """Issue 36 N9: a kill says nothing about the item; it is run again in a fresh worker and its result returned."""
    items = [(str(tmp_path / "first"), 3)] + [(str(tmp_path / f"m{i}"), i) for i in range(4, 8)]
    for _, i in items[1:]:
        (tmp_path / f"m{i}").write_text("done")  # only the first item dies, once
    with WorkerPool(2, name="test-retry") as pool:
        got = list(pool.imap(pool_fns.die_first_time, items))
        assert got == [9, 16, 25, 36, 49]
        assert pool.restarts == 1 and pool.retried == 1


def test_a_video_whose_decoding_worker_is_killed_once_is_decoded(clips, monkeypatch):
    """Issue 36 N9: the video is decoded in a fresh worker, not called unreadable for the rest of the run."""
    victim = clips[0].with_name("victim-once.mp4")
    victim.write_bytes(clips[0].read_bytes())
    victim.with_suffix(".tried").unlink(missing_ok=True)
    paths = [clips[1], victim, clips[3]]
    settings = SETTINGS[0]
    monkeypatch.setattr(decoding, "_decode_task", pool_fns.decode_or_die_once)
    got = list(decode_stream(paths, settings, workers=2, backend="process"))
    assert victim.with_suffix(".tried").exists()  # its first worker did die
    for i in range(3):
        assert np.array_equal(got[i], decode_frames(paths[i], settings)), paths[i]


def test_pool_reads_ahead_a_bounded_window_and_returns_errors_per_item():
    produced = []

    def items():
        for i in range(200):
            produced.append(i)
            yield i

    with WorkerPool(2, window=5) as pool:
        ahead = 0
        for k, got in enumerate(pool.imap(pool_fns.fails_on_three, items())):
            ahead = max(ahead, len(produced) - k)
            if k == 3:
                assert isinstance(got, ValueError) and "three" in str(got)
            else:
                assert got == k + 1
        assert ahead <= 5 + 1  # memory does not grow with the number of items
        # stopping early and mapping again works (the pool restarts its workers)
        first = pool.imap(pool_fns.fails_on_three, range(50))
        assert next(first) == 1
        first.close()
        assert list(pool.imap(pool_fns.fails_on_three, [10, 20])) == [11, 21]


def test_decode_workers_from_environment(monkeypatch):
    monkeypatch.setenv("HARDNEG_DECODE_WORKERS", "3")
    assert default_workers() == 3
    for bad in ("0", "many"):
        monkeypatch.setenv("HARDNEG_DECODE_WORKERS", bad)
        with pytest.raises(ValueError, match="HARDNEG_DECODE_WORKERS"):
            default_workers()


def test_the_default_path_on_a_2_core_machine_is_not_the_slower_pool(clips, monkeypatch):
    """The rule the sweep measured (docs/scoring-speed.md): on 2 cores the pool of 2 ran at 0.84x-1.06x of
    one process, on 16 cores at 4.1x-4.2x. With the core count faked, the default path follows it, and
    HARDNEG_DECODE_WORKERS still forces the pool; decode_stream takes no pool where the rule says not to."""
    import hardneg.pool as hpool

    monkeypatch.delenv("HARDNEG_DECODE_WORKERS", raising=False)
    monkeypatch.setattr(decoding, "available_cores", lambda: 2)
    two = decoding.choose_path()
    assert (two.backend, two.workers) == ("thread", None) and "2 usable core" in two.reason
    assert decoding.default_backend(FrameSettings()) == "thread"
    assert decoding.choose_path(1).backend == "thread"
    many = decoding.choose_path(16)
    assert (many.backend, many.workers) == ("process", 16)
    assert decoding.choose_path(decoding.POOL_MIN_CORES).backend == "process"
    # no pool is started on the 2-core default, and the frames are those of one process
    monkeypatch.setattr(hpool, "shared_pool", lambda *a, **k: pytest.fail("the pool started on 2 cores"))
    monkeypatch.setattr(decoding, "shared_pool", lambda *a, **k: pytest.fail("the pool started on 2 cores"))
    good = [p for p in clips if p.suffix == ".mp4" and p.name.startswith("h264")][:2]
    got = list(decode_stream(good, SETTINGS[0]))
    for p, f in zip(good, got):
        assert np.array_equal(f, decode_frames(p, SETTINGS[0]))
    monkeypatch.setenv("HARDNEG_DECODE_WORKERS", "2")  # the user's override wins on any machine
    forced = decoding.choose_path()
    assert (forced.backend, forced.workers) == ("process", 2) and "HARDNEG_DECODE_WORKERS" in forced.reason


def test_the_local_runners_workers_take_the_path_of_their_share_of_the_cores(monkeypatch):
    """`--workers N` gives each runner worker cores // N: a share below the pool's threshold decodes on the
    worker's own threads (that many), a larger share on a pool of that many processes."""
    import hardneg.runner.local as local

    for share, pool, threads in ((2, None, "2"), (decoding.POOL_MIN_CORES, str(decoding.POOL_MIN_CORES), None)):
        monkeypatch.delenv("HARDNEG_DECODE_WORKERS", raising=False)
        monkeypatch.delenv("HARDNEG_THREADS", raising=False)
        local._init_worker(lambda: (lambda batch: batch), None, share)
        assert (os.environ.get("HARDNEG_DECODE_WORKERS"), os.environ.get("HARDNEG_THREADS")) == (pool, threads)
        monkeypatch.setattr(decoding, "available_cores", lambda: 16)  # a 16-core machine, its share to this worker
        assert decoding.choose_path().backend == ("process" if pool else "thread")


# ------------------------------------------------------------------------------- the users of the pool


def _configs(bench: str, folder: Path) -> list[str]:
    from hardneg import benchmarks
    from hardneg.items import card_configs

    decl = benchmarks.get(bench)
    return sorted(c for c in card_configs(folder) if not decl.is_companion(c))


def test_scores_with_the_pool_equal_one_process_for_every_config(tiny_clip, samples, sample_videos, tmp_path,
                                                                 monkeypatch):
    """Every config of the sample benchmarks: the pool (2 workers) gives the predictions of
    decoding in this process, one video at a time (the path before the pool)."""
    import pyarrow.parquet as pq

    from hardneg.scoring import score_benchmark

    frames = FrameSettings(n_frames=4, resize=32)

    def score(bench, config, tag):
        out = tmp_path / tag / f"{bench}-{config}.parquet"
        score_benchmark("tiny-clip", str(samples[bench]), config, out, videos=str(sample_videos), frames=frames,
                        cache_dir=str(tmp_path / tag / "cache"), progress=False, loaded_model=tiny_clip)
        return pq.read_table(out)

    checked = 0
    for bench in ("feint6k", "contrast_sets", "fire"):
        for config in _configs(bench, samples[bench]):
            with monkeypatch.context() as m:  # the reference: one thread of this process
                m.setattr(decoding, "default_backend", lambda s: "thread")
                m.setenv("HARDNEG_THREADS", "1")
                ref = score(bench, config, "one")
            for workers in ("2",):
                monkeypatch.setenv("HARDNEG_DECODE_WORKERS", workers)
                got = score(bench, config, f"pool{workers}")
                assert got.column("id").equals(ref.column("id")), (bench, config)
                assert got.column("scores").to_pylist() == ref.column("scores").to_pylist(), (bench, config, workers)
                meta = json.loads(got.schema.metadata[b"hardneg"])
                from hardneg.video import SAMPLING_RULE

                assert meta["decoding"] == {"requested": "pyav", "decoder": "pyav", "backend": "process",
                                            "workers": int(workers), "sampling": SAMPLING_RULE, "scaler": "pil"}
            checked += 1
    assert checked >= 3


def test_the_trainers_loader_decodes_on_the_pool(clips, monkeypatch):
    from hardneg.training.data import Pairs, decode_videos

    calls = []
    real = WorkerPool.imap

    def spy(self, fn, items, describe=repr):
        calls.append(self.workers)
        return real(self, fn, items, describe)

    monkeypatch.setattr(WorkerPool, "imap", spy)
    monkeypatch.setenv("HARDNEG_DECODE_WORKERS", "2")
    good = [p for p in clips if p.suffix == ".mp4" and p.name.startswith("h264")]
    pairs = Pairs([p.stem for p in good] + [good[0].stem], [f"caption {i}" for i in range(len(good) + 1)],
                  {"kind": "test"}, good[0].parent)
    settings = FrameSettings(n_frames=4, resize=32)
    frames, rows = decode_videos(pairs, settings)
    assert calls == [2]
    assert rows == list(range(len(good))) + [0]
    for p, f in zip(good, frames):
        assert np.array_equal(f, decode_frames(p, settings))


# ------------------------------------------------------------------------------------- the GPU decoder


def test_nvdec_falls_back_to_pyav_with_a_clear_message_where_it_cannot_load(monkeypatch):
    import sys

    import hardneg.video as video

    nv = FrameSettings(n_frames=4, decoder="nvdec")
    assert nv.identity() == {"n_frames": 4, "fps": None, "resize": 224, "decoder": "nvdec"}

    def no_gpu(device):
        raise video.DecoderUnavailable("decoder 'nvdec' cannot open the GPU's video decoder here (no GPU)")

    monkeypatch.setattr(video, "_nvdec", no_gpu)  # as on a machine without an NVIDIA GPU
    used, message = resolve_decoder(nv, "cuda")
    assert used == FrameSettings(n_frames=4, decoder="pyav")
    assert "nvdec" in message and "Falling back to the CPU decoder 'pyav'" in message
    assert resolve_decoder(FrameSettings(), None) == (FrameSettings(), None)
    monkeypatch.setitem(sys.modules, "torchcodec.decoders", None)  # as if torchcodec were not installed
    used, message = resolve_decoder(FrameSettings(decoder="torchcodec"), None)
    assert used == FrameSettings() and "torchcodec" in message and "Falling back" in message


def test_nvdec_records_the_fallback_in_the_predictions(tiny_clip, samples, sample_videos, tmp_path, monkeypatch, capsys):
    import json

    import pyarrow.parquet as pq

    import hardneg.video as video
    from hardneg.scoring import score_benchmark

    def no_gpu(device):
        raise video.DecoderUnavailable("decoder 'nvdec' cannot open the GPU's video decoder here (no GPU)")

    monkeypatch.setattr(video, "_nvdec", no_gpu)
    out = tmp_path / "p.parquet"
    score_benchmark("tiny-clip", str(samples["feint6k"]), "msrvtt", out, videos=str(sample_videos),
                    frames=FrameSettings(n_frames=4, resize=32, decoder="nvdec"), cache_dir=str(tmp_path / "c"),
                    progress=False, loaded_model=tiny_clip)
    meta = json.loads(pq.read_schema(out).metadata[b"hardneg"])
    assert meta["frames"]["decoder"] == "pyav"
    assert meta["decoding"]["requested"] == "nvdec" and meta["decoding"]["decoder"] == "pyav"
    assert "Falling back" in meta["decoding"]["fallback"]
    assert "Falling back" in capsys.readouterr().err


def test_nvdec_asks_ffmpeg_for_a_context_of_its_own_and_reads_pyavs_hwaccel_flag(clips, monkeypatch):
    """The lines of the NVDEC path that run without a GPU: the device options, and the hwaccel flag
    (a property in PyAV 18: calling it as a method failed on the GPU machine)."""
    import av
    import av.codec.hwaccel as hwaccel

    import hardneg.video as video

    made = []

    class FakeHWAccel:
        def __init__(self, device_type, device=None, allow_software_fallback=True, options=None, flags=None,
                     is_hw_owned=False):
            made.append({"type": device_type, "device": device, "options": options, "owned": is_hw_owned})

        def create(self, codec):
            return self

    monkeypatch.setattr(hwaccel, "HWAccel", FakeHWAccel)
    monkeypatch.setattr(hwaccel, "hwdevices_available", lambda: ["cuda"])
    monkeypatch.setattr(video, "_NVDEC_CONTEXTS", {})
    video._nvdec("cuda:1")
    assert made and all(m["options"] == {"primary_ctx": "0"} and m["owned"] and m["device"] == "1" for m in made)
    with av.open(str(clips[0])) as c:
        assert video._uses_hwaccel(c.streams.video[0].codec_context) is False


def _nvdec_ready() -> str | None:
    try:
        decoding.check_decoder(FrameSettings(decoder="nvdec"), "cuda")
    except Exception as exc:
        return str(exc)
    return None


#: NVDEC's colour conversion is not libswscale's: frames are compared within this many levels of 255 on
#: average (the positions must be the same; the decoder checks every frame's timestamp against the index).
NVDEC_MEAN_TOLERANCE = 3.0


@pytest.mark.skipif(_nvdec_ready() is not None, reason=f"nvdec unavailable here: {str(_nvdec_ready())[:200]}")
def test_nvdec_frames_match_the_cpu_decoder_within_the_tolerance(tmp_path):
    # NVDEC decodes H.264 from 48 pixels wide: clips of 96x96 (the CPU-side clips of 40 would fall back to FFmpeg)
    paths = [write_synthetic_video(tmp_path / f"nv{i}.mp4", f"nvdec{i}", n_frames=20 + 7 * i, size=96) for i in range(3)]
    for p in paths:
        for n in (1, 4, 8):
            cpu = decode_frames(p, FrameSettings(n_frames=n, resize=None))
            stats = DecodeStats()
            gpu = decode_frames(p, FrameSettings(n_frames=n, resize=None, decoder="nvdec"), device="cuda", stats=stats)
            assert stats.hwaccel
            assert gpu.shape == cpu.shape
            diff = np.abs(gpu.astype(int) - cpu.astype(int))
            print(f"{p.name} n={n}: mean {diff.mean():.2f} max {diff.max()} levels")
            assert diff.mean() <= NVDEC_MEAN_TOLERANCE, (p, n, diff.mean())
