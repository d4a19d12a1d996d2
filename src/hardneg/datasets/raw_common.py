"""Shared checks for the authors' raw files: every error names the file, the row and the fix.

Every benchmark's raw-release parser lives in its declaration module (`hardneg.benchmarks.<name>`,
`parse`) and reads everything through these helpers, so that a bad release fails the same way before
any output is written:

* `RawFolder` lists every file of the raw folder; each parser marks each one used or
  ignored (with the reason), and the list goes into `build_report.json` (`files`).
  Zero-byte data files are reported together, in one error.
* Text is decoded as UTF-8 with the file, line, column and byte offset of a bad byte.
* CSV/TSV fields are bounded (`MAX_FIELD_CHARS`), JSON nesting is bounded
  (`MAX_JSON_DEPTH`), and every value is type-checked before Arrow sees it.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import os
import re
from pathlib import Path
from typing import Any, Callable, Iterable

import pyarrow as pa

from hardneg.schema import MC_ITEM_SCHEMA, PROVENANCE_TYPE

#: Marks a raw caption that no generator made (the authors' files carry no per-negative record).
AUTHORS_RELEASE = "authors-release"

#: Longest accepted text field (a caption, an id, a CSV cell), in characters. Python's csv
#: module stops at 131,072 by default with a bare `_csv.Error`; the readers here raise the
#: limit to this bound and name the file and row of a longer field.
MAX_FIELD_CHARS = 1_048_576

#: Deepest JSON nesting accepted. The releases are at most 4 levels deep (FIRE: object, list,
#: row object, list of labels); a deeper file is damaged.
MAX_JSON_DEPTH = 32

#: Extensions of files that hold data: a zero-byte one is a failed download, not a file to skip.
DATA_SUFFIXES = (".json", ".jsonl", ".csv", ".tsv", ".txt", ".parquet")


class RawFormatError(ValueError):
    """A raw release file is malformed; the message names the file, the row and the fix."""

    def __init__(self, path: str | Path, problem: str, fix: str, row: int | str | None = None):
        where = f"{path}" if row is None else f"{path}, row {row}"
        super().__init__(f"{where}: {problem}. Fix: {fix}")
        self.path = str(path)
        self.row = row


# --------------------------------------------------------------------------- the raw folder


class RawFolder:
    """Every file under a raw folder, each marked used or ignored with the reason.

    Hidden files (`.DS_Store`) and hidden folders are listed as ignored without being read.
    Construction fails, in one error listing them all, when files that `release_name` says are
    release files (default: any data extension) are empty (0 bytes); another empty file is
    listed as ignored.
    """

    def __init__(self, root: str | Path, benchmark: str, release_name: Callable[[Path], bool] | None = None):
        self.root = Path(root)
        self.benchmark = benchmark
        self.entries: dict[str, dict[str, str]] = {}
        self._files: list[Path] = []
        self._malformed: set[str] = set()
        empty: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.root, followlinks=False):
            here = Path(dirpath)
            for d in sorted(dirnames):
                if d.startswith("."):
                    self.entries[self.rel(here / d) + "/"] = {"status": "ignored", "reason": "hidden folder, not searched"}
                elif (here / d).is_symlink():
                    self.entries[self.rel(here / d) + "/"] = {
                        "status": "ignored",
                        "reason": "link to a folder, not followed (copy the release files into the raw folder, or pass the linked folder as --raw)",
                    }
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and not (here / d).is_symlink())
            for name in sorted(filenames):
                path = here / name
                rel = self.rel(path)
                if name.startswith("."):
                    self.entries[rel] = {"status": "ignored", "reason": "hidden file (e.g. .DS_Store), not read"}
                    continue
                if not path.is_file():
                    self.entries[rel] = {"status": "ignored", "reason": "not a regular file (broken link, socket or device)"}
                    continue
                if path.stat().st_size == 0:
                    if release_name(path) if release_name else path.suffix.lower() in DATA_SUFFIXES:
                        empty.append(rel)
                    else:
                        self.entries[rel] = {"status": "ignored", "reason": f"empty (0 bytes); the name is not that of a {benchmark} release file"}
                    continue
                self._files.append(path)
        if empty:
            raise RawFormatError(
                self.root,
                f"{len(empty)} empty (0-byte) file{'s' if len(empty) > 1 else ''}: {', '.join(empty)}",
                "re-download each of them (a 0-byte file is a failed download or copy), or delete the ones you do not need",
            )

    def rel(self, path: Path) -> str:
        """Path relative to the raw folder, with / separators."""
        try:
            return Path(path).relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

    @property
    def files(self) -> list[Path]:
        """Non-hidden regular files, sorted by path."""
        return list(self._files)

    def unclassified(self) -> list[Path]:
        return [p for p in self._files if self.rel(p) not in self.entries]

    def status(self, path: Path) -> str | None:
        entry = self.entries.get(self.rel(path))
        return entry["status"] if entry else None

    def use(self, path: Path, reason: str) -> None:
        self.entries[self.rel(path)] = {"status": "used", "reason": reason}

    def ignore(self, path: Path, reason: str) -> None:
        self.entries[self.rel(path)] = {"status": "ignored", "reason": reason}

    def malformed(self, path: Path, reason: str) -> None:
        """Ignored for its content (not its name): when nothing is built and the file bears a release file's name,
        `nothing_found` says this file is malformed, and why, rather than that no release file was found."""
        self.ignore(path, reason)
        self._malformed.add(self.rel(path))

    def ignored(self) -> list[dict[str, str]]:
        return [e for e in self.report() if e["status"] == "ignored"]

    def report(self) -> list[dict[str, str]]:
        """`[{"path", "status", "reason"}]` sorted by path; unclassified files count as ignored."""
        for path in self.unclassified():
            self.ignore(path, f"not recognized as a {self.benchmark} release file")
        return [{"path": rel, **self.entries[rel]} for rel in sorted(self.entries)]

    def nothing_found(self, expected: str) -> FileNotFoundError | RawFormatError:
        """The error for a folder where no release file was recognized, listing what was seen.

        When a file bearing a release file's name (one `expected` names) was read and turned down for its
        content, the release file IS there: the error says it is malformed, and why, instead of "not found"."""
        named = _release_name_patterns(expected)
        for rel in sorted(self._malformed):
            entry = self.entries[rel]
            if entry["status"] == "ignored" and any(p.fullmatch(Path(rel).name) for p in named):
                return RawFormatError(self.root / rel, f"this {self.benchmark} release file is there but malformed: "
                                      f"{entry['reason']}", f"re-download it from the authors' release (expected "
                                      f"{expected})")
        seen = self.report()
        listing = "; ".join(f"{e['path']} ({e['reason']})" for e in seen) if seen else "the folder is empty"
        return FileNotFoundError(f"{self.root}: no {self.benchmark} release file found; expected {expected}. Files seen: {listing}")


def _release_name_patterns(expected: str) -> list[re.Pattern]:
    """The file names a builder's `expected` text names ('a.csv', 'counting-{easy,hard}-spelled-sec.json',
    'eval_ssv2_<name>.csv'), as patterns."""
    out = []
    for token in re.findall(r"[\w.{},<>*-]+\.(?:jsonl|json|csv|tsv|txt|parquet)\b", expected):
        rx, i = "", 0
        for m in re.finditer(r"\{([^{}]*)\}|<[^<>]*>|\*", token):
            rx += re.escape(token[i:m.start()])
            part = m.group(0)
            rx += ("(?:" + "|".join(re.escape(a) for a in m.group(1).split(",")) + ")") if part.startswith("{") \
                else "[^/]+"
            i = m.end()
        out.append(re.compile(rx + re.escape(token[i:]), re.IGNORECASE))
    return out


# --------------------------------------------------------------------------- text and sniffing


def _decode_error(path: Path, data: bytes, exc: UnicodeDecodeError, skipped: int = 0) -> RawFormatError:
    start = exc.start
    line = data.count(b"\n", 0, start) + 1
    column = start - (data.rfind(b"\n", 0, start) + 1) + 1
    return RawFormatError(
        path,
        f"byte 0x{data[start]:02x} at line {line}, column {column} (byte offset {start + skipped}) is not UTF-8",
        "save the file as UTF-8 (it may be Latin-1 or Windows-1252 text, or a damaged download); re-download it from the authors' release",
        row=line,
    )


def refuse_nul(path: Path, text: str) -> None:
    """A NUL byte means a binary or damaged file (Python's csv would accept it silently): name its line and column."""
    nul = text.find("\x00")
    if nul >= 0:
        line = text.count("\n", 0, nul) + 1
        raise RawFormatError(
            path,
            f"a NUL byte at line {line}, column {nul - (text.rfind(chr(10), 0, nul) + 1) + 1} (the file is binary or damaged)",
            "re-download the file; it must be plain UTF-8 text",
            row=line,
        )


def read_text(path: Path) -> str:
    """The whole file as UTF-8 text (a leading BOM is dropped, a CRLF copy read as its LF original); a bad byte or a
    NUL is named by line, column and offset."""
    data = Path(path).read_bytes()
    skipped = 0
    if data.startswith(codecs.BOM_UTF8):
        data, skipped = data[len(codecs.BOM_UTF8) :], len(codecs.BOM_UTF8)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _decode_error(path, data, exc, skipped) from None
    refuse_nul(path, text)
    if "\r\n" in text and text.count("\r\n") == text.count("\n"):
        # a CRLF copy of a release (a Windows checkout, a spreadsheet's save) is read as the same file: every line
        # break is CRLF, so none of them is the authors' text (issue 36 M12: a valid SSv2 copy was refused)
        text = text.replace("\r\n", "\n")
    return text


def read_head(path: Path, n_bytes: int = 65_536) -> str:
    """The first bytes of a file as text, for recognizing its format (bad bytes become U+FFFD)."""
    with open(path, "rb") as fh:
        data = fh.read(n_bytes)
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    return data.decode("utf-8", errors="replace")


def first_line(text: str) -> str:
    """The first non-blank line, without its line ending."""
    for line in text.splitlines():
        if line.strip():
            return line
    return ""


def looks_binary(head: str) -> bool:
    return "\x00" in head or head.startswith("PAR1")


def match_header(line: str, required: Iterable[str], optional: Iterable[str] = ()) -> str | None:
    """The delimiter ("\\t" or ",") under which `line` is a header with every required column, else None."""
    required = list(required)
    for delimiter in ("\t", ","):
        if delimiter == "," :
            try:
                fields = next(csv.reader([line]))
            except (csv.Error, StopIteration):
                continue
        else:
            fields = line.split("\t")
        names = {f.strip() for f in fields}
        if len(fields) > 1 and all(c in names for c in required):
            return delimiter
    return None


def delimiter_note(path: Path, delimiter: str) -> str:
    """How a delimited file was read, saying so when its extension suggests the other delimiter."""
    kind = "tab-separated" if delimiter == "\t" else "comma-separated"
    suffix = path.suffix.lower()
    if (suffix == ".csv" and delimiter == "\t") or (suffix == ".tsv" and delimiter == ","):
        return f"{kind} (read as {kind} by its header, although named {suffix})"
    return kind


def json_kind(head: str) -> str | None:
    """"object" / "array" when the text starts like JSON, else None."""
    stripped = head.lstrip()
    if stripped.startswith("{"):
        return "object"
    if stripped.startswith("["):
        return "array"
    return None


# --------------------------------------------------------------------------- JSON


def _no_duplicate_keys(path: Path):
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise RawFormatError(path, f"duplicate key {key!r}", "keep one entry per key (the file was probably concatenated twice)", row=key)
            out[key] = value
        return out

    return hook


_JSON_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')


def nesting_position(text: str, limit: int = MAX_JSON_DEPTH) -> tuple[int, int, int] | None:
    """(line, column, depth) where JSON `text` first nests deeper than `limit`, or None.

    A scan over strings and brackets without recursion, so it works on text that would make
    `json.loads` recurse too deep.
    """
    depth = 0
    for m in _JSON_TOKENS.finditer(text):
        ch = m.group()
        if ch in "[{":
            depth += 1
            if depth > limit:
                i = m.start()
                line = text.count("\n", 0, i) + 1
                return line, i - (text.rfind("\n", 0, i) + 1) + 1, depth
        elif ch in "]}":
            depth -= 1
    return None


def loads_json(text: str, path: Path, row: int | str | None = None, check_duplicate_keys: bool = True, what: str = "the file") -> Any:
    """json.loads with the file and row named on every failure: syntax, truncation, duplicate keys, depth."""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys(path) if check_duplicate_keys else None)
    except json.JSONDecodeError as exc:
        truncated = exc.pos >= len(text.rstrip()) - 1 or (exc.msg.startswith("Unterminated string") and "\n" not in text[exc.pos : len(text.rstrip())])
        problem = f"invalid JSON at line {exc.lineno}, column {exc.colno} ({exc.msg})" if row is None else f"invalid JSON at column {exc.colno} ({exc.msg})"
        if truncated:
            problem += f"; {what} ends early, it looks truncated"
        raise RawFormatError(path, problem, "re-download the file from the authors' release", row=exc.lineno if row is None else row) from None
    except RecursionError:
        where = nesting_position(text)
        line, column, _ = where if where else (None, None, None)
        at = f" at line {line}, column {column}" if where and row is None else (f" at column {column}" if where else "")
        raise RawFormatError(
            path,
            f"JSON nested deeper than {MAX_JSON_DEPTH} levels{at} (the release files are at most 4 levels deep)",
            "the file is damaged; re-download it from the authors' release",
            row=(line if row is None else row),
        ) from None


def load_json_strict(path: Path, check_duplicate_keys: bool = True) -> Any:
    """Read a JSON file: names bad bytes, truncation, excessive nesting and (optionally) duplicate keys."""
    text = read_text(path)
    if not text.strip():
        raise RawFormatError(path, "the file is empty (only whitespace)", "re-download the file from the authors' release")
    # an exact scan before parsing; larger files (token-dense ones scan at ~7 MB/s) rely on the RecursionError catch
    where = nesting_position(text) if len(text) <= 8_000_000 else None
    if where:
        raise RawFormatError(
            path,
            f"JSON nested deeper than {MAX_JSON_DEPTH} levels at line {where[0]}, column {where[1]} (the release files are at most 4 levels deep)",
            "the file is damaged; re-download it from the authors' release",
            row=where[0],
        )
    return loads_json(text, path, check_duplicate_keys=check_duplicate_keys)


# --------------------------------------------------------------------------- delimited text


def read_delimited(
    path: Path,
    delimiter: str,
    required: Iterable[str],
    optional: Iterable[str] = (),
    text: str | None = None,
) -> list[tuple[int, dict[str, str]]]:
    """(row number, row) of every data row of a CSV/TSV after checking its header.

    Row numbers count the header as row 1, as a spreadsheet shows them. Fields longer than
    MAX_FIELD_CHARS, NUL bytes, bad quoting and non-UTF-8 bytes are errors naming the row.
    """
    required = list(required)
    allowed = set(required) | set(optional)
    text = read_text(path) if text is None else text
    refuse_nul(path, text)
    reader = csv.reader(
        io.StringIO(text, newline=""),
        delimiter=delimiter,
        quoting=csv.QUOTE_MINIMAL if delimiter == "," else csv.QUOTE_NONE,
    )
    previous_limit = csv.field_size_limit(MAX_FIELD_CHARS)
    rows: list[tuple[int, dict[str, str]]] = []
    try:
        try:
            header = next(reader)
        except StopIteration:
            raise RawFormatError(path, "the file is empty", "re-download the file; it should start with a header line") from None
        header = [h.strip() for h in header]
        missing = [c for c in required if c not in header]
        extra = [c for c in header if c not in allowed]
        if missing or extra:
            raise RawFormatError(
                path,
                f"wrong columns {header}: missing {missing}, unexpected {extra}",
                f"the header must be {required + [c for c in optional if c in header]} "
                f"({'tab' if delimiter == chr(9) else 'comma'}-separated)",
                row=1,
            )
        i = 1
        for values in reader:
            i += 1
            if not values or (len(values) == 1 and not values[0].strip()):
                continue  # blank line (e.g. at the end of the file)
            spanning = next((h for h, v in zip(header, values) if "\n" in v or "\r" in v), None)
            if spanning is not None:
                raise RawFormatError(
                    path,
                    f"field '{spanning}' runs over several lines (up to line {reader.line_num}): an unclosed double quote",
                    "close the quote or remove the stray \" at the start of the field; one record per line",
                    row=i,
                )
            if len(values) != len(header):
                raise RawFormatError(
                    path,
                    f"{len(values)} fields where the header has {len(header)}",
                    "check for a truncated line or a stray delimiter inside a caption",
                    row=i,
                )
            rows.append((i, dict(zip(header, values))))
    except csv.Error as exc:
        message = str(exc)
        row = reader.line_num
        if "field larger than field limit" in message:
            problem = f"a field longer than {MAX_FIELD_CHARS:,} characters (the bound for one caption or id)"
            fix = "the file is damaged (an unclosed quote or a missing line break joins many lines into one field); re-download it"
        elif "NUL" in message:
            problem = "a NUL byte (the file is binary or damaged)"
            fix = "re-download the file; it must be plain UTF-8 text"
        else:
            problem = f"unreadable {'TSV' if delimiter == chr(9) else 'CSV'} ({message})"
            fix = "check the quoting around this line, or re-download the file"
        raise RawFormatError(path, problem, fix, row=row) from None
    finally:
        csv.field_size_limit(previous_limit)
    return rows


_INT = re.compile(r"[+-]?[0-9]+")


def parse_int(value: str, path: Path, row: int, column: str, low: int, high: int) -> int:
    """An integer column in [low, high] (ASCII digits only), or an error naming the cell."""
    text = value.strip()
    if not _INT.fullmatch(text):
        raise RawFormatError(path, f"column '{column}' is {value!r}, not an integer", f"write an integer in {low}..{high} with the digits 0-9", row)
    number = int(text)
    if not low <= number <= high:
        raise RawFormatError(path, f"column '{column}' is {number}, out of range {low}..{high}", f"use an index in {low}..{high}", row)
    return number


def check_text(value: Any, path: Path, row: int | str | None, field: str, fix: str, optional: bool = False) -> str | None:
    """A non-empty string of at most MAX_FIELD_CHARS characters (or None when `optional`)."""
    if value is None and optional:
        return None
    if not isinstance(value, str):
        kind = "a list" if isinstance(value, list) else "an object" if isinstance(value, dict) else f"{type(value).__name__} {value!r}"
        raise RawFormatError(path, f"field '{field}' is {kind}, not a string", fix, row)
    if not value.strip() and not optional:
        raise RawFormatError(path, f"field '{field}' is empty", fix, row)
    if "\x00" in value:  # a JSON "\u0000" escape passes the file-level NUL check; a caption never holds one
        at = value.index("\x00")
        line = value.count("\n", 0, at) + 1
        raise RawFormatError(path, f"field '{field}' holds a NUL character (line {line} of the field, character "
                             f"{at + 1}: {value[max(0, at - 30):at]!r} before it)",
                             "the file is damaged; re-download it from the authors' release (text holds no NUL)", row)
    if len(value) > MAX_FIELD_CHARS:
        raise RawFormatError(
            path,
            f"field '{field}' is {len(value):,} characters long, over the bound of {MAX_FIELD_CHARS:,}",
            "the file is damaged (no caption or id is this long); re-download or regenerate it",
            row,
        )
    return value


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# --------------------------------------------------------------------------- provenance


#: the fields of a PROVENANCE_TYPE record beside its origin and details, in the record's order
PROVENANCE_FIELDS = ("generator", "generator_version", "rule", "pos", "span", "replacement", "seed", "span_start",
                     "span_end")


def provenance(origin: str, *, details: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    """One PROVENANCE_TYPE record; `details` is stored as sorted JSON so bytes are stable.

    fields, by name (each None when not given): generator, generator_version, rule, pos, span, replacement, seed,
    span_start, span_end. `span_start`/`span_end`: character offsets of `span` in the positive caption, so that
    `positive[:span_start] + replacement + positive[span_end:] == negative` (kept only where the
    schema has those fields).
    """
    unknown = [k for k in fields if k not in PROVENANCE_FIELDS]
    if unknown:
        raise TypeError(f"provenance() got an unexpected keyword argument {unknown[0]!r}; a record's fields are "
                        f"{', '.join(PROVENANCE_FIELDS)} and details")
    record: dict[str, Any] = {"origin": origin}
    record.update({k: fields.get(k) for k in PROVENANCE_FIELDS[:7]})
    record["details"] = None if details is None else json.dumps(details, sort_keys=True, ensure_ascii=False)
    record.update({k: fields.get(k) for k in PROVENANCE_FIELDS[7:]})
    return record


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch in "_'’"


def replaced_span(positive: str, negative: str) -> tuple[int, int, int] | None:
    """(start, end, negative_end): the one region where two captions differ, widened to whole words.

    `positive[:start] + negative[start:negative_end] + positive[end:] == negative` always holds;
    None when the captions are equal. Offsets are character offsets into the exact strings, so
    the recorded span keeps the caption's own spacing and punctuation.
    """
    if positive == negative:
        return None
    n = min(len(positive), len(negative))
    start = len(os.path.commonprefix([positive, negative]))
    suffix = 0
    while suffix < n - start and positive[len(positive) - 1 - suffix] == negative[len(negative) - 1 - suffix]:
        suffix += 1
    end, neg_end = len(positive) - suffix, len(negative) - suffix

    def inside_word_at_start(i: int) -> bool:  # the cut before position i splits a word
        return i > 0 and _is_word_char(positive[i - 1]) and (
            (i < end and _is_word_char(positive[i])) or (i < neg_end and _is_word_char(negative[i]))
        )

    while inside_word_at_start(start):
        start -= 1
    while end < len(positive) and _is_word_char(positive[end]) and (
        (end > start and _is_word_char(positive[end - 1])) or (neg_end > start and _is_word_char(negative[neg_end - 1]))
    ):
        end, neg_end = end + 1, neg_end + 1
    return start, end, neg_end


_WORDS = re.compile(r"\w+(?:['’-]\w+)*|[^\w\s]")


def single_word_diff(positive: str, negative: str) -> tuple[str | None, str | None]:
    """The exact (span of the positive, replacement) where two captions differ, or (None, None) if equal.

    Both are substrings of the captions themselves (see `replaced_span`), with the captions' own
    spacing and punctuation: "moves his right hand backward, and" vs "... forward, and" gives
    ("backward", "forward").
    """
    span = replaced_span(positive, negative)
    if span is None:
        return None, None
    start, end, neg_end = span
    return positive[start:end], negative[start:neg_end]


def is_single_word(text: str | None) -> bool:
    return text is not None and len(_WORDS.findall(text)) == 1


# --------------------------------------------------------------------------- multiple-choice rows

_STRING_ITEM_FIELDS = ("source_dataset", "source_split", "category")
#: Character offsets of `span` (nullable int64), accepted even before the schema carries them.
_OFFSET_FIELDS = [pa.field(n, pa.int64()) for n in ("span_start", "span_end") if n not in PROVENANCE_TYPE.names]
_PROVENANCE_KEYS = frozenset(PROVENANCE_TYPE.names) | {f.name for f in _OFFSET_FIELDS}


def _check_provenance(entry: Any, path: Path | str, where: int | str, item: str, j: int) -> None:
    fix = f"each provenance entry is an object with the fields {sorted(_PROVENANCE_KEYS)} (strings; seed and span offsets integers; or null)"
    if not isinstance(entry, dict):
        raise RawFormatError(path, f"item {item}: provenance {j} is {_show(entry)}, not an object", fix, where)
    known = _PROVENANCE_KEYS
    unknown = sorted(k for k in entry if k not in known)
    if unknown:
        raise RawFormatError(path, f"item {item}: provenance {j} has unknown fields {unknown}", fix, where)
    for f in [*PROVENANCE_TYPE, *_OFFSET_FIELDS]:
        value = entry.get(f.name)
        if value is None:
            continue
        if pa.types.is_integer(f.type):
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif pa.types.is_string(f.type):
            ok = isinstance(value, str) and len(value) <= MAX_FIELD_CHARS
        else:
            ok = True
        if not ok:
            want = "an integer" if pa.types.is_integer(f.type) else "a string"
            raise RawFormatError(path, f"item {item}: provenance {j} field '{f.name}' is {_show(value)}, not {want}", fix, where)


def check_mc_row(row: dict[str, Any], path: Path | str, where: int | str) -> None:
    """Check one multiple-choice item against the MC_ITEM_SCHEMA rules, types included."""
    if not isinstance(row, dict):
        raise RawFormatError(path, f"the item is {_show(row)}, not an object", f"each item is an object with the fields {MC_ITEM_SCHEMA.names}", where)
    item_id = row.get("id")
    if not isinstance(item_id, str) or not item_id.strip():
        what = "missing" if item_id is None else f"{_show(item_id)} ({type(item_id).__name__})"
        raise RawFormatError(path, f"field 'id' is {what}, not a non-empty string", 'every item needs a string id (e.g. "gender:video7010")', where)
    item = repr(item_id) if len(item_id) <= 60 else repr(item_id[:57] + "...")
    check_text(row.get("id"), path, where, "id", "ids are short strings")
    video = row.get("video_id")
    if not isinstance(video, str) or not video.strip():
        what = "missing" if video is None else f"{_show(video)} ({type(video).__name__})"
        raise RawFormatError(path, f"item {item}: field 'video_id' is {what}, not a non-empty string", 'every item needs the id of its one video as a string (e.g. "video7010")', where)
    check_text(video, path, where, "video_id", "video ids are short strings")
    for field in _STRING_ITEM_FIELDS:
        check_text(row.get(field), path, where, field, f"'{field}' is a string or null", optional=True)
    captions = row.get("captions")
    if not isinstance(captions, list):
        raise RawFormatError(
            path,
            f"item {item}: field 'captions' is {_show(captions)} ({type(captions).__name__}), not a list",
            'captions is a list of strings, the positive and its negatives: ["a man runs", "a man walks", ...]',
            where,
        )
    n = len(captions)
    if n < 2:
        raise RawFormatError(path, f"item {item} has {n} captions", "an item needs the positive and at least one negative", where)
    for j, caption in enumerate(captions):
        if not isinstance(caption, str) or not caption.strip():
            raise RawFormatError(path, f"item {item}: caption {j} is {'missing or empty' if not caption else _show(caption) + ', not a string'}", "fill in the caption as a string or drop the item", where)
        if len(caption) > MAX_FIELD_CHARS:
            raise RawFormatError(path, f"item {item}: caption {j} is {len(caption):,} characters long, over the bound of {MAX_FIELD_CHARS:,}", "the row is damaged; regenerate it", where)
    label = row.get("label")
    if not isinstance(label, int) or isinstance(label, bool) or not 0 <= label < n:
        raise RawFormatError(path, f"item {item}: label {_show(label)} is not an integer in 0..{n - 1}", "label is the index of the positive caption", where)
    manipulated = row.get("manipulated_index")
    if manipulated is not None:
        if not isinstance(manipulated, int) or isinstance(manipulated, bool) or not 0 <= manipulated < n:
            raise RawFormatError(
                path,
                f"item {item}: field 'manipulated_index' is {_show(manipulated)}, not an integer in 0..{n - 1} or null",
                "manipulated_index is the index of the manipulated caption (an integer), or null",
                where,
            )
        if manipulated == label:
            raise RawFormatError(path, f"item {item}: manipulated_index equals label ({label})", "manipulated_index names a negative, never the positive", where)
    for column in ("negative_types", "provenance"):
        values = row.get(column)
        if not isinstance(values, list):
            raise RawFormatError(path, f"item {item}: field '{column}' is {_show(values)}, not a list", f"give one {column} entry per caption, as a list", where)
        if len(values) != n:
            raise RawFormatError(path, f"item {item}: {len(values)} {column} for {n} captions", f"give one {column} entry per caption", where)
    for j, kind in enumerate(row["negative_types"]):  # whether the type is declared: the build path's table check
        if not isinstance(kind, str) or not kind:
            raise RawFormatError(path, f"item {item}: negative type {_show(kind)} of caption {j} is not a name", "give each caption's negative type as a string", where)
    if row["negative_types"][label] != "positive":
        raise RawFormatError(path, f"item {item}: caption {label} is the label but its type is {row['negative_types'][label]!r}", "the labelled caption must have type 'positive'", where)
    for j, entry in enumerate(row["provenance"]):
        _check_provenance(entry, path, where, item, j)


def mc_table(rows: list[dict[str, Any]], path: Path | str, where: list[int | str] | None = None) -> pa.Table:
    """Check rows (types, unique ids, one schema) and make the MC_ITEM_SCHEMA table, in the given order."""
    seen: dict[str, int | str] = {}
    for i, row in enumerate(rows):
        at = where[i] if where else i
        check_mc_row(row, path, at)
        if row["id"] in seen:
            raise RawFormatError(path, f"duplicate id {row['id']!r} (first at row {seen[row['id']]})", "ids must be unique within a config; remove the repeated item", at)
        seen[row["id"]] = at
    columns = {f.name: [r.get(f.name) for r in rows] for f in MC_ITEM_SCHEMA}
    try:
        return pa.Table.from_pydict(columns, schema=MC_ITEM_SCHEMA)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:  # a type the checks above missed: still name the file
        raise RawFormatError(path, f"a value does not fit the item schema ({exc})", "check the types of the fields against hardneg.schema.MC_ITEM_SCHEMA") from None


__all__ = [
    "AUTHORS_RELEASE",
    "MAX_FIELD_CHARS",
    "MAX_JSON_DEPTH",
    "PROVENANCE_TYPE",
    "RawFolder",
    "RawFormatError",
    "check_mc_row",
    "check_text",
    "delimiter_note",
    "first_line",
    "json_kind",
    "load_json_strict",
    "loads_json",
    "match_header",
    "mc_table",
    "nesting_position",
    "parse_int",
    "provenance",
    "read_delimited",
    "read_head",
    "read_text",
    "replaced_span",
    "single_word_diff",
]
