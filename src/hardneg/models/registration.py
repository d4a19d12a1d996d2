"""Where adapters register themselves: a light table that imports no adapter.

An adapter module decorates its class with `@register("name", "one line", matches=...)` from here;
`hardneg.models.registry` finds the built-in adapter modules by name (`BUILTIN_ADAPTERS`) and
imports them only when asked, so nothing here, and nothing an adapter imports, imports an adapter
(no `registry` -> adapter -> `registry` cycle).
"""

from __future__ import annotations

from typing import Callable

#: name -> (loader class, one-line description)
ADAPTERS: dict[str, tuple[type, str]] = {}
#: (predicate on the model string, adapter name, priority), tried in order
MATCHERS: list[tuple[Callable[[str], bool], str, int]] = []


def register(name: str, description: str, matches: Callable[[str], bool] | None = None, priority: int = 0):
    """Class decorator: make an adapter loadable by `name` (and by any id `matches` accepts).

    Matchers with a higher `priority` are tried first (e.g. "sentence-transformers/clip-..."
    must reach the sentence-transformers adapter before the CLIP one sees "clip").
    """

    def wrap(cls):
        ADAPTERS[name] = (cls, description)
        if matches is not None:
            MATCHERS[:] = [m for m in MATCHERS if m[1] != name]  # re-importing a module does not add it twice
            MATCHERS.append((matches, name, priority))
            MATCHERS.sort(key=lambda m: -m[2])
        return cls

    return wrap


__all__ = ["ADAPTERS", "MATCHERS", "register"]
