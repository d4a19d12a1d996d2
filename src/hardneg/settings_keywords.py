"""Keyword front doors over frozen settings objects.

A public function such as `hardneg.train(...)` or a generator's `make_batch_fn(...)` keeps the
keyword names users already write, while its settings travel inside as one frozen dataclass (no
function takes more than 10 parameters). These two helpers do the plumbing once:

* `from_keywords(cls, where, given, options)`: the object built from those of the keywords that are its
  fields (taken out of `options`, so several objects can share one `**options`); `refuse_unknown` then names
  a keyword none of them took, as Python's own error does;
* `settings_from(cls, base, given, where)`: both at once, for a function with one settings object;
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


def from_keywords(cls: type[T], where: str, given: T | None = None, options: dict[str, Any] | None = None) -> T:
    """`cls` built from the keyword arguments in `options` that are its fields (they are taken out of `options`),
    over `given` (an instance, or None for the defaults). Unknown names are left for the caller to refuse."""
    names = set(setting_names(cls))
    options = {} if options is None else options
    mine = {k: options.pop(k) for k in list(options) if k in names}
    if given is None:
        return cls(**mine)
    if not isinstance(given, cls):
        raise TypeError(f"{where}(): expected a {cls.__name__}, got {type(given).__name__}")
    return replace(given, **mine) if mine else given


def refuse_unknown(where: str, options: Mapping[str, Any], known: tuple[type, ...], also: Iterable[str] = ()) -> None:
    """A TypeError like Python's own for keyword arguments no settings object took, naming the settings it takes
    (the fields of `known`, in declaration order, and the names in `also`)."""
    if options:
        takes = list(dict.fromkeys([n for cls in known for n in setting_names(cls)] + list(also)))
        raise TypeError(f"{where}() got an unexpected keyword argument {', '.join(repr(k) for k in options)}; "
                        f"its settings are {', '.join(takes)}")


def settings_from(cls: type[T], base: T | None, given: Mapping[str, Any], where: str) -> T:
    """`base` (or `cls()`) with the keywords `given` set; an unknown keyword is refused with the settings it takes."""
    rest = dict(given)
    refuse_unknown(where, {k: v for k, v in rest.items() if k not in setting_names(cls)}, (cls,))
    return from_keywords(cls, where, base, rest)


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
