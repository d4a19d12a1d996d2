"""Several items (videos and their captions) in each forward of a video LLM: the matrices grow, the scores do not change.

`Engine.score` runs one item at a time: its prefix (chat template, video, prompt) once, then its captions on
copies of the cache. One item of Qwen2-VL-7B's sizes is about 290 prefix tokens and 21 x 17 caption tokens, too
few rows to fill a GPU's matrix units (issue 35: about 12% of an H100's dense bf16 peak). `score_items` here
batches across items:

1. *Prefill*: the prefixes of up to `items` items, left-padded to the longest, in one forward (their videos
   through the vision tower together). Each item keeps its own positions: 0..len-1 for 1-D rotary positions,
   the model's own `get_rope_index` on the item alone for Qwen's 3-D ones, passed as `position_ids`, so the
   padding moves nothing; the attention mask hides the padding.
2. *Captions*: every item's continuations, rows of many items in one right-padded forward (as many rows as
   the free memory holds, at most `max_rows`) on the batched cache, each row's cache the row of its item (`batch_select_indices`;
   where the prefix is long, no copy: each row attends to its item's one prefix row, `hardneg.models.vlm.shared_prefix`), each
   row's positions continuing from its item's prefix length (plus its rope delta, `Engine.next_text_delta`).
3. *Readout*: `Engine.readout` per item, as in the single-item path.

Items whose video tensors cannot be stacked (LLaVA's (1, T, 3, S, S) with different T or S) go to separate
prefill groups; Qwen's flattened patches always concatenate. The generic family (any model type through its own
processor) batches its videos by one processor call per group instead, and lets a model that computes 3-D
positions compute them from the padded batch (`hardneg.models.vlm.generic_batch`).

Pipeline (issue 52): items are prepared (pixels, processor, the captions' tokens) a piece of `max_items` at a
time, the next piece on a worker thread while this one runs on the model (`hardneg.models.vlm.pipeline`: on a GPU,
or on a CPU with a core to spare); the scores of a group come back to the host in one transfer.

Memory: the number of items per prefill comes from the free memory of the device (`free_bytes`: CUDA's
`mem_get_info`, or the host's MemAvailable on the CPU) over an estimate per item (its cache, copied for its
captions, and the logits of its continuations), capped at `max_items`. An out-of-memory error halves the items
(then the caption rows) and retries: a smaller batch, never a failure, down to one item and one caption row
(a forward that does not fit even then is the single-item path's error too).

Scores equal `Engine.score` (and its naive path) for every protocol: tests/vlm/test_vlm_batch.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from hardneg.models.vlm import delta_kernels, shared_prefix

#: items per prefill when memory allows (more adds little once the matrices fill the device)
MAX_ITEMS = 16
#: caption rows per forward when memory allows
MAX_ROWS = 256
#: the share of the free memory a batch may plan to use (the rest: activations not counted, fragmentation)
MEMORY_SHARE = 0.5


def free_bytes(device: str) -> int:
    """Free memory of `device` in bytes: CUDA's free memory, else the host's available memory."""
    import torch

    if str(device).startswith("cuda") and torch.cuda.is_available():
        free, _ = torch.cuda.mem_get_info(torch.device(device))
        return int(free)
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 8 << 30  # unknown: assume a modest machine


def is_out_of_memory(exc: BaseException) -> bool:
    """torch's OutOfMemoryError, or a RuntimeError that says so (CPU allocators, older releases)."""
    import torch

    oom = getattr(torch, "OutOfMemoryError", None) or getattr(torch.cuda, "OutOfMemoryError", ())
    return isinstance(exc, oom) or (isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower())


@dataclass
class _Item:
    index: int
    video: Any  # VideoInputs
    seqs: list  # Sequence_
    start: int  # shared prefix length
    n_captions: int
    frames: Any = None  # the generic family: the frames and times, to batch the videos through its processor
    stamps: Any = None
    batched: Any = None  # the generic family: (item indices, video kwargs) of the processor call it was prepared in
    equal_lengths: bool = False  # batched only with prefixes of its own length (`generic_batch.needs_equal_lengths`)


@dataclass
class BatchStats:
    """What the last `score_items` did (tests and perf/bench_vlm.py read it)."""

    prefill_sizes: list[int] = field(default_factory=list)  # items per prefill forward that succeeded
    caption_rows: list[int] = field(default_factory=list)  # rows per caption forward that succeeded
    out_of_memory: int = 0  # forwards retried smaller after an out-of-memory error


class BatchScorer:
    """Scores many items on one `Engine` with items batched across videos (module docstring)."""

    def __init__(self, engine, max_items: int = MAX_ITEMS, memory_share: float = MEMORY_SHARE,
                 max_rows: int = MAX_ROWS, prefetch: bool | None = None):
        """prefetch: prepare the next piece of items on a worker thread (None: `pipeline.prefetch_enabled`)."""
        self.engine = engine
        self.prefetch = prefetch
        self.max_items = max(1, int(max_items))
        self.max_rows = max(1, int(max_rows))
        self.memory_share = float(memory_share)
        self.stats = BatchStats()

    # ------------------------------------------------------------------ planning

    def _kv_bytes_per_token(self) -> int:
        cfg = self.engine.model.config
        text = cfg.get_text_config() if hasattr(cfg, "get_text_config") else cfg

        def read(name, default=None):  # a per-layer attribute (Gemma 4's head_dim) refuses a global read: the default
            try:
                return getattr(text, name, default)
            except Exception:
                return default

        layers = int(read("num_hidden_layers", 1) or 1)
        heads = int(read("num_attention_heads", 1) or 1)
        kv = int(read("num_key_value_heads") or heads)
        head_dim = int(read("head_dim") or (read("hidden_size", 64) or 64) // heads)
        size = self.engine.torch.tensor([], dtype=self.engine.dtype).element_size()
        return 2 * layers * kv * head_dim * size

    def items_per_batch(self, items: list[_Item]) -> int:
        """Items per prefill that fit in `memory_share` of the free memory, at most `max_items`."""
        if not items:
            return 1
        per_token = self._kv_bytes_per_token()
        vocab = int(getattr(self.engine.model.config.get_text_config(), "vocab_size", 32000)) \
            if hasattr(self.engine.model.config, "get_text_config") else 32000
        rows = min(self.engine.caption_batch, max(len(i.seqs) for i in items))
        longest = max(max(len(s.ids) for s in i.seqs) for i in items)
        prefix = max(i.start for i in items)
        # an item's cache, its copies for a forward's caption rows, and their logits (float32)
        per_item = per_token * prefix * (1 + rows) + rows * (longest - prefix + 1) * vocab * 4
        budget = free_bytes(self.engine.device) * self.memory_share
        return int(max(1, min(self.max_items, budget // max(per_item, 1))))

    def rows_per_forward(self, group: list[_Item]) -> int:
        """Caption rows per forward: as many of the group's rows as `memory_share` of the free memory holds (each
        row a copy of its item's cache row and its logits in float32), at most `max_rows`."""
        total = sum(len(i.seqs) for i in group)
        cfg = self.engine.model.config
        vocab = int(getattr(cfg.get_text_config() if hasattr(cfg, "get_text_config") else cfg, "vocab_size", 32000))
        width = max(i.start for i in group)
        cont = max(len(s.ids) - i.start for i in group for s in i.seqs)
        per_row = self._kv_bytes_per_token() * (width + cont) + cont * vocab * 4
        fit = free_bytes(self.engine.device) * self.memory_share // max(per_row, 1)
        return int(max(1, min(total, self.max_rows, fit)))

    # ------------------------------------------------------------------ model calls

    def _positions(self, ids: list[int], video):
        """(3, L) or (L,) positions of one item's prefix, as the model gives them to the item alone."""
        torch, eng = self.engine.torch, self.engine
        if not eng.family.mrope:
            return torch.arange(len(ids), device=eng.device)
        by_rule = getattr(eng.family, "position_ids", None)  # the family's own rule, where it has one
        if by_rule is not None:
            got = by_rule(torch.tensor([ids], device=eng.device), None, video)
            if got is not None:
                return got[:, 0].to(eng.device)
        import inspect

        inner = getattr(eng.model, "model", eng.model)
        rope_index = inner.get_rope_index
        t = torch.tensor([ids], device=eng.device)
        params = inspect.signature(rope_index).parameters
        kw = {k: v for k, v in video.kwargs.items() if k in ("video_grid_thw", "second_per_grid_ts") and k in params}
        if "mm_token_type_ids" in params:
            kw["mm_token_type_ids"] = eng._token_types(t)
        with torch.inference_mode():
            positions, _ = rope_index(t, **kw)
        return positions[:, 0]  # (3, L)

    def prefill(self, group: list[_Item]):
        """One forward over the prefixes of `group`, left-padded: (cache, last logits (B, V), deltas)."""
        from hardneg.models.vlm.families import VideoInputs

        torch, eng = self.engine.torch, self.engine
        if getattr(eng.family, "own_positions", False):
            return self._prefill_generic(group)
        width = max(i.start for i in group)
        pad = eng.tok.pad_token_id if eng.tok.pad_token_id is not None else 0
        n = len(group)
        ids = torch.full((n, width), pad, dtype=torch.long)
        mask = torch.zeros((n, width), dtype=torch.long)
        mrope = eng.family.mrope
        pos = torch.ones((3, n, width) if mrope else (n, width), dtype=torch.long, device=eng.device)
        deltas = []
        for b, it in enumerate(group):
            prefix = it.seqs[0].ids[:it.start]
            off = width - it.start
            ids[b, off:] = torch.tensor(prefix)
            mask[b, off:] = 1
            p = self._positions(prefix, it.video)
            pos[..., b, off:] = p
            deltas.append(eng.next_text_delta(prefix, it.video) if mrope else None)
        keys = group[0].video.kwargs.keys()
        video = VideoInputs({k: torch.cat([it.video.kwargs[k] for it in group]) for k in keys},
                            sum(it.video.n_tokens for it in group))
        out = eng._forward(ids.to(eng.device), video, use_cache=True, attention_mask=mask.to(eng.device),
                           position_ids=pos, **eng.last_only)
        cache = out.get("cache") if "cache" in out else out.get("past_key_values")
        return cache, out.logits[:, -1], deltas, width

    def _prefill_generic(self, group: list[_Item]):
        """`prefill` for the generic family: the group's videos batched by its processor (`_collate`); positions
        the model's own (3-D, computed from the padded batch) or each row's 1-D 0..len-1; each row's rope delta
        read from the positions its language model received (`hardneg.models.vlm.generic_batch`)."""
        from hardneg.models.vlm.generic_batch import computes_3d_positions

        torch, eng = self.engine.torch, self.engine
        width = max(i.start for i in group)
        pad = eng.tok.pad_token_id if eng.tok.pad_token_id is not None else 0
        n = len(group)
        ids = torch.full((n, width), pad, dtype=torch.long)
        mask = torch.zeros((n, width), dtype=torch.long)
        pos = None if computes_3d_positions(eng.model) else torch.zeros((n, width), dtype=torch.long)
        for b, it in enumerate(group):
            off = width - it.start
            ids[b, off:] = torch.tensor(it.seqs[0].ids[:it.start])
            mask[b, off:] = 1
            if pos is not None:
                pos[b, off:] = torch.arange(it.start)
        kw = {} if pos is None else {"position_ids": pos.to(eng.device)}
        seen: dict = {}
        lm = getattr(getattr(eng.model, "model", None), "language_model", None)
        hook = None if lm is None else lm.register_forward_pre_hook(
            lambda mod, args, kwargs: seen.update(pos=kwargs.get("position_ids")), with_kwargs=True)
        try:
            out = eng._forward(ids.to(eng.device), self._collate(group), use_cache=True,
                               attention_mask=mask.to(eng.device), **kw, **eng.last_only)
        finally:
            if hook is not None:
                hook.remove()
        got = seen.get("pos")
        if got is not None and got.dim() == 3:  # (k, B, L): the next text position after each row's last token
            last = got[:, :, -1].max(0).values.to("cpu")
            deltas = [(last[b] + 1 - it.start).reshape(1) for b, it in enumerate(group)]
        else:
            deltas = [None] * n
        cache = out.get("cache") if "cache" in out else out.get("past_key_values")
        return cache, out.logits[:, -1], deltas, width

    def _collate(self, group: list[_Item]):
        """The generic family's batched video inputs of `group`: those of the processor call the items were
        prepared in when the group is exactly that call's items, else one new call on their frames."""
        from hardneg.models.vlm.families import VideoInputs
        from hardneg.models.vlm.generic_batch import processor_batch

        eng = self.engine
        indices = tuple(it.index for it in group)
        made = group[0].batched
        if made is not None and made[0] == indices:
            kwargs = made[1]
        else:
            _, kwargs = processor_batch(eng.family, [it.frames for it in group], [it.stamps for it in group],
                                        eng.dtype, eng.device)
        return VideoInputs(kwargs, sum(it.video.n_tokens for it in group))

    def captions(self, cache, width: int, group: list[_Item], rows: list[tuple[int, int]], deltas):
        """Logits (R, W, V) of the rows (item b, sequence k) on a copy of the batched `cache` of `width` slots."""
        torch, eng = self.engine.torch, self.engine
        from hardneg.models.vlm.generic_batch import select_rows

        conts = [group[b].seqs[k].ids[group[b].start:] for b, k in rows]
        n, w = len(rows), max(len(c) for c in conts)
        pad = eng.tok.pad_token_id if eng.tok.pad_token_id is not None else 0
        # made on the host in numpy (no torch call per row) and moved once
        ids = np.full((n, w), pad, dtype=np.int64)
        for r, c in enumerate(conts):
            ids[r, :len(c)] = c
        starts = np.array([group[b].start for b, _ in rows], dtype=np.int64)[:, None]
        lens = np.array([len(c) for c in conts], dtype=np.int64)[:, None]
        col = np.arange(width + w, dtype=np.int64)[None, :]
        # each row's prefix (its item's `start` slots before `width`, after the left padding) and its own tokens
        mask = (((col >= width - starts) & (col < width)) | ((col >= width) & (col < width + lens))).astype(np.int64)
        pos = starts + np.arange(w, dtype=np.int64)[None, :]
        ids, mask, pos = (torch.from_numpy(x).to(eng.device) for x in (ids, mask, pos))
        if eng.family.mrope or any(d is not None for d in deltas):  # 3-D positions: continue from each item's delta
            d = torch.stack([deltas[b].to(eng.device).reshape(-1)[0] for b, _ in rows])
            pos = (pos + d[:, None]).unsqueeze(0).expand(3, -1, -1)
        def forward(c):
            with torch.inference_mode():
                return eng.model(input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=True,
                                 **{eng.cache_arg: c})

        # each row attends to its item's one prefix row (`hardneg.models.vlm.shared_prefix`); else the layers are
        # copied, then their rows picked: the prefill's cache stays as it was (each layer's rows on its own device,
        # for a model placed over several devices)
        with delta_kernels.continuation_kernels(eng.model, w):  # a delta rule's short rows: its recurrent kernel
            out = shared_prefix.run(eng.model, cache, shared_prefix.Rows.of([b for b, _ in rows]), forward)
            if out is None:
                out = forward(select_rows(cache, torch.tensor([b for b, _ in rows]), len(group)))
        return out.logits

    # ------------------------------------------------------------------ scoring

    def _prepare(self, items, spec, first: int = 0) -> list[_Item]:
        """Items (frames, captions[, timestamps]) made ready for the model: their video inputs and token sequences;
        `first`: the index of items[0] among all the items scored."""
        eng = self.engine
        if getattr(eng.family, "own_positions", False):
            return self._prepare_generic(items, spec, first)
        out = []
        for i, it in enumerate(items):
            frames, captions = it[0], list(it[1])
            stamps = it[2] if len(it) > 2 else None
            video = eng.family.video_inputs(np.asarray(frames), eng.dtype, eng.device, timestamps=stamps)
            seqs = eng.sequences(spec, captions, video.n_tokens, video)
            out.append(_Item(first + i, video, seqs, eng.shared_prefix(seqs), len(captions)))
        return out

    def _prepare_generic(self, items, spec, first: int) -> list[_Item]:
        """`_prepare` for the generic family: the videos of one frame shape in one processor call."""
        from hardneg.models.vlm.generic_batch import needs_equal_lengths, processor_batch

        eng = self.engine
        equal = needs_equal_lengths(eng.model)
        by_shape: dict[tuple, list[int]] = {}
        for i, it in enumerate(items):
            by_shape.setdefault(np.asarray(it[0]).shape, []).append(i)
        out: list[_Item | None] = [None] * len(items)
        for members in by_shape.values():
            frames = [np.asarray(items[i][0]) for i in members]
            stamps = [items[i][2] if len(items[i]) > 2 else None for i in members]
            videos, kwargs = processor_batch(eng.family, frames, stamps, eng.dtype, eng.device)
            made = (tuple(first + i for i in members), kwargs)
            for i, f, t, video in zip(members, frames, stamps, videos):
                captions = list(items[i][1])
                seqs = eng.sequences(spec, captions, video.n_tokens, video)
                out[i] = _Item(first + i, video, seqs, eng.shared_prefix(seqs), len(captions), f, t, made, equal)
        return out  # type: ignore[return-value]

    @staticmethod
    def _stack_key(it: _Item) -> tuple:
        """Items with the same key stack into one prefill (every video tensor equal but in its first dimension;
        the generic family: frames of one shape, batched by its processor)."""
        if it.frames is not None:
            return ("frames", tuple(it.frames.shape), it.start if it.equal_lengths else None)
        return tuple((k, tuple(v.shape[1:]), str(v.dtype)) for k, v in sorted(it.video.kwargs.items()))

    def score_items(self, items: Sequence[tuple], spec) -> list[np.ndarray]:
        """Scores of each item's captions, items batched: `items` are (frames, captions) or (frames, captions,
        timestamps); the result is one (len(captions),) array per item, equal to `Engine.score` on each."""
        from hardneg.models.vlm.pipeline import prefetch_enabled, prefetched

        self.stats = BatchStats()
        results: list[np.ndarray | None] = [None] * len(items)
        self._limit = self.max_rows  # caption rows per forward, lowered for good by an out-of-memory error
        starts = range(0, len(items), self.max_items)
        pieces = [(a, list(items[a:a + self.max_items])) for a in starts]
        ready = prefetched(pieces, lambda piece: self._prepare(piece[1], spec, piece[0]),
                           self.prefetch if self.prefetch is not None else prefetch_enabled(self.engine.device))
        for prepared in ready:
            self._score_piece(prepared, spec, results)
        return results  # type: ignore[return-value]

    def _score_piece(self, prepared: list[_Item], spec, results: list) -> None:
        """Score one piece of prepared items into `results`: grouped by what stacks, in prefill groups that fit."""
        groups: dict[tuple, list[_Item]] = {}
        for it in prepared:
            groups.setdefault(self._stack_key(it), []).append(it)
        limit = self._limit
        for members in groups.values():
            size = self.items_per_batch(members)
            i = 0
            while i < len(members):
                group = members[i:i + size]
                rows = min(limit, self.rows_per_forward(group))
                try:
                    got, used = self._score_group(group, spec, rows)
                except Exception as exc:
                    if not is_out_of_memory(exc) or (size == 1 and rows == 1):
                        raise
                    self.stats.out_of_memory += 1
                    self._free()
                    if size > 1:
                        size = max(1, size // 2)
                    else:
                        limit = max(1, rows // 2)
                    continue
                if used < rows:
                    limit = used
                for it, scores in zip(group, got):
                    results[it.index] = scores
                i += len(group)
        self._limit = limit

    def _free(self) -> None:
        torch = self.engine.torch
        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    def _score_group(self, group: list[_Item], spec, rows_per_forward: int):
        """Scores of one prefill group; caption forwards of `rows_per_forward` rows, halved on out-of-memory."""
        eng, torch = self.engine, self.engine.torch
        from hardneg.models.vlm.generic_batch import rows_kept_per_item

        cache, last, deltas, width = self.prefill(group)
        self.stats.prefill_sizes.append(len(group))
        longest = max(len(s.ids) - it.start for it in group for s in it.seqs)  # a caption row's tokens
        state = rows_kept_per_item(eng.model, cache, longest)
        if state:  # a chunked delta rule (linear attention): rows in forwards of the one-item path's size
            rows_per_forward = min(rows_per_forward, eng.caption_batch)
        all_rows = [(b, k) for b, it in enumerate(group) for k in range(len(it.seqs))]
        per_row: dict[tuple[int, int], Any] = {}
        j = 0
        while j < len(all_rows):
            chunk = all_rows[j:j + rows_per_forward]
            if state:
                chunk = whole_items(chunk, [len(it.seqs) for it in group])
            try:
                logits = self.captions(cache, width, group, chunk, deltas)
            except Exception as exc:
                if not is_out_of_memory(exc) or rows_per_forward == 1:
                    raise
                self.stats.out_of_memory += 1
                self._free()
                rows_per_forward = max(1, rows_per_forward // 2)
                continue
            self.stats.caption_rows.append(len(chunk))
            for r, key in enumerate(chunk):
                per_row[key] = logits[r]
            j += len(chunk)
        scores = []
        for b, it in enumerate(group):
            width_b = max(len(s.ids) - it.start for s in it.seqs)
            mine = [per_row[(b, k)][:width_b] for k in range(len(it.seqs))]
            if any(lg.shape[0] < width_b for lg in mine):  # a chunk narrower than the item's widest row
                mine = [lg if lg.shape[0] == width_b else
                        torch.cat([lg, lg.new_zeros((width_b - lg.shape[0], lg.shape[1]))], 0) for lg in mine]
            body = torch.stack(mine)  # (K, width_b, V): one copy per item, not one per row
            rows = torch.cat([last[b:b + 1].to(body.dtype)[:, None].expand(len(mine), 1, -1), body], 1)
            scores.append(eng.readout_tensor(spec, it.seqs, rows, it.start - 1, it.n_captions))
        host = torch.cat(scores).double().cpu().numpy()  # the group's scores in one transfer
        cuts = np.cumsum([len(s) for s in scores])[:-1]
        return [np.asarray(x, np.float64) for x in np.split(host, cuts)], rows_per_forward


def whole_items(chunk: list[tuple[int, int]], sizes: list[int]) -> list[tuple[int, int]]:
    """`chunk` (rows (item b, sequence k) in order; item b has sizes[b] rows) cut after the last item it holds whole, or kept as it is when
    it holds no item whole. For a model with recurrent state (`generic_batch.has_state_layers`) the chunked
    linear-attention kernels cost in proportion to the rows (each row's continuation padded to a 64-token chunk),
    and a forward mixing the tail of one item with the head of the next (63 rows as 32 + 31) measured slower than
    one forward per item (the tiny Qwen3.5 and GLM-5 Next, CPU), so their caption forwards keep items whole
    (`generic_batch.rows_kept_per_item`: chunked delta rules only; Mamba-2 and short convolutions go wide)."""
    last, k = chunk[-1]
    if k == sizes[last] - 1:  # the chunk ends with an item's last row
        return chunk
    whole = [r for r in chunk if r[0] != last]
    return whole or chunk


def score_items(engine, items: Sequence[tuple], spec, max_items: int = MAX_ITEMS) -> list[np.ndarray]:
    """`BatchScorer(engine, max_items).score_items(items, spec)`."""
    return BatchScorer(engine, max_items).score_items(items, spec)


__all__ = ["BatchScorer", "BatchStats", "MAX_ITEMS", "MAX_ROWS", "free_bytes", "is_out_of_memory", "score_items", "whole_items"]
