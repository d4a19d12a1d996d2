"""Building a tiny type's folder: random weights from a fixed seed, its tokenizer, its chat template (published or
stand-in, `template_source.json` where published) and its processor files, as a complete Hub checkpoint."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

from hardneg.models.vlm.tiny.record import TinyType
from hardneg.models.vlm.tiny.registry import DEFAULT, tiny_type
from hardneg.models.vlm.tiny.tokenizer import build_tokenizer


SEED = 1234
#: bump when the built folders change: they are rebuilt under a new cache name. 5: the folders of the types with a
#: published template (`TinyType.template`) carry it and `template_source.json`.
VERSION = "5"


def _hub_pixel_config(rec: TinyType, pre: dict, model) -> dict:
    """The pixel settings in the keys the family's image and video processors read (`HubFiles.pixels`)."""
    out = {**pre, "do_resize": True, "do_rescale": True, "rescale_factor": 1 / 255, "do_normalize": True,
           "do_convert_rgb": True}
    out.update(rec.hub.pixels(pre, model.config.vision_config))
    return out


def _write_hub_files(out: Path, rec: TinyType, pre: dict, model) -> None:
    """processor_config.json, preprocessor_config.json (image) and video_preprocessor_config.json, as a Hub
    checkpoint of the family holds them (written as JSON: `transformers` cannot build a video processor object
    without torchvision)."""
    hub = rec.hub
    pixels = _hub_pixel_config(rec, pre, model)
    files = {"processor_config.json": {"processor_class": hub.processor, **hub.extra},
             "preprocessor_config.json": {"image_processor_type": hub.image_processor,
                                          "processor_class": hub.processor, **pixels},
             "video_preprocessor_config.json": {"video_processor_type": hub.video_processor,
                                                "processor_class": hub.processor, **pixels}}
    for name, body in files.items():
        (out / name).write_text(json.dumps(body, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    cfg = json.loads((out / "tokenizer_config.json").read_text(encoding="utf-8"))
    cfg["processor_class"] = hub.processor
    (out / "tokenizer_config.json").write_text(json.dumps(cfg, indent=2) + "\n", encoding="utf-8")


def _write_template(out: Path, rec: TinyType, template: str) -> None:
    """`chat_template.jinja`, and `template_source.json` (where the published text was read) for a type that
    carries its published template."""
    (out / "chat_template.jinja").write_text(template, encoding="utf-8")
    if rec.published() is not None:
        (out / "template_source.json").write_text(json.dumps(rec.published().record(), indent=2) + "\n",
                                                  encoding="utf-8")


def build_tiny_vlm(out: str | os.PathLike, architecture: str = DEFAULT) -> Path:
    """Write a tiny random-weight video LLM of type `architecture` as a complete Hub folder (config, weights,
    tokenizer, chat template, processor / image / video processor configs)."""
    import torch

    rec = tiny_type(architecture)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tok = build_tokenizer(rec.tokenizer, rec.named_tokens, rec.tokens)
    torch.manual_seed(SEED)
    published = rec.published().text() if rec.published() is not None else None
    if rec.hub is None:  # served by the generic family: its own processor object writes its files
        model, template, processor = rec.config(tok, len(tok), copy.deepcopy(dict(rec.pixels)))
        template = published or template
        tok.chat_template = processor.chat_template = template
        processor.save_pretrained(out)
        model.eval().save_pretrained(out)
        _write_template(out, rec, template)
        return out
    model, template, pre = rec.config(tok, len(tok), copy.deepcopy(dict(rec.pixels)))
    template = published or template
    model = model.eval()
    tok.chat_template = template
    tok.save_pretrained(out)
    model.save_pretrained(out)
    _write_template(out, rec, template)
    _write_hub_files(out, rec, pre, model)
    return out


def tiny_vlm_path(architecture: str = DEFAULT) -> Path:
    """The tiny video LLM of type `architecture`, built into the user cache on first use."""
    from hardneg.resources import cache_dir, cached_folder

    return cached_folder(cache_dir() / f"tiny_vlm_v{VERSION}" / architecture,
                         lambda tmp: build_tiny_vlm(tmp, architecture))


__all__ = ["SEED", "VERSION", "build_tiny_vlm", "tiny_vlm_path"]
