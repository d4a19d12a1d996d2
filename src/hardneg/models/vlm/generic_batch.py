"""Several videos through the generic family at once (issue 52): one processor call, one prefix forward.

`BatchScorer` (`hardneg.models.vlm.batch`) batches items across videos. For a hand-written family it stacks each
item's video tensors. For the generic family (`hardneg.models.vlm.generic`) a model type's video inputs are
whatever its processor returns, and several videos are not always the concatenation of single ones (Molmo2's
`video_token_pooling` indexes into the batch's patches; Kimi-K2.5 has one grid row per chunk; SmolVLM pads the
frames of a batch). So the videos of a prefill group go through the model's own processor in ONE call, as a
user's batched `processor(text=[...], videos=[...])` would: its outputs are batched exactly as the model expects
(grids, token types, per-frame masks, index tensors). Each item's own expansion (the ids its video region becomes)
is its row of that call's `input_ids` (the processor's padding dropped, by its attention mask), the same ids as a
call on the item alone (tests/vlm/test_vlm_generic.py compares the scores).

Positions in the left-padded prefix forward: a model that computes 3-D positions itself (`get_rope_index`, which
reads the attention mask row by row) gets none and computes each row's as for the item alone; any other model gets
each row's 1-D positions 0..len-1 explicitly, so the padding moves nothing. The rope delta of each row (where
its captions continue) is read from the positions its language model received, as the single-item path does.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from hardneg.models.vlm.delta_kernels import CHUNKED_DELTA, modeling_modules, recurrent_for
from hardneg.models.vlm.families import VideoInputs


def computes_3d_positions(model) -> bool:
    """Whether the model computes 3-D rotary positions itself from the ids and the video grids (`get_rope_index`):
    then a left-padded batch gets no `position_ids` (the model reads the attention mask), else explicit 1-D ones."""
    inner = getattr(model, "model", model)
    return callable(getattr(inner, "get_rope_index", None))


def processor_batch(family, frames: Sequence[np.ndarray], stamps: Sequence[Any], dtype, device
                    ) -> tuple[list[VideoInputs], dict[str, Any]]:
    """The generic family's video inputs of several videos from one call of the model's processor: one
    `VideoInputs` per video (its expansion and token count; no tensors) and the batched video keyword arguments
    (`Generic.video_inputs` for one video: the same call, the same cuts).

    A processor that refuses several videos in one call (Nemotron-H Omni's: "Videos are only supported with a
    single prompt") is called once per video and its outputs concatenated along their first dimension."""
    frames = [np.asarray(f) for f in frames]
    for f, t in zip(frames, stamps):
        if t is not None and len(t) != len(f):
            raise ValueError(f"{len(t)} frame timestamps for {len(f)} frames: give one time (seconds) per frame")
    text = family.expand or family.region
    if len(frames) > 1 and not getattr(family, "_one_video_per_call", False):
        try:
            return _one_call(family, frames, stamps, dtype, device, text)
        except (ValueError, TypeError):  # a processor that takes one video per call (Nemotron-H Omni's)
            family._one_video_per_call = True
    if len(frames) == 1:
        return _one_call(family, frames, stamps, dtype, device, text)
    # one call per video, their outputs concatenated along the first dimension (the batch, or the patches)
    import torch

    singles = [_one_call(family, [f], [t], dtype, device, text) for f, t in zip(frames, stamps)]
    kwargs = {k: torch.cat([one[1][k] for one in singles]) for k in singles[0][1]}
    return [one[0][0] for one in singles], kwargs


def _one_call(family, frames, stamps, dtype, device, text: str) -> tuple[list[VideoInputs], dict[str, Any]]:
    """One processor call on `frames` (one text per video): the videos' `VideoInputs` and the batched kwargs."""
    from hardneg.models.vlm.generic import metadata, video_kwargs

    call = dict(text=[text] * len(frames), videos=frames,
                video_metadata=[metadata(len(f), t) for f, t in zip(frames, stamps)], do_sample_frames=False,
                return_tensors="pt", **family.processor_kwargs)  # --processor-kwargs, as one item's call takes them
    if len(frames) > 1:
        call["padding"] = True  # expansions of different lengths (different frame counts or sizes)
    out = family.processor(**call)
    rows = out["input_ids"]
    mask = out.get("attention_mask")
    lead = family.text_prefix_ids
    videos = []
    for b in range(rows.shape[0]):
        ids = rows[b][mask[b].bool()].tolist() if mask is not None else rows[b].tolist()
        if lead and ids[:len(lead)] == lead and not text.startswith(family.text_prefix):
            ids = ids[len(lead):]
        n = ids.count(family.media_token_id)
        if n == 0:
            raise ValueError(f"the processor of model_type {family.config.model_type!r} put no video token "
                             f"({family.video_token!r}) into the text for a video; it cannot take video this way")
        videos.append(VideoInputs({}, n, expansion=ids))
    return videos, video_kwargs(out, dtype, device)


def needs_equal_lengths(model) -> bool:
    """Whether left padding changes the model's output: a sparse-attention indexer that picks key blocks by
    absolute slot (MiniMax-M3-VL, DeepSeek-V4 style: `index_block_size` in the text config; transformers' own
    tests skip left padding for them: "only right-padding is equivalent"). Such a model batches only items whose
    prefixes have the same length (no padding)."""
    cfg = model.config
    text = cfg.get_text_config() if hasattr(cfg, "get_text_config") else cfg
    return getattr(text, "index_block_size", None) is not None or getattr(cfg, "index_block_size", None) is not None


def has_state_layers(cache) -> bool:
    """Whether the cache holds recurrent states (linear attention, Mamba, short convolutions: layers without
    `batch_select_indices`)."""
    return any(not hasattr(layer, "batch_select_indices") for layer in getattr(cache, "layers", None) or [])




def has_chunked_delta_rule(model) -> bool:
    """Whether a layer of `model` computes its linear attention by a chunked delta rule (a function named
    `*chunk*delta*` in the modeling module of one of its layers): Qwen3.5's Gated DeltaNet, GLM-5 Next's KDA; not
    Mamba-2's state-space scan (Nemotron-H) nor a short convolution (LFM3)."""
    return any(CHUNKED_DELTA.search(k) and callable(v) for mod in modeling_modules(model) for k, v in vars(mod).items())


def has_indexed_layers(cache) -> bool:
    """Whether the cache has a sparse-attention layer with an indexer's keys (`transformers`' `DynamicIndexedLayer`:
    GLM-5 Next's DSA), whose indexer builds a (rows, tokens, prefix) mask for every caption row."""
    return any(hasattr(layer, "update_indexer") for layer in getattr(cache, "layers", None) or [])


def rows_kept_per_item(model, cache, width: int = 1 << 30) -> bool:
    """Whether `BatchScorer` runs the caption rows of a model with recurrent state in forwards of at most the
    one-item path's `caption_batch`, each ending at an item's last row (`batch.whole_items`). A speed rule, not a
    numerical one: the scores do not depend on how rows are grouped (tests/vlm/test_vlm_generic.py mixes items'
    rows in forwards of 4), and each row's state is its item's (`select_rows`).

    For a chunked delta rule (`has_chunked_delta_rule`) whose caption rows of `width` tokens run its chunked kernel:
    its per-row intermediates ((rows, heads, 1, 64, 64, key dim)) grow with the rows (the tiny GLM-5 Next, CPU: 63
    caption rows in one forward 3.05 s, three forwards of 21 rows 2.15 s). Rows shorter than its chunk run the
    recurrent kernel (`delta_kernels.recurrent_for`) and go wide: across / one item in whole items and in one
    forward, thread time, min of 4 interleaved rounds, load 3: the tiny Qwen3.5 1.46x and 1.75x, Qwen3.5-MoE 1.28x
    and 1.66x, MiniCPM-V 4.6 1.33x and 1.53x, 4.7 1.30x and 1.46x, minicpm_ocr 1.26x and 1.47x. Except with a
    sparse-attention indexer (`has_indexed_layers`: GLM-5 Next), whose per-row masks grow with the rows: 1.09x and
    1.05x there, and in `perf/bench_vlm.py --paths` interleaved at load 3, 1.5x and 1.2x in whole items against
    1.1x and 0.9x wide. Other recurrent layers take all their rows in one forward like attention layers: the tiny
    Nemotron-H Omni (Mamba-2) across videos 75 ms one way, 66 ms the other (thread CPU time, min of 7 interleaved
    rounds), LFM3-VL (short convolutions) 44 ms and 30 ms (docs/scoring-speed.md)."""
    if not (has_state_layers(cache) and has_chunked_delta_rule(model)):
        return False
    return not recurrent_for(model, width) or has_indexed_layers(cache)


def select_rows(cache, idx, batch: int) -> Any:
    """A copy of `cache` holding rows `idx` (a LongTensor) of its batch, the original left as it was: each layer's
    own `batch_select_indices`, or for a layer without one (linear attention's conv and recurrent states, Mamba's)
    every tensor it holds whose first dimension is the batch (`batch` rows), in lists and dicts too."""
    import copy

    import torch

    c = copy.copy(cache)
    layers = getattr(cache, "layers", None)
    if not layers:
        c = copy.deepcopy(cache)
        c.batch_select_indices(idx)
        return c
    c.layers = [copy.copy(layer) for layer in layers]
    def pick(v):
        if isinstance(v, torch.Tensor) and v.dim() > 0 and v.shape[0] == batch:
            return v.index_select(0, idx.to(v.device))
        return v

    for layer in c.layers:
        keys = getattr(layer, "keys", None)
        if hasattr(layer, "batch_select_indices") and keys is not None and hasattr(keys, "device"):
            layer.batch_select_indices(idx.to(keys.device))
            continue
        for name, value in list(vars(layer).items()):
            if isinstance(value, torch.Tensor):
                setattr(layer, name, pick(value))
            elif isinstance(value, (list, tuple)) and any(isinstance(x, torch.Tensor) for x in value):
                setattr(layer, name, type(value)(pick(x) for x in value))
            elif isinstance(value, dict) and any(isinstance(x, torch.Tensor) for x in value.values()):
                setattr(layer, name, {k: pick(x) for k, x in value.items()})
    return c


__all__ = ["computes_3d_positions", "has_chunked_delta_rule", "has_indexed_layers", "has_state_layers", "needs_equal_lengths", "processor_batch", "rows_kept_per_item",
           "select_rows"]
