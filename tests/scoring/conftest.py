"""Shared, session-scoped fixtures: synthetic videos, the built samples, the tiny model (loaded once)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def samples(tmp_path_factory) -> dict[str, Path]:
    from hardneg.datasets import build_samples

    return build_samples(tmp_path_factory.mktemp("samples"), benchmarks=("feint6k", "contrast_sets", "fire"))


@pytest.fixture(scope="session")
def sample_videos(tmp_path_factory) -> Path:
    from hardneg.datasets import sample_video_ids
    from hardneg.video import write_synthetic_video

    folder = tmp_path_factory.mktemp("videos")
    for b in ("feint6k", "contrast_sets", "fire"):
        for vid in sample_video_ids(b):
            write_synthetic_video(folder / f"{vid}.mp4", vid, n_frames=8, size=32)
    return folder


@pytest.fixture(scope="session")
def tiny_clip():
    from hardneg.models import load_model

    return load_model("tiny-clip", device="cpu")
