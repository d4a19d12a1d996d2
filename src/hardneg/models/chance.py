"""Chance scorers: `constant` and `random`, to check a benchmark, a pipeline or a tie rule against chance.

Neither reads a video (`uses_video = False`, like the blind baselines: nothing is decoded and
`--videos` is not needed) and neither needs a download.

* `constant` gives every caption the same score. Under the default tie rule (`ties="expected"`)
  it lands exactly on chance: R@K = K/C, MeanR = (C+1)/2, MRR = H_C/C for an item of C candidates
  (on retrieval, the constant scorer's exact score on the relevance labels). Under a benchmark's
  original rule it shows what that rule gives a model that cannot tell anything apart
  (`ties="feint6k"`: R@1 = 100%).
* `random` (seed 0) or `random:<seed>` gives each caption a pseudo-random score in [0, 1) drawn
  from a hash of (seed, caption text) and, on retrieval, of the video's place in the collection.
  The same seed gives the same scores on any machine, batch size or worker count (no random
  state is carried between calls), so a run resumes and reproduces exactly; the seed is part of
  the model's identity (predictions metadata). Averaged over seeds it sits at chance; one seed
  scatters around it.
"""

from __future__ import annotations

import hashlib
from typing import Any, Sequence

import numpy as np

from hardneg.models.base import VideoTextModel
from hardneg.models.registration import register

_KEY_BITS = 24  # a caption's key is exact in float32, so a cast anywhere on the way changes nothing


class _ChanceModel(VideoTextModel):
    uses_video = False
    device = "cpu"
    dtype = "float32"

    def encode_video(self, videos: Sequence[np.ndarray]) -> np.ndarray:
        return np.zeros((len(videos), 0), np.float32)


@register("constant", "chance check: the same score for every caption (exactly chance under the default ties; no video)")
class ConstantModel(_ChanceModel):
    adapter = "constant"
    score_name = "constant score (chance)"

    def __init__(self, model_id: str | None = None, device: str | None = None, fp16: bool = False,
                 revision: str | None = None):
        if model_id:
            raise ValueError(f"the constant scorer takes no argument (got 'constant:{model_id}'); use --model constant")
        self.model_id, self.revision = "constant", "1"

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        return np.zeros((len(texts), 1), np.float32)

    def similarity(self, video_embeddings: np.ndarray, text_embeddings: np.ndarray) -> np.ndarray:
        return np.zeros((len(video_embeddings), len(text_embeddings)), np.float32)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64's output function on uint64 (wrapping arithmetic): a well-mixed 64-bit hash."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@register("random", "chance check: a seeded pseudo-random score per caption, 'random:<seed>' (default seed 0; no video)")
class RandomModel(_ChanceModel):
    adapter = "random"
    score_name = "random score (chance)"

    def __init__(self, model_id: str | None = None, device: str | None = None, fp16: bool = False,
                 revision: str | None = None):
        text = "0" if model_id in (None, "") else str(model_id)
        try:
            seed = int(text)
        except ValueError:
            raise ValueError(f"random scorer seed must be an integer in 0..2**63-1, e.g. --model random:7; got {text!r}") from None
        if not 0 <= seed < 1 << 63:
            raise ValueError(f"random scorer seed must be an integer in 0..2**63-1, e.g. --model random:7; got {seed}")
        self.seed = seed
        self.model_id, self.revision = f"random:{seed}", "1"

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "seed": self.seed}

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        """(T, 1) float32: a 24-bit keyed hash of (seed, text) per caption (an integer, exact in float32)."""
        key = self.seed.to_bytes(8, "little")
        out = np.empty((len(texts), 1), np.float32)
        for i, t in enumerate(texts):
            digest = hashlib.blake2b(t.encode("utf-8"), digest_size=8, key=key).digest()
            out[i, 0] = int.from_bytes(digest, "little") >> (64 - _KEY_BITS)
        return out

    def similarity(self, video_embeddings: np.ndarray, text_embeddings: np.ndarray) -> np.ndarray:
        """(V, T) scores in [0, 1): hash of (text hash, row of the video), 24 bits so float32 holds them exactly."""
        keys = np.rint(np.asarray(text_embeddings, np.float64)[:, 0]).astype(np.uint64)
        rows = np.arange(len(video_embeddings), dtype=np.uint64)[:, None]
        with np.errstate(over="ignore"):
            mixed = _splitmix64(keys[None, :] ^ _splitmix64(rows))
        return ((mixed >> np.uint64(40)).astype(np.float64) / float(1 << 24)).astype(np.float32)
