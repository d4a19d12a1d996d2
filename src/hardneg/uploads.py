"""Uploads a public Space received: removed after use, only inside Gradio's upload cache.

Gradio keeps ONE copy of identical uploads (its cache folder is named by the content's hash), so eight identical
files submitted at once are eight requests reading the same path; deleting it when the first finishes made the
others fail ("internal error"). Handlers therefore `lease` the path while they read it and `release` it after;
the file is deleted only once no request holds it and none has taken it for `grace_s` seconds (requests queued
behind the concurrency limit start within that time). Gradio's own cache sweep (`delete_cache`) removes what is
left after a crash.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

log = logging.getLogger(__name__)

#: seconds an unused upload is kept after its last request (queued requests for the same file start within it)
UPLOAD_GRACE_S = 60.0

_lock = threading.Lock()
_settled = threading.Condition(_lock)  # notified when an upload's deletion is done
_held: dict[str, int] = {}  # path -> requests reading it now
_last: dict[str, float] = {}  # path -> monotonic time of its last lease or release


def remove_upload(path: str | None) -> None:
    """Delete an uploaded file (and its folder when empty), only inside Gradio's upload cache."""
    if not path:
        return
    try:
        from gradio.utils import get_upload_folder

        cache = Path(get_upload_folder()).resolve()
        p = Path(path).resolve()
        if cache in p.parents and p.is_file():
            p.unlink()
            if p.parent != cache and not any(p.parent.iterdir()):
                p.parent.rmdir()
    except OSError as exc:  # an upload that is already gone, a race with the cache sweep
        log.warning("could not remove upload %s: %s", path, exc)


def lease(path: str | None) -> None:
    """A request starts reading `path`: it is not deleted until released."""
    if not path:
        return
    with _lock:
        _held[path] = _held.get(path, 0) + 1
        _last[path] = time.monotonic()


def release(path: str | None, grace_s: float = UPLOAD_GRACE_S) -> None:
    """A request is done with `path`: delete it after `grace_s` unless another request holds or takes it."""
    if not path:
        return
    with _lock:
        _held[path] = max(0, _held.get(path, 0) - 1)
        _last[path] = stamp = time.monotonic()

    def sweep():
        with _lock:
            if _held.get(path, 0) or _last.get(path) != stamp:
                return  # in use again, or a later release owns the deletion
            _held.pop(path, None)
            _last.pop(path, None)
            remove_upload(path)
            _settled.notify_all()

    if grace_s <= 0:
        sweep()
        return
    timer = threading.Timer(grace_s, sweep)
    timer.daemon = True
    timer.start()


def wait_settled(timeout_s: float) -> bool:
    """Wait until no upload is held or waiting for its deletion (every `release` timer has run); False when
    `timeout_s` passes first. Who checks the upload folder waits here first, and so never walks it while this
    module deletes in it (issue 41: a test walking it met a folder removed mid-walk)."""
    with _settled:
        return _settled.wait_for(lambda: not _last, timeout_s)
