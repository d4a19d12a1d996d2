"""Decode many videos on all the cores: a pool of decoding processes feeding the model in order.

`decode_stream(paths, settings)` yields each video's frames (or the VideoDecodeError that says
why it has none) in input order, while the next videos decode in worker processes
(`hardneg.pool`): one process per available core by default (`os.sched_getaffinity`, or
`$HARDNEG_DECODE_WORKERS`), at most a few videos per worker in flight, so memory stays flat
whatever the number of videos. Every video is decoded by `hardneg.video.decode_frames` in a
worker, so the frames are exactly those of one process (same positions, same seek rule, same
pixels), and the embedding cache keys do not change. A worker killed while decoding a video is
replaced and the video decoded again in the fresh one; only when that one dies too is the video
unreadable, with the reason; the others go on.

Backends (the benchmark compares them, perf/bench_scoring.py):
- "process": the pool of processes, one FFmpeg thread each (cores // workers when there are fewer
  workers than cores); with "nvdec" each worker drives the GPU's video decoder and converts only
  the sampled frames on its core;
- "thread": threads of this process (`hardneg.video.decode_chunks`), FFmpeg threads inside; the
  path before the pool (the GIL limits it to about 2 cores' worth).

Which one by default (`choose_path`): the machine decides, by the rule the workers sweep measured
(docs/scoring-speed.md): the pool from POOL_MIN_CORES usable cores up, one process below, where the
pool's start-up and its competition with the model for the same cores made it slower (0.84x to
1.06x of one process on 2 cores; 4.1x to 4.2x on 16). `$HARDNEG_DECODE_WORKERS` overrides it.

`resolve_decoder` checks an optional decoder ("nvdec", "torchcodec") once before a run and falls
back to "pyav" with a message saying why, so the run's recorded frame settings name the decoder
that really decoded.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Iterator, Sequence

from dataclasses import dataclass

from hardneg.pool import WorkerDied, available_cores, default_workers, shared_pool
from hardneg.threads import count_from_env
from hardneg.video import DecoderUnavailable, FrameSettings, VideoDecodeError, decode_chunks, decode_frames

BACKENDS = ("process", "thread")
#: What a decoding worker imports as it starts (about 0.3 s of CPU), before its first video.
PRELOAD = ("hardneg.decoding", "av", "av.video.reformatter", "PIL.Image")


def _decode_task(arg):
    """One video in a worker: its frames, or a VideoDecodeError (DecoderUnavailable is a setup error)."""
    path, settings, max_pixels, threads, device = arg
    try:
        return decode_frames(path, settings, max_pixels=max_pixels, threads=threads, device=device)
    except (VideoDecodeError, DecoderUnavailable):
        raise
    except Exception as exc:  # a decoder bug on a strange file stays that file's problem
        raise VideoDecodeError(f"{path}: cannot decode ({type(exc).__name__}: {exc})") from exc


#: The fewest usable cores from which the pool of decoding processes is the default. Measured by the
#: workers sweep (perf/bench_scoring.py --sweep-only; docs/scoring-speed.md): on the 2-core machine the
#: pool of 2 ran end to end at 0.84x, 0.89x and 1.06x of one process's decoding threads (16 and 64
#: videos); on the 16-core H100 machine, decoding alone, the pool of 2 matched the threads (1.05x and
#: 1.00x) and the pool of 4 was ahead (1.75x MSR-VTT-like, 1.07x VATEX-like), 4.1x to 4.2x end to end
#: with 16. So: the pool from 4 cores, one process below.
POOL_MIN_CORES = 4


@dataclass(frozen=True)
class DecodePath:
    """How videos are decoded by default on this machine, and why (perf/bench_scoring.py prints it)."""

    backend: str  # "process" or "thread"
    workers: int | None  # decoding processes ("process"), or None (threads of this process)
    reason: str


def choose_path(cores: int | None = None) -> DecodePath:
    """The default decoding path for a machine with `cores` usable cores (default: this process's,
    `$HARDNEG_THREADS` when set, e.g. by the local runner for its workers' share of the cores):
    `$HARDNEG_DECODE_WORKERS` when set (the pool of that many processes), else the pool of one
    process per core from POOL_MIN_CORES cores, else one process (its decoding threads, FFmpeg threads
    within), which measured faster than the pool on 2 cores. Windows: threads (the pool's workers
    cannot inherit their socket, `pass_fds`)."""
    if os.name == "nt":
        return DecodePath("thread", None, "Windows: the pool's workers cannot be started (pass_fds)")
    env = count_from_env("HARDNEG_DECODE_WORKERS", "processes")
    if env is not None:
        return DecodePath("process", env, f"HARDNEG_DECODE_WORKERS={env} (set by the user or the runner)")
    # the cores this process may use: $HARDNEG_THREADS when set (a runner worker's share), else its affinity mask
    cores = int(cores or count_from_env("HARDNEG_THREADS", "threads") or available_cores())
    if cores >= POOL_MIN_CORES:
        return DecodePath("process", cores, f"{cores} usable cores >= {POOL_MIN_CORES}: the pool of one decoding "
                          "process per core (measured 4.1x-4.2x one process on 16 cores)")
    return DecodePath("thread", None, f"{cores} usable core(s) < {POOL_MIN_CORES}: one process, its decoding threads "
                      "with FFmpeg threads (the pool of 2 measured 0.84x-1.06x of it on 2 cores); "
                      "HARDNEG_DECODE_WORKERS=N forces the pool")


def default_backend(settings: FrameSettings) -> str:
    """The backend `choose_path` picks for this machine (a hook the benchmark and tests replace)."""
    return choose_path().backend


def decode_stream(paths: Sequence[str | os.PathLike], settings: FrameSettings, *, device: str | None = None,
                  workers: int | None = None, max_pixels: int | None = None, backend: str | None = None,
                  ) -> Iterator:
    """Frames of each of `paths` in order (an array, or the VideoDecodeError of that file), decoded
    ahead on `workers` processes (default: the available cores); `device`: the GPU "nvdec" uses.
    DecoderUnavailable (the decoder cannot load here) is raised, not given per video."""
    backend = backend or default_backend(settings)
    if backend not in BACKENDS:
        raise ValueError(f"decode backend must be one of {BACKENDS}, got {backend!r}")
    if not paths:
        return
    if backend == "thread":
        for chunk in decode_chunks(paths, settings, device=device, workers=workers, max_pixels=max_pixels):
            yield from chunk
        return
    workers = int(workers or default_workers())
    threads = max(1, available_cores() // workers)  # FFmpeg threads per video: every core used once
    pool = shared_pool(workers, preload=PRELOAD)
    tasks = ((str(p), settings, max_pixels, threads, device) for p in paths)
    for got in pool.imap(_decode_task, tasks, describe=lambda a: a[0]):
        if isinstance(got, DecoderUnavailable):
            raise got
        if isinstance(got, WorkerDied):
            got = VideoDecodeError(str(got))
        elif isinstance(got, BaseException) and not isinstance(got, VideoDecodeError):
            got = VideoDecodeError(f"cannot decode ({type(got).__name__}: {got})")
        yield got


#: torch CPU threads of the scoring process while a model on a GPU is fed by the pool: its own CPU
#: work is small (copies to the GPU), and a full OpenMP thread pool spins on the cores the decoding
#: processes need (measured: perf/bench_scoring.py --sweep prints the end-to-end row both ways).
#: None leaves torch's setting alone.
GPU_HOST_TORCH_THREADS: int | None = 1


@contextlib.contextmanager
def host_threads(device: str | None):
    """While feeding a model on a CUDA `device`, run this process's torch on GPU_HOST_TORCH_THREADS threads."""
    torch = sys.modules.get("torch")  # a model on a GPU has imported it; nothing to do otherwise
    if torch is None or GPU_HOST_TORCH_THREADS is None or not str(device or "").startswith("cuda"):
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(min(before, GPU_HOST_TORCH_THREADS))
    try:
        yield
    finally:
        torch.set_num_threads(before)


def decode_batches(paths: Sequence[str | os.PathLike], settings: FrameSettings, batch: int = 32, **kw
                   ) -> Iterator[list]:
    """`decode_stream` in lists of `batch` results (the model encodes a batch while the pool decodes on;
    with a model on a GPU, see `host_threads`)."""
    out: list = []
    with host_threads(kw.get("device")):
        for got in decode_stream(paths, settings, **kw):
            out.append(got)
            if len(out) == batch:
                yield out
                out = []
        if out:
            yield out


# ------------------------------------------------------------------------------ decoder choice


def check_decoder(settings: FrameSettings, device: str | None = None) -> None:
    """Raise DecoderUnavailable (with the reason and the fix) unless `settings.decoder` decodes here:
    a tiny H.264 clip is decoded the way a run would."""
    if settings.decoder == "pyav":
        return
    from hardneg.video import DecodeStats, write_synthetic_video

    with tempfile.TemporaryDirectory(prefix="hardneg-decoder-check-") as tmp:
        clip = write_synthetic_video(Path(tmp) / "check.mp4", "decoder-check", n_frames=8, size=64)
        stats = DecodeStats()
        try:
            decode_frames(clip, settings, device=device, stats=stats)
        except VideoDecodeError as exc:
            raise DecoderUnavailable(f"decoder {settings.decoder!r} failed on a test clip ({exc})") from exc
        if settings.decoder == "nvdec" and not stats.hwaccel:
            raise DecoderUnavailable("decoder 'nvdec': FFmpeg decoded the H.264 test clip on the CPU, not on the "
                                     "GPU's video decoder")


def resolve_decoder(settings: FrameSettings, device: str | None = None) -> tuple[FrameSettings, str | None]:
    """The settings to decode with, and a message when the chosen decoder cannot load here and
    "pyav" (the CPU decoder) takes its place; the frame identity then says "pyav", so predictions and
    cached embeddings name the decoder that really decoded."""
    try:
        check_decoder(settings, device)
    except DecoderUnavailable as exc:
        from dataclasses import replace

        fallback = replace(settings, decoder="pyav", scaler="pil")
        return fallback, (f"{exc}. Falling back to the CPU decoder 'pyav' (recorded as the decoder in the "
                          "predictions' frame settings)")
    return settings, None
