"""`tiny-dual:<kind>`: the built-in tiny random-weight dual encoders (`hardneg.models.tiny_encoders`) by a CLI name.

Each kind (clip, siglip, siglip2, xclip, videoprism, pe_video) is a complete Hub folder built once into the user cache;
`--model tiny-dual:siglip2` loads it through `dual:` as any checkpoint of that type, offline, for tests and demos
(scores carry no meaning). `tiny-dual` alone is `tiny-dual:clip`.
"""

from __future__ import annotations

from hardneg.models.registration import register

DEFAULT_KIND = "clip"


def names() -> list[str]:
    """Every `tiny-dual:<kind>` name."""
    from hardneg.models.tiny_encoders import KINDS

    return [f"tiny-dual:{k}" for k in KINDS]


@register("tiny-dual", "built-in tiny random-weight dual encoders, one per `dual:` type: tiny-dual:clip, tiny-dual:siglip, "
          "tiny-dual:siglip2, tiny-dual:xclip, tiny-dual:videoprism, tiny-dual:pe_video (offline tests and demos)")
class TinyDualEncoder:
    """Loads `tiny_encoder_path(kind)` with `dual:`; the model's name is `hardneg/tiny-dual-<kind>`."""

    hub_model = False

    def __new__(cls, model_id: str | None = None, device: str | None = None, fp16: bool = False,
                revision: str | None = None, **kwargs):
        from hardneg.models.dual import DualEncoder
        from hardneg.models.tiny_encoders import KINDS, tiny_encoder_path

        kind = model_id or DEFAULT_KIND
        if kind not in KINDS:
            raise ValueError(f"tiny-dual:{kind}: the tiny dual encoders are {', '.join(names())}")
        model = DualEncoder(str(tiny_encoder_path(kind)), device=device, fp16=fp16, **kwargs)
        model.model_id = f"hardneg/tiny-dual-{kind}"
        return model
