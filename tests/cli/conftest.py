"""Built samples, their synthetic videos, and the answers the oracle models (cli_oracles.py) use."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_oracles import frames_key


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
