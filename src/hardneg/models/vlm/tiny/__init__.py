"""The built-in tiny video LLMs: random weights from a fixed seed, a tokenizer and chat template built here.

`tiny-vlm` (a Qwen2-VL), `tiny-vlm:llava-onevision`, `tiny-vlm:qwen2.5-vl`, `tiny-vlm:video-llava`,
`tiny-vlm:llava-next-video` and every other `tiny-vlm:<type>` run the whole video-LLM path offline in seconds: chat
template, tokenizer, frames -> pixels, the vision tower, 3-D rotary positions (Qwen2-VL; spaced by time in
Qwen2.5-VL), the cached prefix and all three protocols. Their scores carry no meaning. Each is built once into the
user cache (`tiny_vlm_path`); the folder is a complete Hub checkpoint (config and weights, tokenizer files, chat
template, and the family's own processor files with its patch size and pixel settings), so the Hub-id path loads it
like any other (`hardneg run --model <folder>`) and so do `AutoProcessor.from_pretrained` and the family's model
class (what lmms-eval's wrappers call; tests/vlm/test_tiny_hub.py). A type the generic family serves
(`hardneg.models.vlm.generic`) has its folder's processor files written by its own processor's `save_pretrained`.

One record per type (`record.TinyType`: its transformers model type, tokenizer kind, special and named tokens,
template and its source, Hub processor files and pixel settings, config function), in its family's module
(`qwen.py`, `llava.py`, `gemma.py`, ...); what the types share is in `builders.py` and `tokenizer.py`;
`registry.py` collects the records and derives the tables below; `build.py` writes a folder.
"""

from __future__ import annotations

from hardneg.models.vlm.tiny.build import SEED, VERSION, build_tiny_vlm, tiny_vlm_path
from hardneg.models.vlm.tiny.builders import INIT_RANGE, LLAVA_TEMPLATE, QWEN_TEMPLATE
from hardneg.models.vlm.tiny.gemma import GEMMA4_TEMPLATE  # named by gemma4-unified's stand-in (`tiny.GEMMA4_TEMPLATE`)
from hardneg.models.vlm.tiny.record import HubFiles, PublishedTemplate, StandIn, TinyType
from hardneg.models.vlm.tiny.registry import (ARCHITECTURES, DEFAULT, HUB, MODEL_TYPES, MORE_TOKENS, NAMED_TOKENS,
                                              PUBLISHED, STAND_IN_TEMPLATES, TOKENIZERS, TYPES, cli_name,
                                              published_template, template_source, tiny_type)
from hardneg.models.vlm.tiny.tokenizer import _WORDS, SPECIALS, VOCAB_SIZE, _corpus, build_tokenizer


__all__ = ["ARCHITECTURES", "DEFAULT", "GEMMA4_TEMPLATE", "HUB", "INIT_RANGE", "LLAVA_TEMPLATE", "MODEL_TYPES", "MORE_TOKENS",
           "NAMED_TOKENS", "PUBLISHED", "QWEN_TEMPLATE", "SEED", "SPECIALS", "STAND_IN_TEMPLATES", "TOKENIZERS",
           "TYPES", "VERSION", "VOCAB_SIZE", "HubFiles", "PublishedTemplate", "StandIn", "TinyType", "_WORDS",
           "_corpus", "build_tiny_vlm", "build_tokenizer", "cli_name", "published_template", "template_source",
           "tiny_type", "tiny_vlm_path"]
