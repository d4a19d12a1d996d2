"""One guard per kind of value: every value that enters hardneg passes the guard of its kind.

Why one module: each round of hostile tests (issues 29, 33, 36) found a new handful of values that one entrance
refused and another stored (a NUL in a license, a link ending in a newline, a model id with a space, an empty
prompt silently replaced by the default), because each entrance checked in its own way. Here each kind of value
(model id, free text, URL, whole number, finite number, prompt, item list, JSON text, JSON tree) has exactly one
check, and the entrances (the upload form and API JSON of the board, a predictions file's metadata, a stored row,
a CLI flag, a training run's resume state) call it. A guard returns the typed, bounded value or raises
`GuardError`, a ValueError that carries the field's name and the fix: the CLI prints it as one `error:` line
(`hardneg.cli.main` turns every ValueError into one), the board as one line of its refusal.

Every guard is total: whatever Python value it is given (any type, any size, any code point, lone surrogates
included), it returns or raises `GuardError`, never anything else; the Hypothesis suites in
tests/test_guards_fuzz.py prove this on arbitrary input. User text quoted in a message is cut (`shown`).
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from typing import Any

from hardneg.json_limits import MAX_JSON_BYTES, MAX_JSON_DEPTH, MAX_JSON_VALUES, json_shape

#: characters of user text quoted in a message
MAX_SHOWN = 60
#: the longest free text accepted by default (a license, a revision, a metadata key)
MAX_TEXT = 200
#: the longest URL accepted
MAX_URL = 500
#: the longest prompt accepted (a scoring prompt template is one or two sentences)
MAX_PROMPT = 2000
#: most names in an item list
MAX_LIST = 1000

#: one part of a Hub repo id (huggingface_hub `validate_repo_id`): letters, digits, '_', '-', '.', not starting or
#: ending with '-' or '.', at most 96 characters ('--' and '..' are refused apart)
HUB_NAME_PART = r"[A-Za-z0-9_](?:[A-Za-z0-9_.\-]{0,94}[A-Za-z0-9_])?"
_MODEL_ID = re.compile(rf"(?:{HUB_NAME_PART}/)?{HUB_NAME_PART}")
#: an http(s) URL (the scheme in any case, as RFC 3986 says: `HTTPS://` is valid, issue 49 N28): a host, then no
#: whitespace or control character up to the very end (fullmatch: a final
#: newline does not pass, as it did with `re.match(...$)`, issue 36 N5)
_URL = re.compile(r"(?i:https?)://[^\s/?#\x00-\x1f\x7f]+(?:[/?#][^\s\x00-\x1f\x7f]*)?")


class GuardError(ValueError):
    """A value refused by its guard: `field` names it, `problem` says what is wrong, `fix` what to do."""

    def __init__(self, field: str, problem: str, fix: str):
        self.field, self.problem, self.fix = field, problem, fix
        super().__init__(f"{field} {problem}; {fix}")


def shown(value: Any, limit: int = MAX_SHOWN) -> str:
    """A value as `repr` (escapes control characters), cut to about `limit` characters; never raises."""
    try:
        if isinstance(value, str):
            return repr(value[:limit]) + ("…" if len(value) > limit else "")
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**30:
            return f"a {value.bit_length():,}-bit integer"
        text = repr(value)
    except Exception:  # noqa: BLE001 (a value whose repr fails is shown by its type)
        return f"a {type(value).__name__}"
    return text if len(text) <= limit else text[:limit] + "…"


#: The rule for characters people cannot see (issue 42, N19). Free text may never hold control characters
#: (category Cc; multi-line text may hold tab and newlines), lone surrogates (not UTF-8: a store or a page cannot
#: encode them), or bidirectional controls and marks (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069: they
#: reorder or hide what is shown). A single-line field (a model name, a license, a submitter, a link) may also not
#: hold any other Unicode Default_Ignorable_Code_Point (DerivedCoreProperties.txt: zero-width spaces and joiners
#: U+200B-U+200D, the word joiner and invisible operators U+2060-U+206F, U+FEFF, the soft hyphen U+00AD,
#: variation selectors, Hangul fillers, tag characters U+E0000-U+E0FFF, ...) nor the line and paragraph
#: separators U+2028/U+2029, nor any character of General Category Cf (format: U+FFF9-FFFB, U+13430-13438,
#: U+0600-0605, ... issue 49 N28; `ALLOWED_FORMAT` names the exceptions, none): two values that look the same must be
#: the same value. Multi-line text (a prompt, a
#: reason) keeps those others (a zero-width joiner inside an emoji sequence is legitimate there).
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
#: Default_Ignorable_Code_Point (Unicode 15.1) plus U+2028/U+2029; the bidi ones are in _BIDI
_INVISIBLE = ("\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200d\u2028\u2029\u2060-\u2065"
              "\u206a-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3"
              "\U0001d173-\U0001d17a\U000e0000-\U000e0fff")
_BAD_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f\ud800-\udfff{_BIDI}{_INVISIBLE}]")
_BAD_MULTILINE = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff{_BIDI}]")


#: characters of General Category Cf (format) a single-line field may hold anyway: none (issue 49, N28: U+FFF9-FFFB,
#: U+13430-13438, U+0600-0605, ... passed, being outside the listed sets); named here so an exception is a decision
ALLOWED_FORMAT: frozenset[str] = frozenset()


def _format_character(value: str) -> str | None:
    """The first character of General Category Cf in `value` not in ALLOWED_FORMAT (Python's unicodedata), or None."""
    for ch in value:
        if ch not in ALLOWED_FORMAT and (ord(ch) >= 0xAD) and unicodedata.category(ch) == "Cf":
            return ch
    return None


def _bad_character(value: str, multiline: bool) -> str | None:
    """The name of the first character free text may not hold (`_BAD_LINE`, and in a single-line field any format
    character, category Cf), or None."""
    m = (_BAD_MULTILINE if multiline else _BAD_LINE).search(value)
    if m is None and not multiline:
        ch = _format_character(value)
        if ch is not None:
            return f"an invisible format character (U+{ord(ch):04X} {unicodedata.name(ch, 'unnamed')})"
    if m is None:
        return None
    ch = m.group()
    if ch == "\0":
        return "NUL"
    if "\ud800" <= ch <= "\udfff":
        return f"a lone surrogate {ch!r} (not UTF-8)"
    if unicodedata.category(ch) == "Cc":
        return f"the control character {ch!r}"
    name = unicodedata.name(ch, f"U+{ord(ch):04X}")
    if re.fullmatch(f"[{_BIDI}]", ch):
        return f"a bidirectional control or mark (U+{ord(ch):04X} {name})"
    return f"an invisible character (U+{ord(ch):04X} {name})"


def text(value: Any, field: str, *, max_len: int = MAX_TEXT, allow_empty: bool = False, multiline: bool = False,
         fix: str | None = None) -> str:
    """Free text: a str of at most `max_len` characters (after stripping spaces at the ends), without NUL or other
    control characters (tab and newlines only when `multiline`), lone surrogates, bidi controls and marks, and
    (single-line) any other invisible character: the rule above `_BIDI`."""
    fix = fix or f"give a plain text of 1-{max_len} characters"
    if not isinstance(value, str):
        raise GuardError(field, f"must be text, not {type(value).__name__} ({shown(value)})", fix)
    if len(value) > 4 * max_len + 64:  # refused before anything is scanned
        raise GuardError(field, f"is {len(value):,} characters long; at most {max_len}", fix)
    bad = _bad_character(value, multiline)
    if bad is not None:
        raise GuardError(field, f"{shown(value)} holds {bad}", fix)
    value = value.strip()
    if not value and not allow_empty:
        raise GuardError(field, "is empty", fix)
    if len(value) > max_len:
        raise GuardError(field, f"is {len(value):,} characters long ({shown(value)}); at most {max_len}", fix)
    return value


def optional_text(value: Any, field: str, **kw) -> str | None:
    """`text`, with None (absent) passed through."""
    return None if value is None else text(value, field, **kw)


#: a link's host: ASCII letters, digits, '-' and '.', an optional port; an internationalised name only in its
#: IDNA form (xn--...), so the host a visitor reads is the host the link opens (issue 42, N19: 'hugging／face.co'
#: and a Cyrillic 'а' passed)
_HOST = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                   r"\.?(?::[0-9]{1,5})?")


def url(value: Any, field: str, *, max_len: int = MAX_URL) -> str:
    """An http(s) URL of at most `max_len` characters, matched whole: nothing after it, not even a newline. Its
    host is ASCII (a non-ASCII name is refused with its IDNA spelling as the fix), without user info ('@')."""
    fix = "give an http(s) URL of the model's page, e.g. https://huggingface.co/org/name"
    value = text(value, field, max_len=max_len, fix=fix)
    if not _URL.fullmatch(value):
        raise GuardError(field, f"{shown(value)} is not an http(s) URL", fix)
    host = re.split(r"[/?#]", value.split("://", 1)[1], maxsplit=1)[0]
    port = host.rpartition(":")[2] if re.search(r":[0-9]+$", host) else None
    if port is not None and not 1 <= int(port) <= 65535:
        raise GuardError(field, f"{shown(value)} has the port {int(port)}, outside 1-65535", fix)
    if not _HOST.fullmatch(host):
        try:
            idna = host.encode("idna").decode("ascii")
            if not _HOST.fullmatch(idna):
                raise ValueError(idna)
            hint = f"; write the host as ASCII, in its IDNA form {idna!r} if it is an internationalised name"
        except (UnicodeError, ValueError):
            hint = "; write the host in ASCII letters, digits, '-' and '.'"
        raise GuardError(field, f"{shown(value)} has the host {shown(host)}, which is not ASCII letters, digits, "
                                "'-' and '.'", fix + hint)
    return value


def model_id(value: Any, field: str = "model id", *, namespace: bool = True) -> str:
    """A model name as the Hub spells a repo id: `<user or org>/<name>` (a bare name too when `namespace` is
    False), each part 1-96 letters, digits, '_', '-' or '.', not starting or ending with '-' or '.', without '..'
    or '--'; no spaces (issue 36 N10: 'org/my model' was accepted)."""
    fix = ("give one '<your user or org>/<model name>' pair, each part 1-96 letters, digits, '_', '-' or '.', not "
           "starting or ending with '-' or '.', without '..' or '--' (as Hub repo ids)")
    if not isinstance(value, str):
        raise GuardError(field, f"must be text, not {type(value).__name__} ({shown(value)})", fix)
    if len(value) > 400:
        raise GuardError(field, f"is {len(value):,} characters long", fix)
    bad = _bad_character(value, False)  # before strip(), which would drop a trailing U+2028 or control silently
    if bad is not None:
        raise GuardError(field, f"{shown(value)} holds {bad}", fix)
    value = value.strip()
    if (not _MODEL_ID.fullmatch(value) or ".." in value or "--" in value
            or (namespace and value.count("/") != 1)):
        raise GuardError(field, f"{shown(value)} is not a valid model name", fix)
    return value


def whole(value: Any, field: str, *, lo: int | None = None, hi: int | None = None, fix: str | None = None) -> int:
    """A whole number within [lo, hi]: an int (not a bool), an integral finite float, or decimal digits."""
    span = f"{'' if lo is None else lo}..{'' if hi is None else hi}"
    fix = fix or f"give a whole number in {span}"
    if isinstance(value, bool):
        raise GuardError(field, f"must be a whole number, not {value!r}", fix)
    if isinstance(value, str):
        s = value.strip()
        if len(s) > 40 or not re.fullmatch(r"[+-]?[0-9]+", s):
            raise GuardError(field, f"{shown(value)} is not a whole number", fix)
        value = int(s)
    elif isinstance(value, float):
        if not math.isfinite(value) or value != int(value):
            raise GuardError(field, f"{shown(value)} is not a whole number", fix)
        value = int(value)
    elif not isinstance(value, int):
        raise GuardError(field, f"must be a whole number, not {type(value).__name__} ({shown(value)})", fix)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise GuardError(field, f"is {shown(value)}, outside {span}", fix)
    return int(value)


def number(value: Any, field: str, *, lo: float | None = None, hi: float | None = None, fix: str | None = None
           ) -> float:
    """A finite real number (int or float, not a bool) within [lo, hi]."""
    fix = fix or "give a finite number"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise GuardError(field, f"must be a number, not {type(value).__name__} ({shown(value)})", fix)
    try:
        out = float(value)
    except OverflowError:
        raise GuardError(field, f"is {shown(value)}, too large", fix) from None
    if not math.isfinite(out):
        raise GuardError(field, f"is {out!r}, not a finite number", fix)
    if (lo is not None and out < lo) or (hi is not None and out > hi):
        raise GuardError(field, f"is {out!r}, outside {lo}..{hi}", fix)
    return out


def prompt(value: Any, field: str = "--prompt", *, max_len: int = MAX_PROMPT) -> str:
    """A prompt given on purpose: non-empty text (an empty one is refused, not replaced by the default: issue 36
    N8), one or several lines."""
    return text(value, field, max_len=max_len, multiline=True,
                fix=f"give the prompt text (1-{max_len} characters), or leave the flag out for the default prompt")


def item_list(value: Any, field: str, *, max_items: int = MAX_LIST, max_len: int = MAX_TEXT) -> list[str]:
    """Names given as one comma-separated text or a list: at least one, each a plain text, no repeats (an empty
    value is refused, not read as 'everything': issue 36 N8)."""
    fix = "give at least one name (comma-separated), or leave the flag out for every item"
    if isinstance(value, str):
        if len(value) > max_items * (max_len + 1):
            raise GuardError(field, f"is {len(value):,} characters long", fix)
        parts = value.split(",")
    elif isinstance(value, (list, tuple)):
        parts = list(value)
    else:
        raise GuardError(field, f"must be text, not {type(value).__name__} ({shown(value)})", fix)
    if len(parts) > max_items:
        raise GuardError(field, f"names {len(parts):,} items; at most {max_items:,}", fix)
    names = [text(p, field, max_len=max_len, allow_empty=True, fix=fix) for p in parts]
    names = [n for n in names if n]
    if not names:
        raise GuardError(field, f"{shown(value)} names nothing", fix)
    if len(set(names)) != len(names):
        raise GuardError(field, f"{shown(value)} names an item twice", fix)
    return names


def json_tree(value: Any, field: str, *, max_depth: int = MAX_JSON_DEPTH, max_values: int = MAX_JSON_VALUES,
              max_key: int = MAX_TEXT, max_string: int = 1 << 20,
              fix: str = "write it as hardneg does (plain JSON of short texts and finite numbers)") -> Any:
    """A parsed JSON tree, walked without recursion: dicts with text keys (no control characters), lists, texts
    without NUL or lone surrogates, finite numbers (ints of at most 64 bits), bools and None; at most
    `max_depth` deep and `max_values` values. Returns it unchanged."""
    stack: list[tuple[Any, int, str]] = [(value, 1, field)]
    count = 0
    while stack:
        node, depth, where = stack.pop()
        count += 1
        if count > max_values:
            raise GuardError(field, f"holds more than {max_values:,} values", fix)
        if depth > max_depth:
            raise GuardError(field, f"nests more than {max_depth} levels deep (at {shown(where)})", fix)
        if node is None or isinstance(node, bool):
            continue
        if isinstance(node, int):
            if not -(2**63) <= node < 2**64:
                raise GuardError(where, f"is {shown(node)}, a number too large", fix)
        elif isinstance(node, float):
            if not math.isfinite(node):
                raise GuardError(where, f"is {node!r}, not a finite number", fix)
        elif isinstance(node, str):
            if len(node) > max_string:
                raise GuardError(where, f"is {len(node):,} characters long; at most {max_string:,}", fix)
            bad = _bad_character(node, multiline=True)
            if bad is not None:
                raise GuardError(where, f"{shown(node)} holds {bad}", fix)
        elif isinstance(node, dict):
            for k, v in node.items():
                key = text(k, f"a key of {where}", max_len=max_key, fix=fix) if isinstance(k, str) else None
                if key is None:
                    raise GuardError(where, f"has a key of type {type(k).__name__}", fix)
                stack.append((v, depth + 1, f"{where}.{key[:40]}"))
        elif isinstance(node, (list, tuple)):
            for i, v in enumerate(node):
                stack.append((v, depth + 1, f"{where}[{i}]"))
        else:
            raise GuardError(where, f"is a {type(node).__name__}, not a JSON value", fix)
    return value


def json_text(raw: Any, field: str, *, max_bytes: int = MAX_JSON_BYTES, max_depth: int = MAX_JSON_DEPTH,
              max_values: int = MAX_JSON_VALUES, fix: str = "send plain JSON") -> Any:
    """JSON text (str or bytes) measured before it is parsed (size, nesting, values: no RecursionError, no huge
    parse), NaN/Infinity refused, then checked as a `json_tree`."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogatepass")
    if not isinstance(raw, (bytes, bytearray)):
        raise GuardError(field, f"must be JSON text, not {type(raw).__name__}", fix)
    raw = bytes(raw)
    if len(raw) > max_bytes:
        raise GuardError(field, f"is {len(raw):,} bytes; at most {max_bytes:,}", fix)
    depth, values = json_shape(raw)
    if depth > max_depth:
        raise GuardError(field, f"nests {depth:,} levels deep; at most {max_depth}", fix)
    if values > max_values:
        raise GuardError(field, f"holds about {values:,} values; at most {max_values:,}", fix)

    def no_constant(name):
        raise ValueError(f"{name} is not a finite number")

    try:
        tree = json.loads(raw.decode("utf-8"), parse_constant=no_constant)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise GuardError(field, f"is not UTF-8 JSON ({type(exc).__name__}: {shown(str(exc), 80)})", fix) from None
    return json_tree(tree, field, max_depth=max_depth, max_values=max_values, fix=fix)


__all__ = ["GuardError", "HUB_NAME_PART", "MAX_PROMPT", "MAX_TEXT", "MAX_URL", "item_list", "json_text",
           "json_tree", "model_id", "number", "optional_text", "prompt", "shown", "text", "url", "whole"]
