"""docs/benchmark-fields.md is generated from the declaration dataclasses and must match them now."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from hardneg import field_reference

ROOT = Path(__file__).resolve().parents[1]


def test_the_committed_page_is_what_the_generator_writes_now():
    page = (ROOT / field_reference.PAGE).read_text(encoding="utf-8")
    assert page == field_reference.render(), (
        f"{field_reference.PAGE} is stale: run `python -m hardneg.field_reference --write {field_reference.PAGE}`")


def test_every_field_of_every_class_is_on_the_page_with_its_text():
    page = field_reference.render()
    for cls in field_reference.classes():
        docs = field_reference.field_docs(cls)
        for f in dataclasses.fields(cls):
            assert docs.get(f.name), (f"{cls.__name__}.{f.name} has no text: add a `#:` comment above it, a `# ...` "
                                      "comment after it, or a 'name: ...' line in the class docstring")
            assert f"| `{f.name}` |" in page


def test_the_generator_reads_all_three_places_and_a_new_field(tmp_path, monkeypatch):
    import sys
    import textwrap

    (tmp_path / "toyfields.py").write_text(textwrap.dedent('''
        from dataclasses import dataclass, field

        @dataclass
        class Toy:
            """A toy.

            b: from the docstring,
                continued.
            """

            #: from above
            a: int
            b: "str | None" = None
            c: list = field(default_factory=list)  # after it
            d: int = 3
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    import toyfields

    try:
        docs = field_reference.field_docs(toyfields.Toy)
        assert docs == {"a": "from above", "b": "from the docstring, continued.", "c": "after it", "d": ""}
        section = field_reference.class_section(toyfields.Toy)
        assert "| `b` | `str \\| None` | `None` | from the docstring, continued. |" in section
        assert f"| `d` | `int` | `3` | {field_reference.UNDOCUMENTED} |" in section
        assert "| `a` | `int` | required | from above |" in section
    finally:
        sys.modules.pop("toyfields", None)


def test_check_mode_fails_on_a_stale_page(tmp_path):
    stale = tmp_path / "page.md"
    stale.write_text(field_reference.render().replace("BibTeX", "Bib"))
    assert field_reference.main(["--check", str(stale)]) == 1
    field_reference.main(["--write", str(stale)])
    assert field_reference.main(["--check", str(stale)]) == 0
