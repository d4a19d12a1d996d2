"""Issue 49, N28: the guards against every character of General Category Cf (Python's unicodedata, not the guard's
own list) and the Default_Ignorable set (the list tests/test_guards_invisible.py keeps from DerivedCoreProperties),
ports 1-65535, and URL schemes in any case: nothing that should be refused is accepted, nothing valid is refused."""

from __future__ import annotations

import sys
import unicodedata
from pathlib import Path

import pytest

pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from hardneg import guards  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from test_guards_invisible import INVISIBLE  # noqa: E402

#: every code point of General Category Cf, as Python's unicodedata has it
CF = [cp for cp in range(sys.maxunicode + 1) if unicodedata.category(chr(cp)) == "Cf"]
visible = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=12)


def test_every_format_character_is_refused_in_a_single_line_field():
    """All of them, each alone between visible text (the ones the issue found: U+FFF9-FFFB, U+13430-13438,
    U+0600-0605, among them)."""
    assert {0xFFF9, 0xFFFA, 0xFFFB, 0x13430, 0x13438, 0x0600, 0x0605} <= set(CF)
    passed = []
    for cp in CF + INVISIBLE:
        try:
            guards.text(f"ab{chr(cp)}cd", "license")
        except guards.GuardError as exc:
            assert f"U+{cp:04X}" in str(exc), str(exc)
        else:
            passed.append(f"U+{cp:04X}")
    assert passed == [], f"accepted: {passed[:20]}"
    assert list(guards.ALLOWED_FORMAT) == []  # the named exceptions: none


@settings(max_examples=150)
@given(visible, visible, st.sampled_from(CF + INVISIBLE))
def test_fuzz_format_characters_anywhere_in_names_and_links(left, right, cp):
    for call in (lambda: guards.model_id(f"org/{left}{chr(cp)}{right}"),
                 lambda: guards.url(f"https://huggingface.co/{left}{chr(cp)}{right}", "link"),
                 lambda: guards.text(f"{left}{chr(cp)}{right}", "submitter")):
        with pytest.raises(guards.GuardError):
            call()


def test_a_zero_width_joiner_stays_allowed_in_multi_line_text():
    assert guards.text("family \U0001F468\u200d\U0001F469", "reason", multiline=True)


@settings(max_examples=200)
@given(st.integers(min_value=-10, max_value=200000))
def test_ports_are_1_to_65535(port):
    link = f"https://example.org:{port}/m" if port >= 0 else f"https://example.org:{port}/m"
    if 1 <= port <= 65535:
        assert guards.url(link, "link") == link
    else:
        with pytest.raises(guards.GuardError):
            guards.url(link, "link")


@settings(max_examples=100)
@given(st.sampled_from(["http", "https"]), st.lists(st.booleans(), min_size=5, max_size=5))
def test_schemes_in_any_case_are_accepted(scheme, upper):
    cased = "".join(c.upper() if u else c for c, u in zip(scheme, upper))
    link = f"{cased}://huggingface.co/org/m"
    assert guards.url(link, "link") == link


@pytest.mark.parametrize("link", ["ftp://x.org/m", "javascript://x.org/%0Aalert(1)", "hxxps://x.org",
                                  "HTTPS//x.org", "https:/x.org"])
def test_other_schemes_are_refused(link):
    with pytest.raises(guards.GuardError):
        guards.url(link, "link")
