"""The verified negatives of the benchmark `world`: every one is grammatical and false of its scene.

Three families, each a list of candidate captions with the true caption first:

* `posrank_item` (PoSRank-style, one item per part of speech): ONE slot of that part of speech is
  chosen at random among the caption's slots that can change, and the candidates are the caption
  with that slot holding each value of its word class (antonym first, where the grammar has one,
  then the rest in a seeded order), at most 19 negatives. The world's classes are small, so an
  item has from 2 (slowly / quickly) to 11 candidates (11 colours), never 20: the number of
  candidates is recorded and the ranking core's chance is exact for each item.
  Departure from PoSRank (negatives that change any word of that part of speech): in the paper's
  scheme the positive is the one candidate that shares all but one word with every other, so a
  text-only model picks it without the video (`hardneg analyze blind-text` finds it at once); when
  every candidate differs from every other in the same one slot, no candidate is special.
* `counterfactual_item` (RCAD-style, 1 positive + 5): one event's whole verb phrase is replaced by
  five others with different actions (manner and direction drawn anew).
* `temporal_items` (VITATECS-style pairs): `direction` reverses one event (left/right, up/down,
  grows/shrinks), `sequence` swaps the two events, `manner` swaps slowly/quickly of one event.

No negative repeats the other event's action, because no true caption does: a text-only model
must not be able to spot a negative by its wording. Each value of a slot is as frequent among the
true captions as among the negatives (`hardneg.world.scene` draws every slot uniformly), which the
blind baselines confirm (docs/world.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hardneg.world import vocab
from hardneg.world.grammar import SLOTS, Caption, Event, render_spans, well_formed_problem
from hardneg.world.truth import FALSE, judge

GENERATOR = "hardneg-world"
POS_ORDER = ("noun", "adj", "verb", "adv", "prep")
MAX_NEGATIVES = 19
N_COUNTERFACTUAL = 5
ASPECTS = ("direction", "sequence", "manner")


@dataclass
class Candidate:
    """One negative: its facts, and what changed (for the provenance record)."""

    caption: Caption
    rule: str  # antonym | same-class | counterfactual-action | direction | sequence | manner
    slot: str | None  # the changed slot (None for a sequence swap)
    pos: str | None


@dataclass
class Item:
    """A multiple-choice item of the world: the positive first, then verified negatives."""

    kind: str  # "posrank" | "counterfactual" | "temporal"
    category: str  # part of speech, "action", or the temporal aspect
    positive: Caption
    negatives: list[Candidate]


def _rng(scene, family: str) -> np.random.Generator:
    import hashlib

    # keyed by the scene's numbers, not its id (which names the world version): same items across versions
    code = int.from_bytes(hashlib.sha256(f"{scene.seed}/{scene.split}/{scene.index}/{family}".encode()).digest()[:8],
                          "little")
    return np.random.default_rng(code)


def _verified(scene, candidates: list[Candidate]) -> list[Candidate]:
    """The candidates that are grammatical and false of `scene`, each text once; an error otherwise."""
    out, seen = [], {scene.text}
    for c in candidates:
        verdict = judge(scene, c.caption)
        if verdict.value != FALSE or well_formed_problem(c.caption):
            raise AssertionError(f"negative {c.caption} of {scene.id} is {verdict.value}, not false: the world's "
                                 "negatives must be false by construction")
        text = render_spans(c.caption)[0]
        if text not in seen:
            seen.add(text)
            out.append(c)
    return out


def slot_alternatives(caption: Caption, slot: str) -> list[str]:
    """The other values `slot` can hold in a grammatical caption like the true ones (antonym first)."""
    kind = SLOTS[slot]
    current = caption.get(slot)
    if current is None:
        return []
    words = list(vocab.SLOT_WORDS[kind])
    if kind == "verb":
        other = caption.e2.verb if slot.startswith("e1") else caption.e1.verb
        directional = current in vocab.DIRECTIONAL
        words = [w for w in words if w != other and (w in vocab.DIRECTIONAL) == directional]
    rest = [w for w in words if w != current]
    ant = vocab.ANTONYMS.get(current)
    return ([ant] if ant in rest else []) + [w for w in rest if w != ant]


def posrank_item(scene, pos: str) -> Item | None:
    """The PoSRank-style item of `scene` for part of speech `pos` (None when no slot of it can change)."""
    from hardneg.world.grammar import pos_of

    caption = scene.caption
    rng = _rng(scene, f"posrank/{pos}")
    slots = [s for s in caption.filled_slots() if pos_of(s) == pos and slot_alternatives(caption, s)]
    if not slots:
        return None
    slot = slots[int(rng.integers(len(slots)))]
    words = slot_alternatives(caption, slot)
    ant = vocab.ANTONYMS.get(caption.get(slot))
    head = [words[0]] if ant == words[0] else []
    tail = [words[i] for i in rng.permutation(len(words))] if not head else [words[1:][i] for i in rng.permutation(len(words) - 1)]
    chosen = (head + tail)[:MAX_NEGATIVES]
    cands = [Candidate(caption.with_slot(slot, w), "antonym" if w == ant else "same-class", slot, pos) for w in chosen]
    return Item("posrank", pos, caption, _verified(scene, cands))


def counterfactual_item(scene) -> Item:
    """The RCAD-style item: one event's verb phrase replaced by five with other actions."""
    caption = scene.caption
    rng = _rng(scene, "counterfactual")
    which = ("e1", "e2")[int(rng.integers(2))]
    used = {caption.e1.verb, caption.e2.verb}
    verbs = [v for v in vocab.ACTIONS if v not in used]
    picks = [verbs[i] for i in rng.permutation(len(verbs))[:N_COUNTERFACTUAL]]
    cands = []
    for v in picks:
        manner = vocab.MANNERS[int(rng.integers(len(vocab.MANNERS)))]
        direction = tuple(vocab.DIRECTIONS)[int(rng.integers(len(vocab.DIRECTIONS)))] if v in vocab.DIRECTIONAL else None
        new = caption.with_slot(f"{which}.verb", v).with_slot(f"{which}.manner", manner)
        new = new.with_slot(f"{which}.direction", direction)
        cands.append(Candidate(new, "counterfactual-action", f"{which}.verb", "verb"))
    return Item("counterfactual", "action", caption, _verified(scene, cands))


def _reversed(event: Event, other: Event) -> Event | None:
    if event.verb in vocab.DIRECTIONAL:
        return Event(event.verb, event.manner, vocab.ANTONYMS[event.direction])
    flip = vocab.ANTONYMS.get(event.verb)
    if flip in vocab.ACTIONS and flip != other.verb:
        return Event(flip, event.manner, None)
    return None


def temporal_items(scene) -> list[Item]:
    """The VITATECS-style pairs of `scene`: direction (when an event can be reversed), sequence, manner."""
    caption = scene.caption
    rng = _rng(scene, "temporal")
    items = []
    options = [(k, r) for k, (e, o) in (("e1", (caption.e1, caption.e2)), ("e2", (caption.e2, caption.e1)))
               if (r := _reversed(e, o)) is not None]
    if options:
        k, rev = options[int(rng.integers(len(options)))]
        new = caption.with_slot(f"{k}.verb", rev.verb).with_slot(f"{k}.direction", rev.direction)
        slot = f"{k}.direction" if rev.direction else f"{k}.verb"
        items.append(Item("temporal", "direction", caption, _verified(scene, [Candidate(new, "direction", slot, None)])))
    items.append(Item("temporal", "sequence", caption,
                      _verified(scene, [Candidate(caption.swapped_events(), "sequence", None, None)])))
    k = ("e1", "e2")[int(rng.integers(2))]
    new = caption.with_slot(f"{k}.manner", vocab.ANTONYMS[caption.get(f"{k}.manner")])
    items.append(Item("temporal", "manner", caption, _verified(scene, [Candidate(new, "manner", f"{k}.manner", "adv")])))
    return items


def scene_items(scene) -> dict[str, list[Item]]:
    """Every item of one scene, by family: {"posrank": [...per part of speech], "counterfactual": [...],
    "temporal": [...]}."""
    pos_items = [it for pos in POS_ORDER if (it := posrank_item(scene, pos)) is not None]
    return {"posrank": pos_items, "counterfactual": [counterfactual_item(scene)], "temporal": temporal_items(scene)}


#: the item categories of the benchmark, in the order test scenes take them (scene index modulo 9)
CATEGORY_ORDER = POS_ORDER + ("action",) + ASPECTS


def _item_of(scene, category: str) -> Item | None:
    if category in POS_ORDER:
        return posrank_item(scene, category)
    if category == "action":
        return counterfactual_item(scene)
    return next((it for it in temporal_items(scene) if it.category == category), None)


def benchmark_item(scene) -> Item:
    """The ONE item a test scene contributes to the benchmark (issue 28: each item its own scene).

    When a scene gave every family's items, its positive caption was the one candidate that appears
    in several items of the file (up to 9 times, each negative once), so "pick the caption that
    appears most often" scored 100% without a video. With one item per scene every caption of the
    file appears once (or, where a config repeats an item, as often as every other candidate of it).
    Scene i takes category `CATEGORY_ORDER[i % 9]`, or the next one it has (a scene without a
    reversible event has no direction item)."""
    start = scene.index % len(CATEGORY_ORDER)
    for k in range(len(CATEGORY_ORDER)):
        item = _item_of(scene, CATEGORY_ORDER[(start + k) % len(CATEGORY_ORDER)])
        if item is not None and item.negatives:
            return item
    raise AssertionError(f"scene {scene.id} has no item")  # sequence and manner items always exist


#: rules whose negative differs from the positive in exactly one slot
ONE_SLOT_RULES = ("antonym", "same-class", "direction", "manner")
NEGATIVE_TYPE = {"posrank": None, "counterfactual": "counterfactual", "temporal": "temporal"}


def item_row(scene, item: Item, item_id: str) -> dict:
    """The item as a row of `hardneg.schema.MC_ITEM_SCHEMA`, each negative with its provenance record."""
    from hardneg.datasets.raw_common import provenance, replaced_span
    from hardneg.world.scene import WORLD_VERSION

    positive, spans = render_spans(item.positive)
    captions, types = [positive], ["positive"]
    prov = [provenance("positive", details={"source": "the scene's own caption", "scene": scene.id})]
    for c in item.negatives:
        text, _ = render_spans(c.caption)
        captions.append(text)
        types.append(NEGATIVE_TYPE[item.kind] or c.pos)
        if c.rule in ONE_SLOT_RULES:  # one slot changed: its span in the positive, its new word
            start, end = spans[c.slot]
            span, repl = positive[start:end], c.caption.get(c.slot)
        else:  # a whole region: from the first to the last word that differs
            start, end, new_end = replaced_span(positive, text)
            span, repl = positive[start:end], text[start:new_end]
        assert positive[:start] + repl + positive[end:] == text
        prov.append(provenance("generator", generator=GENERATOR, generator_version=WORLD_VERSION, rule=c.rule,
                               pos=c.pos, span=span, replacement=repl, span_start=start, span_end=end,
                               details={"slot": c.slot, "verdict": "false", "scene": scene.id,
                                        "checked_by": "hardneg.world.truth.judge"}))
    return {"id": item_id, "video_id": scene.id, "source_dataset": "world", "source_split": scene.split,
            "category": item.category, "captions": captions, "label": 0, "manipulated_index": None,
            "negative_types": types, "provenance": prov}


def word_negatives(scene, pos: str, k: int = 16, seed: int = 0) -> list[str]:
    """Up to `k` single-slot negatives of part of speech `pos` for TRAINING (PoSRank Eq. 3's N per part of
    speech): any slot of that part of speech may change, antonyms first, each checked false of `scene`.

    Unlike the benchmark's items (one slot per item, so that no text-only model can spot the positive),
    these follow the paper's scheme; use them for L_fine, not for evaluation.
    """
    from hardneg.world.grammar import pos_of

    if pos not in POS_ORDER:
        raise ValueError(f"pos must be one of {POS_ORDER}, got {pos!r}")
    caption = scene.caption
    rng = _rng(scene, f"training/{pos}/{seed}")
    alts = [(slot, w) for slot in caption.filled_slots() if pos_of(slot) == pos for w in slot_alternatives(caption, slot)]
    ants = [a for a in alts if vocab.ANTONYMS.get(caption.get(a[0])) == a[1]]
    rest = [a for a in alts if a not in ants]
    chosen = ants + [rest[i] for i in rng.permutation(len(rest))]
    cands = [Candidate(caption.with_slot(slot, w), "training", slot, pos) for slot, w in chosen[:k]]
    return [render_spans(c.caption)[0] for c in _verified(scene, cands)]
