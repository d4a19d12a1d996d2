"""Attention on the CPU through PyTorch's fused kernel, not the math path nor copied key/value heads (issue 52).

Two ways `transformers`' SDPA attention costs more than it needs on the CPU, both fixed here, neither changing what
is computed.

**Narrow values.**

Multi-head latent attention (DeepSeek-V3's, so Kimi-K2.5, HY-V4-VL, dots3-note) has values narrower than its
queries and keys (Kimi-K2.5's tiny model: 12 query/key dimensions, 8 value dimensions). On the CPU,
`torch.nn.functional.scaled_dot_product_attention` runs its fused flash kernel only when the value's last
dimension equals the query's; otherwise it falls back to the math path, which materialises the scores and runs a
"safe" softmax (`all(isneginf)` and `where` over every score). On the tiny Kimi-K2.5 that fallback was the largest
cost of a caption forward, and more so for many rows at once (63 caption rows 6.9 ms a layer, three forwards of
21 rows 2.0 ms each; with the values padded 1.6 ms for the 63 rows).

`install_padded_values` overrides `transformers`' "sdpa" attention function (its documented
`AttentionInterface.register`) with one that pads the values with zero columns to the query's width on the CPU,
runs the fused kernel, and drops the padded columns of the output. The zero columns add nothing to the other
columns (each output column is a weighted sum of its own value column), so the result is the same attention, to
float rounding (the fused kernel sums in another order: the tiny Kimi-K2.5's scores move by up to 1.9e-6). Every
other call (values as wide as the queries, any device but the CPU) goes to `transformers`' own function unchanged.
It is installed only when a loaded model has narrow values (`narrow_values`), once per process.

**Copied key/value heads.** With grouped-query attention (fewer key/value heads than query heads) and an
attention mask, `transformers` copies every key/value head for its query heads (`repeat_kv`) before SDPA, since
CUDA's fused kernels take grouped heads only without a mask (`use_gqa_in_sdpa`). PyTorch's CPU kernel takes them
with a mask too (`enable_gqa`). The copies are of the whole cache, once per layer and caption forward: on the tiny
Gemma 4 (head dimension 512 in its full-attention layer, a 608-token prefix) 223 of a 21-row caption forward's
637 ms (torch profiler), and SDPA with `enable_gqa` took 56 ms against 214 ms for `repeat_kv` and SDPA on its
shapes, the same output to the bit. `install_cpu_grouped_heads` makes `transformers` pass `enable_gqa` for
tensors on the CPU (its `use_gqa_in_sdpa`, once per process, for every generic model).
"""

from __future__ import annotations

import threading

_LOCK = threading.Lock()
_INSTALLED: list = []  # the function it wraps, once installed


def narrow_values(config) -> bool:
    """Whether the model's text config gives its attention values narrower than its queries and keys (multi-head
    latent attention: `v_head_dim` < `qk_nope_head_dim` + `qk_rope_head_dim`)."""
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    v = getattr(text, "v_head_dim", None)
    qk = getattr(text, "qk_head_dim", None) or ((getattr(text, "qk_nope_head_dim", None) or 0)
                                                 + (getattr(text, "qk_rope_head_dim", None) or 0))
    return bool(v) and bool(qk) and int(v) < int(qk)


def padded_values(inner):
    """`inner` (an attention function of `transformers`' interface) with narrow values padded on the CPU (module
    docstring)."""
    import torch

    def sdpa_padded_values(module, query, key, value, attention_mask, *args, **kwargs):
        width, narrow = query.shape[-1], value.shape[-1]
        if narrow >= width or query.device.type != "cpu":
            return inner(module, query, key, value, attention_mask, *args, **kwargs)
        wide = torch.nn.functional.pad(value, (0, width - narrow))
        out, weights = inner(module, query, key, wide, attention_mask, *args, **kwargs)
        return out[..., :narrow].contiguous(), weights

    sdpa_padded_values.wraps = inner
    return sdpa_padded_values


def install_padded_values() -> None:
    """Register `padded_values` of `transformers`' current "sdpa" function as "sdpa" (once per process)."""
    from transformers import AttentionInterface
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    with _LOCK:
        if _INSTALLED:
            return
        inner = ALL_ATTENTION_FUNCTIONS["sdpa"]
        AttentionInterface.register("sdpa", padded_values(inner))
        _INSTALLED.append(inner)


def cpu_grouped_heads(inner):
    """`transformers`' `use_gqa_in_sdpa` answering yes for keys on the CPU (module docstring)."""

    def use_gqa_in_sdpa(attention_mask, key, value):
        return key.device.type == "cpu" or inner(attention_mask, key, value)

    use_gqa_in_sdpa.wraps = inner
    return use_gqa_in_sdpa


def install_cpu_grouped_heads() -> None:
    """Let `transformers`' SDPA attention pass grouped key/value heads to PyTorch on the CPU (once per process)."""
    from transformers.integrations import sdpa_attention

    with _LOCK:
        if getattr(sdpa_attention.use_gqa_in_sdpa, "wraps", None) is None:
            sdpa_attention.use_gqa_in_sdpa = cpu_grouped_heads(sdpa_attention.use_gqa_in_sdpa)


__all__ = ["cpu_grouped_heads", "install_cpu_grouped_heads", "install_padded_values", "narrow_values",
           "padded_values"]
