"""Which `transformers` model types `dual:<id>` serves, and how it refuses the others (no adapter is imported here).

`hardneg.models.dual` (frame-mean) and `hardneg.models.dual_video` (video-native) both read these, and the registry
reads them to send a local folder of such a type to `dual:`.
"""

from __future__ import annotations

from dataclasses import dataclass

@dataclass(frozen=True)
class DualType:
    """One dual-encoder model type `dual:` serves: how it scores a video (what `hardneg models --encoders` prints and
    docs/models.md holds) and the facts the adapter reads. Each is verified by a tiny-model test against a direct
    forward (tests/vlm/test_dual_encoders.py, on `hardneg.models.tiny_encoders`). Adding a type touches its record
    here, its tiny builder and, for a video-native one, its encoder class (`hardneg.models.dual_video`)."""

    name: str  # the `transformers` model type
    path: str  # "frame-mean" (frames averaged) or "video-native" (its own video tower), in words
    frames: str  # how many frames it takes
    score: str  # what one score is
    video_native: bool = False  # its own video tower (`hardneg.models.dual_video`), not frames averaged
    max_length_padding: bool = False  # its processor pads text to the training length (model card: "max_length")


_MEAN = "any number; L2-normalised frame embeddings averaged"
_SIGMOID = "cosine (its sigmoid logit increases with it); captions padded to max_length"
TYPES: tuple[DualType, ...] = (
    DualType("clip", "frame-mean", _MEAN, "cosine"),
    DualType("siglip", "frame-mean", _MEAN, _SIGMOID, max_length_padding=True),
    DualType("siglip2", "frame-mean", _MEAN, _SIGMOID, max_length_padding=True),
    DualType("pe_video", "video-native", "any number (rotary positions over frames)", "forward's logits_video_text",
             video_native=True),
    DualType("videoprism", "video-native", "exactly vision_config.num_frames",
             "cosine: forward's video_embeds @ text_embeds.T", video_native=True),
    DualType("xclip", "video-native; X-CLIP Hub ids load the hand-written `xclip` adapter",
             "exactly vision_config.num_frames",
             "cosine after the prompt generator: forward's logits_per_video / logit_scale.exp()", video_native=True),
)

#: image-text types whose frames are averaged (checked by tiny-model tests); any other type with image and text
#: features takes the same path
FRAME_MEAN_TYPES = tuple(t.name for t in TYPES if not t.video_native)
#: video-text types with their own video tower (`hardneg.models.dual_video`)
VIDEO_NATIVE_TYPES = tuple(t.name for t in TYPES if t.video_native)
#: model types whose processor pads text to the training length (their model cards: `padding="max_length"`)
MAX_LENGTH_PADDING = tuple(t.name for t in TYPES if t.max_length_padding)
#: the dual-encoder types as `hardneg models --encoders` prints them: model type -> (path, frames, score)
ENCODERS: dict[str, tuple[str, str, str]] = {t.name: (t.path, t.frames, t.score) for t in TYPES}


def encoders_markdown_table() -> str:
    """The Markdown table of `ENCODERS` (docs/models.md, between its dual-encoders markers)."""
    lines = ["| model type | path | frames | score | verified |", "|---|---|---|---|---|"]
    lines += [f"| `{kind}` | {path} | {frames} | {score} | yes |" for kind, (path, frames, score) in ENCODERS.items()]
    return "\n".join(lines) + "\n"


def model_type_of(model_id: str, revision: str | None = None) -> str:
    """The checkpoint's `model_type` (its config.json), read without loading weights."""
    from transformers import AutoConfig

    kw = {"revision": revision} if revision else {}
    return str(AutoConfig.from_pretrained(model_id, **kw).model_type)


def refuse_without(model, model_id: str, needs: dict[str, str]) -> None:
    """ValueError naming the model type and each missing attribute (`needs`: attribute -> what it gives)."""
    missing = [f"{name} ({what})" for name, what in needs.items() if not hasattr(model, name)]
    if missing:
        raise ValueError(
            f"model {model_id} (model_type {model.config.model_type!r}) has no {' and no '.join(missing)}: `dual:` "
            f"takes a dual encoder with text features and image or video features ({', '.join(FRAME_MEAN_TYPES)}: "
            f"frames averaged; {', '.join(VIDEO_NATIVE_TYPES)}: their video towers); a video LLM loads by its id "
            "without `dual:`")


__all__ = ["DualType", "ENCODERS", "TYPES", "FRAME_MEAN_TYPES", "VIDEO_NATIVE_TYPES", "MAX_LENGTH_PADDING", "encoders_markdown_table",
           "model_type_of", "refuse_without"]


def load_checkpoint(encoder, model_id: str, device: str | None, fp16: bool, revision: str | None,
                    needs: dict[str, str]) -> None:
    """Load `model_id`'s `AutoModel` and `AutoProcessor` onto `encoder` (model, processor, tokenizer, device, dtype,
    revision), refusing a model that lacks any attribute of `needs`: the loading both dual paths share."""
    from transformers import AutoModel, AutoProcessor

    from hardneg.models.base import hub_revision, pick_device, torch_dtype

    encoder.model_id = model_id
    encoder.device = pick_device(device)
    dt = torch_dtype(encoder.device, fp16)
    encoder.dtype = str(dt).replace("torch.", "")
    kw = {"revision": revision} if revision else {}
    encoder.model = AutoModel.from_pretrained(model_id, dtype=dt, **kw).to(encoder.device).eval()
    refuse_without(encoder.model, model_id, needs)
    encoder.processor = AutoProcessor.from_pretrained(model_id, **kw)
    encoder.tokenizer = getattr(encoder.processor, "tokenizer", None)
    encoder.revision = hub_revision(model_id, revision, encoder.model)
