"""What one tiny model type is: a `TinyType` record, with the source of its chat template and, for the types a
family of hardneg serves, the Hub processor files its folder carries.

Every fact about a tiny type lives in its one record (in the family's module, `tiny/<family>.py`); the registry
(`tiny/registry.py`) collects the records and derives the views other code reads (`MODEL_TYPES`,
`STAND_IN_TEMPLATES`, ...). Adding a type touches one record and its test.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path


#: the published chat templates' texts (data: a template is part of the checkpoint, not code)
FOLDER = Path(__file__).resolve().parents[1] / "published_templates"


@dataclass(frozen=True)
class PublishedTemplate:
    """One model type's published chat template: its text file and where the text was read."""

    file: str  # in `published_templates/`
    url: str  # the source file, at `commit`
    commit: str  # 40 hex digits, or the release tag / branch the file was read at
    sha256: str  # of the text (UTF-8), checked on every read
    source: str  # what the source is, in words (the checkpoint's own file, a test that embeds it, a port)

    def text(self) -> str:
        text = (FOLDER / self.file).read_text(encoding="utf-8")
        got = hashlib.sha256(text.encode("utf-8")).hexdigest()
        if got != self.sha256:
            raise RuntimeError(f"published_templates/{self.file}: sha256 {got}, recorded {self.sha256}; the file was "
                               "changed: restore it from its source")
        return text

    def record(self) -> dict:
        """What the tiny folder's `template_source.json` and `hardneg models --json` hold."""
        return {k: v for k, v in asdict(self).items() if k != "file"}


#: where a stand-in type's published template was looked for, by default (`{}`: its transformers model type)
NO_TEST = "transformers' tests/models/{} (no chat template embedded), public code by its model type and token names"
#: the most common stand-in: ChatML with the type's own video token
CHATML = "ChatML with the type's video token"


@dataclass(frozen=True)
class StandIn:
    """A tiny type whose published chat template was not found: what its stand-in is and where the published one
    was looked for (the `search` tool's code, docs, pages and issues corpora, `find_string` over public GitHub
    files, and the named files). Its tests verify the generic path on the type's own model, processor and token
    layout under the stand-in; a real checkpoint's own template was not run. `hardneg models` and `hardneg run`
    say so."""

    layout: str  # what the stand-in template is
    also_searched: str = ""  # where else the published one was looked for, beyond `NO_TEST`
    searched: str | None = None  # the whole list of places, where `NO_TEST` does not apply

    def text(self, model_type: str) -> str:
        """The line `hardneg models` shows (`STAND_IN_TEMPLATES`)."""
        where = self.searched or NO_TEST.format(model_type) + (f", {self.also_searched}" if self.also_searched else "")
        return f"{self.layout}; searched: {where}"


@dataclass(frozen=True)
class HubFiles:
    """The processor files of a type that one of hardneg's own families serves (its folder is written as JSON:
    `transformers` cannot build a video processor object without torchvision): the classes `transformers`' auto
    classes resolve, the processor's own arguments (how many tokens a video's placeholder becomes) and how the
    pixel settings are spelt in the keys the family's image and video processors read."""

    processor: str
    image_processor: str
    video_processor: str
    extra: Mapping = field(default_factory=dict)
    #: (the builder's pixel settings, the model's vision config) -> the family's own keys
    pixels: Callable[[dict, object], dict] = lambda pre, vc: {"do_center_crop": True}

    def table_row(self) -> tuple:
        """The row of `HUB` (processor, image processor, video processor, processor arguments)."""
        return self.processor, self.image_processor, self.video_processor, dict(self.extra)


@dataclass(frozen=True)
class TinyType:
    """One tiny model type: everything the builder, `hardneg models` and the tests need to know about it."""

    name: str  # `--model tiny-vlm:<name>`
    model_type: str  # its `transformers` model type
    #: the config function: (tokenizer, vocab size, a fresh copy of `pixels`) -> (model, the builder's template, the
    #: processor object for a type the generic family serves, else the pixel settings the `hub` files carry)
    config: Callable
    #: the frame processors' settings (sizes, patch and merge sizes, mean and std), as the config function's
    #: processors take them (or, for a `hub` type, as its Hub files carry them before `HubFiles.pixels` respells them)
    pixels: Mapping
    template: PublishedTemplate | StandIn  # the folder's chat template: the published text, or a named stand-in
    tokenizer: str = "byte-bpe"  # "byte-bpe" (Qwen2-style) or "sentencepiece" (Llama / Vicuna)
    tokens: tuple[str, ...] = ()  # more special tokens (added to the tokenizer as control tokens)
    named_tokens: Mapping[str, str] | None = None  # tokens the family's processor reads from the tokenizer by name
    hub: HubFiles | None = None  # set: served by a family of hardneg (processor files written as JSON)
    default: bool = False  # the bare `--model tiny-vlm`
    #: what the published checkpoints' Hub ids hold (lower case; "{name}": the type's own name), so that
    #: `--model <hub id>` is told to be a video LLM without `vlm:` (e.g. "qwen2-vl" in Qwen/Qwen2-VL-7B-Instruct)
    hub_ids: tuple[str, ...] = ()

    def hub_id_hints(self) -> tuple[str, ...]:
        return tuple(h.replace("{name}", self.name) for h in self.hub_ids)

    def published(self) -> PublishedTemplate | None:
        return self.template if isinstance(self.template, PublishedTemplate) else None

    def stand_in(self) -> str | None:
        """What the stand-in template is and where the published one was looked for, or None."""
        return self.template.text(self.model_type) if isinstance(self.template, StandIn) else None


__all__ = ["CHATML", "FOLDER", "HubFiles", "NO_TEST", "PublishedTemplate", "StandIn", "TinyType"]
