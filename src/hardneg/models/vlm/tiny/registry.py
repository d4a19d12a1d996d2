"""The registry of tiny model types: it collects every family module's `RECORDS` (one `TinyType` per type) and
derives the views other code reads by name. No type is named here: adding one touches its family's record (and
its test), or a new family module listed in `FAMILIES`."""

from __future__ import annotations

import hardneg.models.vlm.tiny.cohere as cohere
import hardneg.models.vlm.tiny.cosmos as cosmos
import hardneg.models.vlm.tiny.dots as dots
import hardneg.models.vlm.tiny.ernie as ernie
import hardneg.models.vlm.tiny.gemma as gemma
import hardneg.models.vlm.tiny.glm as glm
import hardneg.models.vlm.tiny.hunyuan as hunyuan
import hardneg.models.vlm.tiny.internvl as internvl
import hardneg.models.vlm.tiny.kimi as kimi
import hardneg.models.vlm.tiny.lfm as lfm
import hardneg.models.vlm.tiny.llava as llava
import hardneg.models.vlm.tiny.minicpm as minicpm
import hardneg.models.vlm.tiny.minimax as minimax
import hardneg.models.vlm.tiny.molmo as molmo
import hardneg.models.vlm.tiny.muse as muse
import hardneg.models.vlm.tiny.nemotron as nemotron
import hardneg.models.vlm.tiny.perception as perception
import hardneg.models.vlm.tiny.qwen as qwen
import hardneg.models.vlm.tiny.smolvlm as smolvlm
import hardneg.models.vlm.tiny.videollama as videollama
from hardneg.models.vlm.tiny.record import PublishedTemplate, TinyType


#: the family modules, in the order `hardneg models` and `hardneg run --help` list their types
FAMILIES = (qwen, llava, internvl, glm, videollama, smolvlm, gemma, minicpm, molmo, perception, lfm, kimi, cohere,
            hunyuan, muse, ernie, dots, minimax, nemotron, cosmos)


def _collect() -> dict[str, TinyType]:
    """name -> record, refusing a name or model type given twice and anything but one default."""
    out: dict[str, TinyType] = {}
    for family in FAMILIES:
        for rec in family.RECORDS:
            if rec.name in out:
                raise RuntimeError(f"tiny type {rec.name!r} is registered twice ({family.__name__})")
            out[rec.name] = rec
    model_types = [r.model_type for r in out.values()]
    if len(set(model_types)) != len(model_types):
        raise RuntimeError("two tiny types share a transformers model type: one record per model type")
    if sum(r.default for r in out.values()) != 1:
        raise RuntimeError("exactly one tiny type is the bare `tiny-vlm` (`default=True`)")
    return out


#: every tiny type by name
TYPES: dict[str, TinyType] = _collect()
#: the bare `--model tiny-vlm`
DEFAULT: str = next(name for name, rec in TYPES.items() if rec.default)

# views, derived from the records (the names other code and tests have read since the types were tables)
ARCHITECTURES: tuple[str, ...] = tuple(TYPES)
#: the `transformers` model type of each tiny type
MODEL_TYPES: dict[str, str] = {name: rec.model_type for name, rec in TYPES.items()}
#: model type -> what its stand-in template is and where the published one was looked for (types without their
#: published template; a type is here or in `PUBLISHED`, never both)
STAND_IN_TEMPLATES: dict[str, str] = {rec.model_type: rec.stand_in() for rec in TYPES.values() if rec.stand_in()}
#: model type -> its published chat template (`hardneg.models.vlm.published`)
PUBLISHED: dict[str, PublishedTemplate] = {rec.model_type: rec.published() for rec in TYPES.values()
                                           if rec.published()}
#: each tiny type's tokenizer kind, as its real family's
TOKENIZERS: dict[str, str] = {name: rec.tokenizer for name, rec in TYPES.items()}
#: more special tokens per tiny type (added to the tokenizer as control tokens)
MORE_TOKENS: dict[str, tuple[str, ...]] = {name: rec.tokens for name, rec in TYPES.items() if rec.tokens}
#: special tokens a family's processor reads from its tokenizer by name
NAMED_TOKENS: dict[str, dict[str, str]] = {name: dict(rec.named_tokens) for name, rec in TYPES.items()
                                           if rec.named_tokens}
#: the Hub processor classes and processor arguments of the types hardneg's own families serve
HUB: dict[str, tuple] = {name: rec.hub.table_row() for name, rec in TYPES.items() if rec.hub}
#: substrings of Hub ids that name a video LLM hardneg serves (`hardneg.models.vlm.model`'s `vlm` matcher)
HUB_ID_HINTS: tuple[str, ...] = tuple(h for rec in TYPES.values() for h in rec.hub_id_hints())


def tiny_type(name: str) -> TinyType:
    """The record of tiny type `name`, or a clear error naming the types there are."""
    if name not in TYPES:
        raise ValueError(f"tiny-vlm architecture {name!r}: use one of {', '.join(TYPES)}")
    return TYPES[name]


def cli_name(name: str) -> str:
    """The `--model` name of tiny type `name`: `tiny-vlm` for the default, else `tiny-vlm:<name>`."""
    return "tiny-vlm" if tiny_type(name).default else f"tiny-vlm:{name}"


def published_template(model_type: str) -> str | None:
    """The published template's text of `model_type`, or None (no record: the type keeps its stand-in)."""
    rec = PUBLISHED.get(model_type)
    return None if rec is None else rec.text()


def template_source(model_type: str) -> dict | None:
    """Where `model_type`'s tiny template was read (`PublishedTemplate.record`), or None for a stand-in."""
    rec = PUBLISHED.get(model_type)
    return None if rec is None else rec.record()


__all__ = ["ARCHITECTURES", "DEFAULT", "FAMILIES", "HUB", "HUB_ID_HINTS", "MODEL_TYPES", "MORE_TOKENS", "NAMED_TOKENS", "PUBLISHED",
           "STAND_IN_TEMPLATES", "TOKENIZERS", "TYPES", "cli_name", "published_template", "template_source",
           "tiny_type"]
