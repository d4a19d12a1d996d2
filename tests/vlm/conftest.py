"""The tiny video LLMs run on one torch thread here: intra-op threads only cost time on models this small (on the
2-core machine under load, a full `hardneg run --model tiny-vlm` took 5x longer with two threads)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture()
def likelihood_model_without_rope_delta():
    """A factory: the named tiny video LLM, scoring caption likelihood, with the position delta that the cached path
    continues from dropped after each prefix. The cached scores must then move away from the naive ones, which
    shows that the cached == naive tests can fail."""
    from hardneg.models import load_model
    from hardneg.models.vlm.model import DEFAULT_PROMPTS

    def make(name: str):
        m = load_model(name, device="cpu")
        m.spec = DEFAULT_PROMPTS["caption-likelihood"]
        real = m.engine.prefix

        def no_delta(ids, video):
            cache, last, delta = real(ids, video)
            return cache, last, delta * 0

        m.engine.prefix = no_delta
        return m

    return make
