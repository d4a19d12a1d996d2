"""Hard-negative generators that rebuild the negatives of every benchmark, with a record each.

Each generator module exposes ``NAME``, ``VERSION`` and ``make_batch_fn(**settings)``: a
factory that loads its models once (per worker) and returns a pure function
``fn(batch: dict[str, list]) -> dict[str, list]`` mapping caption columns (``id``,
``caption``, optional ``video_id``/``source_dataset``/``source_split`` and generator-specific
columns) to rows of `hardneg.schema.MC_ITEM_SCHEMA`.
"""

from __future__ import annotations

import importlib
from typing import Callable

#: generator name -> "module:factory"
GENERATORS = {
    "gender": "hardneg.generators.gender:make_batch_fn",
    "character_id": "hardneg.generators.character_id:make_batch_fn",
    "posrank": "hardneg.generators.posrank:make_batch_fn",
    "posrank_phrase": "hardneg.generators.posrank:make_phrase_batch_fn",
    "verb_phrase": "hardneg.generators.verb_phrase:make_batch_fn",
    "llm_teacher": "hardneg.generators.llm_teacher:make_batch_fn",
}


def generator_factory(name: str) -> Callable[..., Callable]:
    """The batch-function factory of generator `name`, with a clear error for an unknown name."""
    if name not in GENERATORS:
        raise ValueError(f"unknown generator {name!r}; choose one of {sorted(GENERATORS)}")
    module, attr = GENERATORS[name].split(":")
    return getattr(importlib.import_module(module), attr)


def generator_info(name: str) -> tuple[str, str]:
    """(record name, version) that generator `name` writes into its provenance: its module's `NAME`, unless its
    factory names another (`record_name`: a module with two generators, as posrank's phrase-level one)."""
    factory = generator_factory(name)
    mod = importlib.import_module(GENERATORS[name].split(":")[0])
    return getattr(factory, "record_name", mod.NAME), mod.VERSION
