"""Uploads a public Space received: removed after use, only inside Gradio's upload cache."""

from __future__ import annotations

import logging
from pathlib import Path

log = logging.getLogger(__name__)


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
