"""What a Parquet file would cost to read, from its footer and page headers, before any value is decoded.

A few hundred bytes of Parquet can declare billions of values (run-length and dictionary
encodings), and pyarrow decodes a whole row (a whole list of scores) at once, so the
board never reads data it has not bounded first:

1. the footer: its length (the file's last 8 bytes) is capped before it is parsed;
2. the declared counts: rows, row groups, values per column chunk, uncompressed bytes;
3. the page headers of every column chunk: a footer can understate its counts, but the
   decoder trusts each page header's `num_values` and `uncompressed_page_size`, so those
   are summed here (a minimal Thrift compact-protocol reader, nothing decoded but the
   headers) and must fit the same bounds.

Data is read only after all three fit, with dictionary-encoded strings kept as
dictionaries (so a repeated long id is not copied per row).
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from hardneg.json_limits import MAX_JSON_DEPTH, json_shape  # noqa: F401 (re-exported: the board's checks read them here)

MAGIC = b"PAR1"
#: the largest footer parsed (the board's footers are a few KB; FIRE's video_ids list a few hundred KB)
MAX_FOOTER_BYTES = 16 * 1024 * 1024
#: the largest page header read (headers hold a few counts and optional min/max statistics)
MAX_PAGE_HEADER_BYTES = 1024 * 1024

# Thrift compact protocol type ids
_BOOL_TRUE, _BOOL_FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY, _LIST, _SET, _MAP, _STRUCT = range(1, 13)
# Parquet PageType
DATA_PAGE, INDEX_PAGE, DICTIONARY_PAGE, DATA_PAGE_V2 = range(4)


class ParquetLimitError(ValueError):
    """The file declares more than the bounds allow, or its structure cannot be read safely."""


class _Compact:
    """Just enough of the Thrift compact protocol to read a struct into {field id: value}."""

    def __init__(self, buf: bytes, max_depth: int = 16):
        self.buf, self.pos, self.max_depth = buf, 0, max_depth

    def _byte(self) -> int:
        if self.pos >= len(self.buf):
            raise ParquetLimitError("truncated")
        b = self.buf[self.pos]
        self.pos += 1
        return b

    def varint(self) -> int:
        out = shift = 0
        while True:
            b = self._byte()
            out |= (b & 0x7F) << shift
            if not b & 0x80:
                return out
            shift += 7
            if shift > 63:
                raise ParquetLimitError("varint too long")

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def value(self, ttype: int, depth: int):
        if ttype in (_BOOL_TRUE, _BOOL_FALSE):  # only inside containers (fields carry it in the type)
            return self._byte() == 1
        if ttype == _BYTE:
            return self._byte()
        if ttype in (_I16, _I32, _I64):
            return self.zigzag()
        if ttype == _DOUBLE:
            self.pos += 8
            if self.pos > len(self.buf):
                raise ParquetLimitError("truncated")
            return None
        if ttype == _BINARY:
            n = self.varint()
            if self.pos + n > len(self.buf):
                raise ParquetLimitError("truncated")
            self.pos += n
            return None  # never needed: skip without copying
        if ttype in (_LIST, _SET):
            head = self._byte()
            n, etype = head >> 4, head & 0x0F
            if n == 15:
                n = self.varint()
            if n > len(self.buf) - self.pos:  # each element takes at least one byte
                raise ParquetLimitError("list longer than its bytes")
            for _ in range(n):
                self.value(etype, depth + 1)
            return None
        if ttype == _MAP:
            n = self.varint()
            if n:
                kv = self._byte()
                if 2 * n > len(self.buf) - self.pos:
                    raise ParquetLimitError("map longer than its bytes")
                for _ in range(n):
                    self.value(kv >> 4, depth + 1)
                    self.value(kv & 0x0F, depth + 1)
            return None
        if ttype == _STRUCT:
            return self.struct(depth + 1)
        raise ParquetLimitError(f"unknown thrift type {ttype}")

    def struct(self, depth: int = 0) -> dict[int, object]:
        if depth > self.max_depth:
            raise ParquetLimitError("nested too deeply")
        out: dict[int, object] = {}
        last = 0
        while True:
            head = self._byte()
            if head == 0:
                return out
            delta, ttype = head >> 4, head & 0x0F
            fid = last + delta if delta else self.zigzag()
            last = fid
            out[fid] = (ttype == _BOOL_TRUE) if ttype in (_BOOL_TRUE, _BOOL_FALSE) else self.value(ttype, depth)


@dataclass
class ChunkPages:
    """What the page headers of one column chunk declare."""

    n_pages: int = 0
    values: int = 0  # sum of data pages' num_values (levels, so empty lists count too)
    rows: int = 0  # data page v2 num_rows where given
    dictionary_values: int = 0
    uncompressed_bytes: int = 0


def open_footer(source: pa.NativeFile, size: int, max_footer_bytes: int = MAX_FOOTER_BYTES) -> int:
    """Check the magic bytes and the footer length before anything parses the footer; returns its length."""
    if size < 12:
        raise ParquetLimitError(f"the file is {size} bytes, too short to be Parquet")
    head = source.read_at(4, 0)
    tail = source.read_at(8, size - 8)
    if tail[4:] == b"PARE":
        raise ParquetLimitError("the file uses Parquet encryption, which the board does not read")
    if head != MAGIC or tail[4:] != MAGIC:
        raise ParquetLimitError("the file does not start and end with the Parquet magic bytes 'PAR1'")
    n = int.from_bytes(tail[:4], "little")
    if n <= 0 or n > size - 12:
        raise ParquetLimitError(f"the footer length {n:,} does not fit in a {size:,}-byte file")
    if n > max_footer_bytes:
        raise ParquetLimitError(f"the footer is {n:,} bytes; the limit is {max_footer_bytes:,}")
    return n


def scan_chunk(source: pa.NativeFile, size: int, col: pq.ColumnChunkMetaData, max_pages: int) -> ChunkPages:
    """Sum the page headers of one column chunk (the byte range the reader decodes)."""
    start = col.data_page_offset
    if col.has_dictionary_page and col.dictionary_page_offset is not None and 0 <= col.dictionary_page_offset < start:
        start = col.dictionary_page_offset
    end = start + col.total_compressed_size
    if start < 4 or col.total_compressed_size < 0 or end > size - 8:
        raise ParquetLimitError(f"column chunk {col.path_in_schema} lies outside the file")
    out = ChunkPages()
    pos = start
    while pos < end:
        window = source.read_at(min(MAX_PAGE_HEADER_BYTES, end - pos), pos)
        reader = _Compact(window)
        try:
            header = reader.struct()
        except ParquetLimitError as exc:
            raise ParquetLimitError(f"a page header of column {col.path_in_schema} cannot be read ({exc})") from None
        ptype, unc, comp = header.get(1), header.get(2), header.get(3)
        if not all(isinstance(v, int) for v in (ptype, unc, comp)) or unc < 0 or comp < 0:
            raise ParquetLimitError(f"a page header of column {col.path_in_schema} lacks its sizes")
        pos += reader.pos + comp
        if pos > end:
            raise ParquetLimitError(f"a page of column {col.path_in_schema} runs past its column chunk")
        out.n_pages += 1
        if out.n_pages > max_pages:
            raise ParquetLimitError(f"column {col.path_in_schema} has more than {max_pages:,} pages")
        out.uncompressed_bytes += unc
        sub = {DATA_PAGE: 5, DICTIONARY_PAGE: 7, DATA_PAGE_V2: 8}.get(ptype)
        if sub is None:
            continue  # index pages hold no values
        body = header.get(sub)
        n = body.get(1) if isinstance(body, dict) else None
        if not isinstance(n, int) or n < 0:
            raise ParquetLimitError(f"a page header of column {col.path_in_schema} lacks its value count")
        if ptype == DICTIONARY_PAGE:
            out.dictionary_values += n
        else:
            out.values += n
            if ptype == DATA_PAGE_V2 and isinstance(body.get(3), int):
                out.rows += body[3]
    return out


def json_depth(raw: bytes) -> int:
    """Deepest bracket nesting of JSON text, brackets inside strings not counted (vectorised, no recursion)."""
    return json_shape(raw)[0]

