"""Scoring captions with a video LLM: the video and prompt prefix once, every caption on its cached keys and values.

For one video and its captions, each protocol (`hardneg.benchmarks.base.VLM_PROTOCOLS`) builds one token
sequence per caption (one sequence for all options under "choice-letter"): the chat template's text
before the video, the video's tokens, the prompt, the caption, the rest of the template. The sequences
share a prefix (at least through the video): `score` runs it once with `use_cache=True`, then runs all
continuations in one right-padded batch on that cache (copied per row, or, where the prefix is long, attended once
by every row: `hardneg.models.vlm.shared_prefix`; a linear-attention delta rule's short rows through its recurrent
kernel: `hardneg.models.vlm.delta_kernels`), and reads each protocol's score from the logits. `score(..., naive=True)` runs every full sequence on its own instead (what a likelihood
harness does): the tests require both to agree, which is what proves the cache, the attention mask and
the positions right (Qwen2-VL's 3-D rotary positions are computed by Qwen's rule, `hardneg.models.vlm.positions`,
for every forward, and the continuation goes on from the prefix's largest position + 1).

Readouts:
* caption-likelihood: mean log-probability of the tokens that overlap the caption's characters;
* yes-probability: P(Yes) / (P(Yes) + P(No)) at the last position, the tokens being the first token of
  "Yes" and of "No" (VideoCon `training/pipeline_video/entailment_inference.py`, `get_entail`);
* choice-letter: the logit of each option's letter at the last position (TempCompass asks for
  "the best option" and reads the letter; lmms-eval `tasks/tempcompass`, `post_prompt`).
"""

from __future__ import annotations

import copy
import inspect
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from hardneg.benchmarks.base import CAPTION_SLOT, OPTIONS_SLOT, QUESTION_SLOT, VIDEO_SLOT, VLMPrompt
from hardneg.models.vlm import delta_kernels, shared_prefix
from hardneg.video import UnscorableVideo

_SENTINEL = "HARDNEGSLOT"
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass
class Rendered:
    """A prompt put into the chat template, cut at the video token and at the caption slot."""

    before_video: str
    head: str  # between the video and the caption slot
    tail: str  # after the caption slot


@dataclass
class Sequence_:
    ids: list[int]
    span: tuple[int, int]  # token positions whose log-probabilities are read (caption-likelihood)


def options_text(captions: Sequence[str]) -> str:
    """The options of one item, one line each: "A. caption"."""
    if len(captions) > len(LETTERS):
        raise ValueError(f"protocol 'choice-letter' lists at most {len(LETTERS)} options, got {len(captions)} captions; "
                         "use --protocol caption-likelihood or yes-probability for this benchmark")
    return "\n".join(f"{LETTERS[i]}. {c}" for i, c in enumerate(captions))


def repeat_cache(cache, n: int) -> None:
    """Repeat a one-row cache `n` times along the batch: each layer's own `batch_repeat_interleave`, or for a layer
    without one (transformers 5.24's `LinearAttentionLayer`: the conv and recurrent states of Qwen3.5's linear
    attention) every tensor it holds with one row, in lists and dicts too (a state slot not used yet is None there:
    Qwen4-Exp keeps three conv states per layer but one recurrent state)."""
    import torch

    def rep(v):
        return v.repeat_interleave(n, dim=0) if isinstance(v, torch.Tensor) and v.dim() > 0 and v.shape[0] == 1 else v

    def states(vals) -> bool:
        vals = list(vals)
        return any(isinstance(v, torch.Tensor) for v in vals) and all(v is None or isinstance(v, torch.Tensor)
                                                                         for v in vals)

    for layer in getattr(cache, "layers", None) or []:
        if hasattr(layer, "batch_repeat_interleave"):
            layer.batch_repeat_interleave(n)
            continue
        for name, value in list(vars(layer).items()):
            if isinstance(value, torch.Tensor):
                setattr(layer, name, rep(value))
            elif isinstance(value, (list, tuple)) and states(value):
                setattr(layer, name, type(value)(rep(v) for v in value))
            elif isinstance(value, dict) and states(value.values()):
                setattr(layer, name, {k: rep(v) for k, v in value.items()})
    if not getattr(cache, "layers", None):
        cache.batch_repeat_interleave(n)


class Engine:
    """One loaded video LLM, its tokenizer and chat template, its family (`hardneg.models.vlm.families`)."""

    def __init__(self, model, tokenizer, chat_template: str, family, video_token_id: int, device: str, dtype,
                 max_context: int, caption_batch: int = 32):
        import torch

        self.torch = torch
        self.model, self.tok, self.template, self.family = model, tokenizer, chat_template, family
        self.video_token_id, self.device, self.dtype = int(video_token_id), device, dtype
        self.video_token = tokenizer.convert_ids_to_tokens(self.video_token_id)
        # the text the template renders for the video: the video token (hand-written families), or the token with
        # its control tokens around it, which the generic family's processor expands (`hardneg.models.vlm.generic`)
        self.video_region = getattr(family, "region", None) or self.video_token
        self.max_context, self.caption_batch = int(max_context), int(caption_batch)
        params = inspect.signature(model.forward).parameters
        self.takes_token_types = "mm_token_type_ids" in params
        # transformers renamed `past_key_values` to `cache` (5.2x): pass the cache by the name this release takes
        self.cache_arg = "cache" if "cache" in params else "past_key_values"
        # the prefix needs only its last position's logits (the vocabulary projection of the rest is skipped)
        self.last_only = {"logits_to_keep": 1} if "logits_to_keep" in params else {}
        self._rendered: dict[tuple[str, str], Rendered] = {}
        import threading

        self._local = threading.local()  # per-thread scratch (`sequences`' captions tokenised at once)
        self._letter_ids: list[int] | None = None

    # ------------------------------------------------------------------ text

    def render(self, spec: VLMPrompt) -> Rendered:
        key = (spec.protocol, spec.prompt, spec.system)
        if key in self._rendered:
            return self._rendered[key]
        before, after = spec.prompt.split(VIDEO_SLOT)
        if spec.protocol == "caption-likelihood":
            after = after.rstrip()[: -len(CAPTION_SLOT)].rstrip("\n ")
            user = [p for p in ({"type": "text", "text": before} if before else None, {"type": "video"},
                                {"type": "text", "text": after} if after else None) if p]
            messages = [{"role": "user", "content": user},
                        {"role": "assistant", "content": [{"type": "text", "text": _SENTINEL}]}]
            gen = False
        else:
            slot = {"choice-letter": OPTIONS_SLOT, "generate-match": QUESTION_SLOT}.get(spec.protocol, CAPTION_SLOT)
            after = after.replace(slot, _SENTINEL)
            user = [p for p in ({"type": "text", "text": before} if before else None, {"type": "video"},
                                {"type": "text", "text": after}) if p]
            messages = [{"role": "user", "content": user}]
            gen = True
        if spec.system is not None:  # the protocol set's system turn (lmms-eval's wrapper always sends one)
            messages = [{"role": "system", "content": spec.system}, *messages]
        text = self.tok.apply_chat_template(messages, chat_template=self.template, tokenize=False,
                                            add_generation_prompt=gen)
        if text.count(self.video_region) != 1 or text.count(_SENTINEL) != 1:
            raise ValueError(f"the model's chat template did not render one video ({self.video_region!r}) and one "
                             f"caption slot for the prompt {spec.prompt[:80]!r}; check the checkpoint's chat template")
        pre, post = text.split(self.video_region)
        if _SENTINEL in pre:
            raise ValueError(f"--prompt {spec.prompt[:80]!r}: put {VIDEO_SLOT} before the caption slot")
        head, tail = post.split(_SENTINEL)
        got = Rendered(pre, head, tail)
        self._rendered[key] = got
        return got

    def _encode(self, text: str, as_text: bool = False) -> tuple[list[int], list[tuple[int, int]]]:
        """Token ids and character offsets of `text`; `as_text`: special-token strings in it are split into
        ordinary tokens (data, never control: `split_special_tokens`)."""
        kw = {"split_special_tokens": True} if as_text else {}
        enc = self.tok(text, add_special_tokens=False, return_offsets_mapping=True, **kw)
        return list(enc["input_ids"]), [tuple(o) for o in enc["offset_mapping"]]

    def _control_pattern(self):
        """A regex matching the tokenizer's added tokens (`<|im_end|>`, `<|video_pad|>`, ...): the template's
        control tokens, which the tokenizer splits out before anything else."""
        import re

        if getattr(self, "_control_re", None) is None:
            added = [t.content if hasattr(t, "content") else str(t)
                     for t in getattr(self.tok, "added_tokens_decoder", {}).values()]
            added = sorted({a for a in added if a}, key=len, reverse=True)
            self._control_re = re.compile("|".join(map(re.escape, added))) if added else None
        return self._control_re

    def _encode_after_control(self, text: str, as_text: bool = False) -> tuple[list[int], list[tuple[int, int]]]:
        """Ids and character offsets of `text` as the model's processor tokenises it: inside the whole
        conversation, right after a control token (the video's, an end-of-turn). Encoded alone, its first word
        would be the first of a call, and a Metaspace tokenizer (SentencePiece "▁": Vicuna / Llama, so
        Video-LLaVA and LLaVA-NeXT-Video) prefixes a "▁" there that the whole conversation does not have. So the
        text is encoded after an anchor (the video token) and the anchor's tokens are dropped.

        `as_text` with a control string in `text` (a hostile caption): the anchor is spelt as text too, and its
        tokens are dropped when none of them straddles the boundary (else the text is encoded alone)."""
        anchor = self.video_token
        pattern = self._control_pattern()
        hostile = as_text and pattern is not None and pattern.search(text) is not None
        kw = {"split_special_tokens": True} if hostile else {}
        enc = self.tok(anchor + text, add_special_tokens=False, return_offsets_mapping=True, **kw)
        ids, offsets = list(enc["input_ids"]), [tuple(o) for o in enc["offset_mapping"]]
        cut = len(anchor)
        if not hostile:
            if not ids or ids[0] != self.video_token_id:
                raise RuntimeError(f"the tokenizer did not keep the video token {anchor!r} whole")
            return ids[1:], [(a - cut, b - cut) for a, b in offsets[1:]]
        k = next((j for j, (a, b) in enumerate(offsets) if b > cut), len(ids))
        if k < len(ids) and offsets[k][0] >= cut:  # a clean boundary: the anchor's tokens end where the text starts
            return ids[k:], [(max(a - cut, 0), max(b - cut, 0)) for a, b in offsets[k:]]
        return self._encode(text, as_text=True)

    def encode_with_data(self, head: str, data: str, tail: str) -> tuple[list[int], tuple[int, int]]:
        """Ids of head + data + tail (the text after the video), the template's control tokens in head and tail
        parsed as control and `data` (a caption, the options, an item's question) tokenised as text: a caption
        holding `<|im_end|>` or the video placeholder spells those strings in ordinary tokens. Returns the ids and
        the positions of the tokens overlapping `data`'s characters.

        The tokenizer splits added tokens out of the text before any other step, so cutting head and tail at
        their control tokens and encoding the text between them, each piece as it follows a control token in
        the whole conversation (`_encode_after_control`), gives the ids of the processor's one call on the whole
        conversation (tests/vlm/test_vlm_reference.py); only the text segment holding the caption is encoded
        with its special-token strings split."""
        before, segment, after, a = self._cut_at_control(head, data, tail)
        b = a + len(data)
        ids_before = self._fixed_ids(before)
        pre = getattr(self._local, "segments", None)  # `sequences` tokenised every caption's segment in one call
        ids_mid, offsets = pre[segment] if pre and segment in pre else self._encode_after_control(segment, as_text=True)
        ids_after = self._fixed_ids(after)
        inside = [j for j, (s, e) in enumerate(offsets) if e > a and s < b and e > s]
        if not inside:
            raise ValueError(f"caption {data[:60]!r} gives no tokens with this tokenizer")
        special = (set(getattr(self.tok, "all_special_ids", []) or []) | {self.video_token_id}) - {self.tok.unk_token_id}
        if any(ids_mid[j] in special for j in inside):
            raise ValueError(f"caption {data[:60]!r} still tokenises to a control token of the model (one this "
                             "tokenizer does not split as text); remove it from the caption")
        start = len(ids_before)
        return ids_before + ids_mid + ids_after, (start + inside[0], start + inside[-1] + 1)

    def _cut_at_control(self, head: str, data: str, tail: str) -> tuple[str, str, str, int]:
        """head + data + tail cut at the last control token of head and the first of tail: (the template's text
        before, the segment holding `data`, the template's text after, where `data` starts in the segment)."""
        pattern = self._control_pattern()
        cut_head = max((m.end() for m in pattern.finditer(head)), default=0) if pattern else 0
        first_tail = pattern.search(tail) if pattern else None
        cut_tail = first_tail.start() if first_tail else len(tail)
        return head[:cut_head], head[cut_head:] + data + tail[:cut_tail], tail[cut_tail:], len(head) - cut_head

    def _segments_at_once(self, segments: list[str]) -> dict[str, tuple[list[int], list[tuple[int, int]]]]:
        """`_encode_after_control(segment, as_text=True)` of many caption segments, those without a control string
        in ONE tokenizer call (the same call, batched: the fast tokenizers encode a batch in parallel, and the
        Python overhead is paid once per item, not once per caption); hostile ones keep their own path."""
        pattern = self._control_pattern()
        plain = sorted({t for t in segments if pattern is None or pattern.search(t) is None})
        if not plain:
            return {}
        anchor, cut = self.video_token, len(self.video_token)
        enc = self.tok([anchor + t for t in plain], add_special_tokens=False, return_offsets_mapping=True)
        out = {}
        for t, ids, offsets in zip(plain, enc["input_ids"], enc["offset_mapping"]):
            if not ids or ids[0] != self.video_token_id:
                raise RuntimeError(f"the tokenizer did not keep the video token {anchor!r} whole")
            out[t] = (list(ids[1:]), [(a - cut, b - cut) for a, b in offsets[1:]])
        return out

    def _fixed_ids(self, text: str) -> list[int]:
        """`_encode_after_control(text)`'s ids of a piece of the template's own text (the same for every caption
        and every item): tokenised once, then remembered (issue 52: the tokenizer runs on the captions only)."""
        if not text:
            return []
        memo = self.__dict__.setdefault("_fixed_memo", {})
        got = memo.get(text)
        if got is None:
            if len(memo) > 4096:  # bounded: a protocol set per benchmark, not one entry per item
                memo.clear()
            got = memo[text] = tuple(self._encode_after_control(text)[0])
        return list(got)

    def video_ids(self, n_video: int, video=None) -> list[int]:
        """The ids the template's video region becomes: the processor's expansion (generic family), else
        `n_video` video tokens."""
        expansion = getattr(video, "expansion", None)
        if expansion is not None:
            return list(expansion)
        if getattr(self.family, "own_positions", False):
            raise ValueError("the generic family needs the video's inputs (its processor's expansion) to build ids")
        return [self.video_token_id] * n_video

    def _text_edges(self, expansion: list[int]) -> tuple[str, list[int], str]:
        """A processor's video expansion split at its first and last control token: (the plain text before them,
        the ids from the first to the last control token, the plain text after). A processor whose expansion
        begins or ends in plain text (SmolVLM: "You are provided the following series of ... frames" before the
        first frame, "\\n\\n" after the last) tokenises that text together with the conversation's text around
        the video in its one call on the whole conversation, so the engine does too (byte-level BPE merges across
        the edge: "User: " + "You" is not "User: You")."""
        control = self.__dict__.get("_control_ids")
        if control is None:  # the tokenizer's added tokens, read once (its `added_tokens_decoder` is rebuilt per read)
            control = self._control_ids = frozenset(int(i) for i in getattr(self.tok, "added_tokens_decoder", {}))
        at = [j for j, t in enumerate(expansion) if t in control]
        if not at:
            return "", list(expansion), ""
        i, k = at[0], at[-1] + 1
        decode = lambda ids: self.tok.decode(ids, clean_up_tokenization_spaces=False) if ids else ""  # noqa: E731
        return decode(expansion[:i]), list(expansion[i:k]), decode(expansion[k:])

    def sequences(self, spec: VLMPrompt, captions: Sequence[str], n_video: int, video=None) -> list[Sequence_]:
        """One token sequence per caption (one for all options under choice-letter), the video as `n_video` tokens
        (or, for the generic family, as its processor expands the video region: `video.expansion`)."""
        if not captions:
            raise ValueError("an item with no captions cannot be scored: every item needs at least one caption "
                             "(check the benchmark's 'captions' column)")
        r = self.render(spec)
        before, head = r.before_video, r.head
        middle = self.video_ids(n_video, video)
        if getattr(video, "expansion", None) is not None:
            lead_text, middle, trail_text = self._text_edges(middle)
            before, head = before + lead_text, trail_text + head
        lead = self._lead_ids(before) + middle
        texts = [options_text(captions)] if spec.protocol == "choice-letter" else list(captions)
        for text in texts:
            if not isinstance(text, str) or not text.strip():
                raise ValueError("an empty caption cannot be scored by a video LLM; every caption needs text")
        # every caption's segment tokenised in one call, read by `encode_with_data` (per thread: the prefetching
        # worker prepares the next items while this thread runs the model)
        self._local.segments = self._segments_at_once([self._cut_at_control(head, t, r.tail)[1] for t in texts])
        try:
            return self._sequences_of(texts, lead, head, r.tail, n_video)
        finally:
            self._local.segments = None

    def _sequences_of(self, texts: list[str], lead: list[int], head: str, tail: str, n_video: int) -> list[Sequence_]:
        out = []
        for text in texts:
            ids, (a, b) = self.encode_with_data(head, text, tail)
            seq = lead + ids
            if len(seq) > self.max_context:
                raise UnscorableVideo(f"caption {text[:60]!r} makes a sequence of {len(seq)} tokens (video {n_video}), longer "
                                 f"than the model's context of {self.max_context}; use fewer frames (--frames), a "
                                 "shorter prompt, or a model with a longer context")
            out.append(Sequence_(seq, (len(lead) + a, len(lead) + b)))
        return out

    def letter_ids(self) -> list[int]:
        """The token of each option letter, as the answer's first token (one token each, or an error)."""
        if self._letter_ids is None:
            ids = []
            for letter in LETTERS:
                got = self.tok.encode(letter, add_special_tokens=False)
                if len(got) != 1:
                    raise ValueError(f"the tokenizer spells the option letter {letter!r} in {len(got)} tokens; the "
                                     "choice-letter protocol needs one token per letter")
                ids.append(got[0])
            self._letter_ids = ids
        return self._letter_ids

    def yes_no_ids(self) -> tuple[int, int]:
        # VideoCon: tokenizer.encode('Yes', add_special_tokens=False)[0], and the same for 'No'
        return (self.tok.encode("Yes", add_special_tokens=False)[0], self.tok.encode("No", add_special_tokens=False)[0])

    # ------------------------------------------------------------------ model calls

    def _token_types(self, ids):
        own = getattr(self.family, "token_types", None)
        got = own(ids) if own is not None else None  # the generic family: as its processor types them
        if got is not None:
            return got
        return (ids == self.video_token_id).to(ids.dtype) * 2  # text 0, image 1, video 2 (transformers' convention)

    def _lead_ids(self, before: str) -> list[int]:
        """Ids of the conversation's text before the video, with what the model's processor puts before every text
        (the generic family's `text_prefix`, e.g. Molmo2's `<bos>`) when the template did not write it."""
        lead, _ = self._encode(before)
        prefix = getattr(self.family, "text_prefix", "")
        if prefix and not before.startswith(prefix):
            lead = list(self.family.text_prefix_ids) + lead
        return lead

    def _forward(self, ids, video, **kw):
        torch = self.torch
        extra = dict(video.kwargs) if video is not None else {}
        if video is not None and self.takes_token_types:
            extra["mm_token_type_ids"] = self._token_types(ids)
        more = getattr(self.family, "token_inputs", None)  # the generic family's other per-token processor outputs
        if video is not None and more is not None:
            extra.update(more(ids))
        if self.family.mrope and "position_ids" not in kw:  # Qwen's rule, not the installed get_rope_index
            kw["position_ids"] = self.family.position_ids(ids, kw.get("attention_mask"), video)
        with torch.inference_mode():
            return self.model(input_ids=ids, **extra, **kw)

    def prefix(self, ids: list[int], video):
        """Run the shared prefix once: (its cache, the logits of its last position, the rope delta or None)."""
        torch = self.torch
        t = torch.tensor([ids], device=self.device)
        seen: dict = {}
        hook = None
        if getattr(self.family, "own_positions", False):
            # the model computes its own positions (the generic family): read the 3-D positions its language model
            # gets, so that captions continue from the prefix's last position + 1, as in one forward of the whole
            # sequence (the installed `rope_deltas` can differ: transformers 5.24's Qwen2-VL rule, issue 32)
            lm = getattr(getattr(self.model, "model", None), "language_model", None)
            if lm is not None:
                hook = lm.register_forward_pre_hook(
                    lambda mod, args, kwargs: seen.update(pos=kwargs.get("position_ids")), with_kwargs=True)
        try:
            out = self._forward(t, video, use_cache=True, attention_mask=torch.ones_like(t), **self.last_only)
        finally:
            if hook is not None:
                hook.remove()
        if self.family.mrope:
            delta = self.next_text_delta(ids, video)
        elif seen.get("pos") is not None and seen["pos"].dim() == 3:
            delta = (seen["pos"][:, 0, -1].max() + 1 - len(ids)).reshape(1).to("cpu")
        else:
            delta = None
        cache = out.get("cache") if "cache" in out else out.get("past_key_values")  # renamed in transformers 5.2x
        return cache, out.logits[:, -1], delta

    def next_text_delta(self, ids: list[int], video):
        """(1,) offset of the 3-D position of a text token right after `ids` from its 1-D index len(ids): the
        family's rule (Qwen: largest position + 1, `hardneg.models.vlm.positions`), never the installed
        `get_rope_index`, whose 5.x versions continue text after a video from `start + max(h, w)` and ignore time."""
        return self.family.next_text_delta(ids, video)

    def continuation(self, cache, start: int, rows: list[list[int]], delta):
        """Logits of `rows` (right-padded) after a copy of `cache` holding `start` tokens: (B, L, V)."""
        torch = self.torch
        n, width = len(rows), max(len(r) for r in rows)
        pad = self.tok.pad_token_id if self.tok.pad_token_id is not None else 0
        ids = torch.full((n, width), pad, dtype=torch.long, device=self.device)
        mask = torch.zeros((n, start + width), dtype=torch.long, device=self.device)
        mask[:, :start] = 1
        for i, r in enumerate(rows):
            ids[i, :len(r)] = torch.tensor(r, device=self.device)
            mask[i, start:start + len(r)] = 1
        pos = torch.arange(start, start + width, device=self.device).unsqueeze(0).expand(n, -1)
        if self.family.mrope or delta is not None:
            d = delta.to(self.device).reshape(-1)[:1] if delta is not None else 0
            pos = (pos + d).unsqueeze(0).expand(3, -1, -1)
        def forward(c):
            with torch.inference_mode():
                return self.model(input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=True,
                                  **{self.cache_arg: c})

        # every row attends to the one prefix copy (`hardneg.models.vlm.shared_prefix`), else to a copy per row; a
        # delta rule's rows shorter than its chunk run its recurrent kernel (`hardneg.models.vlm.delta_kernels`)
        with delta_kernels.continuation_kernels(self.model, width):
            out = shared_prefix.run(self.model, cache, shared_prefix.Rows([(0, 0, n)]), forward)
            if out is None:
                c = copy.deepcopy(cache)
                if n > 1:
                    repeat_cache(c, n)
                out = forward(c)
        return out.logits

    # ------------------------------------------------------------------ scores

    def readout(self, spec: VLMPrompt, seqs: list[Sequence_], rows, base: int, n_captions: int) -> list[float]:
        """The protocol's scores of `seqs` from `rows` (B, W, V): row k of sequence i holds the logits at
        position base + k (which predict token base + k + 1). One batched gather, no loop over captions."""
        return self.readout_tensor(spec, seqs, rows, base, n_captions).double().cpu().tolist()

    def readout_tensor(self, spec: VLMPrompt, seqs: list[Sequence_], rows, base: int, n_captions: int):
        """`readout`'s scores as a float32 tensor left on the device (the caller moves many at once)."""
        torch = self.torch
        dev = rows.device
        if spec.protocol == "caption-likelihood":
            width = max(s.span[1] - s.span[0] for s in seqs)
            # the gather's indices made on the host and moved once (not one small copy per caption)
            pos_np = np.zeros((len(seqs), width), np.int64)
            target_np = np.zeros((len(seqs), width), np.int64)
            mask_np = np.zeros((len(seqs), width), bool)
            for i, s in enumerate(seqs):
                a, b = s.span
                pos_np[i, :b - a] = np.arange(a - 1 - base, b - 1 - base)
                target_np[i, :b - a] = s.ids[a:b]
                mask_np[i, :b - a] = True
            pos, target, mask = (torch.from_numpy(x).to(dev) for x in (pos_np, target_np, mask_np))
            # the positions' rows picked whole (a row copy; a gather over the vocabulary with an expanded index cost
            # 3x more on the CPU), then the targets' log-probabilities
            picked = rows[torch.arange(len(seqs), device=dev)[:, None], pos].float()
            lp = torch.log_softmax(picked, -1).gather(-1, target[..., None])[..., 0]
            # vilma-perplexity: ViLMA's denominator, the caption's tokens + 1 (run_blip2.py: the attention mask's
            # length, BLIP-2's BOS included); `score` then averages over frames and takes the perplexity
            extra = 1 if spec.normalize == "vilma-perplexity" else 0
            return (lp * mask).sum(1) / (mask.sum(1) + extra)
        last_pos = torch.tensor([len(s.ids) - 1 - base for s in seqs]).to(dev)
        last = rows[torch.arange(len(seqs), device=dev), last_pos].float()  # (B, V)
        if spec.protocol == "yes-probability":
            yes, no = self.yes_no_ids()
            p = torch.softmax(last, -1)
            return p[:, yes] / (p[:, yes] + p[:, no])
        return last[0, self.letter_ids()[:n_captions]]

    def full_batch(self, seqs: list[Sequence_], video):
        """Logits of the full sequences in one right-padded batch, the video repeated for each: (B, L, V)."""
        torch = self.torch
        n, width = len(seqs), max(len(s.ids) for s in seqs)
        pad = self.tok.pad_token_id if self.tok.pad_token_id is not None else 0
        ids = torch.full((n, width), pad, dtype=torch.long, device=self.device)
        mask = torch.zeros((n, width), dtype=torch.long, device=self.device)
        for i, s in enumerate(seqs):
            ids[i, :len(s.ids)] = torch.tensor(s.ids, device=self.device)
            mask[i, :len(s.ids)] = 1
        from hardneg.models.vlm.families import VideoInputs

        repeated = VideoInputs({k: torch.cat([v] * n) for k, v in video.kwargs.items()}, video.n_tokens)
        return self._forward(ids, repeated, attention_mask=mask).logits

    def score(self, frames, captions: Sequence[str], spec: VLMPrompt, naive: bool = False,
              full_batch: bool = False, timestamps: Sequence[float] | None = None) -> np.ndarray:
        """(len(captions),) scores of the captions for one video ((T, H, W, 3) uint8 frames).

        naive: one full forward per caption; full_batch: all full sequences in one batch (the video repeated);
        both are references for the tests and perf/bench_vlm.py, never faster. timestamps: the frames' times in
        seconds, for families whose positions are spaced by time (Qwen2.5-VL); None: the family's default."""
        captions = list(captions)
        if spec.normalize == "vilma-perplexity":
            # ViLMA run_blip2.py, main: every frame scored alone (a one-frame video), the per-frame losses
            # averaged over frames, then exp: a perplexity, negated so that higher still means a better match
            frames = np.asarray(frames)
            per = [self._score_once(frames[t:t + 1], captions, spec, naive, full_batch,
                                    None if timestamps is None else list(timestamps)[t:t + 1])
                   for t in range(len(frames))]
            return -np.exp(-np.mean(per, axis=0))
        return self._score_once(frames, captions, spec, naive, full_batch, timestamps)

    def _score_once(self, frames, captions: list[str], spec: VLMPrompt, naive: bool, full_batch: bool,
                    timestamps) -> np.ndarray:
        video = self.family.video_inputs(np.asarray(frames), self.dtype, self.device, timestamps=timestamps)
        seqs = self.sequences(spec, captions, video.n_tokens, video)
        out: list[float] = []
        if naive:
            for s in seqs:
                t = self.torch.tensor([s.ids], device=self.device)
                logits = self._forward(t, video, attention_mask=self.torch.ones_like(t)).logits
                out += self.readout(spec, [s], logits, 0, len(captions))
            return np.asarray(out, np.float64)
        if full_batch:
            for i in range(0, len(seqs), self.caption_batch):
                chunk = seqs[i:i + self.caption_batch]
                out += self.readout(spec, chunk, self.full_batch(chunk, video), 0, len(captions))
            return np.asarray(out, np.float64)
        start = self.shared_prefix(seqs)
        cache, last, delta = self.prefix(seqs[0].ids[:start], video)
        got = []  # the scores stay on the device until the item is done: one transfer per item
        for i in range(0, len(seqs), self.caption_batch):
            chunk = seqs[i:i + self.caption_batch]
            logits = self.continuation(cache, start, [s.ids[start:] for s in chunk], delta)
            rows = self.torch.cat([last[:, None].expand(len(chunk), 1, -1).to(logits.dtype), logits], 1)
            got.append(self.readout_tensor(spec, chunk, rows, start - 1, len(captions)))
        return self.torch.cat(got).double().cpu().numpy()

    def generate(self, frames, spec: VLMPrompt, question: str, timestamps=None, naive: bool = False) -> str:
        """The model's greedy answer (at most `spec.max_new_tokens` tokens, to its end-of-turn token) to the item's
        `question` (tokenised as text) with the video, decoded without special tokens (as TempCompass's
        run_qwen2_vl.py, `inference_single_video`: `batch_decode(..., skip_special_tokens=True)`).

        The prompt runs once with a cache and each new token continues it, at the family's positions; `naive`
        runs the whole sequence again for every token instead (the reference the tests compare with)."""
        torch = self.torch
        video = self.family.video_inputs(np.asarray(frames), self.dtype, self.device, timestamps=timestamps)
        r = self.render(spec)
        before, head = r.before_video, r.head
        middle = self.video_ids(video.n_tokens, video)
        if getattr(video, "expansion", None) is not None:
            lead_text, middle, trail_text = self._text_edges(middle)
            before, head = before + lead_text, trail_text + head
        lead = self._lead_ids(before)
        body, _ = self.encode_with_data(head, question, r.tail)
        ids = lead + middle + body
        if len(ids) + spec.max_new_tokens > self.max_context:
            raise UnscorableVideo(f"question {question[:60]!r} makes a sequence of {len(ids)} tokens plus an answer of up "
                             f"to {spec.max_new_tokens}, longer than the model's context of {self.max_context}; use "
                             "fewer frames (--frames)")
        eos = getattr(getattr(self.model, "generation_config", None), "eos_token_id", None)
        stop = set(eos if isinstance(eos, (list, tuple)) else [] if eos is None else [eos])
        stop |= {self.tok.eos_token_id} if self.tok.eos_token_id is not None else set()
        new: list[int] = []
        pick = self._picker(spec)
        if naive:
            for _ in range(spec.max_new_tokens):
                t = torch.tensor([ids + new], device=self.device)
                nxt = pick(self._forward(t, video, attention_mask=torch.ones_like(t)).logits[0, -1])
                if nxt in stop:
                    break
                new.append(nxt)
        else:
            cache, last, delta = self.prefix(ids, video)
            nxt = pick(last[0])
            n = len(ids)
            while nxt not in stop and len(new) < spec.max_new_tokens:
                new.append(nxt)
                if len(new) == spec.max_new_tokens:
                    break
                t = torch.tensor([[nxt]], device=self.device)
                pos = torch.tensor([[n]], device=self.device)
                if self.family.mrope or delta is not None:
                    pos = (pos + delta.to(self.device).reshape(-1)[:1]).unsqueeze(0).expand(3, -1, -1)
                mask = torch.ones((1, n + 1), dtype=torch.long, device=self.device)
                with torch.inference_mode():
                    out = self.model(input_ids=t, attention_mask=mask, position_ids=pos, use_cache=True,
                                     **{self.cache_arg: cache})
                cache = out.get("cache") if "cache" in out else out.get("past_key_values")
                nxt = pick(out.logits[0, -1])
                n += 1
        return self.tok.decode(new, skip_special_tokens=True, clean_up_tokenization_spaces=False)

    def _picker(self, spec):
        """The next token from one step's logits: the argmax (greedy), or, with `spec.temperature` > 0, a sample of
        softmax(logits / temperature) over the `top_k` most likely tokens, drawn with a CPU torch generator seeded
        by `spec.seed` afresh for every answer (so an answer does not depend on the items before it)."""
        torch = self.torch
        if not spec.temperature:
            return lambda logits: int(logits.argmax())
        gen = torch.Generator().manual_seed(int(spec.seed))

        def pick(logits):
            x = logits.float().cpu() / float(spec.temperature)
            if spec.top_k is not None and spec.top_k < x.numel():
                cut = torch.topk(x, spec.top_k).values[-1]
                x = x.masked_fill(x < cut, float("-inf"))
            return int(torch.multinomial(torch.softmax(x, -1), 1, generator=gen))

        return pick

    @staticmethod
    def shared_prefix(seqs: list[Sequence_]) -> int:
        """Tokens every sequence shares, stopping before the first scored token (and one token short of the
        shortest sequence), so every caption keeps at least one token of its own."""
        first = seqs[0].ids
        n = min(min(len(s.ids) for s in seqs) - 1, min(s.span[0] for s in seqs))
        for s in seqs[1:]:
            if s.ids[:n] == first[:n]:  # the usual case, compared in C (the loop below: ~5 ms per item in Python)
                continue
            k = 0
            while k < n and s.ids[k] == first[k]:
                k += 1
            n = k
        return n


__all__ = ["Engine", "LETTERS", "options_text"]
