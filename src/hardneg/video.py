"""Decode videos into a fixed number of uniformly sampled RGB frames, and find them by id.

How frames are taken (how many, at what rate, at what size, with which decoder) changes a
model's scores, so `FrameSettings.identity()` goes into every predictions file and every
embedding-cache key. Videos that are missing or cannot be decoded are recorded in a
`VideoReport` (counted, with the reason) instead of crashing a run or vanishing silently.

Only the sampled frames are decoded and kept: the positions come from the container's packet
index (read without decoding), decoding stops after the last one (or seeks past long stretches
of unused frames), and every decoded frame is checked against the index, so the frames are
exactly those of the all-frames rule (`sample_positions`); when the index cannot be trusted the
decoder falls back to two plain passes. docs/scoring-speed.md has the rule and its measurements.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

#: File extensions searched for a video id, in order of preference.
VIDEO_EXTENSIONS = (".mp4", ".webm", ".mkv", ".avi", ".mov", ".m4v", ".mpg", ".mpeg", ".gif")
#: "nvdec" is PyAV with FFmpeg's CUDA hwaccel: the GPU's video decoder (NVDEC) decodes, the sampled
#: frames come back to the CPU and are converted as "pyav" converts them; "torchcodec" decodes on the CPU.
DECODERS = ("pyav", "torchcodec", "nvdec")
#: Decoders that decode (and resize) with torchcodec and torch rather than PyAV and PIL.
TORCH_DECODERS = frozenset({"torchcodec"})
#: How decoded frames are brought to `resize`: "pil" (RGB at full size, then PIL bicubic: the
#: pixels every earlier release produced) or "swscale" (converted and scaled in one libswscale
#: call, bicubic: slightly different pixels, so it is part of the identity).
SCALERS = ("pil", "swscale")
#: Codecs whose packets each hold exactly one displayed frame: for these, the packet index gives
#: the frame count without decoding the frames after the last sampled one.
ONE_FRAME_PER_PACKET = frozenset({"h264", "hevc", "vp9", "av1"})
#: A seek (decoder flush, keyframe, refilling the decoder's threads) cost about as much as
#: decoding 8 to 10 frames when measured (docs/scoring-speed.md); seek only to skip more.
SEEK_COST_FRAMES = 16


class UnscorableVideo(ValueError):
    """A video a model cannot take (too many tokens for its context, frame times it cannot place): the scorer reports
    that video with this message and the run goes on (`hardneg.scoring`)."""


class VideoDecodeError(RuntimeError):
    """A video file exists but yields no usable frames (or is refused, e.g. too large)."""


class DecoderUnavailable(RuntimeError):
    """The chosen decoder library cannot be used on this machine: a setup problem, not a bad video."""


def _pyav():
    """PyAV, or DecoderUnavailable naming the extra that brings it.

    Without this, every video would count as unreadable and a run would end far from the cause
    (`scores is empty`): a missing library is a setup problem, not a bad video.
    """
    try:
        import av
    except ImportError as exc:
        raise DecoderUnavailable(
            f"reading and writing videos needs PyAV, which cannot be imported here ({exc}); install the models extra "
            "from the clone: pip install -e '.[models]' (video-hardneg is not on PyPI)") from exc
    return av


def require_decoder(settings: "FrameSettings") -> None:
    """Raise DecoderUnavailable now when the decoder `settings` names cannot be used here (before a run starts)."""
    if settings.decoder != "torchcodec":
        _pyav()


#: "hardneg": hardneg's own sampling; "qwen-vl-utils": lmms-eval's Qwen2-VL wrapper (2 frames per second);
#: "qwen-vl-utils-nframes": lmms-eval's Qwen2.5-VL chat wrapper (a fixed count); `hardneg.frame_recipes`
#: "vilma-consecutive": ViLMA's authors' n consecutive frames at a seeded random offset (`hardneg.frame_recipes`)
FRAME_RECIPES = ("hardneg", "qwen-vl-utils", "qwen-vl-utils-nframes", "vilma-consecutive")
#: the recipes that read and resize frames as qwen-vl-utils does (their own resize: `resize` must be None)
QWEN_RECIPES = ("qwen-vl-utils", "qwen-vl-utils-nframes")


@dataclass(frozen=True)
class FrameSettings:
    """How frames are sampled: part of a result's identity.

    n_frames: frames per video, spread uniformly over its length (segment midpoints).
    fps: when set, the video is first resampled to this rate (frames nearest to a regular
        time grid), then `n_frames` are taken uniformly from that grid; None uses every frame.
    resize: length of the shorter side after resizing (aspect kept); None keeps the size.
    decoder: the decoding library: "pyav" (default), "torchcodec" (optional; on the CPU,
        resizes with torch) or "nvdec" (PyAV on the GPU's video decoder, NVDEC; where available).
    scaler: how "pyav" and "nvdec" frames are resized (see `SCALERS`).
    """

    n_frames: int = 8
    fps: float | None = None
    resize: int | None = 224
    decoder: str = "pyav"
    scaler: str = "pil"
    #: "hardneg" (the rule above) or another harness's frames (`FRAME_RECIPES`, `hardneg.frame_recipes`):
    #: "qwen-vl-utils", lmms-eval's Qwen2-VL wrapper (qwen-vl-utils' `fetch_video` at `fps` (default 2) frames per
    #: second, at least 4, an even count, then at most `n_frames`, resized to multiples of 28 pixels within its pixel
    #: limits; `resize` must then be None); "qwen-vl-utils-nframes", lmms-eval's Qwen2.5-VL chat wrapper (a fixed
    #: even count); "vilma-consecutive", ViLMA's authors (`n_frames` consecutive from a seeded random offset)
    recipe: str = "hardneg"
    #: the recipes only: (min_pixels, max_pixels) given to qwen-vl-utils per frame (the wrapper's); None: lmms-eval's
    #: Qwen2-VL wrapper's 3,136 and 602,112
    pixels: tuple[int, int] | None = None
    #: keyword arguments for a video LLM's own processor (`--processor-kwargs`: min_pixels, max_pixels, fps, size, ...),
    #: given as a dict or (name, value) pairs of JSON values and kept as sorted (name, canonical JSON text) pairs, so
    #: the settings stay hashable; `processor_kwargs()` gives the dict back. With a qwen-vl-utils recipe, min_pixels /
    #: max_pixels are its pixel limits too (`with_processor_kwargs`); recorded in `identity()` (provenance, caches)
    processor: Any = ()

    def __post_init__(self) -> None:
        if not isinstance(self.n_frames, int) or self.n_frames < 1:
            raise ValueError(f"n_frames must be a positive integer, got {self.n_frames!r}")
        if self.fps is not None and not self.fps > 0:
            raise ValueError(f"fps must be positive or None, got {self.fps!r}")
        if self.resize is not None and (not isinstance(self.resize, int) or self.resize < 1):
            raise ValueError(f"resize must be a positive integer or None, got {self.resize!r}")
        if self.decoder not in DECODERS:
            raise ValueError(f"decoder must be one of {DECODERS}, got {self.decoder!r}")
        if self.scaler not in SCALERS:
            raise ValueError(f"scaler must be one of {SCALERS}, got {self.scaler!r}")
        if self.decoder in TORCH_DECODERS and self.scaler != "pil":
            raise ValueError(f"scaler applies to the pyav decoder only; {self.decoder} frames are resized with torch")
        if self.recipe not in FRAME_RECIPES:
            raise ValueError(f"recipe must be one of {FRAME_RECIPES}, got {self.recipe!r}")
        if self.recipe in QWEN_RECIPES and self.resize is not None:
            raise ValueError(f"recipe {self.recipe!r} resizes the frames itself: leave resize None")
        object.__setattr__(self, "processor", _canonical_kwargs(self.processor))
        if self.pixels is not None and (self.recipe not in QWEN_RECIPES or len(self.pixels) != 2
                                        or not 0 < self.pixels[0] <= self.pixels[1]):
            raise ValueError(f"pixels {self.pixels!r}: (min_pixels, max_pixels), min <= max, with a qwen-vl-utils "
                             "recipe")

    def identity(self) -> dict[str, Any]:
        """The settings that make the frames what they are. The defaults give the same dict as
        releases before the sampled-frames decoder (same frames, same pixels), so their cached
        embeddings stay valid; any change of pixels adds or changes a key."""
        ident: dict[str, Any] = {"n_frames": self.n_frames, "fps": self.fps, "resize": self.resize,
                                 "decoder": self.decoder}
        if self.decoder in TORCH_DECODERS:
            ident["resize_method"] = "torch-bicubic-antialias"
        if self.recipe != "hardneg":
            ident["recipe"] = self.recipe
        if self.pixels is not None:
            ident["recipe_pixels"] = list(self.pixels)
        if self.scaler != "pil":
            ident["scaler"] = f"{self.scaler}-bicubic"
        if self.processor:
            ident["processor_kwargs"] = self.processor_kwargs()
        return ident

    def processor_kwargs(self) -> dict[str, Any]:
        """The processor keyword arguments as a dict ({} when none were given)."""
        import json

        return {k: json.loads(v) for k, v in self.processor}


def _canonical_kwargs(given) -> tuple[tuple[str, str], ...]:
    """Processor keyword arguments (a dict, or (name, value) pairs; values JSON, or canonical JSON text as kept) ->
    sorted (name, canonical JSON text) pairs."""
    import json

    items = given.items() if isinstance(given, dict) else given
    try:
        pairs = [(k, v) for k, v in items]
    except (TypeError, ValueError):
        raise ValueError(f"processor {given!r}: a dict or (name, value) pairs of processor keyword arguments "
                         "(--processor-kwargs)") from None
    out = {}
    for k, v in pairs:
        if not isinstance(k, str) or not k.isidentifier():
            raise ValueError(f"processor keyword {k!r}: a processor argument name (min_pixels, fps, size, ...)")
        if isinstance(v, str):
            try:  # already canonical JSON text (as kept here): keep its value
                v = json.loads(v)
            except json.JSONDecodeError:
                pass
        try:
            out[k] = json.dumps(v, sort_keys=True, allow_nan=False)
        except (TypeError, ValueError):
            raise ValueError(f"processor keyword {k}={v!r}: the value must be JSON (a number, string, bool, null, "
                             "list or object)") from None
    return tuple(sorted(out.items()))


def parse_processor_kwargs(text: str | None) -> tuple[tuple[str, str], ...]:
    """`--processor-kwargs` -> sorted (name, canonical JSON text) pairs (`FrameSettings.processor`): a JSON object ('{"min_pixels": 3136}') or k=v pairs
    separated by commas ('min_pixels=3136,fps=2'; each value read as JSON when it parses, else kept as text)."""
    import json

    if text is None or not str(text).strip():
        return ()
    text = str(text).strip()
    if text.startswith("{"):
        try:
            got = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"--processor-kwargs {text!r}: not a JSON object ({exc.msg}); give JSON like "
                             "'{\"min_pixels\": 3136}' or k=v pairs like min_pixels=3136,fps=2") from None
    else:
        got = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            key, eq, value = part.partition("=")
            if not eq or not key.strip():
                raise ValueError(f"--processor-kwargs: {part!r} is not k=v; give k=v pairs separated by commas "
                                 "(min_pixels=3136,fps=2) or a JSON object")
            try:
                got[key.strip()] = json.loads(value.strip())
            except json.JSONDecodeError:
                got[key.strip()] = value.strip()
    if not isinstance(got, dict):
        raise ValueError(f"--processor-kwargs {text!r}: give a JSON object or k=v pairs, not {type(got).__name__}")
    return _canonical_kwargs(got)


def with_processor_kwargs(frames: FrameSettings, own: FrameSettings | None) -> FrameSettings:
    """The frames a run scores with: a protocol set's own frames (`own`) where the run's are at their defaults (its
    processor keyword arguments aside), else the run's; then the processor keyword arguments, whose min_pixels /
    max_pixels are also the pixel limits of a qwen-vl-utils recipe (lmms-eval's wrappers give both the same)."""
    from dataclasses import replace

    base = own if (own is not None and replace(frames, processor=()) == FrameSettings()) else frames
    if not frames.processor:
        return base
    kw = frames.processor_kwargs()
    pixels = base.pixels
    if base.recipe in QWEN_RECIPES and ("min_pixels" in kw or "max_pixels" in kw):
        from hardneg.frame_recipes import LMMS_EVAL_MAX_PIXELS, LMMS_EVAL_MIN_PIXELS

        lo, hi = base.pixels or (LMMS_EVAL_MIN_PIXELS, LMMS_EVAL_MAX_PIXELS)
        pixels = (int(kw.get("min_pixels", lo)), int(kw.get("max_pixels", hi)))
    return replace(base, processor=frames.processor, pixels=pixels)


# ----------------------------------------------------------------------------- the sampling rule


def uniform_indices(total: int, n: int) -> np.ndarray:
    """Indices of `n` frames spread uniformly over `total` (the middle of n equal segments).

    With fewer frames than asked for, frames repeat (every result has exactly n frames).
    """
    if total < 1:
        raise ValueError("a video with no frames has nothing to sample")
    return np.minimum(((np.arange(n) + 0.5) * total / n).astype(np.int64), total - 1)


def _resample_grid(times: np.ndarray, fps: float) -> np.ndarray:
    """Positions (into `times`) of the frames nearest to a regular grid at `fps`."""
    if len(times) == 1:
        return np.zeros(1, np.int64)
    grid = np.arange(times[0], times[-1] + 1e-9, 1.0 / fps)
    pos = np.searchsorted(times, grid).clip(1, len(times) - 1)
    left_closer = (grid - times[pos - 1]) <= (times[pos] - grid)
    return np.unique(np.where(left_closer, pos - 1, pos))


#: the sampling rule, in words, for provenance (`hardneg.scoring`: the predictions' `decoding.sampling`)
SAMPLING_RULE = ("n_frames at the midpoints of n equal segments of the clip's frames in presentation order (after "
                 "resampling to the nearest frames of a regular --fps grid, when given); a clip with fewer frames "
                 "repeats frames, and each frame keeps its presentation time (hardneg.video.sample_positions)")


def sample_positions(times: Sequence[float], settings: FrameSettings) -> np.ndarray:
    """Positions (in presentation order) of the frames a video contributes, given every frame's
    time in seconds (or its position when it has none): the rule all decoders follow."""
    if len(times) < 1:
        raise ValueError("a video with no frames has nothing to sample")
    if settings.recipe == "vilma-consecutive":
        from hardneg.frame_recipes import vilma_consecutive_positions

        return vilma_consecutive_positions(len(times), settings.n_frames)
    if settings.recipe != "hardneg":
        from hardneg.frame_recipes import qwen_vl_utils_positions

        try:
            return qwen_vl_utils_positions(times, settings)
        except ValueError as exc:
            raise UnscorableVideo(str(exc)) from exc
    candidates = np.arange(len(times))
    if settings.fps is not None:
        candidates = _resample_grid(np.asarray(times), settings.fps)
    return candidates[uniform_indices(len(candidates), settings.n_frames)]


# ------------------------------------------------------------------------------ probing, limits


@dataclass(frozen=True)
class VideoInfo:
    """What the container's header says (no decoding): size, length, frame count, codec."""

    width: int
    height: int
    duration: float | None  # seconds
    n_frames: int | None  # None when the header does not say
    codec: str

    @property
    def pixels(self) -> int:
        return self.width * self.height


def probe_video(path: str | os.PathLike) -> VideoInfo:
    """The header facts of the video at `path`; VideoDecodeError when it has no video stream."""
    av = _pyav()

    try:
        with av.open(str(path)) as container:
            if not container.streams.video:
                raise VideoDecodeError(f"{path}: no video stream")
            stream = container.streams.video[0]
            duration = None
            if stream.duration is not None and stream.time_base is not None:
                duration = float(stream.duration * stream.time_base)
            elif container.duration is not None:
                duration = container.duration / 1e6
            return VideoInfo(int(stream.codec_context.width), int(stream.codec_context.height), duration,
                             int(stream.frames) or None, stream.codec_context.name)
    except VideoDecodeError:
        raise
    except Exception as exc:
        raise VideoDecodeError(f"{path}: cannot read the video header ({type(exc).__name__}: {exc})") from exc


def check_resolution(path: str | os.PathLike, width: int, height: int, max_pixels: int | None) -> None:
    """Refuse a video larger than `max_pixels` (width x height) with a VideoDecodeError that says how to fix it."""
    if max_pixels is not None and width * height > max_pixels:
        raise VideoDecodeError(
            f"{path}: the video is {width}x{height} ({width * height / 1e6:.2f} megapixels), above the limit of "
            f"{max_pixels / 1e6:.2f} megapixels; downscale it first, e.g. ffmpeg -i IN -vf scale=-2:720 OUT.mp4")


# -------------------------------------------------------------------------------------- decoding


@dataclass
class DecodeStats:
    """What one decode did (for tests and the benchmark)."""

    method: str = ""  # "index", "index+tail" (decoded to the end to check), "two-pass", "torchcodec"
    frames_in_index: int = 0
    frames_decoded: int = 0
    frames_kept: int = 0  # distinct decoded frames held at once: never more than n_frames
    seeks: int = 0
    passes: int = 0
    hwaccel: bool = False  # the GPU's decoder decoded ("nvdec" on a stream it supports)


@dataclass
class _Index:
    """The video stream's packets, read without decoding."""

    pts: list[int]  # presentation timestamps, sorted: one per frame, in presentation order
    keyframes: list[int]  # presentation positions of keyframes
    complete: bool  # every usable packet had a timestamp, and no two the same
    codec: str
    time_base: Any

    def times(self) -> list[float]:
        tb = self.time_base
        return [float(p) * tb.numerator / tb.denominator for p in self.pts]  # as PyAV's frame.time


def _scan(container, stream) -> _Index:
    pts: list[int] = []
    key_pts: list[int] = []
    complete = True
    for packet in container.demux(stream):
        if packet.size == 0 or packet.is_discard:  # the end-of-stream marker; packets the decoder drops
            continue
        if packet.pts is None:
            complete = False
            continue
        pts.append(packet.pts)
        if packet.is_keyframe:
            key_pts.append(packet.pts)
    pts.sort()
    complete = complete and len(set(pts)) == len(pts) and stream.time_base is not None
    keyframes = sorted(bisect.bisect_left(pts, k) for k in key_pts)
    return _Index(pts, keyframes, complete, stream.codec_context.name, stream.time_base)


def _plan(need: list[int], keyframes: list[int], allow_seek: bool) -> list[tuple[int | None, int]]:
    """Runs of (keyframe position to seek to, or None to keep decoding; last needed position).

    Seek to the keyframe before a needed frame only when that skips more than SEEK_COST_FRAMES
    frames the sequential decoder would otherwise decode.
    """
    runs: list[tuple[int | None, int]] = []
    pos = 0  # the position the decoder produces next without seeking
    for p in need:
        i = bisect.bisect_right(keyframes, p) - 1
        k = keyframes[i] if i >= 0 else None
        if allow_seek and k is not None and k - pos > SEEK_COST_FRAMES:
            runs.append((k, p))
        elif runs:
            runs[-1] = (runs[-1][0], p)
        else:
            runs.append((None, p))
        pos = p + 1
    return runs


def _rgb_converter(settings: FrameSettings, max_pixels: int | None, path) -> Callable:
    """frame -> (H, W, 3) uint8 RGB at the settings' size."""
    from av.video.reformatter import VideoReformatter
    from PIL import Image

    reformatter = VideoReformatter()  # one libswscale context for the whole video, not one per frame

    def convert(frame) -> np.ndarray:
        check_resolution(path, frame.width, frame.height, max_pixels)
        size = settings.resize
        if settings.scaler == "swscale" and size is not None:
            w, h = _resized_size(frame.width, frame.height, size)
            out = reformatter.reformat(frame, width=w, height=h, format="rgb24", interpolation="BICUBIC")
            return np.array(out.to_ndarray())
        # the same pixels as frame.to_image() (the same libswscale call to RGB at full size), without
        # its slow copy loop
        img = Image.fromarray(reformatter.reformat(frame, format="rgb24").to_ndarray())
        return np.asarray(_resize(img, size).convert("RGB"))

    return convert


def _resized_size(w: int, h: int, size: int) -> tuple[int, int]:
    scale = size / min(w, h)
    return max(1, round(w * scale)), max(1, round(h * scale))


def _resize(img, size: int | None):
    if size is None:
        return img
    w, h = img.size
    if size / min(w, h) == 1:
        return img
    return img.resize(_resized_size(w, h, size), resample=3)  # bicubic


def _open(path: Path, threads: int, hw=None):
    av = _pyav()

    container = av.open(str(path), hwaccel=hw) if hw is not None else av.open(str(path))
    if not container.streams.video:
        container.close()
        raise VideoDecodeError(f"{path}: no video stream")
    stream = container.streams.video[0]
    if hw is None:
        stream.thread_type = "AUTO"  # frame and slice threads
        stream.codec_context.thread_count = threads
    return container, stream


_NVDEC_CONTEXTS: dict[str | None, Any] = {}


def _nvdec(device: str | None):
    """The CUDA hwaccel of `device` ("cuda", "cuda:1"; other values: the default GPU) for PyAV's decoder.

    Frames stay on the GPU (`is_hw_owned`) until a sampled one is converted (`reformat` copies it
    back); frames the rule skips never leave the GPU. One device context per process and GPU is
    kept open, so the CUDA context is made once, not once per video. A stream NVDEC cannot decode
    (e.g. a profile it lacks) is decoded by FFmpeg on the CPU: the same frames."""
    import av
    from av.codec.hwaccel import HWAccel, hwdevices_available

    index = str(device).split(":", 1)[1] if device and str(device).startswith("cuda:") else None
    if "cuda" not in hwdevices_available():
        raise DecoderUnavailable("decoder 'nvdec' cannot be used here: this PyAV's FFmpeg has no CUDA support "
                                 f"(it has {hwdevices_available()}); use --decoder pyav")
    # primary_ctx 0: FFmpeg makes its own CUDA context. PyAV asks for the device's primary context when
    # frames stay on the GPU, and FFmpeg refuses that (EOPNOTSUPP, errno 95) when torch already made the
    # primary context with other flags: what the scoring process of a model on a GPU has (seen on an H100)
    options = {"primary_ctx": "0"}
    if index not in _NVDEC_CONTEXTS:
        try:
            _NVDEC_CONTEXTS[index] = HWAccel("cuda", device=index, options=options,
                                             is_hw_owned=True).create(av.codec.Codec("h264", "r"))
        except Exception as exc:
            raise DecoderUnavailable(f"decoder 'nvdec' cannot open the GPU's video decoder here ({type(exc).__name__}: "
                                     f"{exc}); it needs an NVIDIA GPU and its driver (libcuda, libnvcuvid); use "
                                     "--decoder pyav") from exc
    return HWAccel("cuda", device=index, allow_software_fallback=True, options=options, is_hw_owned=True)


def _uses_hwaccel(codec_context) -> bool:
    """Whether a decoder runs on the hardware (`is_hwaccel`: a property in PyAV 18, a method before)."""
    value = getattr(codec_context, "is_hwaccel", False)
    return bool(value() if callable(value) else value)


def _decode_indexed(path: Path, index: _Index, picks: np.ndarray, convert, threads: int,
                    stats: DecodeStats, hw=None) -> dict[int, np.ndarray] | None:
    """The picked frames, decoded by position in the index; None when the decoder disagrees with it."""
    need = sorted(set(int(p) for p in picks))
    trusted = index.codec in ONE_FRAME_PER_PACKET
    runs = _plan(need, index.keyframes, allow_seek=trusted)
    want = set(need)
    kept: dict[int, np.ndarray] = {}
    pts = index.pts
    stats.method, stats.passes = ("index" if trusted else "index+tail"), 1
    container, stream = _open(path, threads, hw)
    stats.hwaccel = hw is not None and _uses_hwaccel(stream.codec_context)
    with container:
        frames = container.decode(stream)
        expected = 0
        for start, last in runs:
            if start is not None:
                container.seek(pts[start], stream=stream, backward=True)  # to a keyframe at or before; flushes
                frames = container.decode(stream)
                expected = start
                stats.seeks += 1
            reached = False
            for frame in frames:
                stats.frames_decoded += 1
                if start is not None and expected == start and frame.pts is not None and frame.pts < pts[start]:
                    continue  # frames before the seek target (an earlier keyframe, or leading frames)
                if expected >= len(pts) or frame.pts != pts[expected]:
                    return None
                if expected in want:
                    kept[expected] = convert(frame)
                    stats.frames_kept = len(kept)
                expected += 1
                if expected > last:
                    reached = True
                    break
            if not reached:
                return None
        if not trusted:  # the packet count may not be the frame count: decode the rest to be sure
            for frame in frames:
                if expected >= len(pts) or frame.pts != pts[expected]:
                    return None
                stats.frames_decoded += 1
                expected += 1
            if expected != len(pts):
                return None
    return kept


def _decode_two_pass(path: Path, settings: FrameSettings, convert, threads: int,
                     stats: DecodeStats, hw=None) -> tuple[np.ndarray, dict[int, np.ndarray], list[float]]:
    """The all-frames rule without keeping all frames: pass 1 reads every frame's time, pass 2
    decodes up to the last picked frame and keeps only the picked ones."""
    stats.method, stats.passes = "two-pass", 2
    times: list[float] = []
    container, stream = _open(path, threads, hw)
    with container:
        for frame in container.decode(stream):
            times.append(float(frame.time) if frame.time is not None else len(times))
    stats.frames_decoded += len(times)
    if not times:
        raise VideoDecodeError(f"{path}: no decodable frames")
    picks = sample_positions(times, settings)
    want, last = set(int(p) for p in picks), int(picks.max())
    kept: dict[int, np.ndarray] = {}
    container, stream = _open(path, threads, hw)
    with container:
        for i, frame in enumerate(container.decode(stream)):
            stats.frames_decoded += 1
            if i in want:
                kept[i] = convert(frame)
                stats.frames_kept = len(kept)
            if i >= last:
                break
    if len(kept) != len(want):
        raise VideoDecodeError(f"{path}: the decoder gave fewer frames on a second pass ({len(times)} the first time)")
    return picks, kept, times


def _decode_pyav(path: Path, settings: FrameSettings, max_pixels: int | None, threads: int,
                 stats: DecodeStats, device: str | None = None) -> np.ndarray:
    hw = _nvdec(device) if settings.decoder == "nvdec" else None
    container, stream = _open(path, threads)
    with container:
        check_resolution(path, stream.codec_context.width, stream.codec_context.height, max_pixels)
        index = _scan(container, stream)
    stats.frames_in_index = len(index.pts)
    convert = _rgb_converter(settings, max_pixels, path)
    kept = None
    if index.complete and index.pts:
        times = index.times()
        picks = sample_positions(times, settings)
        kept = _decode_indexed(path, index, picks, convert, threads, stats, hw)
    if kept is None:  # no usable index, or the decoder disagreed with it
        picks, kept, times = _decode_two_pass(path, settings, convert, threads, stats, hw)
    return Frames(np.stack([kept[int(i)] for i in picks]), [times[int(i)] for i in picks])


def _decode_torchcodec(path: Path, settings: FrameSettings, max_pixels: int | None, device: str | None,
                       threads: int, stats: DecodeStats):
    """The same positions as "pyav" (from the same packet index), decoded by torchcodec on the CPU and
    resized with torch (antialiased bicubic)."""
    try:
        from torchcodec.decoders import VideoDecoder
    except Exception as exc:  # ImportError, or OSError/RuntimeError when its FFmpeg libraries are missing
        raise DecoderUnavailable(
            f"decoder 'torchcodec' cannot be used here ({type(exc).__name__}: {exc}); install it with "
            "pip install -e '.[torchcodec]' (from the clone; video-hardneg is not on PyPI) plus FFmpeg's shared libraries (see docs/scoring-speed.md), "
            "or use the default decoder pyav") from exc
    from hardneg.models.preprocess import resize_shorter_side

    container, stream = _open(path, threads)
    with container:
        check_resolution(path, stream.codec_context.width, stream.codec_context.height, max_pixels)
        index = _scan(container, stream)
    stats.method, stats.passes, stats.frames_in_index = "torchcodec", 1, len(index.pts)
    if not index.complete or not index.pts:
        raise VideoDecodeError(f"{path}: packets without distinct timestamps, so torchcodec cannot be told which "
                               "frames to decode; use the default decoder pyav for this video")
    times = index.times()
    picks = sample_positions(times, settings)
    need = sorted(set(int(p) for p in picks))
    decoder = VideoDecoder(str(path), device="cpu", seek_mode="exact", dimension_order="NCHW",
                           num_ffmpeg_threads=threads)
    if decoder.metadata.num_frames != len(times):
        raise VideoDecodeError(f"{path}: torchcodec counts {decoder.metadata.num_frames} frames, the packet index "
                               f"{len(times)}; use the default decoder pyav for this video")
    batch = decoder.get_frames_at(indices=need)
    got = np.asarray(batch.pts_seconds.cpu(), np.float64)
    if np.abs(got - np.asarray([times[i] for i in need])).max() > 1e-6:
        raise VideoDecodeError(f"{path}: torchcodec returned frames at other times than the packet index; "
                               "use the default decoder pyav for this video")
    stats.frames_decoded, stats.frames_kept = len(need), len(need)
    frames = batch.data  # (k, 3, H, W) uint8
    if settings.resize is not None:
        frames = resize_shorter_side(frames, settings.resize)
    order = np.searchsorted(need, picks)
    import torch

    out = frames.index_select(0, torch.as_tensor(order, device=frames.device)).permute(0, 2, 3, 1)
    return Frames(out.contiguous().numpy(), [times[int(i)] for i in picks])


class Frames(np.ndarray):
    """Decoded frames ((T, H, W, 3) uint8, a numpy array) that remember when they were sampled: `times`, the
    presentation time of each frame in seconds (float64, one per frame), or None.

    Why: some video LLMs place frames by time (Qwen2.5-VL's `second_per_grid_ts`), and only the decoder knows the
    times it sampled. The times travel with the array (through the decoding pool's pickles too) instead of a
    second return value, so every consumer that only wants pixels keeps working unchanged."""

    times: np.ndarray | None = None

    def __new__(cls, frames, times=None):
        obj = np.asarray(frames).view(cls)
        obj.times = None if times is None else np.asarray(times, np.float64).reshape(-1)
        if obj.times is not None and len(obj.times) != len(obj):
            raise ValueError(f"{len(obj.times)} frame times for {len(obj)} frames")
        return obj

    def __array_finalize__(self, obj) -> None:
        # views and slices of the whole array keep the times only when the frame count is unchanged
        times = getattr(obj, "times", None)
        self.times = times if times is not None and self.ndim and len(self) == len(times) else None

    def __reduce__(self):
        return (Frames, (np.asarray(self), self.times))


def frame_times(frames) -> np.ndarray | None:
    """The sampled frames' times in seconds (`Frames.times`), or None when the array does not carry them."""
    return getattr(frames, "times", None)


def decode_frames(path: str | os.PathLike, settings: FrameSettings = FrameSettings(), *,
                  max_pixels: int | None = None, device: str | None = None, threads: int = 0,
                  stats: DecodeStats | None = None):
    """(n_frames, H, W, 3) uint8 RGB frames of the video at `path` (a `Frames` array: `.times` holds each
    sampled frame's presentation time in seconds).

    Decodes only up to the sampled frames and keeps only those (memory does not grow with the
    video's length). `max_pixels` refuses larger videos; `device` is the CUDA device "nvdec" decodes
    on ("cuda:N"; the default GPU otherwise); every decoder gives a numpy array; `threads` is the
    decoder's thread count (0: FFmpeg's choice). Raises VideoDecodeError (with the file and the
    reason) when the file cannot be decoded, DecoderUnavailable when the decoder is not installed.
    """
    path = Path(path)
    stats = stats if stats is not None else DecodeStats()
    try:
        if settings.decoder in TORCH_DECODERS:
            got = _decode_torchcodec(path, settings, max_pixels, device, threads, stats)
        else:
            got = _decode_pyav(path, settings, max_pixels, threads, stats, device)
        if settings.recipe in QWEN_RECIPES:
            from hardneg.frame_recipes import qwen_vl_utils_resize

            got = Frames(qwen_vl_utils_resize(np.asarray(got), *(settings.pixels or ())), frame_times(got))
        return got
    except (VideoDecodeError, DecoderUnavailable):
        raise
    except Exception as exc:  # av raises many error classes (InvalidDataError, OSError, ...)
        raise VideoDecodeError(f"{path}: cannot decode ({type(exc).__name__}: {exc})") from exc


def decode_chunks(paths: Sequence[str | os.PathLike], settings: FrameSettings, chunk: int = 32, *,
                  device: str | None = None, workers: int | None = None,
                  max_pixels: int | None = None) -> Iterator[list]:
    """Decode `paths` on threads, yielding results in order, `chunk` at a time: an array (or
    tensor) of frames, or the VideoDecodeError of that file. The next chunks decode while the
    caller encodes this one; at most three chunks are held. DecoderUnavailable is raised."""
    from hardneg.threads import default_threads

    if not paths:
        return
    cores = default_threads()
    workers = max(1, min(len(paths), workers or cores))
    threads = max(1, cores // workers)  # decoder threads per video, so that all cores are used once

    def one(p):
        try:
            return decode_frames(p, settings, max_pixels=max_pixels, device=device, threads=threads)
        except VideoDecodeError as exc:
            return exc
        except DecoderUnavailable:
            raise
        except Exception as exc:  # a decoder bug on a strange file stays that file's problem
            return VideoDecodeError(f"{p}: cannot decode ({type(exc).__name__}: {exc})")

    pieces = [paths[i:i + chunk] for i in range(0, len(paths), chunk)]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hardneg-decode") as pool:
        pending: deque = deque()
        for piece in pieces[:2]:
            pending.append([pool.submit(one, p) for p in piece])
        nxt = 2
        while pending:
            done = [f.result() for f in pending.popleft()]
            if nxt < len(pieces):
                pending.append([pool.submit(one, p) for p in pieces[nxt]])
                nxt += 1
            yield done


def file_fingerprint(path: str | os.PathLike) -> str:
    """SHA-256 of a file's bytes: the video part of an embedding-cache key."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@dataclass
class VideoReport:
    """What happened to each requested video: decoded, missing, or unreadable (with why)."""

    ok: int = 0
    missing: list[str] = field(default_factory=list)
    unreadable: dict[str, str] = field(default_factory=dict)
    #: decoded, but refused before scoring: more tokens than the model's context (`VideoLLM.video_refusal`), with why
    too_long: dict[str, str] = field(default_factory=dict)
    #: {video id: (frame count, first time s, spacing s)} of the frames decoded (`hardneg.frames_used`); not reported
    frames_used: dict[str, tuple] = field(default_factory=dict, repr=False, compare=False)

    @property
    def failed(self) -> int:
        return len(self.missing) + len(self.unreadable) + len(self.too_long)

    def merge(self, other: "VideoReport") -> None:
        self.ok += other.ok
        self.missing.extend(v for v in other.missing if v not in self.missing)
        self.unreadable.update(other.unreadable)
        self.too_long.update(other.too_long)

    def to_dict(self, max_listed: int = 100) -> dict[str, Any]:
        out = {
            "ok": self.ok,
            "missing": len(self.missing),
            "unreadable": len(self.unreadable),
            "missing_ids": sorted(self.missing)[:max_listed],
            "unreadable_ids": dict(sorted(self.unreadable.items())[:max_listed]),
        }
        if self.too_long:  # only when there are some: reports of runs without any keep their keys
            out.update(too_long=len(self.too_long), too_long_ids=dict(sorted(self.too_long.items())[:max_listed]))
        return out

    def summary(self) -> str:
        text = f"videos: {self.ok} decoded, {len(self.missing)} missing, {len(self.unreadable)} unreadable"
        if self.too_long:
            vid, why = next(iter(sorted(self.too_long.items())))
            text += f", {len(self.too_long)} too long for the model (e.g. {vid}: {why})"
        if self.missing:
            text += f"; missing e.g. {sorted(self.missing)[:3]}"
        if self.unreadable:
            vid, why = next(iter(sorted(self.unreadable.items())))
            text += f"; unreadable e.g. {vid}: {why}"
        return text


class VideoFolder:
    """A local folder of videos named by video id (`<id>.mp4`, `<id>.webm`, ..., any depth)."""

    def __init__(self, root: str | os.PathLike, extensions: tuple[str, ...] = VIDEO_EXTENSIONS):
        self.root = Path(root)
        if not self.root.is_dir():
            raise FileNotFoundError(f"video folder {self.root} does not exist; pass --videos DIR holding <video_id>.mp4 files")
        self.extensions = tuple(e.lower() for e in extensions)
        self._index: dict[str, Path] | None = None

    def _build_index(self) -> dict[str, Path]:
        index: dict[str, Path] = {}
        rank = {e: i for i, e in enumerate(self.extensions)}
        for p in sorted(self.root.rglob("*")):
            ext = p.suffix.lower()
            if ext in rank and p.is_file():
                key = p.relative_to(self.root).with_suffix("").as_posix()
                for k in {key, p.stem}:
                    if k not in index or rank[ext] < rank[index[k].suffix.lower()]:
                        index[k] = p
        return index

    def path(self, video_id: str) -> Path | None:
        """The file of `video_id`, or None when the folder has none."""
        direct = self.root / video_id
        if direct.suffix.lower() in self.extensions and direct.is_file():
            return direct
        for ext in self.extensions:
            p = self.root / f"{video_id}{ext}"
            if p.is_file():
                return p
        if self._index is None:
            self._index = self._build_index()
        return self._index.get(video_id)

    def load(self, video_id: str, settings: FrameSettings, report: VideoReport) -> np.ndarray | None:
        """Frames of `video_id`, or None after recording it as missing or unreadable in `report`."""
        p = self.path(video_id)
        if p is None:
            report.missing.append(video_id)
            return None
        try:
            frames = decode_frames(p, settings)
        except VideoDecodeError as exc:
            report.unreadable[video_id] = str(exc)
            return None
        report.ok += 1
        return frames


def write_video(path: str | os.PathLike, frames: Iterable[np.ndarray], fps: int = 8, codec: str | None = None,
                threads: int | None = None) -> Path:
    """Encode (H, W, 3) uint8 RGB frames to a video file, atomically (a temporary file, then a rename).

    The one writer of the project's videos (the synthetic sample videos, `hardneg.world`): the codec
    defaults to one browsers play (VP9 for .webm, H.264 otherwise; MPEG-4 Part 2 when this PyAV build
    lacks libx264), at fixed quality settings. `threads=1` makes the bytes deterministic (the same frames give the same file:
    one encoder thread, and libx264 without macroblock-tree rate control).
    """
    av = _pyav()

    if codec is None:
        if str(path).lower().endswith(".webm"):
            codec = "libvpx-vp9"
        else:
            codec = "libx264" if "libx264" in av.codecs_available else "mpeg4"
    frames = iter(frames)
    first = next(frames, None)
    if first is None:
        raise ValueError(f"{path}: no frames to write")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp{path.suffix}")  # one per writer: two never share one
    try:
        with av.open(str(tmp), mode="w") as container:
            stream = container.add_stream(codec, rate=fps)
            stream.height, stream.width = first.shape[:2]
            stream.pix_fmt = "yuv420p"
            options = {"mpeg4": {"qscale": "8"}, "libx264": {"crf": "28", "preset": "medium"},
                       "libvpx-vp9": {"crf": "40", "b": "0"}}.get(codec, {})
            if threads is not None:
                stream.codec_context.thread_count = threads
                options = {**options, "threads": str(threads)}
                if codec == "libx264":
                    # with macroblock-tree rate control, about 1 in 20 encodes of the same frames (one thread,
                    # same process) gave other bytes on the world's 32x32 clips; without it, 1 variant in 150
                    # (measured, issue 26)
                    options["x264-params"] = "mbtree=0"
            stream.options = options
            for t, img in enumerate(itertools.chain([first], frames)):
                # converted here, not inside encode(): there the encoder saw nondeterministic padding
                # bytes now and then, and gave other bytes for the same frames
                yuv = av.VideoFrame.from_ndarray(img, format="rgb24").reformat(format="yuv420p").to_ndarray()
                frame = av.VideoFrame.from_ndarray(yuv, format="yuv420p")
                frame.pts = t
                for packet in stream.encode(frame):
                    container.mux(packet)
            for packet in stream.encode():
                container.mux(packet)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)
    return path


def write_synthetic_video(path: str | os.PathLike, seed: int | str, n_frames: int = 16, size: int = 64,
                          fps: int = 8, codec: str | None = None) -> Path:
    """Encode a short video of coloured shapes moving over a plain background (a few KB).

    Deterministic in `seed`: the built-in sample videos and the tests' videos come from here.
    The codec defaults to one browsers play (see `write_video`).
    """
    if isinstance(seed, str):
        seed = int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "little")
    rng = np.random.default_rng(seed)
    background = rng.integers(0, 80, 3)
    shapes = []
    for _ in range(int(rng.integers(1, 4))):
        shapes.append({
            "colour": rng.integers(90, 256, 3),
            "radius": int(rng.integers(size // 10, size // 4)),
            "start": rng.uniform(0.2, 0.8, 2) * size,
            "velocity": rng.uniform(-1.5, 1.5, 2) * size / n_frames,
            "square": bool(rng.integers(0, 2)),
        })
    yy, xx = np.mgrid[0:size, 0:size]

    def frames():
        for t in range(n_frames):
            img = np.empty((size, size, 3), np.uint8)
            img[:] = background
            for s in shapes:
                cx, cy = (s["start"] + t * s["velocity"]) % size
                if s["square"]:
                    inside = (np.abs(xx - cx) <= s["radius"]) & (np.abs(yy - cy) <= s["radius"])
                else:
                    inside = (xx - cx) ** 2 + (yy - cy) ** 2 <= s["radius"] ** 2
                img[inside] = s["colour"]
            yield img

    return write_video(path, frames(), fps=fps, codec=codec)
