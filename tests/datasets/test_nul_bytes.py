"""A NUL byte anywhere in what a parser returns is an error, for every benchmark, the next ones included.

The check is in the shared build path (`hardneg.datasets.builder.parse_raw` -> `table_checks.check_tables`), so
a parser is covered without calling it. Each built-in sample gets a NUL put into a caption (as the JSON escape
`\\u0000` in JSON files, which their readers decode, else as a raw byte), and so does a toy benchmark declared in a
test; each build must fail naming the file, the row and the fix.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from hardneg import benchmarks
from hardneg.datasets import RawFormatError, parse_raw, sample_benchmarks, sample_raw_dir
from hardneg.datasets.hub_layout import ConfigData, release_build
from hardneg.datasets.table_checks import check_nul

TOY = Path(__file__).resolve().parents[1] / "benchmarks" / "toy_benchmark.py"
JSON_SUFFIXES = (".json", ".jsonl")


def _a_kept_text(build) -> str:
    """A caption (multiple choice) or query text (retrieval) the build keeps."""
    for config in build.configs:
        for table in config.splits.values():
            if "captions" in table.column_names and table.num_rows:
                return table.column("captions")[0].as_py()[0]
            if "text" in table.column_names and table.num_rows:
                return table.column("text")[0].as_py()
    raise AssertionError(f"{build.benchmark}: no caption or query text in the built sample")


def _poison(raw: Path, text: str) -> list[str]:
    """Put a NUL into every occurrence of the longest word of `text` in the raw files; the files changed."""
    words = sorted(set(re.findall(r"[A-Za-z]{4,}", text)), key=lambda w: (-len(w), w))
    for word in words:
        changed = []
        pattern = re.compile(rf"\b{word}\b".encode())
        for path in sorted(p for p in raw.rglob("*") if p.is_file() and p.name != "videos.txt"):
            data = path.read_bytes()
            nul = b"\\u0000" if path.suffix in JSON_SUFFIXES else b"\x00"
            poisoned = word[:2].encode() + nul + word[2:].encode()
            new = pattern.sub(lambda _: poisoned, data)
            if new != data:
                path.write_bytes(new)
                changed.append(path.name)
        if changed:
            return changed
    raise AssertionError(f"no word of {text!r} found in the raw files")


@pytest.mark.parametrize("name", sample_benchmarks())
def test_a_nul_byte_in_each_built_in_sample_is_an_error_naming_file_row_and_fix(name, tmp_path):
    raw = tmp_path / name
    shutil.copytree(sample_raw_dir(name), raw)
    text = _a_kept_text(parse_raw(name, raw))
    changed = _poison(raw, text)
    with pytest.raises(ValueError) as err:
        parse_raw(name, raw)
    message = str(err.value)
    # the shared check names the NUL; a parser that rejects the poisoned value first shows it (`\x00`)
    assert ("NUL" in message or "\\x00" in message) and "Fix:" in message, message
    assert any(f in message for f in changed), (changed, message)
    assert re.search(r"\b(row|line) \d+", message), message


@pytest.fixture()
def toy():
    before = dict(benchmarks.all_benchmarks())  # after discovery, so restoring it never empties the registry
    bench = benchmarks.load_file(TOY)
    yield bench
    benchmarks._REGISTRY.clear()
    benchmarks._REGISTRY.update(before)


def test_a_nul_escape_in_a_toy_benchmark_declared_in_a_test_names_file_line_row_field_and_fix(toy, tmp_path):
    """The toy's parser reads JSON lines with `json.loads` and checks nothing about NUL: the build path does."""
    raw = tmp_path / "raw"
    shutil.copytree(Path(toy.sample_root) / toy.sample, raw)
    path = raw / "toy.jsonl"
    path.write_text(path.read_text().replace("a woman closes a door", "a woman clo\\u0000ses a door"))
    with pytest.raises(RawFormatError) as err:
        parse_raw("toy", raw)
    message = str(err.value)
    assert message.startswith(f"{path}, line 2: a NUL byte in field 'captions[1]' of config 'main', split 'test', "
                              "row 1 (item 'toy:toy002') of the toy build"), message
    assert "Fix: " in message and "remove it from the raw file" in message


def test_the_check_reaches_nested_strings_and_names_the_field(tmp_path):
    import pyarrow as pa

    table = pa.table({"id": ["a", "b"], "provenance": [[{"rule": "x"}], [{"rule": "y"}, {"rule": "z\x00"}]]})
    build = release_build("nested", [ConfigData("c", {"test": table})], [], {})
    with pytest.raises(RawFormatError, match=r"field 'provenance\[1\]\.rule' of config 'c', split 'test', row 1 \(item 'b'\)"):
        check_nul(build)
    check_nul(release_build("clean", [ConfigData("c", {"test": table.slice(0, 1)})], [], {}))  # no NUL: passes


def test_a_negative_type_the_declaration_does_not_list_is_an_error_naming_row_item_and_fix(toy, tmp_path, monkeypatch):
    """The other table check of the build path: types beyond the shared ones must be declared (`negative_types`)."""
    import dataclasses

    raw = tmp_path / "raw"
    shutil.copytree(Path(toy.sample_root) / toy.sample, raw)
    module = __import__(toy.parser.partition(":")[0])
    real = module.parse

    def parse_with_a_new_type(folder):
        build = real(folder)
        table = build.configs[0].splits["test"]
        types = table.column("negative_types").to_pylist()
        types[2] = ["positive", "bogus", "unknown"]
        build.configs[0].splits["test"] = table.set_column(table.column_names.index("negative_types"),
                                                           "negative_types", [types])
        return build

    monkeypatch.setattr(module, "parse", parse_with_a_new_type)
    with pytest.raises(ValueError, match=r"toy: config 'main', split 'test', row 2 \(item 'toy:toy003'\): negative type "
                                         r"'bogus' is unknown\. Fix: .*add the type to the declaration's negative_types"):
        parse_raw("toy", raw)
    benchmarks.register(dataclasses.replace(toy, negative_types=("bogus",)), replace=True)
    assert parse_raw("toy", raw).negative_types[-1] == "bogus"
