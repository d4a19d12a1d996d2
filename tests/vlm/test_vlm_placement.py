"""A video LLM over several devices (issue 35, `hardneg.models.vlm.placement`): a tiny model forced to split between the
CPU and disk offload by a small `max_memory` scores as a one-device run, cached, naive and batched across videos."""

from __future__ import annotations

import numpy as np
import pytest

from hardneg.models import load_model
from hardneg.models.vlm.placement import device_string, parse, parse_max_memory
from hardneg.models.vlm.model import DEFAULT_PROMPTS

pytest.importorskip("accelerate")

CAPTIONS = ["a man opens the door", "a man closes the door slowly", "the dog runs across the park"]


@pytest.mark.parametrize("arch", ["tiny-vlm", "tiny-vlm:llava-onevision"])
def test_a_model_split_over_cpu_and_disk_scores_as_one_device(arch):
    rng = np.random.default_rng(0)
    frames = [rng.integers(0, 256, (8, 40, 56, 3), dtype=np.uint8) for _ in range(2)]
    one = load_model(arch, device="cpu")
    split = load_model(arch, device=device_string("auto", "cpu=150KB"))
    placed = set(split.device_map.values())
    assert "disk" in placed and "cpu" in placed, split.device_map  # really split
    assert split.engine.device == "cpu"
    for protocol in ("caption-likelihood", "choice-letter"):
        one.spec = split.spec = DEFAULT_PROMPTS[protocol]
        want = [one.score(f, CAPTIONS) for f in frames]
        for f, w in zip(frames, want):
            np.testing.assert_allclose(split.score(f, CAPTIONS), w, rtol=0, atol=1e-5)
        from hardneg.models.vlm.batch import BatchScorer

        got = BatchScorer(split.engine).score_items([(f, CAPTIONS) for f in frames], split.spec)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=0, atol=1e-4)


def test_placement_flags_are_checked():
    assert parse(device_string("auto", "0=70GiB,1=70GiB,cpu=200GiB")) == \
        ("auto", {0: "70GiB", 1: "70GiB", "cpu": "200GiB"})
    assert parse("cuda:1") is None and device_string(None, None, "cpu") == "cpu"
    with pytest.raises(ValueError, match="DEVICE=SIZE"):
        parse_max_memory("lots")
    with pytest.raises(ValueError, match="--device-map auto"):
        device_string(None, "cpu=1GiB")
    with pytest.raises(ValueError, match="not both"):
        device_string("auto", None, "cuda")
    with pytest.raises(ValueError, match="one device"):
        load_model("tiny-clip", device=device_string("auto", None))
