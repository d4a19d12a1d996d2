"""Fail fast, and say what to do, when a model or a dataset can be neither found locally nor downloaded.

Without a network, `from_pretrained("openai/clip-vit-base-patch32")` ends in a raw `OSError` after
about half a minute: huggingface_hub's `http_backoff` retries each failed request five times,
sleeping 1, 2, 4, 8 and 8 s (23 s measured here), on top of importing torch and transformers. Before
any of that, `ensure_loadable` looks at what can be known in milliseconds: is the model a local
folder, is `HF_HUB_OFFLINE` set, is the model in the local Hub cache, can the Hub (or the proxy) be
reached at all (one TCP connection, 3 s at most). Online use is unchanged: when the Hub answers,
nothing else happens. When it does not and the model is cached, the cache is used at once
(offline mode for this process); when it is not cached, `ModelUnavailable` names the model and
both ways out.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
from pathlib import Path
from urllib.parse import urlparse

#: seconds the reachability probe may take (the whole check stays well under 5 s)
PROBE_TIMEOUT_S = 3.0

_OFFLINE_VARS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
_PROXY_VARS = ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")
_probe_cache: dict[tuple[str, int], bool] = {}


class ModelUnavailable(ValueError):
    """A model that is neither a local folder, nor in the Hub cache, nor downloadable now."""


def _true(value: str | None) -> bool:
    return str(value or "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def offline_requested() -> bool:
    """True when the user asked for offline mode (`HF_HUB_OFFLINE=1` or `TRANSFORMERS_OFFLINE=1`)."""
    return any(_true(os.environ.get(v)) for v in _OFFLINE_VARS)


def hub_endpoint() -> str:
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")


def _target() -> tuple[str, int]:
    """(host, port) the first request would connect to: the proxy when one is set, else the Hub."""
    proxy = next((os.environ[v] for v in _PROXY_VARS if os.environ.get(v)), None)
    url = urlparse(proxy if proxy else hub_endpoint())
    if not url.hostname:  # a proxy written without a scheme ("host:3128")
        url = urlparse(f"http://{proxy}")
    return url.hostname or "huggingface.co", url.port or (443 if url.scheme == "https" else 80)


def hub_reachable(timeout: float = PROBE_TIMEOUT_S) -> bool:
    """Whether one TCP connection to the Hub (or the configured proxy) opens within `timeout` seconds.

    Name resolution has no timeout of its own, so the probe runs in a daemon thread that is abandoned
    after `timeout`. The answer is kept for the process.
    """
    target = _target()
    if target in _probe_cache:
        return _probe_cache[target]
    result: list[bool] = []

    def probe() -> None:
        try:
            with socket.create_connection(target, timeout=timeout):
                result.append(True)
        except OSError:
            result.append(False)

    thread = threading.Thread(target=probe, name="hardneg-hub-probe", daemon=True)
    thread.start()
    thread.join(timeout + 0.2)
    _probe_cache[target] = bool(result and result[0])
    return _probe_cache[target]


def is_cached(model_id: str, revision: str | None = None) -> bool:
    """Whether the model's `config.json` is in the local Hub cache (what an offline load needs first)."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:
        return False
    for name in ("config.json", "config_sentence_transformers.json", "modules.json"):
        try:
            found = try_to_load_from_cache(model_id, name, revision=revision)
        except Exception:  # an id the cache cannot hold (not a repo id) is simply not cached
            return False
        if isinstance(found, str):
            return True
    return False


def _use_cache_only() -> None:
    """Offline mode for the rest of this process: huggingface_hub and transformers read the cache only."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        import huggingface_hub.constants as constants

        constants.HF_HUB_OFFLINE = True
    except ImportError:
        pass


def message(model_id: str, why: str) -> str:
    return (
        f"model {model_id!r}: {why}. Two ways out: (1) on a machine that can reach the Hub, download it once "
        f"(`hf download {model_id}`, or any first run), then run with HF_HUB_OFFLINE=1 so the local cache "
        f"({os.environ.get('HF_HOME', '~/.cache/huggingface')}) is used; or (2) save the model to a local folder "
        "(`save_pretrained(DIR)` for the model, its tokenizer and its processor) and pass that folder instead of the "
        "Hub id (--model DIR)."
    )


def ensure_loadable(model_id: str | None, revision: str | None = None) -> None:
    """Raise `ModelUnavailable` at once when `model_id` cannot be loaded now; otherwise return quickly.

    A local folder, or an id that is cached or downloadable, passes. A cached id with the Hub out of
    reach switches this process to offline mode, so the cache is read without retries.
    """
    if not model_id or Path(str(model_id)).expanduser().exists():
        return
    if offline_requested():
        if not is_cached(model_id, revision):
            raise ModelUnavailable(message(model_id, "HF_HUB_OFFLINE is set and the model is not in the local Hub cache"))
        return
    if hub_reachable():
        return
    host, port = _target()
    if is_cached(model_id, revision):
        print(f"note: {host}:{port} cannot be reached; loading {model_id} from the local Hub cache", file=sys.stderr)
        _use_cache_only()
        return
    raise ModelUnavailable(message(model_id, f"its weights are not in the local Hub cache and {host}:{port} "
                                             "(the Hugging Face Hub) cannot be reached"))


class DatasetUnavailable(ValueError):
    """A Hub dataset that is not on this machine and cannot be downloaded now."""


def ensure_dataset_loadable(dataset: str, flag: str = "--dataset") -> None:
    """Raise `DatasetUnavailable` at once when `dataset` is a Hub id that cannot be loaded now (offline mode and not
    cached, or the Hub out of reach); a local folder, or a reachable Hub, passes."""
    if not dataset or Path(str(dataset)).expanduser().exists():
        return
    why = None
    if offline_requested():
        why = "HF_HUB_OFFLINE is set"
    elif not hub_reachable():
        host, port = _target()
        why = f"{host}:{port} (the Hugging Face Hub) cannot be reached"
    if why is None:
        return
    if offline_requested() and _dataset_cached(dataset):
        return
    raise DatasetUnavailable(
        f"the items are in the Hub dataset {dataset!r}, and {why}. Pass {flag} with a local copy: a folder built with "
        "`hardneg build <benchmark> --raw ... --out DIR` (or `--sample` for the built-in sample), or the Hub repo "
        f"downloaded once where the Hub is reachable (`hf download {dataset} --repo-type dataset --local-dir DIR`).")


def _dataset_cached(dataset: str) -> bool:
    try:
        from huggingface_hub import scan_cache_dir

        return any(r.repo_id == dataset and r.repo_type == "dataset" for r in scan_cache_dir().repos)
    except Exception:
        return False


__all__ = ["DatasetUnavailable", "ModelUnavailable", "ensure_dataset_loadable", "PROBE_TIMEOUT_S", "ensure_loadable", "hub_reachable", "is_cached",
           "offline_requested"]
