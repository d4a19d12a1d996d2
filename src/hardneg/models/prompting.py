"""Set a model's scoring protocol for one benchmark: the one hook the scorer calls before scoring a benchmark.

A video LLM (`hardneg.models.vlm`) scores each benchmark by the protocol and prompt its declaration names
(`Benchmark.vlm`), unless the user fixed them (`--protocol`, `--prompt`). Other models score one way; asking
them for a protocol is an error that says which models take one.
"""

from __future__ import annotations

from typing import Any


def bind_protocol(model: Any, declaration: Any, protocol: str | None = None, prompt: str | None = None):
    """Give `model` the protocol it scores `declaration` by; None for a model without protocols."""
    if prompt is not None:  # the one prompt guard: '' is refused, not read as "the default" (issue 36 N8)
        from hardneg import guards

        prompt = guards.prompt(prompt)
    use = getattr(model, "use_protocol", None)
    if use is None:
        if protocol or prompt:
            raise ValueError(f"--protocol/--prompt choose how a video LLM scores captions; model "
                             f"{getattr(model, 'model_id', model)!r} ({getattr(model, 'adapter', type(model).__name__)}) "
                             "scores one way only: drop them, or use a video LLM (e.g. --model tiny-vlm)")
        return None
    return use(declaration, protocol=protocol, prompt=prompt)


__all__ = ["bind_protocol"]
