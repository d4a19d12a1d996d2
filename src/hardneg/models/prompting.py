"""Set a model's scoring protocol for one benchmark: the one hook the scorer calls before scoring a benchmark.

A video LLM (`hardneg.models.vlm.model`) scores each benchmark by the protocol and prompt its declaration names
(`Benchmark.vlm`), unless the user fixed them (`--protocol`, `--prompt`). Other models score one way; asking
them for a protocol is an error that says which models take one.
"""

from __future__ import annotations

from typing import Any


def bind_protocol(model: Any, declaration: Any, protocol: str | None = None, prompt: Any = None,
                  protocol_set: str | None = None):
    """Give `model` the protocol it scores `declaration` by; None for a model without protocols.

    prompt: a string (every benchmark) or {benchmark name: prompt}; protocol_set: `PROTOCOL_SETS`."""
    if prompt is not None:  # the one prompt guard: '' is refused, not read as "the default" (issue 36 N8)
        from hardneg import guards

        prompt = ({name: guards.prompt(p) for name, p in prompt.items()} if isinstance(prompt, dict)
                  else guards.prompt(prompt))
    use = getattr(model, "use_protocol", None)
    if use is None:
        if protocol or prompt or protocol_set not in (None, "default"):
            raise ValueError(f"--protocol/--prompt/--protocol-set choose how a video LLM scores captions; model "
                             f"{getattr(model, 'model_id', model)!r} ({getattr(model, 'adapter', type(model).__name__)}) "
                             "scores one way only: drop them, or use a video LLM (e.g. --model tiny-vlm)")
        return None
    if protocol_set not in (None, "default"):
        return use(declaration, protocol=protocol, prompt=prompt, protocol_set=protocol_set)
    return use(declaration, protocol=protocol, prompt=prompt)


def parse_prompts(values: Any) -> Any:
    """`--prompt` as given (None, one string, or the list of repeated flags) -> None, one prompt for every
    benchmark, or {benchmark name: prompt} with "*" for the benchmarks not named.

    `--prompt tempcompass=PROMPT` sets one benchmark's prompt (the name before "=" must be a declared benchmark);
    any other value is the prompt of every benchmark not named. Why per benchmark: protocols need different slots
    ({caption}, {options}, {question}), so one prompt cannot serve a run over several benchmarks."""
    import re

    from hardneg import benchmarks

    if values is None or isinstance(values, (str, dict)):
        values = [values] if isinstance(values, str) else values
        if not isinstance(values, list):
            return values
    known = set(benchmarks.names())
    out: dict[str, str] = {}
    for v in values:
        m = re.fullmatch(r"([A-Za-z][A-Za-z0-9_-]*)=(.*)", v, flags=re.S)
        key, text = (m.group(1), m.group(2)) if m else ("*", v)
        if key != "*" and key not in known:
            raise ValueError(f"--prompt {key}=...: no benchmark named {key!r}; name one of {', '.join(sorted(known))} "
                             "(or give a prompt without NAME= for every benchmark)")
        if key in out:
            raise ValueError(f"--prompt given twice for {'every benchmark' if key == '*' else key}; give it once")
        out[key] = text
    if list(out) == ["*"]:
        return out["*"]
    return out or None


__all__ = ["bind_protocol", "parse_prompts"]
