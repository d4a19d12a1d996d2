"""The caption grammar: facts -> text, and text -> facts (or why it is not a caption of the world).

    caption  := NP VP RELATION NP ", then it " VP
    NP       := "a " SIZE " " COLOUR " " SHAPE
    VP       := VERB " " MANNER [" " DIRECTION]     (a DIRECTION exactly when VERB is "moves")

e.g. "a small red square moves slowly left above a large blue circle, then it rotates quickly".
The first NP is the subject, who does both events in order; the relation holds for the whole
video. `parse` accepts what `render` writes, with any capitalisation, extra spaces and a final
period; anything else is ungrammatical (`Ungrammatical`, with the reason). Each word sits in a
named slot (`SLOTS`) with a part of speech (`hardneg.world.vocab.SLOT_POS`), so a negative can
say which slot it changed and where (`render_spans`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from hardneg.world.vocab import DIRECTIONAL, SLOT_POS, SLOT_WORDS

#: slot name -> slot kind, in the order the words appear
SLOTS = {
    "a.size": "size", "a.colour": "colour", "a.shape": "shape",
    "e1.verb": "verb", "e1.manner": "manner", "e1.direction": "direction",
    "relation": "relation",
    "b.size": "size", "b.colour": "colour", "b.shape": "shape",
    "e2.verb": "verb", "e2.manner": "manner", "e2.direction": "direction",
}


class Ungrammatical(ValueError):
    """A text that the world's grammar does not generate."""


@dataclass(frozen=True)
class Phrase:
    """A noun phrase: size, colour, shape."""

    size: str
    colour: str
    shape: str


@dataclass(frozen=True)
class Event:
    """A verb phrase: action, manner and (for `moves`) direction."""

    verb: str
    manner: str
    direction: str | None = None


@dataclass(frozen=True)
class Caption:
    """The facts a caption states: subject, its two events in order, relation, second object."""

    a: Phrase
    e1: Event
    relation: str
    b: Phrase
    e2: Event

    def get(self, slot: str) -> str | None:
        """The word (or unit, "in front of") in `slot`; None for an empty direction slot."""
        if slot == "relation":
            return self.relation
        part, _, attr = slot.partition(".")
        return getattr(getattr(self, part), attr)

    def with_slot(self, slot: str, word: str | None) -> "Caption":
        """A copy with `slot` holding `word` (not checked: see `is_well_formed`)."""
        if slot == "relation":
            return replace(self, relation=word)
        part, _, attr = slot.partition(".")
        return replace(self, **{part: replace(getattr(self, part), **{attr: word})})

    def filled_slots(self) -> list[str]:
        return [s for s in SLOTS if self.get(s) is not None]

    def swapped_events(self) -> "Caption":
        return replace(self, e1=self.e2, e2=self.e1)

    def text(self) -> str:
        return render(self)


def pos_of(slot: str) -> str:
    """The part of speech of a slot (noun, adj, verb, adv, prep)."""
    return SLOT_POS[SLOTS[slot]]


def well_formed_problem(c: Caption) -> str | None:
    """Why `c` is not a caption of the grammar (an unknown word, a direction where none belongs), or None."""
    for slot, kind in SLOTS.items():
        word = c.get(slot)
        if kind == "direction":
            verb = c.get(slot.replace("direction", "verb"))
            if (word is None) != (verb not in DIRECTIONAL):
                return f"'{verb}' takes {'a' if verb in DIRECTIONAL else 'no'} direction"
            if word is None:
                continue
        if word not in SLOT_WORDS[kind]:
            return f"{word!r} is not a {kind} of the world ({', '.join(SLOT_WORDS[kind])})"
    return None


def render_spans(c: Caption) -> tuple[str, dict[str, tuple[int, int]]]:
    """The caption's text and each filled slot's character span in it."""
    problem = well_formed_problem(c)
    if problem:
        raise Ungrammatical(problem)
    pieces: list[tuple[str | None, str]] = []

    def np(p: str):
        pieces.extend([(None, "a "), (f"{p}.size", c.get(f"{p}.size")), (None, " "), (f"{p}.colour", c.get(f"{p}.colour")),
                       (None, " "), (f"{p}.shape", c.get(f"{p}.shape"))])

    def vp(e: str):
        pieces.extend([(f"{e}.verb", c.get(f"{e}.verb")), (None, " "), (f"{e}.manner", c.get(f"{e}.manner"))])
        if c.get(f"{e}.direction") is not None:
            pieces.extend([(None, " "), (f"{e}.direction", c.get(f"{e}.direction"))])

    np("a")
    pieces.append((None, " "))
    vp("e1")
    pieces.extend([(None, " "), ("relation", c.relation), (None, " ")])
    np("b")
    pieces.append((None, ", then it "))
    vp("e2")
    text, spans = "", {}
    for slot, piece in pieces:
        if slot is not None:
            spans[slot] = (len(text), len(text) + len(piece))
        text += piece
    return text, spans


def render(c: Caption) -> str:
    """The caption's text."""
    return render_spans(c)[0]


_TOKEN = re.compile(r"[a-z]+|,")


def _tokens(text: str) -> list[str]:
    if not isinstance(text, str):
        raise Ungrammatical(f"a caption is a string, not {type(text).__name__}")
    t = text.strip().lower()
    if t.endswith("."):
        t = t[:-1]
    leftover = _TOKEN.sub(" ", t).strip()
    if leftover:
        raise Ungrammatical(f"characters the grammar does not use: {leftover[:20]!r}")
    return _TOKEN.findall(t)


def parse(text: str) -> Caption:
    """The facts of a caption; `Ungrammatical` naming the first word that does not fit."""
    toks = _tokens(text)
    pos = 0

    def take(kind: str, what: str | None = None) -> str:
        nonlocal pos
        if kind == "relation" and toks[pos:pos + 3] == ["in", "front", "of"]:
            pos += 3
            return "in front of"
        if pos >= len(toks):
            raise Ungrammatical(f"the caption ends where {what or 'a ' + kind} should follow")
        w = toks[pos]
        ok = (w == what) if what else (w in SLOT_WORDS[kind])
        if not ok:
            expected = repr(what) if what else f"a {kind} ({', '.join(SLOT_WORDS[kind])})"
            raise Ungrammatical(f"word {pos + 1} is {w!r} where {expected} should be")
        pos += 1
        return w

    def np() -> Phrase:
        take("", "a")
        return Phrase(take("size"), take("colour"), take("shape"))

    def vp() -> Event:
        verb, manner = take("verb"), take("manner")
        direction = take("direction") if verb in DIRECTIONAL else None
        return Event(verb, manner, direction)

    a = np()
    e1 = vp()
    relation = take("relation")
    b = np()
    for w in (",", "then", "it"):
        take("", w)
    e2 = vp()
    if pos != len(toks):
        raise Ungrammatical(f"words after the end of the caption: {' '.join(toks[pos:])!r}")
    return Caption(a, e1, relation, b, e2)


def is_grammatical(text: str) -> bool:
    try:
        parse(text)
        return True
    except Ungrammatical:
        return False
