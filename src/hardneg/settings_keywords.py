"""Keyword front doors over frozen settings objects.

A public function such as `hardneg.train(...)` or a generator's `make_batch_fn(...)` keeps the
keyword names users already write, while its settings travel inside as one frozen dataclass (no
function takes more than 10 parameters). These two helpers do the plumbing once:

* `settings_from(cls, base, given, where)`: the object, built from the keywords (over `base`, an
  object the caller passed, when there is one), an unknown keyword refused with the known names;
* `keyword_signature(...)`: the signature `help()`, `inspect` and editors show, with every setting
  spelled out as a keyword-only parameter (and what `hardneg train --negatives-set` checks keys against).
"""

from __future__ import annotations

import inspect
from dataclasses import MISSING, fields, replace
from typing import Any, Iterable, Mapping, TypeVar

T = TypeVar("T")


def setting_names(cls: type) -> list[str]:
    """The settings of dataclass `cls`, in declaration order (the fields its constructor takes)."""
    return [f.name for f in fields(cls) if f.init]


def settings_from(cls: type[T], base: T | None, given: Mapping[str, Any], where: str) -> T:
    """`base` (or `cls()`) with the keywords `given` set; a TypeError names `where`, the unknown keywords and the
    settings it takes, as Python's own error for an unknown keyword does."""
    names = setting_names(cls)
    unknown = [k for k in given if k not in names]
    if unknown:
        raise TypeError(f"{where}() got an unexpected keyword argument {', '.join(repr(k) for k in unknown)}; "
                        f"its settings are {', '.join(names)}")
    if base is None:
        return cls(**given)
    if not isinstance(base, cls):
        raise TypeError(f"{where}(): expected a {cls.__name__}, got {type(base).__name__}")
    return replace(base, **given) if given else base


def keyword_signature(func: Any, cls: type, *, drop: Iterable[str] = ()) -> inspect.Signature:
    """`func`'s signature with its `**settings` catch-all replaced by `cls`'s settings as keyword-only parameters
    (with their defaults), leaving out the names in `drop`."""
    own = inspect.signature(func)
    drop = set(drop)
    params = [p for p in own.parameters.values() if p.kind is not p.VAR_KEYWORD]
    taken = {p.name for p in params} | drop
    for f in fields(cls):
        if not f.init or f.name in taken:
            continue
        default = f.default if f.default is not MISSING else (
            f.default_factory() if f.default_factory is not MISSING else inspect.Parameter.empty)
        params.append(inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=f.type))
    # keyword-only parameters may follow one another in any order, but not precede positional ones
    order = {inspect.Parameter.POSITIONAL_ONLY: 0, inspect.Parameter.POSITIONAL_OR_KEYWORD: 1,
             inspect.Parameter.VAR_POSITIONAL: 2, inspect.Parameter.KEYWORD_ONLY: 3}
    return own.replace(parameters=sorted(params, key=lambda p: order[p.kind]))
