"""Gender-swap contrast sets (Park et al., Appendix A.1, Table 6).

One gendered noun of the caption is swapped through the paper's word map (singular
and plural kept; several alternatives -> uniform seeded choice). Only one noun is
swapped so that the meaning really changes ("man and woman walk" would otherwise
stay true). Then every pronoun of the original noun's gender is swapped too.

Provenance: ``span``/``replacement`` are the one region from the first swapped word to the
last (``man ... his`` -> ``woman ... her``), with ``span_start``/``span_end`` its character
offsets, so ``positive[:span_start] + replacement + positive[span_end:] == negative``; the noun
swap alone is in ``details`` (``noun``, ``new_noun``).
"""

from __future__ import annotations

from typing import Any, Mapping

from hardneg.generators.common import (
    batch_records, caption_rng, edit_region, match_case, mc_row, negative_record, rows_to_columns,
)

NAME = "contrast-gender"
VERSION = "1.1"  # 1.1: span/replacement cover every swapped word, with exact offsets

#: Table 6 of the paper, exactly.
GENDER_MAP: dict[str, tuple[str, ...]] = {
    "man": ("woman",), "men": ("women",), "boy": ("girl",), "boys": ("girls",),
    "guy": ("woman", "girl"), "guys": ("women", "girls", "ladies"),
    "woman": ("man",), "women": ("men", "guys"), "girl": ("boy", "guy"), "girls": ("boys", "guys"),
    "lady": ("man", "guy"), "ladies": ("men", "guys"),
}
MALE_NOUNS = frozenset({"man", "men", "boy", "boys", "guy", "guys"})
#: Pronouns of each gender and their counterparts; 'her'/'his' depend on the Penn tag (see swap_pronoun).
MALE_PRONOUNS = frozenset({"he", "him", "his", "himself"})
FEMALE_PRONOUNS = frozenset({"she", "her", "hers", "herself"})


def swap_pronoun(word: str, tag: str) -> str:
    """The other-gender form of a pronoun; 'her' -> 'his' as a determiner (PRP$), else 'him';
    'his' -> 'her' as a determiner, else 'hers'."""
    w = word.lower()
    simple = {"he": "she", "she": "he", "him": "her", "himself": "herself", "herself": "himself", "hers": "his"}
    if w in simple:
        out = simple[w]
    elif w == "her":
        out = "his" if tag == "PRP$" else "him"
    elif w == "his":
        out = "her" if tag == "PRP$" else "hers"
    else:
        raise ValueError(f"{word!r} is not a gendered pronoun")
    return match_case(out, word)


def gender_negatives(rec: Mapping[str, Any], doc: Any, *, seed: int, n_negatives: int = 1) -> dict[str, Any] | None:
    """The MC row (positive + up to `n_negatives` distinct gender swaps) of one caption, or None."""
    text = rec["caption"]
    nouns = [t for t in doc if t.lower_ in GENDER_MAP and t.pos_ != "VERB"]
    if not nouns:
        return None
    rng = caption_rng(seed, NAME, rec["id"], "gender")
    negatives, seen, tries = [], {text}, 0
    while len(negatives) < n_negatives and tries < 10 * n_negatives:
        tries += 1
        noun = nouns[rng.randrange(len(nouns))]
        alternatives = GENDER_MAP[noun.lower_]
        new_noun = match_case(alternatives[rng.randrange(len(alternatives))], noun.text)
        pronouns = MALE_PRONOUNS if noun.lower_ in MALE_NOUNS else FEMALE_PRONOUNS
        edits = [(noun.idx, noun.idx + len(noun.text), new_noun)]
        swapped = []
        for t in doc:
            if t.lower_ in pronouns:
                new = swap_pronoun(t.text, t.tag_)
                edits.append((t.idx, t.idx + len(t.text), new))
                swapped.append([t.text, new])
        # one region from the first edit to the last: 'man ... his' -> 'woman ... her'
        out, start, end, span, replacement = edit_region(text, edits)
        if out in seen:
            continue
        seen.add(out)
        details = {"noun": noun.text, "new_noun": new_noun, "noun_index": noun.i, "alternatives": list(alternatives),
                   "pronouns": swapped, "gendered_nouns": len(nouns)}
        negatives.append((out, "gender", negative_record(
            NAME, VERSION, "gender-map", pos="noun", span=span, replacement=replacement, seed=seed,
            details=details, span_start=start, span_end=end)))
    if not negatives:
        return None
    return mc_row(rec["id"], f"{rec['id']}/gender", rec["video_id"], text, negatives, category="gender",
                  source_dataset=rec.get("source_dataset"), source_split=rec.get("source_split"),
                  manipulated_index=1)


class GenderBatchFn:
    """Pure batch function: caption columns in, one MC row per caption with a gendered noun out."""

    def __init__(self, nlp: Any, *, seed: int = 0, n_negatives: int = 1, batch_size: int = 256) -> None:
        if n_negatives < 1:
            raise ValueError(f"n_negatives must be at least 1, got {n_negatives}")
        self.nlp, self.seed, self.n_negatives, self.batch_size = nlp, int(seed), int(n_negatives), batch_size

    def __call__(self, batch: Mapping[str, list]) -> dict[str, list]:
        recs = batch_records(batch)
        rows = []
        for rec, doc in zip(recs, self.nlp.pipe([r["caption"] for r in recs], batch_size=self.batch_size)):
            row = gender_negatives(rec, doc, seed=self.seed, n_negatives=self.n_negatives)
            if row:
                rows.append(row)
        return rows_to_columns(rows)


def make_batch_fn(*, seed: int = 0, n_negatives: int = 1, batch_size: int = 256) -> GenderBatchFn:
    """Factory (once per worker): loads the spaCy tagger (pronoun 'her' needs its tag)."""
    from hardneg.resources import load_spacy

    return GenderBatchFn(load_spacy(("parser", "ner")), seed=seed, n_negatives=n_negatives, batch_size=batch_size)
