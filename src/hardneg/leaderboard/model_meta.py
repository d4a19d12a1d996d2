"""Model metadata stored with a submission (`model_meta`): size, type, license, link, revision.

The contract (TEAM.md, docs/CONTRACTS.md): {"params": int|None, "model_type": "contrastive"|"generative"|
"text-only"|"other"|None, "license": str|None, "link": str|None, "revision": str|None}. `hardneg submit` reads
it from the Hub model card when the model is on the Hub (`huggingface_hub.model_info`: safetensors parameter
count, card license, pipeline tag, commit) and from flags otherwise; flags win over the card. The board
checks it again (`clean_model_meta`) because an API caller can send anything.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

FIELDS = ("params", "model_type", "license", "link", "revision")
MODEL_TYPES = ("contrastive", "generative", "text-only", "other")
#: Hub pipeline tags -> model type (what a card says about how the model scores text against video)
_PIPELINE_TYPES = {
    "zero-shot-image-classification": "contrastive", "feature-extraction": "contrastive",
    "sentence-similarity": "text-only", "video-text-to-text": "generative", "image-text-to-text": "generative",
    "text-generation": "text-only", "visual-question-answering": "generative",
}
_MAX_TEXT = 200


def clean_model_meta(meta: Mapping[str, Any] | None) -> dict:
    """The five fields, checked: a ValueError names the field and the fix. Unknown keys are refused."""
    meta = dict(meta or {})
    unknown = sorted(set(meta) - set(FIELDS))
    if unknown:
        raise ValueError(f"model_meta: unknown field(s) {unknown[:5]}; the fields are {', '.join(FIELDS)}")
    out: dict[str, Any] = {k: None for k in FIELDS}
    params = meta.get("params")
    if params is not None:
        if isinstance(params, bool) or not isinstance(params, (int, float, str)):
            raise ValueError("model_meta.params: give the number of parameters as an integer, e.g. --params 151000000")
        try:
            params = parse_params(params) if isinstance(params, str) else int(params)
        except ValueError:
            raise ValueError(f"model_meta.params {str(params)[:40]!r}: give the number of parameters as an "
                             "integer (151000000) or with a suffix (151M, 7B)") from None
        if params <= 0:
            raise ValueError("model_meta.params must be positive")
        out["params"] = params
    mtype = meta.get("model_type")
    if mtype is not None:
        if mtype not in MODEL_TYPES:
            raise ValueError(f"model_meta.model_type {str(mtype)[:40]!r}: use one of {', '.join(MODEL_TYPES)}")
        out["model_type"] = mtype
    for key in ("license", "revision"):
        v = meta.get(key)
        if v is not None:
            if not isinstance(v, str) or not v.strip() or len(v) > _MAX_TEXT:
                raise ValueError(f"model_meta.{key}: a short text (1-{_MAX_TEXT} characters)")
            out[key] = v.strip()
    link = meta.get("link")
    if link is not None:
        if not isinstance(link, str) or not re.match(r"^https?://[^\s]+$", link) or len(link) > 500:
            raise ValueError("model_meta.link: an http(s) URL of the model's page, e.g. https://huggingface.co/org/name")
        out["link"] = link
    return out


def parse_params(text: str) -> int:
    """'151000000', '151M', '7B', '1.3b', '86k' -> an integer."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([kKmMbBtT]?)\s*", text.replace(",", "").replace("_", ""))
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


__all__ = ["FIELDS", "MODEL_TYPES", "clean_model_meta", "from_hub", "merge", "parse_params"]
