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
