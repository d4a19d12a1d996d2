"""A video as a `transformers` user hands it to a processor: the reference side of the per-type tests.

The clip is a real file (16 frames of noise at 8 frames per second). The user decodes every frame with PyAV, picks
8 by the segment-midpoint rule written out here (frame (2i + 1) x 16 // 16), and describes them with
`transformers.video_utils.VideoMetadata` from the stream's own rate and those INTEGER frame indices. No helper of
hardneg's goes into this side: the library's path decodes the same file with `hardneg.video.decode_frames`, and
the tests require the same pixels and the same times, then the same ids and scores.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

N_TOTAL, N_SAMPLED, FPS, HEIGHT, WIDTH = 16, 8, 8, 40, 56


@dataclass
class UserClip:
    path: Path
    frames: np.ndarray  # (8, H, W, 3) uint8, decoded by PyAV here
    indices: list[int]  # into the stream's frames
    fps: float  # the stream's average rate
    total: int  # frames in the stream

    def metadata(self):
        """The `VideoMetadata` a user builds: the native rate and integer frame indices."""
        from transformers.video_utils import VideoMetadata

        return VideoMetadata(total_num_frames=self.total, fps=self.fps, frames_indices=list(self.indices),
                             duration=self.total / self.fps)

    @property
    def times(self) -> list[float]:
        """The frames' times in seconds: index / rate (0.125, 0.375, ..., 1.875)."""
        return [i / self.fps for i in self.indices]


def write_noise_clip(path: Path) -> Path:
    """The clip file (encoded with the project's writer: the file is the input, not the reference)."""
    from hardneg.video import write_video

    rng = np.random.default_rng(11)
    return write_video(path, (rng.integers(0, 256, (HEIGHT, WIDTH, 3), dtype=np.uint8) for _ in range(N_TOTAL)),
                       fps=FPS)


def user_clip(path: Path) -> UserClip:
    import av

    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        fps = float(stream.average_rate)
        every = [f.to_ndarray(format="rgb24") for f in container.decode(stream)]
    total = len(every)
    indices = [(2 * i + 1) * total // (2 * N_SAMPLED) for i in range(N_SAMPLED)]
    return UserClip(path, np.stack([every[i] for i in indices]), indices, fps, total)
