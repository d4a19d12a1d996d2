"""Characters people cannot see (issue 42, N19): single-line fields refuse bidi controls and marks, zero-width and
other default-ignorable characters, tag characters and line/paragraph separators, wherever they sit in a value; link
hosts must be ASCII (an internationalised name in its IDNA form). The classes are written out here from the Unicode
data (DerivedCoreProperties.txt, Default_Ignorable_Code_Point; the Bidi_Control property), not read from the guard
module, so the suite is an independent check of `hardneg.guards`' rule."""

from __future__ import annotations

import unicodedata

import pytest

pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from hardneg import guards  # noqa: E402

#: Bidi_Control (PropList.txt) and the two bidi marks LRM/RLM (+ ALM, in Bidi_Control)
BIDI = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
#: Default_Ignorable_Code_Point (DerivedCoreProperties.txt, Unicode 15.1), assigned ranges
IGNORABLE = [0x00AD, 0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, *range(0x180B, 0x1810), *range(0x200B, 0x200E),
             *range(0x2060, 0x2065), *range(0x206A, 0x2070), 0x3164, *range(0xFE00, 0xFE10), 0xFEFF, 0xFFA0,
             *range(0xFFF0, 0xFFF9), *range(0x1BCA0, 0x1BCA4), *range(0x1D173, 0x1D17B)]
#: E0000..E0FFF: the tag characters and variation selectors supplement, and the reserved code points around them,
#: which DerivedCoreProperties.txt lists as Default_Ignorable_Code_Point too (so that future ones stay invisible)
TAGS = [*range(0xE0000, 0xE1000)]
SEPARATORS = [0x2028, 0x2029]
INVISIBLE = BIDI + IGNORABLE + TAGS + SEPARATORS

visible = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=20)


@settings(max_examples=200)
@given(visible, visible, st.sampled_from(INVISIBLE))
def test_single_line_text_refuses_every_invisible_character_anywhere(left, right, cp):
    value = left + chr(cp) + right
    with pytest.raises(guards.GuardError) as err:
        guards.text(value, "license")
    assert f"U+{cp:04X}" in str(err.value) and "license" in str(err.value)
    with pytest.raises(guards.GuardError):
        guards.model_id(f"org/{left}{chr(cp)}")
    with pytest.raises(guards.GuardError):
        guards.url(f"https://huggingface.co/{left}{chr(cp)}{right}", "link")


@settings(max_examples=100)
@given(visible, visible, st.sampled_from(BIDI))
def test_multiline_text_refuses_bidi_controls_too(left, right, cp):
    with pytest.raises(guards.GuardError):
        guards.text(left + chr(cp) + right, "reason", multiline=True)


@settings(max_examples=100)
@given(st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Cf", "Zl", "Zp", "Mn", "Me")),
               min_size=1, max_size=40).filter(str.strip))
def test_visible_text_still_passes(value):
    """No overreach: text of visible characters (any script) is accepted unchanged but for the outer spaces."""
    if any(ord(c) in INVISIBLE for c in value):
        return  # Hangul fillers etc. are Lo but default-ignorable
    assert guards.text(value, "license", max_len=1000) == value.strip()


lookalike = st.sampled_from(["а", "о", "е", "／", "．", "ⅰ", "ｈ", "ı", "ß", "é"])  # Cyrillic, fullwidth, ...


@settings(max_examples=150)
@given(st.from_regex(r"[a-z]{1,10}", fullmatch=True), lookalike, st.from_regex(r"[a-z]{1,10}", fullmatch=True))
def test_link_hosts_are_ascii(left, odd, right):
    link = f"https://{left}{odd}{right}.co/org/m"
    with pytest.raises(guards.GuardError) as err:
        guards.url(link, "link")
    assert "host" in str(err.value)


@settings(max_examples=60)
@given(st.from_regex(r"[a-z][a-z0-9-]{0,20}[a-z0-9]", fullmatch=True), st.sampled_from(["co", "org", "io"]))
def test_ascii_and_idna_hosts_pass(name, tld):
    assert guards.url(f"https://{name}.{tld}/x", "link") == f"https://{name}.{tld}/x"
    idna = f"https://xn--{name}.{tld}/"
    if "--" not in name:
        assert guards.url(idna, "link") == idna


def test_the_examples_hypothesis_found_are_refused():
    """Two falsifying examples found by the suite: a model id ending in a line separator (strip() used to drop it
    and accept the rest), and a reserved default-ignorable tag-block code point."""
    for cp in (0x2028, 0x2029, 0x85):
        with pytest.raises(guards.GuardError):
            guards.model_id(f"org/0{chr(cp)}")
    with pytest.raises(guards.GuardError):
        guards.text("\U000e0000", "license")
    assert guards.model_id(" org/name ") == "org/name"  # plain outer spaces are still trimmed


def test_the_issue_values_are_refused():
    """The 104 of issue 42's 912 fuzzed values, by class: one of each."""
    for value in ["x\u200e", "x\u200f", "x\u061c", "a\u200bb", "a\u200cb", "a\u200db", "a\u2060b", "\ufeffa",
                  "a\u00adb", "a\U000e0041", "a\u2028b", "a\u2029b"]:
        with pytest.raises(guards.GuardError):
            guards.text(value, "license")
    for link in ["https://hugging／face.co/org/m", "https://huggingfаce.co/org/m", "https://huggingface.co@evil.io/"]:
        with pytest.raises(guards.GuardError):
            guards.url(link, "link")
    err = pytest.raises(guards.GuardError, guards.url, "https://bücher.example/x", "link").value
    assert "xn--bcher-kva.example" in str(err)  # the fix shows the IDNA form
    assert unicodedata.name("\u200b") == "ZERO WIDTH SPACE"
