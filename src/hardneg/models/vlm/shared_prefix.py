"""Caption forwards that attend to ONE copy of each item's prefix, not a copy per caption row (issue 52).

A caption forward (`Engine.continuation`, one item; `BatchScorer.captions`, rows of several items) runs R caption
rows after a cached prefix. `transformers`' cache gives each row its own copy of its item's prefix keys and values:
the cache is repeated (`batch_repeat_interleave`) or its rows picked (`batch_select_indices`) to R rows, then each
layer's `update` concatenates every row's prefix with its own new keys, and the attention reads R copies. On the
tiny Gemma 4 (head dimension 512 in its full-attention layer, a 608-token prefix) these copies were about half of a
caption forward, and across videos they are 3x larger at once, so batching items gained nothing.

Here (cascade, or shared-prefix, attention) the caption forward runs on a cache whose attention layers keep the
prefix as it is (one row per item, never copied) and whose `update` returns only the row's own new keys and values.
The attention function (`transformers`' "sdpa", wrapped through its `AttentionInterface`) then computes, for the
rows of each item:

* the prefix part: the queries of all the item's rows and all their heads as one sequence against the item's one
  copy of the prefix keys (grouped heads need no copy: the query heads of one key/value head are more rows of
  the same product), with the model's own mask's prefix columns;
* the own part: each row's queries against its own new keys, with the mask's own columns (causal, padding);
* the two softmax parts merged by their log-sum-exps: out = o_p e^(l_p - l) + o_o e^(l_o - l), l = logaddexp(l_p,
  l_o): exactly the softmax over the concatenated keys, in another summation order.

The mask is the one the model built for the concatenated keys (the cache reports the sizes the copied cache would:
its layers are the prefix's own, only `update` differs), so whatever the model's mask does (sliding windows: how far
a local layer reaches into the prefix; Gemma 4 Unified's vision tokens; padding) applies unchanged: the first
`P` columns are the prefix's stored slots, the rest the row's own. On the CPU both parts run PyTorch's fused flash
kernel (`_scaled_dot_product_flash_attention_for_cpu`, which returns the log-sum-exp); elsewhere the same in plain
tensor operations.

Where it applies, and how it refuses. Only caches whose every layer is a plain `DynamicLayer` or
`DynamicSlidingWindowLayer` (`shareable`): a cache with recurrent state (linear attention, Mamba, short
convolutions), an indexer (DeepSeek-style sparse attention), a quantized or static layer keeps today's path. And
every attention call during a shared forward must be on keys a cache `update` just returned (checked by identity:
layers that reuse another layer's keys, Gemma 4's KV sharing, pass the same tensors), and every such update must
reach the attention function; otherwise (a model that attends outside the interface, transforms its keys after the
update, uses an attention implementation other than "sdpa", position biases, soft-capping) `NotShared` is raised,
the forward's output is discarded, and the caller runs today's path for that model from then on (`run`).
"""

from __future__ import annotations

import copy
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

_LOCK = threading.Lock()
_LOCAL = threading.local()  # .active: {id(own keys): _Shared} during a shared forward on this thread
_REFUSED: "weakref.WeakKeyDictionary[Any, str]" = weakref.WeakKeyDictionary()  # model -> why it fell back


class NotShared(RuntimeError):
    """A shared-prefix forward met something it cannot compute exactly (module docstring); the caller falls back."""


@dataclass
class _Shared:
    """One layer's update in a shared forward: its prefix (one row per item) and the rows' own new keys/values."""

    keys: Any  # (items, kv heads, P, D) or None (an empty prefix)
    values: Any
    segments: list  # (item, first row, end row): consecutive rows of one item
    own_keys: Any  # (R, kv heads, q, D): what `update` returned
    own_values: Any
    used: int = 0


@dataclass
class Rows:
    """Which prefix row (item) each caption row reads, as runs of consecutive rows: [(item, first, end), ...]."""

    segments: list = field(default_factory=list)

    @classmethod
    def of(cls, items: list[int]) -> "Rows":
        """Runs of equal consecutive entries of `items` (the item of each caption row, in row order)."""
        segments: list = []
        for r, b in enumerate(items):
            if segments and segments[-1][0] == b:
                segments[-1][2] = r + 1
            else:
                segments.append([b, r, r + 1])
        return cls([tuple(s) for s in segments])


#: the least prefix key/value bytes per caption row (all layers) for which a shared forward is run: below it the
#: copies cost less than the shared attention's extra kernel calls per layer and item (module docstring)
MIN_ROW_BYTES = 1 << 20


def shareable(cache) -> bool:
    """Whether every layer of `cache` is a plain key/value layer this module can share, on the CPU (module
    docstring)."""
    from transformers.cache_utils import DynamicLayer, DynamicSlidingWindowLayer

    layers = getattr(cache, "layers", None)
    if not layers or any(type(layer) not in (DynamicLayer, DynamicSlidingWindowLayer) for layer in layers):
        return False
    return all(layer.keys is None or layer.keys.device.type == "cpu" for layer in layers)


def row_bytes(cache) -> int:
    """Bytes of one prefix row's keys and values over all layers of `cache`: what the copying path copies per
    caption row (twice: the repeat or pick, then each layer's concatenation)."""
    total = 0
    for layer in cache.layers:
        for t in (layer.keys, layer.values):
            if t is not None and t.dim() > 0 and t.shape[0]:
                total += t[:1].numel() * t.element_size()
    return total


def shared_cache(cache, rows: Rows):
    """A view of `cache` for a shared forward: the same layers (no tensor copied; the prefix cache is left as it
    was) whose `update` returns the rows' own keys and values and records the layer's prefix for the attention."""
    c = copy.copy(cache)
    c.layers = [copy.copy(layer) for layer in cache.layers]
    for layer in c.layers:
        layer.update = _updater(layer, rows)
    return c


def _updater(layer, rows: Rows) -> Callable:
    def update(key_states, value_states, *args, **kwargs):
        active = getattr(_LOCAL, "active", None)
        if active is None:
            raise NotShared("a shared-prefix cache was updated outside `sharing`")
        has = layer.is_initialized and layer.keys is not None and layer.keys.numel() > 0
        active[id(key_states)] = _Shared(layer.keys if has else None, layer.values if has else None, rows.segments,
                                         key_states, value_states)
        return key_states, value_states

    return update


def _visible(mask):
    """Which entries of a mask let a query see a key: a bool mask itself; an additive one where it is not -inf or
    the dtype's lowest value (`transformers`' eager masks)."""
    import torch

    if mask.dtype == torch.bool:
        return mask
    return mask > torch.finfo(mask.dtype).min / 2


def _fused(query) -> bool:
    """Whether PyTorch's fused CPU flash kernel takes `query` (it returns the log-sum-exp `cascade` merges by)."""
    import torch

    return query.device.type == "cpu" and query.dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16)


def _attend(query, key, value, mask, scale):
    """(out, log-sum-exp) of attention (B, H, L, D) over keys (B, H_kv, S, D), strides as they come; `mask`
    additive, broadcast over batch and heads, or None. PyTorch's fused flash kernel on the CPU; plain tensor
    operations elsewhere. The log-sum-exp of a query that sees no key is not meaningful here (`cascade` marks it)."""
    import torch

    width, narrow = query.shape[-1], value.shape[-1]
    acc = torch.float64 if query.dtype == torch.float64 else torch.float32  # the log-sum-exps' precision
    if _fused(query):
        v = value if narrow == width else torch.nn.functional.pad(value, (0, width - narrow))  # same head size
        m = None if mask is None else mask.to(query.dtype)
        out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(query, key, v, 0.0, False,
                                                                               attn_mask=m, scale=scale)
        return (out if narrow == width else out[..., :narrow]), lse.to(acc)
    groups = query.shape[1] // key.shape[1]
    k = key.repeat_interleave(groups, 1) if groups > 1 else key
    v = value.repeat_interleave(groups, 1) if groups > 1 else value
    s = (query.to(acc) @ k.to(acc).transpose(-1, -2)) * (scale if scale is not None else width ** -0.5)
    if mask is not None:
        s = s + mask.to(acc)
    lse = torch.logsumexp(s, -1)
    p = torch.exp(s - lse.masked_fill(torch.isinf(lse), 0)[..., None])
    return (p @ v.to(acc)).to(query.dtype), lse


def _float_mask(mask, dtype):
    """`mask` as the additive mask the kernel takes: a bool one as 0 / -inf, an additive one as it is."""
    import torch

    if mask.dtype != torch.bool:
        return mask
    return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill_(~mask, float("-inf"))


def cascade(query, entry: _Shared, mask, scale):
    """Attention of `query` (R, H, q, D) over each row's item prefix and its own keys (module docstring): (R, q, H,
    Dv), as `transformers`' attention functions return it. `mask`: the model's (R or 1, 1, q, P + q) mask (bool, or
    additive) or None (q == 1: every key visible)."""
    import torch

    n, heads, q, dim = query.shape
    own_k, own_v = entry.own_keys, entry.own_values
    kv_heads = own_k.shape[1]
    groups = heads // kv_heads
    prefix = 0 if entry.keys is None else entry.keys.shape[-2]
    if mask is None and q > 1:
        raise NotShared("no attention mask for a caption forward of several tokens")
    if mask is not None:
        if mask.dim() != 4 or mask.shape[1] != 1 or mask.shape[-1] != prefix + q:
            raise NotShared(f"an attention mask of shape {tuple(mask.shape)} for {prefix} prefix and {q} own keys")
        mask = mask.expand(n, 1, q, prefix + q)
    # the own part: every row against its own new keys (the fused kernel takes grouped heads as they are)
    own_mask = None if mask is None else mask[..., prefix:]
    out_o, lse_o = _attend(query, own_k, own_v, None if own_mask is None else _float_mask(own_mask, query.dtype),
                           scale)
    out_o, lse_o = out_o.transpose(1, 2), lse_o.transpose(1, 2)  # (R, q, H, Dv), (R, q, H)
    if own_mask is not None:
        lse_o = lse_o.masked_fill(~_visible(own_mask).any(-1).transpose(1, 2), float("-inf"))
    if prefix == 0:
        return out_o.contiguous()
    # the prefix part, per item: its rows' queries (R, q, H_kv, G, D) seen as G batches of H_kv heads over k*q
    # query rows (a view, no copy), against the item's one prefix copy broadcast over the G batches
    rows_first = query.transpose(1, 2)
    if not rows_first.is_contiguous():
        rows_first = rows_first.contiguous()
    rows_first = rows_first.view(n, q, kv_heads, groups, dim)
    out = None if len(entry.segments) == 1 else torch.empty(out_o.shape, dtype=out_o.dtype, device=out_o.device)
    for item, a, b in entry.segments:
        k = b - a
        qp = rows_first[a:b].permute(3, 2, 0, 1, 4).reshape(groups, kv_heads, k * q, dim)
        keys, values = entry.keys[item:item + 1], entry.values[item:item + 1]
        pm, blind = None, None
        if mask is not None:
            cols = mask[a:b, 0, :, :prefix]  # (k, q, P)
            seen = _visible(cols)
            slots = seen.any(1).any(0)  # prefix slots any of these rows sees
            first = int(slots.nonzero()[0]) if bool(slots.any()) else prefix
            if first > 0:  # the left padding of a shorter item (across videos), or outside every row's window
                keys, values, cols, seen = keys[..., first:, :], values[..., first:, :], cols[..., first:], seen[..., first:]
            if cols.dtype != torch.bool or not bool(seen.all()):  # all visible (the usual case): no mask
                pm = _float_mask(cols, query.dtype).reshape(1, 1, k * q, cols.shape[-1])
                blind = ~seen.any(-1)  # (k, q)
        if keys.shape[-2] == 0:
            o_p = torch.zeros_like(out_o[a:b])
            lse_p = torch.full(lse_o[a:b].shape, float("-inf"), device=lse_o.device)
        else:
            expand = (groups, kv_heads) + tuple(keys.shape[2:])
            o, lse = _attend(qp, keys.expand(expand), values.expand(expand[:3] + values.shape[3:]), pm, scale)
            # (G, H_kv, k*q, Dv) -> (k, q, H, Dv): the fused kernel's output is laid out so already (else a copy)
            o_p = o.permute(2, 1, 0, 3).reshape(k, q, heads, o.shape[-1])
            lse_p = lse.permute(2, 1, 0).reshape(k, q, heads)
            if blind is not None and bool(blind.any()):
                lse_p = lse_p.masked_fill(blind[..., None], float("-inf"))
        # the softmax over both parts: out = o_p + (o_o - o_p) * e^(l_o) / (e^(l_p) + e^(l_o))
        lo = lse_o[a:b]
        w = torch.sigmoid(lo - lse_p)
        both_blind = torch.isinf(lse_p) & torch.isinf(lo)
        if bool(both_blind.any()):  # sees no key at all (as SDPA: zeros)
            w = w.masked_fill(both_blind, 1.0)
        w = w[..., None].to(o_p.dtype)
        if out is None:
            if o_p.is_contiguous() and o_p.dtype == query.dtype:
                return o_p.lerp_(out_o, w)
            return torch.lerp(o_p, out_o.to(o_p.dtype), w).to(query.dtype).contiguous()
        torch.lerp(o_p, out_o[a:b].to(o_p.dtype), w, out=out[a:b])
    return out


def shared_attention(inner):
    """`inner` (an attention function of `transformers`' interface) computing `cascade` for keys a shared cache's
    `update` returned during `sharing`; every other call, outside a shared forward, goes to `inner` unchanged."""

    def sdpa_shared_prefix(module, query, key, value, attention_mask, dropout=0.0, scaling=None, is_causal=None,
                           position_bias=None, **kwargs):
        active = getattr(_LOCAL, "active", None)
        if active is None:
            return inner(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling,
                         is_causal=is_causal, position_bias=position_bias, **kwargs)
        entry = active.get(id(key))
        if entry is None or entry.own_keys is not key or entry.own_values is not value:
            raise NotShared(f"attention in {type(module).__name__} on keys that are not its cache update's")
        if position_bias is not None or kwargs.get("softcap") is not None or dropout:
            raise NotShared(f"attention in {type(module).__name__} with a position bias, soft-capping or dropout")
        entry.used += 1
        return cascade(query, entry, attention_mask, scaling), None

    sdpa_shared_prefix.wraps = inner
    return sdpa_shared_prefix


def _install() -> None:
    """Make `shared_attention` the outermost "sdpa" function (again if another wrapper was registered since)."""
    from transformers import AttentionInterface
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    with _LOCK:
        current = ALL_ATTENTION_FUNCTIONS["sdpa"]
        if getattr(current, "__name__", "") != "sdpa_shared_prefix":
            AttentionInterface.register("sdpa", shared_attention(current))


class off:
    """Within `with off():` on this thread, `run` returns None (today's copying path): tests and A/B timings."""

    def __enter__(self):
        self._was = getattr(_LOCAL, "off", False)
        _LOCAL.off = True
        return self

    def __exit__(self, *exc):
        _LOCAL.off = self._was
        return False


def refused(model) -> str | None:
    """Why the shared-prefix path does not run for `model` (None: it runs, or has not been tried)."""
    return _REFUSED.get(model)


def run(model, cache, rows: Rows, forward: Callable):
    """`forward(shared cache)`'s output, the forward run with one copy of each item's prefix (module docstring); None
    where that cannot apply to `model` (the caller runs its copying path): a cache that is not `shareable`, an
    attention implementation other than "sdpa", or a `NotShared` met before (remembered per model, `refused`)."""
    if getattr(_LOCAL, "off", False) or model in _REFUSED:
        return None
    if not shareable(cache) or row_bytes(cache) < MIN_ROW_BYTES:
        return None
    impl = getattr(getattr(model, "config", None), "_attn_implementation", None)
    if impl != "sdpa":
        _REFUSED[model] = f"attention implementation {impl!r}, not 'sdpa'"
        return None
    _install()
    active: dict = {}
    _LOCAL.active = active
    try:
        out = forward(shared_cache(cache, rows))
        unused = [e for e in active.values() if not e.used]
        if unused:
            raise NotShared(f"{len(unused)} of {len(active)} cache updates never reached the attention function")
        if not active:
            raise NotShared("no cache layer was updated")
    except NotShared as exc:
        _REFUSED[model] = str(exc)
        return None
    finally:
        _LOCAL.active = None
    return out


__all__ = ["NotShared", "Rows", "cascade", "off", "refused", "row_bytes", "run", "shareable", "shared_attention", "shared_cache"]
