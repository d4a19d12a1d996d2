"""Issue 50's probes share this: the controls world (2,000 training, 1,000 test scenes, world seed 0) and its
frames at a chosen size, cached under experiments/training/work/diagnostics (not committed)."""
import os
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
HERE = Path(__file__).resolve().parents[1]
WORK = Path(os.environ.get("PROBE_WORK", HERE / "work" / "diagnostics"))


def load_world():
    """The controls profile's world (raw 64 px frames, before the model's resizing), prepared once into WORK."""
    from training_design import prepare
    from training_runner import PROFILES
    from training_world import Data
    from run import default_negatives

    if not (WORK / "raw" / "meta.json").is_file():
        prepare(PROFILES["controls"], 0, os.cpu_count() or 1, default_negatives(0)).save(WORK / "raw")
    return Data.load(WORK / "raw")


def frames_at(d, size: int) -> dict:
    """The train and test frames resized and standardised for a `size`-pixel tiny-temporal (cached)."""
    from hardneg.models.trainable import TinyTemporal

    cache = WORK / f"frames{size}.npz"
    if cache.is_file():
        z = np.load(cache)
        return {k: z[k] for k in z.files}
    tok = TinyTemporal(d.meta["vocabulary"], dim=8, image_size=size)
    out = {}
    for part in ("train", "test"):
        raw = torch.from_numpy(d.a[f"{part}_frames"])
        out[part] = torch.cat([tok.prepare_frames(raw[i:i + 256]) for i in range(0, len(raw), 256)]).numpy()
    np.savez(cache, **out)
    return out


def parsed_caption(d, row: int):
    """The world's parsed caption (`hardneg.world.grammar.parse`) of text `row` of the design's text table."""
    from hardneg.world.grammar import parse

    voc = d.meta["vocabulary"]
    return parse(" ".join(voc[t] for t in d.a["tokens"][row] if not voc[t].startswith("<")).replace(" ,", ","))
