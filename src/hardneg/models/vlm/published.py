"""The chat templates the verified video-LLM types' published checkpoints ship, with where each was read.

A tiny model (`hardneg.models.vlm.tiny`) tests the scoring path under its type's chat template; a number computed
under a hand-written stand-in is not the number of the real checkpoint. So each verified type whose published
template could be read in public sources carries that exact text (`published_templates/<model type>.jinja`, as
data: a template is part of the checkpoint, not code) and a `PublishedTemplate` (the address it was read at, the
commit, the sha256 of the text, and what the source is) as its tiny record's `template`
(`hardneg.models.vlm.tiny.record.TinyType`, in its family's module). The tiny builder writes the text as the
folder's `chat_template.jinja` and the record as `template_source.json`; `hardneg models --json` shows it as
`template_source`. A verified type without one keeps its stand-in (a `StandIn` record, which names where the
published one was looked for). tests/vlm/test_published_templates.py renders the same conversations with the
text and with every tiny folder's template and requires them identical.

This module keeps the import path of these names; the records are the one place the facts live.
"""

from __future__ import annotations

from hardneg.models.vlm.tiny.record import FOLDER, PublishedTemplate
from hardneg.models.vlm.tiny.registry import PUBLISHED, published_template, template_source

__all__ = ["FOLDER", "PUBLISHED", "PublishedTemplate", "published_template", "template_source"]
