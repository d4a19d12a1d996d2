"""Oracle models for the run_model tests: they know which video each frame stack is and which
captions are right for it (from the built data), so a correct pipeline gets every item right."""

from __future__ import annotations

import hashlib

import numpy as np


def frames_key(frames: np.ndarray) -> str:
    return hashlib.sha1(np.ascontiguousarray(frames).tobytes()).hexdigest()



class EmbeddingOracle:
    """encode_video: one-hot of the video; encode_text: the videos the text is right for."""

    model_id = "test/embedding-oracle"

    def __init__(self, answers, revision=None):
        self.video_of, self.positive_for = answers
        self.index = {v: i for i, v in enumerate(sorted(set(self.video_of.values())))}
        if revision is not None:
            self.revision = revision
        self.calls = {"video": 0, "text": 0}

    def encode_video(self, videos):
        self.calls["video"] += len(videos)
        out = np.zeros((len(videos), len(self.index)))
        for i, frames in enumerate(videos):
            out[i, self.index[self.video_of[frames_key(frames)]]] = 1.0
        return out

    def encode_text(self, texts):
        self.calls["text"] += len(texts)
        out = np.zeros((len(texts), len(self.index)))
        for i, t in enumerate(texts):
            for v in self.positive_for.get(t, ()):
                out[i, self.index[v]] = 1.0
        return out


class ScoreOracle:
    """score(video, captions): +1 (or `sign`) for captions that are right for this very video."""

    def __init__(self, answers, sign=1.0):
        self.video_of, self.positive_for = answers
        self.sign = sign
        self.model_id = f"test/score-oracle{'' if sign > 0 else '-negated'}"

    def score(self, video, captions):
        vid = self.video_of[frames_key(video)]
        return [self.sign * float(vid in self.positive_for.get(c, ())) for c in captions]
