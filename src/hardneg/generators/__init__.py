"""Hard-negative generators that rebuild the negatives of every benchmark, with a record each.

Each generator module exposes ``NAME``, ``VERSION`` and ``make_batch_fn(**settings)``: a
factory that loads its models once (per worker) and returns a pure function
``fn(batch: dict[str, list]) -> dict[str, list]`` mapping caption columns (``id``,
``caption``, optional ``video_id``/``source_dataset``/``source_split`` and generator-specific
columns) to rows of `hardneg.schema.MC_ITEM_SCHEMA`.
"""

from __future__ import annotations

import importlib
from types import ModuleType

#: generator name -> module implementing it
GENERATORS = {
    "gender": "hardneg.generators.gender",
    "character_id": "hardneg.generators.character_id",
    "posrank": "hardneg.generators.posrank",
    "posrank_phrase": "hardneg.generators.posrank",
    "verb_phrase": "hardneg.generators.verb_phrase",
    "llm_teacher": "hardneg.generators.llm_teacher",
}


def generator_module(name: str) -> ModuleType:
    """The module of generator `name`, with a clear error for an unknown name."""
    if name not in GENERATORS:
        raise ValueError(f"unknown generator {name!r}; choose one of {sorted(GENERATORS)}")
    return importlib.import_module(GENERATORS[name])
