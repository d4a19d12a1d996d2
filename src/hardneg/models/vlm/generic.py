"""The generic family: any `transformers` video LLM through its own processor.

For a model type with a video processor and an image-text-to-text model (`hardneg.models.vlm.support`), the
model's own processor (`AutoProcessor`) turns the project's decoded frames and their times into the model's video
inputs and into the token ids the video placeholder becomes: the processor is called on the template's *video
region* alone (the video token with the control tokens around it, e.g. Qwen's `<|vision_start|><|video_pad|>
<|vision_end|>`), with the frames and `video_metadata` built from the decoder's frame times, so whatever the
processor puts there (Qwen3-VL's `<t seconds>` timestamps before each frame, several placeholders per frame,
newline tokens) is in the ids as the processor makes them. The engine puts these ids between the text before and
after the video, each tokenised as in the whole conversation, so the sequence equals one processor call on the
whole conversation (tests/vlm/test_vlm_generic.py checks ids, and scores against a forward of the processor's
own output).

A processor output with one integer per token beyond the text's own (`mm_token_type_ids`; ERNIE 4.5 VL's
`moe_mm_token_type_ids`, which route each token to text or vision experts) is made by token id for the whole
sequence, as the processor makes it (`Generic.token_inputs`, read from the processor's output for a video).

Positions are the model's own: the prefix runs without `position_ids` (the model computes them, e.g. its
`get_rope_index`), and a model that keeps `rope_deltas` after the prefix (3-D rotary positions) has its captions
continue at their 1-D index plus that delta, as its own `generate` does. Nothing here names a model type, so a
type added in a later `transformers` works without code; a type whose checkpoints need more (a hand-written
family) has one in `families.py`, and the tests require the two to agree where both exist.

Linear attention (Gated DeltaNet layers: Qwen3.5, MiniCPM-V 4.6's Qwen3.5 language model) is computed by
`transformers`' chunked kernel (`torch_chunk_gated_delta_rule`, chunks of 64 tokens, in float32 whatever the
model's dtype) for every call of more than one token. The fast path's prefix and captions are two calls, one
forward of the whole sequence is one, so their chunks start at different tokens and the float32 sums run in a
different order: on the tiny MiniCPM-V 4.6 (8 frames, 4 captions x 3 protocols) the fast path and one forward
per caption differ by up to 1.1e-5 in a score. It is the kernel's rounding, not the cache: `transformers`' own two
kernels (chunked, recurrent) differ by 9.1e-6 on the same one-forward sequences; with the shared prefix cut at a
chunk boundary the fast path agrees with one forward to 4.8e-7; and with both run in the same kernel mode
(`same_linear_attention_kernel`: the per-token recurrent kernel that `transformers` uses for cached decoding, for
every call) to 1.5e-6 (8 frames) and 9.5e-7 (32 frames). So the tests compare the fast path with one forward per
caption in that one mode for such models (tests/vlm/test_vlm_generic.py, to 1e-5 as for every type), and with a
plain forward of the processor's output in the model's own mode.
Scoring itself keeps the model's own kernels.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any

import numpy as np

from hardneg.models.vlm.families import DEFAULT_SECONDS_PER_FRAME, Family, VideoInputs, seconds_per_frame

#: processor outputs that are the text's, not the video's (the engine makes the text's itself)
_TEXT_KEYS = ("input_ids", "attention_mask", "mm_token_type_ids", "token_type_ids")


def _per_token(key: str, value, out) -> bool:
    """Whether a processor output is one integer per token of its `input_ids` (a text-aligned output the engine must
    make for the whole sequence), not a video input."""
    ids = out.get("input_ids")
    return (key != "input_ids" and hasattr(value, "shape") and ids is not None and hasattr(ids, "shape")
            and tuple(value.shape) == tuple(ids.shape) and not value.is_floating_point()
            and not key.startswith("pixel_values"))


def video_kwargs(out, dtype, device) -> dict[str, Any]:
    """A processor output's video inputs (not the text's, not a per-token one), on `device`: pixels in `dtype`."""
    kwargs = {}
    for k, v in out.items():
        if k in _TEXT_KEYS or _per_token(k, v, out):
            continue
        if hasattr(v, "to"):
            v = v.to(device, dtype) if (v.is_floating_point() and k.startswith("pixel_values")) else v.to(device)
        kwargs[k] = v
    return kwargs


def video_region(tokenizer, template: str, video_token: str) -> str:
    """The text the chat template renders for a video: the video token and the control tokens it writes with it
    (Qwen's `<|vision_start|><|video_pad|><|vision_end|>`), found as what the template adds when a video is added to
    a message (so a turn's own markers next to the video, Cohere's `<|USER_TOKEN|>` or Molmo2's `<|im_start|>`
    after its leading placeholders, stay outside it), cut to its control tokens."""
    import re

    def render(with_video: bool) -> str:
        content = ([{"type": "video"}] if with_video else []) + [{"type": "text", "text": "HARDNEGTEXT"}]
        return tokenizer.apply_chat_template([{"role": "user", "content": content}], chat_template=template,
                                             tokenize=False, add_generation_prompt=True)

    text = render(True)
    if text.count(video_token) != 1:
        raise ValueError(f"the chat template renders the video token {video_token!r} {text.count(video_token)} times "
                         "for one video; hardneg needs exactly one")
    added = sorted({str(getattr(t, "content", t)) for t in getattr(tokenizer, "added_tokens_decoder", {}).values()}
                   - {""}, key=len, reverse=True)
    control = re.compile("|".join(map(re.escape, added))) if added else None
    if control is not None:
        def pieces(t: str) -> list[str]:  # control tokens whole, other text character by character
            out, at = [], 0
            for m in control.finditer(t):
                out += list(t[at:m.start()]) + [m.group()]
                at = m.end()
            return out + list(t[at:])

        a, b = pieces(text), pieces(render(False))
        p = 0
        while p < min(len(a), len(b)) and a[p] == b[p]:
            p += 1
        q = 0
        while q < min(len(a), len(b)) - p and a[-1 - q] == b[-1 - q]:
            q += 1
        inserted = a[p:len(a) - q]
        if inserted.count(video_token) == 1:
            # the inserted text, from its first to its last control token (a newline the template adds stays text)
            marks = [i for i, x in enumerate(inserted) if control.fullmatch(x)]
            return "".join(inserted[marks[0]:marks[-1] + 1])
    start = text.index(video_token)  # fallback: the video token and the control tokens right around it
    end = start + len(video_token)
    if control is not None:
        while True:  # extend over control tokens adjacent on the right
            m = control.match(text, end)
            if not m or m.end() == end:
                break
            end = m.end()
        while True:  # and on the left
            m = next((m for m in control.finditer(text[:start]) if m.end() == start), None)
            if m is None:
                break
            start = m.start()
    return text[start:end]


#: the rate of the frame grid `metadata` puts the decoder's times on: one index per millisecond
METADATA_GRID_FPS = 1000


def metadata(n_frames: int, timestamps) -> Any:
    """`transformers.video_utils.VideoMetadata` of frames already sampled at `timestamps` (seconds), with INTEGER
    frame indices, as a decoder gives them: the times on a millisecond grid (`fps` 1000, index = the time in ms),
    so `metadata.timestamps` are the decoder's times to the millisecond and `sampled_fps` (frames / duration) its
    rate (Qwen's default of 2 frames per second when the times are unknown).

    Why integers on a millisecond grid: processors read the indices as frame numbers. Nemotron-H Omni writes
    `int(frames_indices[i]) * int(1000 / fps) / 1000` seconds into its prompt; fractional indices (a grid at the
    sampled rate, as this function once built) were truncated there (0.00 ... 1.75 s said for frames at 0.125 ...
    1.875 s), and a native-rate grid loses its `int(1000 / fps)` remainder (41 ms a frame at 24 fps). On this grid
    both truncations are exact, so every processor's prompt says the decoder's times (docs/models.md, "Frame
    times")."""
    from transformers.video_utils import VideoMetadata

    step = seconds_per_frame(timestamps) or DEFAULT_SECONDS_PER_FRAME
    times = (np.asarray(timestamps, np.float64) if timestamps is not None and len(timestamps) == n_frames
             else (np.arange(n_frames) + 0.5) * step)
    duration = float(n_frames * step)
    return VideoMetadata(total_num_frames=max(n_frames, round(duration * METADATA_GRID_FPS)),
                         fps=float(METADATA_GRID_FPS),
                         frames_indices=[round(float(t) * METADATA_GRID_FPS) for t in times], duration=duration)


def linear_attention_modules(model) -> list:
    """The `transformers` modeling modules of `model`'s layers that compute linear attention by the gated delta
    rule in two kernels (chunked for a call of several tokens, recurrent for one): empty for other models."""
    import sys

    seen, out = set(), []
    for m in model.modules():
        mod = sys.modules.get(type(m).__module__)
        if mod is None or mod.__name__ in seen:
            continue
        seen.add(mod.__name__)
        if hasattr(mod, "torch_chunk_gated_delta_rule") and hasattr(mod, "torch_recurrent_gated_delta_rule"):
            out.append(mod)
    return out


@contextmanager
def same_linear_attention_kernel(model):
    """Within the block, every linear-attention call of `model` runs `transformers`' recurrent kernel (one token
    after another, as its cached decoding does), so a sequence split into a prefix and a continuation is summed in
    the same order as the whole sequence in one call (see the module docstring). A no-op for other models."""
    mods = linear_attention_modules(model)
    saved = [(m, m.torch_chunk_gated_delta_rule) for m in mods]
    try:
        for m in mods:
            recurrent = m.torch_recurrent_gated_delta_rule
            m.torch_chunk_gated_delta_rule = (lambda *a, chunk_size=64, _r=recurrent, **k: _r(*a, **k))
        yield bool(mods)
    finally:
        for m, f in saved:
            m.torch_chunk_gated_delta_rule = f


class Generic(Family):
    """Any video LLM through its own processor (see the module docstring)."""

    name = "generic"
    model_types: tuple[str, ...] = ()
    own_positions = True  # the model computes its positions; captions continue from its `rope_deltas`

    def __init__(self, config, settings, processor, tokenizer, template: str):
        super().__init__(config, settings)
        if "qformer_input_ids" in (getattr(processor, "model_input_names", None) or ()):
            # a Q-Former that reads the text must get the instruction alone, never the caption (LAVIS
            # `Blip2VicunaInstruct.forward`); one processor call on the conversation would give it both
            raise ValueError(f"model_type {config.model_type!r}: its processor feeds the text to a Q-Former "
                             "(qformer_input_ids); hardneg's generic path has no separate Q-Former text, so it "
                             "would read the caption too: not supported")
        self.processor = processor
        from hardneg.models.vlm.attention import install_cpu_grouped_heads, install_padded_values, narrow_values

        install_cpu_grouped_heads()  # grouped key/value heads to the CPU kernel as they are, not copied per head
        if narrow_values(config):  # latent attention's narrow values: the fused CPU kernel, not the math path
            install_padded_values()
        vid = getattr(config, "video_token_id", None)
        if vid is None:
            vid = getattr(config, "video_token_index", None)
        token = getattr(processor, "video_token", None)
        if vid is None and token is not None:
            vid = tokenizer.convert_tokens_to_ids(token)
        if vid is None:
            raise ValueError(f"model_type {config.model_type!r}: neither its config nor its processor names a video "
                             "token; it cannot take video through hardneg's generic path")
        self.video_token_id = int(vid)
        self.video_token = token or tokenizer.convert_ids_to_tokens(self.video_token_id)
        self.region = video_region(tokenizer, template, self.video_token)
        self.expand: str | None = None  # the text given to the processor for the region (None: the region itself)
        #: the user's processor keyword arguments (`--processor-kwargs`, `use_processor_kwargs`): every video call
        self.processor_kwargs: dict[str, Any] = {}
        self._media: int | None = None
        self._types: dict[int, int] | None = None
        self._token_maps: dict[str, dict[int, int]] | None = None
        self.text_prefix, self.text_prefix_ids = self._processor_prefix(tokenizer)

    def _processor_prefix(self, tokenizer) -> tuple[str, list[int]]:
        """What the processor puts before every text it is given (Molmo2's processor prepends its `bos_token` to
        any text that does not start with it; a tokenizer whose post-processor adds a BOS does the same): its ids
        and text, found by calling it on a plain text. The engine puts them once at the start of a conversation
        that does not already start with them, and they are cut from the front of the video's expansion, as in
        the processor's one call on the whole conversation."""
        plain = "HARDNEGTEXT"
        try:
            got = self.processor(text=[plain], return_tensors=None)["input_ids"][0]
        except Exception:  # a processor that takes no text alone: it adds nothing we can see
            return "", []
        got = list(got.tolist() if hasattr(got, "tolist") else got)
        want = tokenizer(plain, add_special_tokens=False)["input_ids"]
        k = next((i for i in range(len(got) - len(want) + 1) if got[i:i + len(want)] == want), None)
        if not k:
            return "", []
        lead = got[:k]
        return tokenizer.decode(lead, skip_special_tokens=False, clean_up_tokenization_spaces=False), lead

    def video_inputs(self, frames, dtype, device, timestamps=None) -> VideoInputs:
        frames = np.asarray(frames)
        if timestamps is not None and len(timestamps) != len(frames):
            raise ValueError(f"{len(timestamps)} frame timestamps for {len(frames)} frames: give one time (seconds) "
                             "per frame")
        out = self.processor(text=[self.expand or self.region], videos=[frames],
                             video_metadata=[metadata(len(frames), timestamps)], do_sample_frames=False,
                             return_tensors="pt", **self.processor_kwargs)
        ids = out["input_ids"][0].tolist()
        lead = self.text_prefix_ids
        if lead and ids[:len(lead)] == lead and not (self.expand or self.region).startswith(self.text_prefix):
            ids = ids[len(lead):]
        kwargs = video_kwargs(out, dtype, device)
        n = ids.count(self.media_token_id)
        if n == 0:
            raise ValueError(f"the processor of model_type {self.config.model_type!r} put no video token "
                             f"({self.video_token!r}) into the text for a video; it cannot take video this way")
        return VideoInputs(kwargs, n, expansion=ids)

    @property
    def media_token_id(self) -> int:
        """The token the model's vision features replace for a video: the video token, or for a model that feeds
        frames as images (InternVL: "FrameN: <img><IMG_CONTEXT>...</img>") the image token."""
        if self._media is None:
            out = self._probe()
            probe = out["input_ids"][0].tolist()
            image = getattr(self.config, "image_token_id", None)
            if image is None:
                image = getattr(self.config, "image_token_index", None)
            if self.video_token_id in probe or (image is None and not self.token_type_map()):
                self._media = self.video_token_id
            elif image is not None and image in probe:
                self._media = int(image)
            else:  # neither named token (Molmo2: "<im_patch>"): the processor's most frequent multimodal token
                marked = [t for t in probe if t in self.token_type_map()]
                self._media = max(set(marked), key=marked.count) if marked else self.video_token_id
        return self._media

    def _probe(self):
        return self.processor(text=[self.expand or self.region], videos=[np.zeros((2, 16, 16, 3), np.uint8)],
                              video_metadata=[metadata(2, None)], do_sample_frames=False, return_tensors="pt")

    def token_type_map(self) -> dict[int, int]:
        """token id -> the modality type the processor gives it in `mm_token_type_ids` (1 image, 2 video), read from
        its output for a video; empty when the processor returns no types."""
        if self._types is None:
            out = self._probe()
            types = out.get("mm_token_type_ids")
            self._types = {} if types is None else {
                int(t): int(k) for t, k in zip(out["input_ids"][0].tolist(), types[0].tolist()) if int(k) != 0}
        return self._types

    def token_input_maps(self) -> dict[str, dict[int, int]]:
        """Per-token processor outputs beyond the known text ones (ERNIE 4.5 VL's `moe_mm_token_type_ids`, which
        route each token to its text or vision experts): output name -> {token id: value}, read from the processor's
        output for a video, so the engine makes them for any sequence as the processor would (by token id)."""
        if self._token_maps is None:
            out = self._probe()
            ids = out["input_ids"][0].tolist()
            self._token_maps = {k: {int(t): int(x) for t, x in zip(ids, v[0].tolist()) if int(x) != 0}
                                for k, v in out.items() if k not in _TEXT_KEYS and _per_token(k, v, out)}
        return self._token_maps

    def token_inputs(self, ids) -> dict:
        """The per-token processor outputs (`token_input_maps`) for `ids` (a LongTensor): 0 for a token the
        processor gives none."""
        got = {}
        for k, mapping in self.token_input_maps().items():
            out = ids.new_zeros(ids.shape)
            for t, x in mapping.items():
                out[ids == t] = x
            got[k] = out
        return got

    def token_types(self, ids):
        """`mm_token_type_ids` for `ids` (a LongTensor) as the processor makes them (by token id), or None to let
        the engine use its default (video tokens 2)."""
        mapping = self.token_type_map()
        if not mapping:
            return None
        out = ids.new_zeros(ids.shape)
        for t, k in mapping.items():
            out[ids == t] = k
        return out

    def identity(self) -> dict[str, Any]:
        """What fixes the pixels, as the model's own processor makes them: its video (else image) processor's
        `image_mean` / `image_std` (Gemma 4's are 0 and 1), and `normalize: false` where it does not normalise;
        --processor-kwargs that set them win. Not the CLIP defaults the hand-written families fall back to."""
        vp = getattr(self.processor, "video_processor", None) or getattr(self.processor, "image_processor", None)

        def values(name: str):
            v = self.processor_kwargs.get(name, getattr(vp, name, None))
            return None if v is None else [float(x) for x in np.atleast_1d(np.asarray(v, np.float64))]

        got: dict[str, Any] = {"family": self.name, "mean": values("image_mean"), "std": values("image_std")}
        if self.processor_kwargs.get("do_normalize", getattr(vp, "do_normalize", None)) is False:
            got["normalize"] = False
        return {**got, **self.size_identity()}

    def size_identity(self) -> dict[str, Any]:
        vp = getattr(self.processor, "video_processor", None)
        settings = vp.to_dict() if vp is not None and hasattr(vp, "to_dict") else {}
        keep = {k: v for k, v in settings.items() if isinstance(v, (int, float, str, bool, list, dict, type(None)))}
        return {"processor": type(self.processor).__name__, "video_processor": keep, "region": self.region}


#: processor arguments hardneg sets itself for every video call: never from --processor-kwargs
RESERVED_KWARGS = ("text", "images", "videos", "video_metadata", "do_sample_frames", "return_tensors")


def use_processor_kwargs(model, kwargs: dict[str, Any]) -> None:
    """Give a video LLM's processor the user's keyword arguments (`--processor-kwargs`; `FrameSettings.processor`).

    The generic family passes them to every processor call on a video (min_pixels, max_pixels, fps, ...: whatever
    the model's processor takes). A hand-written family makes its pixels itself: it takes min_pixels / max_pixels
    (its pixel limits, as the Qwen processors read them) and refuses others. Any other model refuses them all."""
    family = getattr(getattr(model, "engine", None), "family", None)
    reserved = sorted(set(kwargs) & set(RESERVED_KWARGS))
    if reserved:
        raise ValueError(f"--processor-kwargs {reserved}: hardneg gives the processor these itself (the frames, their "
                         "times, the text); pass the processor's own settings (min_pixels, max_pixels, fps, ...)")
    if isinstance(family, Generic):
        family.processor_kwargs = dict(kwargs)
        return
    if not kwargs:
        return
    if family is None:
        raise ValueError(f"--processor-kwargs applies to video LLMs (their own processor); model "
                         f"{getattr(model, 'model_id', model)!r} has none: drop it")
    other = sorted(set(kwargs) - {"min_pixels", "max_pixels"})
    if other or not hasattr(family, "min_pixels"):
        raise ValueError(f"--processor-kwargs {other or sorted(kwargs)}: the hand-written {family.name} family makes "
                         "its pixels itself and takes only min_pixels / max_pixels (where it has pixel limits); load "
                         "the model on the generic path (its own processor) to pass other settings")
    family.min_pixels = int(kwargs.get("min_pixels", family.min_pixels))
    family.max_pixels = int(kwargs.get("max_pixels", family.max_pixels))


__all__ = ["Generic", "RESERVED_KWARGS", "use_processor_kwargs", "linear_attention_modules", "metadata", "same_linear_attention_kernel", "video_region"]
