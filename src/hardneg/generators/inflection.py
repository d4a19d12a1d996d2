"""Put a replacement lemma into the inflection of the word it replaces ('pushing' -> 'pulling').

Uses `lemminflect` (Penn tag in, surface form out) with small suffix rules as the
fallback for words it does not know.
"""

from __future__ import annotations

import functools

from hardneg.resources import load_lemminflect

#: Penn tags whose surface form differs from the lemma.
INFLECTED_TAGS = {"NNS", "NNPS", "VBD", "VBG", "VBN", "VBZ", "VBP", "JJR", "JJS", "RBR", "RBS"}


def _rule_inflect(lemma: str, tag: str) -> str:
    if tag in ("NNS", "NNPS", "VBZ"):
        if lemma.endswith(("s", "x", "z", "ch", "sh")):
            return lemma + "es"
        if lemma.endswith("y") and lemma[-2:-1] not in "aeiou":
            return lemma[:-1] + "ies"
        return lemma + "s"
    if tag == "VBG":
        return (lemma[:-1] if lemma.endswith("e") and not lemma.endswith("ee") else lemma) + "ing"
    if tag in ("VBD", "VBN"):
        return lemma + ("d" if lemma.endswith("e") else "ed")
    if tag in ("JJR", "RBR"):
        return "more " + lemma
    if tag in ("JJS", "RBS"):
        return "most " + lemma
    return lemma


@functools.lru_cache(maxsize=65536)
def inflect(lemma: str, tag: str) -> str:
    """`lemma` in the form Penn `tag` asks for; multiword and uninflected tags come back as is."""
    if tag not in INFLECTED_TAGS or " " in lemma:
        return lemma
    forms = load_lemminflect().getInflection(lemma, tag=tag, inflect_oov=False)
    return forms[0] if forms else _rule_inflect(lemma, tag)


@functools.lru_cache(maxsize=65536)
def lemmatize(word: str, upos: str) -> str:
    """Lower-cased lemma of `word` read as universal part of speech `upos` (NOUN, VERB, ADJ, ADV, ADP)."""
    w = word.lower()
    if upos == "ADP":
        return w
    lemmas = load_lemminflect().getLemma(w, upos=upos, lemmatize_oov=True)
    return lemmas[0].lower() if lemmas else w
