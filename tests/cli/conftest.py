"""Built samples, their synthetic videos, and oracle models that know the answers (no download)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest


@pytest.fixture(scope="session")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> Path:
    """A root with every benchmark's built sample as `<root>/<name>/`."""
    from hardneg.datasets import build_samples

    root = tmp_path_factory.mktemp("built")
    build_samples(root)
    return root


@pytest.fixture(scope="session")
def videos(cache) -> Path:
    """The synthetic sample videos `run_model` makes when no data is given (same folder, same files)."""
    from hardneg.datasets import sample_benchmarks, sample_video_ids
    from hardneg.run import sample_videos

    return sample_videos(sorted({v for b in sample_benchmarks() for v in sample_video_ids(b)}), cache)


def frames_key(frames: np.ndarray) -> str:
    return hashlib.sha1(np.ascontiguousarray(frames).tobytes()).hexdigest()


@pytest.fixture(scope="session")
def answers(built, videos):
    """(video of each frames hash, videos each text is a positive of), from the built data itself."""
    from hardneg.items import load_item_sets
    from hardneg.video import FrameSettings, decode_frames

    video_of = {frames_key(decode_frames(p, FrameSettings())): p.stem for p in sorted(videos.glob("*.mp4"))}
    positive_for: dict[str, set[str]] = {}
    for name in ("feint6k", "fire"):
        for items in load_item_sets(built / name).values():
            if items.task == "multiple_choice":
                for vid, caps, label in zip(items.clusters, items.captions, items.label):
                    positive_for.setdefault(caps[label], set()).add(str(vid))
            else:
                from hardneg.items import load_benchmark

                texts = load_benchmark(str(built / name), items.config).queries["text"].to_pylist()
                for text, rel, orig in zip(texts, items.relevant, items.original):
                    for k in {*rel, int(orig)}:
                        positive_for.setdefault(text, set()).add(items.video_ids[k])
    return video_of, positive_for


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
