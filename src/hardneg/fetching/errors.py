"""The one error `hardneg fetch` raises: a message naming the file, what went wrong and the fix."""

from __future__ import annotations


class FetchError(ValueError):
    """A download, check or unpack that did not complete; the message says what to do (the CLI prints it)."""
