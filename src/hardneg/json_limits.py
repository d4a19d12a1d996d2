"""JSON text measured before it is parsed: nesting depth and number of values, in bounded time and memory.

`json.loads` recurses once per nesting level (100,000 brackets raise RecursionError) and builds one object
per value (4 MB of tiny lists took seconds and hundreds of MB), so text from a file or a visitor is measured
first and refused when over the limits (issue 29). The scan is vectorised with numpy and runs over fixed-size
chunks, so it neither recurses nor holds more than a few MB whatever the text's size.
"""

from __future__ import annotations

import numpy as np

#: deepest nesting of metadata accepted (predictions metadata is 2-3 levels deep)
MAX_JSON_DEPTH = 64
#: largest metadata text parsed (a retrieval file's video id list is the longest part)
MAX_JSON_BYTES = 4 * 1024 * 1024
#: most containers and separators parsed (bounds the objects `json.loads` builds)
MAX_JSON_VALUES = 100_000


#: bytes scanned at a time by `json_shape` (its working memory is a few times this, whatever the text's size)
_SCAN_CHUNK = 1 << 18


def json_shape(raw: bytes) -> tuple[int, int]:
    """(deepest bracket nesting, number of containers and separators) of JSON text, outside strings.

    The second number bounds how many values `json.loads` would build (each value but the first of a container
    follows a comma), so a parse's cost is known before it starts. Vectorised and chunked: no recursion, and
    memory bounded by the chunk size, whatever the text's size."""
    raw = bytes(raw)
    depth = deepest = values = 0
    in_string, backslashes = 0, 0  # carried across chunks: inside a string? backslashes right before the chunk
    for start in range(0, len(raw), _SCAN_CHUNK):
        a = np.frombuffer(raw, dtype=np.uint8, count=min(_SCAN_CHUNK, len(raw) - start), offset=start)
        idx = np.arange(a.size, dtype=np.int32)
        is_bs = a == 0x5C
        last_other = np.maximum.accumulate(np.where(is_bs, np.int32(-1 - backslashes), idx))
        run_before = np.empty(a.size, np.int32)  # backslashes right before each position
        run_before[0] = backslashes
        run_before[1:] = idx[:-1] - last_other[:-1]
        quote = (a == 0x22) & (run_before % 2 == 0)
        inside = (np.cumsum(quote, dtype=np.int32) - quote + in_string) % 2 == 1  # after an odd number of real quotes
        outside = ~inside
        opening = outside & ((a == 0x5B) | (a == 0x7B))
        closing = outside & ((a == 0x5D) | (a == 0x7D))
        level = depth + np.cumsum(opening.astype(np.int8) - closing.astype(np.int8), dtype=np.int64)
        deepest = max(deepest, int(level.max(initial=depth)))
        depth = int(level[-1])
        values += int(opening.sum()) + int((outside & (a == 0x2C)).sum())
        in_string = (in_string + int(quote.sum())) % 2
        backslashes = int(a.size - 1 - last_other[-1])
    return deepest, values


def check_json_text(raw: bytes, what: str, fix: str, max_bytes: int = MAX_JSON_BYTES,
                    max_depth: int = MAX_JSON_DEPTH, max_values: int = MAX_JSON_VALUES) -> None:
    """Raise a ValueError naming `what`, the measure over its limit and `fix` when `raw` is too large, too deep or
    holds too many values to be parsed; the size is checked before anything is scanned."""
    if len(raw) > max_bytes:
        raise ValueError(f"{what} is {len(raw):,} bytes; the limit is {max_bytes:,}; {fix}")
    depth, values = json_shape(raw)
    if depth > max_depth:
        raise ValueError(f"{what} nests {depth:,} levels deep; at most {max_depth} are accepted; {fix}")
    if values > max_values:
        raise ValueError(f"{what} holds about {values:,} values; at most {max_values:,} are accepted; {fix}")


__all__ = ["MAX_JSON_BYTES", "MAX_JSON_DEPTH", "MAX_JSON_VALUES", "check_json_text", "json_shape"]
