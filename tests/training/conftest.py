"""Tiny training sets made with the project's synthetic video writer (seconds on a CPU)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest


def make_pairs(folder: Path, n: int = 16, seed: int = 0) -> Path:
    """`n` synthetic videos and captions from a small grammar in `folder` (captions.jsonl + videos/)."""
    from hardneg.video import write_synthetic_video

    rng = random.Random(seed)
    rows = []
    for i in range(n):
        vid = f"v{i:03d}"
        write_synthetic_video(folder / "videos" / f"{vid}.mp4", vid, n_frames=8, size=32)
        cap = (f"a {rng.choice(['small', 'big'])} {rng.choice(['red', 'blue', 'green'])} "
               f"{rng.choice(['square', 'circle'])} {rng.choice(['moves', 'rotates'])} "
               f"{rng.choice(['slowly', 'quickly'])} to the {rng.choice(['left', 'right'])} "
               f"{rng.choice(['above', 'below'])} a {rng.choice(['yellow', 'white'])} circle")
        rows.append({"video_id": vid, "caption": cap})
    (folder / "captions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


@pytest.fixture(scope="session")
def pairs(tmp_path_factory) -> Path:
    return make_pairs(tmp_path_factory.mktemp("pairs"))


@pytest.fixture(scope="session")
def word_negatives(tmp_path_factory, pairs) -> Path:
    """PoSRank word-level negatives of the training captions, precomputed once (Parquet)."""
    from hardneg.training.data import generate_negatives, load_pairs

    out = tmp_path_factory.mktemp("negs") / "negatives.parquet"
    generate_negatives("posrank", load_pairs(pairs).captions, {}, out)
    return out
