"""Caption forwards on one copy of each item's prefix (`hardneg.models.vlm.shared_prefix`, issue 52).

The reference for the kernel is PyTorch's own SDPA over the concatenated keys (prefix copied per row, as the copying
path does); for the scores, the copying path (`shared_prefix.off`) and one forward per caption (`naive`)."""

from __future__ import annotations

import numpy as np
import pytest

from hardneg.models.vlm import shared_prefix as sp
from hardneg.models.vlm.model import DEFAULT_PROMPTS, VideoLLM
from hardneg.models.vlm.support import VERIFIED
from hardneg.models.vlm.tiny import tiny_vlm_path
from hardneg.video import FrameSettings, decode_frames
from test_vlm_generic import _padded_scorer as padded_scorer  # item 1's prefix shorter, rows of items mixed
from test_vlm_generic import _three_items as items_of
from user_clip import write_noise_clip

CAPTIONS = ["a man opens the door.", "The dog runs across the park", "café naïve – “quoted” 猫"]
SPEC = DEFAULT_PROMPTS["caption-likelihood"]


@pytest.fixture(scope="module")
def frames(tmp_path_factory):
    return decode_frames(write_noise_clip(tmp_path_factory.mktemp("clip") / "clip.mp4"),
                         FrameSettings(n_frames=8, resize=None))


def fresh(model_type: str) -> VideoLLM:
    """A tiny model of its own (tests here change its settings or its refusal record)."""
    return VideoLLM(str(tiny_vlm_path(VERIFIED[model_type])), device="cpu", path="generic")


def counted(monkeypatch) -> list:
    """The calls of `shared_prefix.cascade` from now on (one per attention layer of a shared forward)."""
    calls: list = []
    real = sp.cascade
    monkeypatch.setattr(sp, "cascade", lambda *a, **k: calls.append(1) or real(*a, **k))
    return calls


def shared_equals_copied_and_naive(eng, frames, calls: list):
    """`eng`'s scores with the shared path (which must run: `calls`) == the copying path's == one forward per
    caption's, to 1e-5 (float32); returns them."""
    shared = eng.score(frames, CAPTIONS, SPEC)
    assert calls and sp.refused(eng.model) is None
    with sp.off():
        copied = eng.score(frames, CAPTIONS, SPEC)
    np.testing.assert_allclose(shared, copied, rtol=0, atol=1e-5)
    np.testing.assert_allclose(shared, eng.score(frames, CAPTIONS, SPEC, naive=True), rtol=0, atol=1e-5)
    return shared


def reference(query, keys, values, rows, own_k, own_v, mask, scale):
    """SDPA over each row's item prefix copied and concatenated with its own keys (the copying path's attention)."""
    import torch

    k = torch.cat([keys[rows], own_k], 2)
    v = torch.cat([values[rows], own_v], 2)
    out = torch.nn.functional.scaled_dot_product_attention(query, k, v, attn_mask=mask, scale=scale,
                                                           enable_gqa=True)
    return out.transpose(1, 2)


@pytest.mark.parametrize("value_dim", [16, 12])
@pytest.mark.parametrize("mask_kind", ["bool", "additive"])
@pytest.mark.parametrize("fused", [True, False])
def test_cascade_equals_attention_over_the_copied_prefix(value_dim, mask_kind, fused, monkeypatch):
    """The kernel: rows of three items (two rows, one, two), grouped heads, item 1's prefix left-padded, a window that
    hides the first prefix slots from some queries and the whole prefix from one row's last query, padded own
    tokens; narrow values (latent attention) and `transformers`' additive masks (its lowest float, not -inf); PyTorch's
    fused CPU kernel and the plain tensor operations used off the CPU."""
    import torch

    if not fused:
        monkeypatch.setattr(sp, "_fused", lambda query: False)

    g = torch.Generator().manual_seed(0)
    rows = [0, 0, 1, 2, 2]
    n, heads, kv_heads, q, dim, prefix = len(rows), 4, 2, 5, 16, 9
    query = torch.randn(n, heads, q, dim, generator=g)
    keys = torch.randn(3, kv_heads, prefix, dim, generator=g)
    values = torch.randn(3, kv_heads, prefix, value_dim, generator=g)
    own_k = torch.randn(n, kv_heads, q, dim, generator=g)
    own_v = torch.randn(n, kv_heads, q, value_dim, generator=g)
    mask = torch.ones(n, 1, q, prefix + q, dtype=torch.bool)
    mask[..., prefix:] = torch.tril(torch.ones(q, q, dtype=torch.bool))
    mask[2, ..., :3] = False  # item 1: left padding
    mask[0, 0, 3:, :2] = False  # a window reaching only part of the prefix
    mask[3, 0, 4, :prefix] = False  # a query whose window holds none of it
    mask[4, 0, :, prefix + 3:] = False  # the row's padding tokens
    want = reference(query, keys, values, rows, own_k, own_v, mask, 0.3)
    if mask_kind == "additive":
        mask = torch.zeros(mask.shape).masked_fill(~mask, torch.finfo(torch.float32).min)
    entry = sp._Shared(keys, values, sp.Rows.of(rows).segments, own_k, own_v)
    got = sp.cascade(query, entry, mask, 0.3)
    assert got.shape == (n, q, heads, value_dim) and got.is_contiguous()
    torch.testing.assert_close(got, want, rtol=0, atol=2e-6)
    one = sp._Shared(keys[:1], values[:1], [(0, 0, 2)], own_k[:2], own_v[:2])  # one item: its rows alone
    torch.testing.assert_close(sp.cascade(query[:2], one, mask[:2], 0.3), want[:2], rtol=0, atol=2e-6)


def test_cascade_can_fail():
    """The comparison above sees a wrong prefix: rows pointed at another item's prefix move the output."""
    import torch

    g = torch.Generator().manual_seed(1)
    query, own_k, own_v = (torch.randn(2, 2, 3, 8, generator=g) for _ in range(3))
    keys, values = torch.randn(2, 2, 6, 8, generator=g), torch.randn(2, 2, 6, 8, generator=g)
    mask = torch.ones(2, 1, 3, 9, dtype=torch.bool)
    mask[..., 6:] = torch.tril(torch.ones(3, 3, dtype=torch.bool))
    want = reference(query, keys, values, [0, 1], own_k, own_v, mask, None)
    wrong = sp.cascade(query, sp._Shared(keys, values, [(1, 0, 1), (0, 1, 2)], own_k, own_v), mask, None)
    assert (wrong - want).abs().max() > 1e-2


@pytest.mark.parametrize("model_type", ["gemma4", pytest.param("gemma4_unified", marks=pytest.mark.slow)])
def test_long_prefix_types_share_their_prefix(model_type, frames, monkeypatch):
    """Gemma 4's caption forwards (a 512-wide full-attention head over a long prefix) run on one prefix copy, one item
    at a time and across videos: the same scores as the copying path and as one forward per caption (1e-5, float32),
    across videos as one item at a time (2e-6)."""
    eng = fresh(model_type).engine
    calls = counted(monkeypatch)
    shared_equals_copied_and_naive(eng, frames, calls)
    items = items_of(frames)
    scorer = padded_scorer(eng)
    n = len(calls)
    got = scorer.score_items(items, SPEC)
    assert len(calls) > n and max(scorer.stats.caption_rows) >= 2
    for g_, (f, c) in zip(got, items):
        np.testing.assert_allclose(g_, eng.score(f, c, SPEC), rtol=0, atol=2e-6)


def test_a_sliding_window_reaching_into_the_prefix(frames, monkeypatch):
    """Gemma 4 with a local window of 16 tokens (its sliding layers keep 15 prefix slots, and a caption's later tokens
    see none of them): the shared path reads the window from the model's own mask, equal to the copying path and to
    one forward per caption."""
    eng = fresh("gemma4").engine
    text = eng.model.config.get_text_config()
    text.sliding_window = 16
    for m in eng.model.modules():
        if getattr(m, "sliding_window", None):
            m.sliding_window = 16
    shared = shared_equals_copied_and_naive(eng, frames, counted(monkeypatch))
    with sp.off():  # the window matters: a model with the full window scores otherwise
        wide = fresh("gemma4").engine.score(frames, CAPTIONS, SPEC)
    assert np.abs(wide - shared).max() > 1e-4


@pytest.mark.parametrize("model_type", ["qwen2_vl", "llava_onevision", pytest.param("molmo2", marks=pytest.mark.slow)])
def test_any_attention_model_can_share(model_type, frames, monkeypatch):
    """The shared path is not Gemma's: forced on (no least row size) for a model with 3-D positions (Qwen2-VL) and for
    others, it equals the copying path (1e-5) and across videos equals one item (2e-6)."""
    monkeypatch.setattr(sp, "MIN_ROW_BYTES", 0)
    eng = fresh(model_type).engine
    calls = counted(monkeypatch)
    shared = eng.score(frames, CAPTIONS, SPEC)
    assert calls and sp.refused(eng.model) is None
    with sp.off():
        np.testing.assert_allclose(shared, eng.score(frames, CAPTIONS, SPEC), rtol=0, atol=1e-5)
    items = items_of(frames)
    got = padded_scorer(eng).score_items(items, SPEC)
    for g_, (f, c) in zip(got, items):
        np.testing.assert_allclose(g_, eng.score(f, c, SPEC), rtol=0, atol=2e-6)


def test_models_it_cannot_compute_keep_the_copying_path(frames, monkeypatch):
    """Where the shared path would not be exact it refuses and the copying path runs, with the same scores: Kimi-K2.5's
    latent attention (its keys are changed after the cache update), a model on "eager" attention (the function is
    never called), a cache with recurrent state (Qwen3.5's Gated DeltaNet: not shareable at all)."""
    monkeypatch.setattr(sp, "MIN_ROW_BYTES", 0)
    kimi = fresh("kimi_k25").engine
    got = kimi.score(frames, CAPTIONS, SPEC)
    assert "not its cache update's" in (sp.refused(kimi.model) or "")
    with sp.off():
        np.testing.assert_allclose(got, kimi.score(frames, CAPTIONS, SPEC), rtol=0, atol=0)
    eager = fresh("gemma4").engine
    eager.model.set_attn_implementation("eager")
    calls = counted(monkeypatch)
    got = eager.score(frames, CAPTIONS, SPEC)
    assert not calls and "eager" in (sp.refused(eager.model) or "")
    with sp.off():
        np.testing.assert_allclose(got, eager.score(frames, CAPTIONS, SPEC), rtol=0, atol=0)
    qwen35 = fresh("qwen3_5").engine
    seen = []
    real = qwen35.prefix
    monkeypatch.setattr(qwen35, "prefix", lambda *a: seen.append(real(*a)) or seen[-1])
    qwen35.score(frames, CAPTIONS, SPEC)
    assert not sp.shareable(seen[-1][0]) and not calls and sp.refused(qwen35.model) is None


def test_the_least_row_size_keeps_small_prefixes_copied(frames, monkeypatch):
    """Below `MIN_ROW_BYTES` of prefix per caption row (every verified type but Gemma 4's two, whose rows are about
    5 MB) the copying path runs: the shared one's extra kernel calls cost more there (docs/scoring-speed.md)."""
    eng = fresh("qwen2_vl").engine
    calls = counted(monkeypatch)
    eng.score(frames, CAPTIONS, SPEC)
    assert not calls and sp.refused(eng.model) is None
