"""Decode videos into a fixed number of uniformly sampled RGB frames, and find them by id.

How frames are taken (how many, at what rate, at what size, with which decoder) changes a
model's scores, so `FrameSettings.identity()` goes into every predictions file and every
embedding-cache key. Videos that are missing or cannot be decoded are recorded in a
`VideoReport` (counted, with the reason) instead of crashing a run or vanishing silently.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

#: File extensions searched for a video id, in order of preference.
VIDEO_EXTENSIONS = (".mp4", ".webm", ".mkv", ".avi", ".mov", ".m4v", ".mpg", ".mpeg", ".gif")
DECODERS = ("pyav",)


class VideoDecodeError(RuntimeError):
    """A video file exists but yields no usable frames."""


@dataclass(frozen=True)
class FrameSettings:
    """How frames are sampled: part of a result's identity.

    n_frames: frames per video, spread uniformly over its length (segment midpoints).
    fps: when set, the video is first resampled to this rate (frames nearest to a regular
        time grid), then `n_frames` are taken uniformly from that grid; None uses every frame.
    resize: length of the shorter side after resizing (aspect kept); None keeps the size.
    decoder: the decoding library ("pyav").
    """

    n_frames: int = 8
    fps: float | None = None
    resize: int | None = 224
    decoder: str = "pyav"

    def __post_init__(self) -> None:
        if not isinstance(self.n_frames, int) or self.n_frames < 1:
            raise ValueError(f"n_frames must be a positive integer, got {self.n_frames!r}")
        if self.fps is not None and not self.fps > 0:
            raise ValueError(f"fps must be positive or None, got {self.fps!r}")
        if self.resize is not None and (not isinstance(self.resize, int) or self.resize < 1):
            raise ValueError(f"resize must be a positive integer or None, got {self.resize!r}")
        if self.decoder not in DECODERS:
            raise ValueError(f"decoder must be one of {DECODERS}, got {self.decoder!r}")

    def identity(self) -> dict[str, Any]:
        return {"n_frames": self.n_frames, "fps": self.fps, "resize": self.resize, "decoder": self.decoder}


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


def _resize(img, size: int | None):
    if size is None:
        return img
    w, h = img.size
    scale = size / min(w, h)
    if scale == 1:
        return img
    return img.resize((max(1, round(w * scale)), max(1, round(h * scale))), resample=3)  # bicubic


def decode_frames(path: str | os.PathLike, settings: FrameSettings = FrameSettings()) -> np.ndarray:
    """(n_frames, H, W, 3) uint8 RGB frames of the video at `path`.

    Raises VideoDecodeError (with the file and the reason) when the file cannot be decoded.
    """
    import av

    path = Path(path)
    try:
        with av.open(str(path)) as container:
            if not container.streams.video:
                raise VideoDecodeError(f"{path}: no video stream")
            stream = container.streams.video[0]
            frames, times = [], []
            for frame in container.decode(stream):
                frames.append(frame)
                times.append(float(frame.time) if frame.time is not None else len(times))
    except VideoDecodeError:
        raise
    except Exception as exc:  # av raises many error classes (InvalidDataError, OSError, ...)
        raise VideoDecodeError(f"{path}: cannot decode ({type(exc).__name__}: {exc})") from exc
    if not frames:
        raise VideoDecodeError(f"{path}: no decodable frames")
    candidates = np.arange(len(frames))
    if settings.fps is not None:
        candidates = _resample_grid(np.asarray(times), settings.fps)
    picked = candidates[uniform_indices(len(candidates), settings.n_frames)]
    out = [np.asarray(_resize(frames[i].to_image(), settings.resize).convert("RGB")) for i in picked]
    return np.stack(out)


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

    @property
    def failed(self) -> int:
        return len(self.missing) + len(self.unreadable)

    def merge(self, other: "VideoReport") -> None:
        self.ok += other.ok
        self.missing.extend(v for v in other.missing if v not in self.missing)
        self.unreadable.update(other.unreadable)

    def to_dict(self, max_listed: int = 100) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "missing": len(self.missing),
            "unreadable": len(self.unreadable),
            "missing_ids": sorted(self.missing)[:max_listed],
            "unreadable_ids": dict(sorted(self.unreadable.items())[:max_listed]),
        }

    def summary(self) -> str:
        text = f"videos: {self.ok} decoded, {len(self.missing)} missing, {len(self.unreadable)} unreadable"
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


def write_synthetic_video(path: str | os.PathLike, seed: int | str, n_frames: int = 16, size: int = 64,
                          fps: int = 8, codec: str | None = None) -> Path:
    """Encode a short video of coloured shapes moving over a plain background (a few KB).

    Deterministic in `seed`: the built-in sample videos and the tests' videos come from here.
    The codec defaults to one browsers play: VP9 for .webm, H.264 otherwise (MPEG-4 Part 2
    when this PyAV build lacks libx264).
    """
    import av

    if codec is None:
        if str(path).lower().endswith(".webm"):
            codec = "libvpx-vp9"
        else:
            codec = "libx264" if "libx264" in av.codecs_available else "mpeg4"

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
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{path.suffix}")
    with av.open(str(tmp), mode="w") as container:
        stream = container.add_stream(codec, rate=fps)
        stream.width = stream.height = size
        stream.pix_fmt = "yuv420p"
        stream.options = {"mpeg4": {"qscale": "8"}, "libx264": {"crf": "28", "preset": "medium"},
                          "libvpx-vp9": {"crf": "40", "b": "0"}}.get(codec, {})
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
            for packet in stream.encode(av.VideoFrame.from_ndarray(img, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    os.replace(tmp, path)
    return path
