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


def read(text: str, template, tagger=None) -> Reading | str:
    """The `Reading` of `text`, a variant of the world caption `template` (a `Caption`), or why it is
    not English. `tagger(text) -> [(token, tag)]` tags words outside the tables (default: spaCy)."""
    parts = _template_slots(template)
    positive = [t for _, ts in parts for t in ts]
    owner = [slot for slot, ts in parts for _ in ts]
    neg = tokens(text)
    i = 0
    while i < min(len(neg), len(positive)) and neg[i] == positive[i]:
        i += 1
    j = 0
    while j < min(len(neg), len(positive)) - i and neg[-1 - j] == positive[-1 - j]:
        j += 1
    old, new = owner[i:len(owner) - j], neg[i:len(neg) - j]
    # words of the changed region go to the slots they replace, one for one; a multi-word relation
    # (or a region that changes length inside it) takes what is left over
    assigned: dict[str, list[str]] = {}
    if len(old) == len(new):
        for slot, word in zip(old, new):
            assigned.setdefault(slot, []).append(word)
    elif "relation" in old:
        before = old.index("relation")
        after = len(old) - before - old.count("relation")
        if len(new) < before + after + 1:
            return "the changed words do not fill the caption's slots"
        for slot, word in zip(old[:before], new[:before]):
            assigned.setdefault(slot, []).append(word)
        assigned["relation"] = new[before:len(new) - after]
        for slot, word in zip(old[len(old) - after:], new[len(new) - after:]):
            assigned.setdefault(slot, []).append(word)
    elif old and len(new) > len(old) and {o.split(".")[0] for o in old} in ({"a"}, {"b"}) and old[-1].endswith(
            ".shape"):  # a noun phrase's words replaced by more words ("excretory organ"): the last is the noun
        extra = len(new) - len(old)
        assigned[old[0]] = new[:extra + 1]
        for slot, word in zip(old[1:], new[extra + 1:]):
            assigned.setdefault(slot, []).append(word)
    elif not old and len(new) == 1 and i > 0 and owner[i - 1].endswith(".manner"):
        assigned[owner[i - 1].replace("manner", "direction")] = new  # an adverb added after the manner
    elif len(new) == len(old) - 1 and old and old[-1].endswith(".direction"):
        for slot, word in zip(old[:-1], new):  # a direction dropped: English allows it
            assigned.setdefault(slot, []).append(word)
    else:
        return "words added or removed outside the relation"
    if "" in assigned:  # the caption's own function words ("a", ",", "then", "it") must stay
        kept = [t for slot, t in zip(owner[i:len(owner) - j], positive[i:len(positive) - j]) if slot == ""]
        if assigned.pop("") != kept:
            return "a function word changed"
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
        if words == [w for w in (template.get(slot) or "").split()]:
            continue
        # English classes, not the template: adverbs of manner or direction after a verb, and adjectives or
        # noun adjuncts ("a medium square triangle") before a noun
        accept = _ADVERB_KINDS if kind in _ADVERB_KINDS else _MODIFIER_KINDS if kind in ("size", "colour") else (kind,)
        if any(phrase in TABLES[k] for k in accept) or (kind in ("size", "colour") and all(
                any(w in TABLES[k] for k in accept) for w in words)):
            continue
        listed = table_kinds(phrase)
        if listed:  # a word of the world in a slot of another class ("moves slowly red")
            return f"{phrase!r} ({listed[0]}) where a {kind} belongs"
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
