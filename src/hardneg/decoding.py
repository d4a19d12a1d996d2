"""Decode many videos on all the cores: a pool of decoding processes feeding the model in order.

`decode_stream(paths, settings)` yields each video's frames (or the VideoDecodeError that says
why it has none) in input order, while the next videos decode in worker processes
(`hardneg.pool`): one process per available core by default (`os.sched_getaffinity`, or
`$HARDNEG_DECODE_WORKERS`), at most a few videos per worker in flight, so memory stays flat
whatever the number of videos. Every video is decoded by `hardneg.video.decode_frames` in a
worker, so the frames are exactly those of one process (same positions, same seek rule, same
pixels), and the embedding cache keys do not change. A worker killed while decoding a video
makes that video unreadable, with the reason; the others go on.

Backends (the benchmark compares them, perf/bench_scoring.py):
- "process" (default for pyav and torchcodec): the pool of processes, one FFmpeg thread each
  (cores // workers when there are fewer workers than cores);
- "thread": threads of this process (`hardneg.video.decode_chunks`), FFmpeg threads inside; the
  GIL limits it to about 2 cores' worth, so it is used for "nvdec", where the GPU decodes and
  the frames stay on the GPU (no copy through a pipe).

`resolve_decoder` checks an optional decoder ("nvdec", "torchcodec") once before a run and falls
back to "pyav" with a message saying why, so the run's recorded frame settings name the decoder
that really decoded.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Iterator, Sequence

from hardneg.pool import WorkerDied, available_cores, default_workers, shared_pool
from hardneg.video import DecoderUnavailable, FrameSettings, VideoDecodeError, decode_chunks, decode_frames

BACKENDS = ("process", "thread")
#: What a decoding worker imports as it starts (about 0.3 s of CPU), before its first video.
PRELOAD = ("hardneg.decoding", "av", "av.video.reformatter", "PIL.Image")


def _decode_task(arg):
    """One video in a worker: its frames, or a VideoDecodeError (DecoderUnavailable is a setup error)."""
    path, settings, max_pixels, threads = arg
    try:
        return decode_frames(path, settings, max_pixels=max_pixels, threads=threads)
    except (VideoDecodeError, DecoderUnavailable):
        raise
    except Exception as exc:  # a decoder bug on a strange file stays that file's problem
        raise VideoDecodeError(f"{path}: cannot decode ({type(exc).__name__}: {exc})") from exc


def default_backend(settings: FrameSettings) -> str:
    return "thread" if settings.decoder == "nvdec" else "process"


def decode_stream(paths: Sequence[str | os.PathLike], settings: FrameSettings, *, device: str | None = None,
                  workers: int | None = None, max_pixels: int | None = None, backend: str | None = None,
                  ) -> Iterator:
    """Frames of each of `paths` in order (an array, a CUDA tensor for "nvdec", or the VideoDecodeError
    of that file), decoded ahead on `workers` processes (default: the available cores).
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
    tasks = ((str(p), settings, max_pixels, threads) for p in paths)
    for got in pool.imap(_decode_task, tasks, describe=lambda a: a[0]):
        if isinstance(got, DecoderUnavailable):
            raise got
        if isinstance(got, WorkerDied):
            got = VideoDecodeError(str(got))
        elif isinstance(got, BaseException) and not isinstance(got, VideoDecodeError):
            got = VideoDecodeError(f"cannot decode ({type(got).__name__}: {got})")
        yield got


def decode_batches(paths: Sequence[str | os.PathLike], settings: FrameSettings, batch: int = 32, **kw
                   ) -> Iterator[list]:
    """`decode_stream` in lists of `batch` results (the model encodes a batch while the pool decodes on)."""
    out: list = []
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
    if settings.decoder == "nvdec":
        try:
            import torch
        except ImportError as exc:
            raise DecoderUnavailable(f"decoder 'nvdec' needs torch with CUDA ({exc})") from exc
        if not torch.cuda.is_available():
            raise DecoderUnavailable("decoder 'nvdec' needs a CUDA GPU, and torch sees none here")
    from hardneg.video import write_synthetic_video

    with tempfile.TemporaryDirectory(prefix="hardneg-decoder-check-") as tmp:
        clip = write_synthetic_video(Path(tmp) / "check.mp4", "decoder-check", n_frames=8, size=64)
        try:
            decode_frames(clip, settings, device=device)
        except VideoDecodeError as exc:
            raise DecoderUnavailable(f"decoder {settings.decoder!r} failed on a test clip ({exc})") from exc


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
