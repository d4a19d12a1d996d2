"""The torchvision shim (hardneg.lmms_eval_compat) computes what torchvision computes, where torchvision imports:
qwen-vl-utils' frame resize and transformers' Qwen2-VL video processor then give lmms-eval the same pixels with or
without it (measured: the 27 parity items gave identical frames, pixels and answers both ways)."""

from __future__ import annotations

import pytest

from hardneg import lmms_eval_compat as shim


@pytest.mark.parametrize("size", [(56, 56), (30, 44), (112, 84)])
def test_shim_resize_equals_torchvision(size):
    torch = pytest.importorskip("torch")
    try:
        import torchvision.transforms.functional as F
        import torchvision.transforms.v2.functional as F2
        from torchvision.transforms import InterpolationMode
    except Exception as exc:  # noqa: BLE001 (absent, or compiled ops that do not load beside this torch)
        pytest.skip(f"torchvision does not import here: {exc}")
    g = torch.Generator().manual_seed(0)
    video = torch.randint(0, 256, (4, 3, 48, 64), generator=g, dtype=torch.uint8)
    want = F.resize(video, list(size), interpolation=InterpolationMode.BICUBIC, antialias=True)
    got = shim.resize(video, list(size), interpolation=shim.InterpolationMode.BICUBIC, antialias=True)
    assert got.dtype == want.dtype and torch.equal(got, want)
    x = video.float()
    want = F2.resize(x, list(size), interpolation=InterpolationMode.BICUBIC, antialias=True)
    got = shim.resize(x, list(size), interpolation=shim.InterpolationMode.BICUBIC, antialias=True)
    assert torch.allclose(got, want, atol=1e-4)
    assert torch.equal(shim.grayscale_to_rgb(video[:, :1]), F2.grayscale_to_rgb(video[:, :1]))


def test_shim_refuses_what_it_does_not_implement():
    with pytest.raises(NotImplementedError, match="not in hardneg's torchvision shim"):
        shim._unsupported("pad")()
