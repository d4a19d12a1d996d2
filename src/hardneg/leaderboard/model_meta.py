"""Model metadata stored with a submission (`model_meta`): size, type, license, link, revision.

The contract (TEAM.md, docs/CONTRACTS.md): {"params": int|None, "model_type": "contrastive"|"generative"|
"text-only"|"other"|None, "license": str|None, "link": str|None, "revision": str|None}. `hardneg submit` reads
it from the Hub model card when the model is on the Hub (`huggingface_hub.model_info`: safetensors parameter
count, card license, pipeline tag, commit) and from flags otherwise; flags win over the card. The board
checks it again (`clean_model_meta`) because an API caller can send anything.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Mapping

from hardneg import guards
from hardneg.leaderboard.parquet_guard import json_depth

FIELDS = ("params", "model_type", "license", "link", "revision")
MODEL_TYPES = ("contrastive", "generative", "text-only", "other")
#: Hub pipeline tags -> model type (what a card says about how the model scores text against video)
_PIPELINE_TYPES = {
    "zero-shot-image-classification": "contrastive", "feature-extraction": "contrastive",
    "sentence-similarity": "text-only", "video-text-to-text": "generative", "image-text-to-text": "generative",
    "text-generation": "text-only", "visual-question-answering": "generative",
}
_MAX_TEXT = 200
#: the largest parameter count accepted (10^15: a thousand times the largest models of 2026); anything above is a
#: typo or an attack, and a number the board must be able to divide, sort and bucket as a float
MAX_PARAMS = 10**15
#: the longest `params` text parsed ('151M', '151,000,000'), checked before any parsing
_MAX_PARAMS_TEXT = 32
#: the model metadata as JSON (the API's `model_meta_json`): size and nesting checked before it is parsed
MAX_META_JSON_BYTES = 16 * 1024
MAX_META_JSON_DEPTH = 4


def clean_model_meta(meta: Mapping[str, Any] | None) -> dict:
    """The five fields, checked: a ValueError names the field and the fix. Unknown keys are refused."""
    if meta is not None and not isinstance(meta, Mapping):
        raise ValueError(f"model_meta must be an object with the fields {', '.join(FIELDS)}, not "
                         f"{type(meta).__name__}")
    meta = dict(meta or {})
    unknown = sorted((k for k in meta if k not in FIELDS), key=guards.shown)
    if unknown:
        raise ValueError(f"model_meta: unknown field(s) {', '.join(guards.shown(k, 40) for k in unknown[:5])}; the "
                         f"fields are {', '.join(FIELDS)}")
    out: dict[str, Any] = {k: None for k in FIELDS}
    if meta.get("params") is not None:
        out["params"] = check_params(meta["params"])
    mtype = meta.get("model_type")
    if mtype is not None:
        if mtype not in MODEL_TYPES:
            raise ValueError(f"model_meta.model_type {guards.shown(mtype, 40)}: use one of {', '.join(MODEL_TYPES)}")
        out["model_type"] = mtype
    for key in ("license", "revision"):  # free text (hardneg.guards): no NUL or control characters (issue 36 N5)
        out[key] = guards.optional_text(meta.get(key), f"model_meta.{key}", max_len=_MAX_TEXT)
    if meta.get("link") is not None:  # matched whole: a link ending in a newline is refused (issue 36 N5)
        out["link"] = guards.url(meta["link"], "model_meta.link")
    return out


def check_params(params) -> int:
    """A parameter count as the board stores it: an integer in [1, MAX_PARAMS]. Integers, finite floats and texts
    ('151M') are accepted; a ValueError quotes the value (cut) and says the fix."""
    fix = f"give the number of parameters as an integer (151000000) or with a suffix (151M, 7B), at most {MAX_PARAMS:.0e}"
    if isinstance(params, bool) or not isinstance(params, (int, float, str)):
        raise ValueError(f"model_meta.params: a {type(params).__name__} is not a number; {fix}")
    if isinstance(params, str):
        if len(params) > _MAX_PARAMS_TEXT:
            raise ValueError(f"model_meta.params {params[:20]!r}... is {len(params):,} characters long; {fix}")
        try:
            value = parse_params(params)
        except ValueError:
            raise ValueError(f"model_meta.params {params!r}: {fix}") from None
    elif isinstance(params, float):
        if not math.isfinite(params):
            raise ValueError(f"model_meta.params {params!r} is not a finite number; {fix}")
        value = params
    else:
        value = params
    if value > MAX_PARAMS:  # an int of any length compares without converting it
        shown = f"{value:,}" if isinstance(value, int) else f"{value:.3g}"
        if isinstance(value, int) and value > 10**20:  # str() of an int is refused past 4,300 digits
            shown = (f"a {len(str(value)):,}-digit number" if value.bit_length() < 13_000 else
                     f"a number of about {int(value.bit_length() * math.log10(2)) + 1:,} digits")
        raise ValueError(f"model_meta.params is {shown}, over the limit of {MAX_PARAMS:.0e}; {fix}")
    value = int(round(value))
    if value <= 0:
        raise ValueError(f"model_meta.params must be positive, not {value}; {fix}")
    return value


def shown_model_meta(meta) -> dict:
    """The fields of stored metadata that pass `clean_model_meta` one by one (the others dropped): what the board
    draws, so that a row stored before a check existed, or edited in the store, can never break a page. Never
    raises."""
    if not isinstance(meta, Mapping):
        return {}
    out = {}
    for key in FIELDS:
        value = meta.get(key)
        if value is None:
            continue
        if key == "model_type" and isinstance(value, str) and 0 < len(value) <= 40:
            out[key] = value  # outside the contract it shows as "other" (board.model_type)
            continue
        try:
            cleaned = clean_model_meta({key: value})[key]
        except Exception:  # noqa: BLE001 (any stored value that does not pass is simply not shown)
            continue
        if cleaned is not None:
            out[key] = cleaned
    return out


def parse_model_meta_json(text) -> dict | None:
    """The API's model metadata (JSON text): size and nesting checked before parsing, NaN/Infinity refused, then
    `clean_model_meta`. A ValueError names the problem and the fix."""
    if text is None or (isinstance(text, str) and not text.strip()):
        return None
    if not isinstance(text, (str, bytes)):
        raise ValueError("model metadata must be JSON text of an object")
    raw = text.encode("utf-8", "replace") if isinstance(text, str) else text
    if len(raw) > MAX_META_JSON_BYTES:
        raise ValueError(f"model metadata is {len(raw):,} bytes; at most {MAX_META_JSON_BYTES:,} (the fields are "
                         f"{', '.join(FIELDS)})")
    depth = json_depth(raw)
    if depth > MAX_META_JSON_DEPTH:
        raise ValueError(f"model metadata nests {depth:,} levels deep; at most {MAX_META_JSON_DEPTH} (a flat object "
                         f"of {', '.join(FIELDS)})")

    def no_constant(name):
        raise ValueError(f"model metadata holds {name}; numbers must be finite")

    try:
        meta = json.loads(raw, parse_constant=no_constant)
    except ValueError as exc:
        raise ValueError(f"model metadata is not JSON ({str(exc)[:80]}); send an object of {', '.join(FIELDS)}") from None
    if not isinstance(meta, dict):
        raise ValueError("model metadata must be a JSON object")
    return clean_model_meta(meta)


def parse_params(text: str) -> int:
    """'151000000', '151M', '7B', '1.3b', '86k' -> an integer."""
    if len(text) > _MAX_PARAMS_TEXT:
        raise ValueError(text[:_MAX_PARAMS_TEXT])
    m = re.fullmatch(r"\s*([0-9]{1,16}(?:\.[0-9]{1,6})?)\s*([kKmMbBtT]?)\s*", text.replace(",", "").replace("_", ""))
    if not m:
        raise ValueError(text)
    scale = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "t": 10**12}[m.group(2).lower()]
    return int(round(float(m.group(1)) * scale))


def from_hub(model_id: str, revision: str | None = None, model_info=None) -> tuple[dict, str]:
    """(metadata read from the Hub model card, a note saying what was read or why nothing was).

    Offline ($HF_HUB_OFFLINE), a model that is not on the Hub or any Hub error: ({}, the reason); never raises.
    `model_info` is `huggingface_hub.HfApi().model_info` (tests pass their own).
    """
    if not re.fullmatch(r"[\w.\-]+/[\w.\-]+", model_id or ""):
        return {}, f"{model_id!r} is not a Hub model id: no model card read"
    try:
        if model_info is None:
            from huggingface_hub import HfApi, constants

            if constants.HF_HUB_OFFLINE:
                return {}, "offline (HF_HUB_OFFLINE): the Hub model card was not read; metadata from flags only"
            model_info = HfApi().model_info
        info = model_info(model_id, revision=revision)
    except Exception as exc:  # offline, not found, gated, network: the flags are all there is
        return {}, f"no Hub model card read for {model_id} ({type(exc).__name__}); metadata from flags only"
    found: dict[str, Any] = {}
    st = getattr(info, "safetensors", None)
    total = getattr(st, "total", None) if st is not None else None
    if isinstance(total, int) and total > 0:
        found["params"] = total
    card = getattr(info, "card_data", None) or getattr(info, "cardData", None)
    lic = card.get("license") if hasattr(card, "get") else None
    if isinstance(lic, str) and lic:
        found["license"] = lic
    mtype = _PIPELINE_TYPES.get(getattr(info, "pipeline_tag", None) or "")
    if mtype:
        found["model_type"] = mtype
    sha = getattr(info, "sha", None)
    if isinstance(sha, str) and sha:
        found["revision"] = sha
    found["link"] = f"https://huggingface.co/{model_id}"
    return found, f"read the Hub model card of {model_id}: {', '.join(sorted(found))}"


def merge(card: Mapping[str, Any], flags: Mapping[str, Any]) -> dict:
    """Card values, overridden by every flag that was given; checked."""
    both = {k: v for k, v in card.items() if k in FIELDS}
    both.update({k: v for k, v in flags.items() if v is not None})
    return clean_model_meta(both)


__all__ = ["FIELDS", "MAX_PARAMS", "MODEL_TYPES", "check_params", "clean_model_meta", "from_hub", "merge",
           "parse_model_meta_json", "parse_params", "shown_model_meta"]
