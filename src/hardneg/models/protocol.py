"""Your own model, as it is: any object with `encode_video`/`encode_text` or with `score`.

`hardneg.run_model` and `hardneg run` score a `VideoTextModel`. A user's model rarely is one,
so `as_model` wraps what it gets into one (see docs/models.md for the protocol):

* an *embedding model*: `encode_text(texts) -> (T, D)`, `encode_video(videos) -> (V, D)`,
  optionally `similarity(video_emb, text_emb) -> (V, T)` (default: cosine). Video embeddings
  are cached on disk only when the object names its `revision`: without it nothing tells
  two versions of the same class apart, so nothing is reused across calls.
* a *score model*: `score(video, captions) -> (len(captions),)`, or a plain function
  `f(video, captions)`. It cannot be split into two encoders, so the adapter hands the
  scorer a key per video (its decoded frames wait in a temporary folder) and per caption,
  and `similarity` calls `score` with the real frames and captions.

Optional attributes on either: `model_id` (a name for results), `revision` (a version string,
e.g. a checkpoint hash), `uses_video = False` (a text-only model: no video is decoded and
`score` gets `video=None`; otherwise `video` is a `hardneg.video.Frames` array whose `.times` are the sampled
frames' times in seconds), `score_name` (what a score is, e.g. "log-probability": the demo's chart
names it). Every output is checked (shape, finite numbers) with an error that
names the method.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
import weakref
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from hardneg.models.base import VideoTextModel

PROTOCOL_HELP = (
    "give an object with encode_video(videos) and encode_text(texts) (optionally similarity(video_emb, text_emb)), "
    "or with score(video, captions), or a function f(video, captions); see docs/models.md"
)


def _name_of(obj: Any) -> str:
    given = getattr(obj, "model_id", None) or getattr(obj, "name", None)
    if isinstance(given, str) and given:
        return given
    kind = obj if callable(obj) and hasattr(obj, "__qualname__") else type(obj)
    return f"{kind.__module__}.{kind.__qualname__}"


def _matrix(value: Any, rows: int, what: str, cols: int | None = None) -> np.ndarray:
    """`value` as a finite 2-D float array with `rows` rows (and `cols` columns when given)."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what} must return numbers, got {type(value).__name__} ({exc})") from None
    if arr.ndim == 1 and cols is None and rows == len(arr):
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] != rows or (cols is not None and arr.shape[1] != cols):
        want = f"({rows}, {cols})" if cols is not None else f"({rows}, D)"
        raise ValueError(f"{what} returned shape {arr.shape}; expected {want}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{what} returned NaN or infinite values; every score must be a finite number")
    return arr


class _UserModel(VideoTextModel):
    """What both adapters share: a name, a version, whether video is used."""

    #: False: embeddings mean nothing outside this object's life, so the scorer gets a private cache
    persistent_cache = False

    def __init__(self, obj: Any):
        self.obj = obj
        self.model_id = _name_of(obj)
        self.uses_video = bool(getattr(obj, "uses_video", True))
        given = getattr(obj, "score_name", None)  # what the user's scores are, if the object says
        self.score_name = given if isinstance(given, str) and given else self.default_score_name(obj)
        revision = getattr(obj, "revision", None)
        self.versioned = revision not in (None, "")
        # without a version, each adapter is its own model: no resume, no embedding reuse across calls
        self.revision = str(revision) if self.versioned else f"unversioned-{uuid.uuid4().hex[:12]}"

    @staticmethod
    def default_score_name(obj: Any) -> str:
        return "the model's own score"

    def close(self) -> None:
        """Free what the adapter holds on disk (nothing here)."""


class EmbeddingAdapter(_UserModel):
    """A user's `encode_video`/`encode_text` (+ optional `similarity`) object as a `VideoTextModel`."""

    adapter = "user-embeddings"

    @staticmethod
    def default_score_name(obj: Any) -> str:
        return "the model's own similarity" if hasattr(obj, "similarity") else "cosine similarity"

    def __init__(self, obj: Any):
        super().__init__(obj)
        self.persistent_cache = self.versioned

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        return _matrix(self.obj.encode_text(texts), len(texts), f"{self.model_id}.encode_text").astype(np.float32)

    def encode_video(self, videos: Sequence[np.ndarray]) -> np.ndarray:
        videos = list(videos)
        return _matrix(self.obj.encode_video(videos), len(videos), f"{self.model_id}.encode_video").astype(np.float32)

    def similarity(self, video_embeddings: np.ndarray, text_embeddings: np.ndarray) -> np.ndarray:
        if not hasattr(self.obj, "similarity"):
            return super().similarity(video_embeddings, text_embeddings)
        got = self.obj.similarity(video_embeddings, text_embeddings)
        return _matrix(got, len(video_embeddings), f"{self.model_id}.similarity", len(text_embeddings)).astype(np.float32)


class ScoreAdapter(_UserModel):
    """A user's `score(video, captions)` (or function) as a `VideoTextModel`.

    Embeddings are keys: a caption's is its index in `self._texts`, a video's the index of its
    frames in a temporary folder (frames stay on disk, so memory does not grow with the videos).
    """

    adapter = "user-score"
    _MAX_KEYS = 1 << 24  # video keys pass through the float32 embedding cache exactly up to here

    def __init__(self, obj: Any, score: Callable[[Any, list[str]], Any]):
        super().__init__(obj)
        self._score = score
        self._texts: list[str] = []
        self._text_index: dict[str, int] = {}
        self._frames = Path(tempfile.mkdtemp(prefix="hardneg-frames-"))
        self._n_videos = 0
        self._nonce = uuid.uuid4().hex[:12]
        self._cleanup = weakref.finalize(self, shutil.rmtree, self._frames, True)

    def close(self) -> None:
        self._cleanup()

    def cache_key(self) -> str:
        # keys are only valid while this adapter lives: never share its cache folder with another
        return f"{super().cache_key()}-{self._nonce}"

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), 1), np.float64)
        for i, t in enumerate(texts):
            if t not in self._text_index:
                self._text_index[t] = len(self._texts)
                self._texts.append(t)
            out[i, 0] = self._text_index[t]
        return out

    def encode_video(self, videos: Sequence[np.ndarray]) -> np.ndarray:
        out = np.empty((len(videos), 1), np.float64)
        for i, frames in enumerate(videos):
            if self._n_videos >= self._MAX_KEYS:
                raise ValueError(f"a score(video, captions) model can score at most {self._MAX_KEYS} videos in one run")
            np.save(self._frames / f"{self._n_videos}.npy", np.asarray(frames), allow_pickle=False)
            times = getattr(frames, "times", None)  # the decoder's sampled times (hardneg.video.Frames)
            if times is not None:
                np.save(self._frames / f"{self._n_videos}.times.npy", np.asarray(times, np.float64), allow_pickle=False)
            out[i, 0] = self._n_videos
            self._n_videos += 1
        return out

    def _load(self, key: int):
        """A video's frames as the decoder gave them: a `hardneg.video.Frames`, with its frame times when known."""
        from hardneg.video import Frames

        times = self._frames / f"{key}.times.npy"
        return Frames(np.load(self._frames / f"{key}.npy"), np.load(times) if times.is_file() else None)

    def similarity(self, video_embeddings: np.ndarray, text_embeddings: np.ndarray) -> np.ndarray:
        captions = [self._texts[int(k)] for k in np.asarray(text_embeddings, np.float64)[:, 0]]
        rows = []
        for row in np.asarray(video_embeddings, np.float64):
            video = self._load(int(row[0])) if self.uses_video else None
            got = self._score(video, list(captions))
            rows.append(_matrix([got] if np.ndim(got) == 1 else got, 1, f"{self.model_id}.score", len(captions))[0])
        return np.asarray(rows, np.float32).reshape(len(rows), len(captions))


def as_model(model: Any, device: str | None = None, fp16: bool = False, revision: str | None = None) -> VideoTextModel:
    """A `VideoTextModel` for what the user gave: a name/Hub id (loaded), a model, or a protocol object."""
    if isinstance(model, (str, Path)):
        from hardneg.models.registry import load_model

        return load_model(str(model), device=device, fp16=fp16, revision=revision)
    if isinstance(model, VideoTextModel):
        return model
    if callable(getattr(model, "encode_video", None)) and callable(getattr(model, "encode_text", None)):
        return EmbeddingAdapter(model)
    if callable(getattr(model, "score", None)):
        return ScoreAdapter(model, model.score)
    if callable(model):
        return ScoreAdapter(model, model)
    raise TypeError(f"cannot score a {type(model).__name__}: {PROTOCOL_HELP}")


__all__ = ["EmbeddingAdapter", "PROTOCOL_HELP", "ScoreAdapter", "as_model"]
