"""English readings of world-like captions, for the generator audit (`hardneg.world.audit`).

Why: a generator's negative is often not a caption of the world's grammar ("a small red rectangle
...", "it winks quickly", "rotates slowly left") and yet is a perfectly good English sentence whose
truth the world decides, because the world is CLOSED: it holds two flat objects of the listed
shapes, colours and sizes, one doing two of the listed actions. So

* every English word a caption can use in a slot has a truth table over the world's values
  (`TABLES`: the world's own words, their synonyms, and hypernyms such as "polygon" or "figure"
  that are true of several values); a word outside the tables names a shape, colour, action,
  manner, direction or relation that nothing in the world has, so the fact it states is false;
* grammaticality is English, not the world's template: each slot must hold a word of the right
  English class (a noun where the shape is, a third-person verb where the action is, an adverb
  after it, a preposition between the noun phrases, a/an agreeing), read from the tables or, for
  words outside them, from spaCy's tag in context. The world's own rule that only "moves" takes a
  direction is a fact about the world ("rotates slowly left" is English, and false), not grammar.

`read(text, template)` aligns a negative with the true caption it was made from (`template`, the
world caption: its words outside the changed region keep their slots) and returns either the reason
it is not English or a `Reading` that `holds(scene, reading)` judges.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hardneg.world import vocab

_ALL_SHAPES = frozenset(vocab.SHAPES)
_POLYGONS = frozenset({"square", "triangle", "diamond", "hexagon"})

#: slot kind -> English word -> the world values it is true of (closed vocabulary; a word not listed is
#: true of nothing in the world)
TABLES: dict[str, dict[str, frozenset]] = {
    "shape": {
        **{s: frozenset({s}) for s in vocab.SHAPES},
        "rectangle": frozenset({"square"}), "quadrilateral": frozenset({"square", "diamond"}),
        "quadrangle": frozenset({"square", "diamond"}), "tetragon": frozenset({"square", "diamond"}),
        "polygon": _POLYGONS, "disc": frozenset({"circle"}), "disk": frozenset({"circle"}),
        "round": frozenset({"circle"}), "rhombus": frozenset({"diamond"}), "lozenge": frozenset({"diamond"}),
        "loop": frozenset({"ring"}), "band": frozenset({"ring"}), "hoop": frozenset({"ring"}),
        "annulus": frozenset({"ring"}), "donut": frozenset({"ring"}), "doughnut": frozenset({"ring"}),
        "pentagram": frozenset({"star"}), "trigon": frozenset({"triangle"}), "plus": frozenset({"cross"}),
        "figure": _ALL_SHAPES, "shape": _ALL_SHAPES, "form": _ALL_SHAPES, "object": _ALL_SHAPES,
        "thing": _ALL_SHAPES, "item": _ALL_SHAPES, "one": _ALL_SHAPES,
    },
    "colour": {
        **{c: frozenset({c}) for c in vocab.COLOURS},
        "gray": frozenset({"grey"}), "violet": frozenset({"purple"}), "scarlet": frozenset({"red"}),
        "crimson": frozenset({"red"}), "turquoise": frozenset({"cyan"}), "aqua": frozenset({"cyan"}),
        "rose": frozenset({"pink"}), "coloured": frozenset(vocab.COLOURS), "colored": frozenset(vocab.COLOURS),
        "chromatic": frozenset(vocab.COLOURS) - {"white", "grey"}, "achromatic": frozenset({"white", "grey"}),
    },
    "size": {
        **{s: frozenset({s}) for s in vocab.SIZES},
        "big": frozenset({"large"}), "huge": frozenset({"large"}), "great": frozenset({"large"}),
        "little": frozenset({"small"}), "tiny": frozenset({"small"}), "minor": frozenset({"small"}),
        "average": frozenset({"medium"}), "intermediate": frozenset({"medium"}), "moderate": frozenset({"medium"}),
        "midsize": frozenset({"medium"}), "middle": frozenset({"medium"}),
    },
    "verb": {
        **{v: frozenset({v}) for v in vocab.ACTIONS},
        **{w: frozenset({"moves"}) for w in ("travels", "goes", "shifts", "slides", "glides", "drifts")},
        **{w: frozenset({"rotates"}) for w in ("turns", "spins", "revolves", "twirls", "whirls", "pivots")},
        **{w: frozenset({"bounces"}) for w in ("hops", "jumps", "bobs", "leaps")},
        **{w: frozenset({"grows"}) for w in ("expands", "enlarges", "swells", "increases", "widens")},
        **{w: frozenset({"shrinks"}) for w in ("contracts", "diminishes", "decreases", "dwindles")},
        **{w: frozenset({"blinks"}) for w in ("flashes", "flickers", "winks", "twinkles", "blinkers")},
        **{w: frozenset({"shakes"}) for w in ("trembles", "vibrates", "jiggles", "quivers", "shudders", "jitters")},
        **{w: frozenset({"pulses"}) for w in ("throbs", "pulsates", "beats")},
        **{w: frozenset({"fades"}) for w in ("dims", "pales", "wanes")},
        **{w: frozenset({"wobbles"}) for w in ("sways", "teeters", "totters", "rocks", "wiggles", "wags")},
        "shimmies": frozenset({"shakes", "wobbles"}), "oscillates": frozenset({"shakes", "wobbles"}),
        "changes": frozenset({"grows", "shrinks", "fades", "pulses", "blinks"}),
    },
    "manner": {
        **{m: frozenset({m}) for m in vocab.MANNERS},
        **{w: frozenset({"slowly"}) for w in ("gradually", "leisurely", "unhurriedly", "sluggishly", "gently")},
        **{w: frozenset({"quickly"}) for w in ("fast", "rapidly", "swiftly", "speedily", "hastily", "briskly",
                                               "quick", "apace")},
    },
    "direction": {
        **{d: frozenset({d}) for d in vocab.DIRECTIONS},
        "leftward": frozenset({"left"}), "leftwards": frozenset({"left"}), "rightward": frozenset({"right"}),
        "rightwards": frozenset({"right"}), "upward": frozenset({"up"}), "upwards": frozenset({"up"}),
        "upwardly": frozenset({"up"}), "downward": frozenset({"down"}), "downwards": frozenset({"down"}),
        "downwardly": frozenset({"down"}),
    },
    "relation": {
        **{r: frozenset({r}) for r in vocab.RELATIONS},
        "over": frozenset({"above"}), "atop": frozenset({"above"}), "on top of": frozenset({"above"}),
        "under": frozenset({"below"}), "beneath": frozenset({"below"}), "underneath": frozenset({"below"}),
        "alongside": frozenset({"beside"}), "next to": frozenset({"beside"}), "by": frozenset({"beside"}),
        "in back of": frozenset({"behind"}), "before": frozenset({"in front of"}),
    },
}
#: English classes a slot accepts for words outside the tables (spaCy's fine-grained tags)
SLOT_TAGS = {
    "size": ("JJ", "JJR", "JJS", "NN", "NNP", "VBN", "VBG"), "colour": ("JJ", "JJR", "JJS", "NN", "NNP", "VBN", "VBG"),
    "shape": ("NN", "NNP"), "verb": ("VBZ",), "manner": ("RB", "RBR", "RBS", "RP"),
    "direction": ("RB", "RBR", "RBS", "RP"), "relation": ("IN",),
}
_ADVERB_KINDS = ("manner", "direction")
_MODIFIER_KINDS = ("size", "colour", "shape")
_TOKEN = re.compile(r"[a-z]+|,")


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def table_kinds(word: str) -> list[str]:
    """The slot kinds whose truth table lists `word`."""
    return [k for k, t in TABLES.items() if word in t]


@dataclass
class Reading:
    """What an English caption states, slot by slot: each slot's words (None: the slot is empty)."""

    slots: dict[str, str | None]  # slot name -> English word(s) or None
    outside: list[str]  # words that no truth table lists (true of nothing in the world)


def _template_slots(template) -> list[tuple[str, list[str]]]:
    """(slot or literal, its tokens) of a world caption, in order."""
    from hardneg.world.grammar import render_spans

    text, spans = render_spans(template)
    out, at = [], 0
    for slot, (start, end) in sorted(spans.items(), key=lambda kv: kv[1][0]):
        out += [("", [t]) for t in tokens(text[at:start])]
        out.append((slot, tokens(text[start:end])))
        at = end
    return out + [("", [t]) for t in tokens(text[at:])]


def _assign(old: list[str], new: list[str], before: str, assigned: dict[str, list[str]]) -> str | None:
    """Give the words `new` to the slots `old` they replace (one for one; a multi-word relation, or a noun
    phrase that gains modifiers, takes what is left over; an adverb may be added after a manner or a
    direction dropped); the reason when they cannot be placed."""
    def put(slots, words):
        for slot, word in zip(slots, words):
            assigned.setdefault(slot, []).append(word)

    if len(old) == len(new):
        put(old, new)
    elif "relation" in old:
        head = old.index("relation")
        tail = len(old) - head - old.count("relation")
        if len(new) < head + tail + 1:
            return "the changed words do not fill the caption's slots"
        put(old[:head], new[:head])
        assigned["relation"] = new[head:len(new) - tail]
        put(old[len(old) - tail:], new[len(new) - tail:])
    elif old and len(new) > len(old) and old[-1].endswith(".shape") and len({o.split(".")[0] for o in old}) == 1:
        extra = len(new) - len(old)  # a noun phrase's words replaced by more ("excretory organ"): the last is the noun
        assigned.setdefault(old[0], []).extend(new[:extra + 1])
        put(old[1:], new[extra + 1:])
    elif not old and len(new) == 1 and before.endswith(".manner"):
        assigned[before.replace("manner", "direction")] = list(new)  # an adverb added after the manner
    elif len(new) == len(old) - 1 and old and old[-1].endswith(".direction"):
        put(old[:-1], new)  # a direction dropped: English allows it
        assigned.setdefault(old[-1], [])
    else:
        return "words added or removed outside the relation"
    return None


def read(text: str, template, tagger=None) -> Reading | str:
    """The `Reading` of `text`, a variant of the world caption `template` (a `Caption`), or why it is
    not English. `tagger(text) -> [(token, tag)]` tags words outside the tables (default: spaCy)."""
    parts = _template_slots(template)
    positive = [t for _, ts in parts for t in ts]
    owner = [slot for slot, ts in parts for _ in ts]
    neg = tokens(text)
    # each changed hunk (difflib's alignment of the two word lists) goes to the slots it replaces
    assigned: dict[str, list[str]] = {}
    import difflib

    hunks = difflib.SequenceMatcher(None, positive, neg, autojunk=False).get_opcodes()
    if len(neg) == len(positive):  # as many words: word for word (swaps, reordered adjectives)
        hunks = [("replace" if a != b else "equal", k, k + 1, k, k + 1) for k, (a, b) in enumerate(zip(positive, neg))]
    for op, i1, i2, j1, j2 in hunks:
        if op == "equal":
            continue
        problem = _assign(owner[i1:i2], neg[j1:j2], owner[i1 - 1] if i1 > 0 else "", assigned)
        if problem:
            return problem
        if [t for slot, t in zip(owner[i1:i2], positive[i1:i2]) if slot == ""] != assigned.pop("", []):
            return "a function word changed"  # the caption's own "a", ",", "then", "it" must stay
    slots: dict[str, str | None] = {}
    for slot, _ in parts:
        if slot:
            slots[slot] = " ".join(assigned[slot]) if slot in assigned else template.get(slot)
    for slot, words in assigned.items():
        slots[slot] = " ".join(words) if words else None  # also a slot the template leaves empty
    # English classes of the changed words
    from hardneg.world.grammar import SLOTS

    kinds = SLOTS
    outside, tags = [], None
    for slot, words in assigned.items():
        phrase = " ".join(words)
        kind = kinds[slot]
        if not words or words == [w for w in (template.get(slot) or "").split()]:
            continue  # unchanged, or a direction left out
        # English classes, not the template: adverbs of manner or direction after a verb, and adjectives or
        # noun adjuncts ("a medium square triangle") before a noun
        accept = _ADVERB_KINDS if kind in _ADVERB_KINDS else _MODIFIER_KINDS if kind in ("size", "colour") else (kind,)
        if any(phrase in TABLES[k] for k in accept) or (kind in ("size", "colour") and all(
                any(w in TABLES[k] for k in accept) for w in words)):
            continue
        if tags is None:
            tags = dict((tagger or _spacy_tags)(text))
        if kind == "relation" and len(words) == 3 and words[0] in ("in", "on", "at") and words[2] == "of":
            outside.append(phrase)
            continue
        heads = words[-1:] if kind == "shape" else words  # a noun may take modifiers: "excretory organ"
        mods = words[:-1] if kind == "shape" else []
        bad = [w for w in heads if tags.get(w) not in SLOT_TAGS[kind] and not (kind in TABLES and w in TABLES[kind])]
        bad += [w for w in mods if tags.get(w) not in SLOT_TAGS["size"] and not any(w in TABLES[k] for k in _MODIFIER_KINDS)]
        if bad:
            return f"{bad[0]!r} (tagged {tags.get(bad[0])}) where a {kind} belongs"
        outside.append(phrase)
    # no word twice in a row ("moves down down", "a cyan cyan heart")
    for k, t in enumerate(neg[:-1]):
        if t == neg[k + 1] and t != ",":
            return f"{t!r} twice in a row"
    # articles agree with the next word
    for k, t in enumerate(neg[:-1]):
        nxt = neg[k + 1]
        if t == "a" and nxt[0] in "aeio":
            return f"'a {nxt}'"
        if t == "an" and nxt[0] not in "aeiouh":
            return f"'an {nxt}'"
    return Reading(slots, outside)


def _spacy_tags(text: str) -> list[tuple[str, str]]:
    from hardneg.resources import load_spacy

    return [(t.text.lower(), t.tag_) for t in load_spacy(("parser", "ner"))(text)]


def _true_of(kind: str, phrase: str | None, value: str | None) -> bool:
    if phrase is None:
        return True  # English may leave a manner or direction out
    return value in TABLES[kind].get(phrase, frozenset())


def holds(scene, reading: Reading) -> bool:
    """Whether `reading` is true of `scene` (closed world: a word outside the tables is true of nothing)."""
    from hardneg.world.motion import relations

    s = dict.fromkeys(("e1.direction", "e2.direction"))
    s.update(reading.slots)
    a, b = scene.objects
    for key, obj in (("a", a), ("b", b)):
        if not _true_of("shape", s[f"{key}.shape"], obj.shape):
            return False
        # modifiers are read by the table that lists each word ("a cyan cyan heart" states a colour twice)
        for slot in (f"{key}.size", f"{key}.colour"):
            for word in (s[slot] or "").split():
                fact = {"size": obj.size, "colour": obj.colour, "shape": obj.shape}
                kinds = [k for k in ("size", "colour", "shape") if word in TABLES[k]]
                if not kinds or not any(fact[k] in TABLES[k][word] for k in kinds):
                    return False
    rel = s["relation"]
    if rel is None or not (TABLES["relation"].get(rel, frozenset()) & relations(scene)):
        return False
    for key, event in (("e1", scene.events[0]), ("e2", scene.events[1])):
        if not _true_of("verb", s[f"{key}.verb"], event.verb):
            return False
        for slot in (f"{key}.manner", f"{key}.direction"):
            word = s[slot]
            if word is None:
                continue
            if word in TABLES["manner"]:
                if event.manner not in TABLES["manner"][word]:
                    return False
            elif word in TABLES["direction"]:
                if event.direction is None or event.direction not in TABLES["direction"][word]:
                    return False
            else:
                return False
    return True
