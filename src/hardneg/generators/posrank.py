"""PoSRank single-word (and phrase-level) negatives (Chen et al., Sections 4 and 6.3).

For one part of speech, one word of the caption is chosen and replaced by up to K
other words of the same part of speech, tried in priority order:

1. ``antonym``: a WordNet antonym of the word (prepositions: an explicit map, WordNet has none);
2. ``hypernym-antonym``: an antonym of a hypernym or hyponym (adjectives: of a similar-to head);
   then ``similar-antonym``: for a satellite adjective, an antonym of its head adjective;
3. ``sibling``: another hyponym of one of the word's hypernyms (nouns, verbs);
4. ``vocabulary``: a random word of the same part of speech from the corpus vocabulary.

Replacements keep the inflection (``is pushing`` -> ``is pulling``, ``men`` -> ``women``) and
the capitalisation of the replaced word; no two negatives are equal and none equals the
caption. Phrase-level negatives (training) change a word and one neighbour of it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from hardneg.generators.common import (
    agree_article, apply_case, article_slot, batch_records, caption_rng, case_of, match_case, mc_row, negative_record,
    rows_to_columns,
)
from hardneg.generators.inflection import inflect, lemmatize
from hardneg.schema import PARTS_OF_SPEECH

NAME = "posrank-single-word"
PHRASE_NAME = "posrank-phrase"
VERSION = "1.1"  # 1.1: WordNet relation lists sorted, so the output no longer depends on PYTHONHASHSEED

#: PoSRank part of speech -> spaCy universal tags it covers.
UPOS = {"noun": ("NOUN",), "verb": ("VERB",), "adj": ("ADJ",), "adv": ("ADV",), "prep": ("ADP",)}
UPOS_TO_POS = {u: p for p, us in UPOS.items() for u in us}
#: PoSRank part of speech -> WordNet synset types.
WN_POS = {"noun": ("n",), "verb": ("v",), "adj": ("a", "s"), "adv": ("r",)}
#: Vocabulary-file keys accepted as aliases (the published VLN-UVO dictionary says 'adp').
POS_ALIASES = {"adp": "prep", "adjective": "adj", "adverb": "adv", "preposition": "prep"}

#: WordNet has no prepositions: their antonyms, by hand.
PREPOSITION_ANTONYMS: dict[str, tuple[str, ...]] = {
    "into": ("out of",), "in": ("out of",), "inside": ("outside",), "outside": ("inside",),
    "within": ("outside",), "on": ("off",), "onto": ("off",), "upon": ("off",), "off": ("on",),
    "up": ("down",), "down": ("up",), "above": ("below",), "below": ("above",),
    "over": ("under",), "under": ("over",), "beneath": ("above",), "underneath": ("above",),
    "before": ("after",), "after": ("before",), "with": ("without",), "without": ("with",),
    "to": ("from",), "from": ("to",), "toward": ("away from",), "towards": ("away from",),
    "behind": ("in front of",), "near": ("far from",), "for": ("against",), "against": ("for",),
    "inside of": ("outside of",), "out": ("in",), "across": ("along",), "along": ("across",),
}
RULES = ("antonym", "hypernym-antonym", "similar-antonym", "sibling", "vocabulary")
#: Words never chosen for replacement: sequencing/degree/focus words with nothing to see in a video.
SKIP_TARGETS = frozenset(
    "then also there here now just only very too so again still even not ever already yet soon "
    "as when while where how why really quite rather almost".split()
)


# ------------------------------------------------------------------ vocabulary
def normalize_vocabulary(vocab: Mapping[str, Iterable[str]]) -> dict[str, tuple[str, ...]]:
    """{pos: words} (any casing/inflection, 'adp' allowed) -> {pos: sorted unique lemmas}."""
    out: dict[str, set[str]] = {p: set() for p in PARTS_OF_SPEECH}
    for key, words in vocab.items():
        pos = POS_ALIASES.get(key.lower(), key.lower())
        if pos not in out:
            continue
        upos = UPOS[pos][0]
        for w in words:
            if isinstance(w, str) and w.strip() and all(part.isalpha() for part in w.split()):
                out[pos].add(lemmatize(w.strip(), upos))
    return {p: tuple(sorted(ws)) for p, ws in out.items()}


def load_vocabulary(path: str | Path) -> dict[str, tuple[str, ...]]:
    """Read a {pos: [words]} JSON file (e.g. the published ``vln_uvo_word_dic_*.json``)."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"vocabulary file {p} not found (a JSON object {{pos: [words]}})")
    data = json.loads(p.read_text())
    if not isinstance(data, dict):
        raise ValueError(f"vocabulary file {p}: expected a JSON object {{pos: [words]}}")
    return normalize_vocabulary(data)


def vocabulary_from_docs(docs: Iterable[Any], min_count: int = 1) -> dict[str, tuple[str, ...]]:
    """Corpus vocabulary: lemmas per part of speech seen at least `min_count` times in tagged docs."""
    counts: dict[str, dict[str, int]] = {p: {} for p in PARTS_OF_SPEECH}
    for doc in docs:
        for tok in doc:
            pos = UPOS_TO_POS.get(tok.pos_)
            if pos and tok.is_alpha:
                lem = lemmatize(tok.text, tok.pos_) if pos != "prep" else tok.lower_
                counts[pos][lem] = counts[pos].get(lem, 0) + 1
    return {p: tuple(sorted(w for w, c in cs.items() if c >= min_count)) for p, cs in counts.items()}


# ------------------------------------------------------------------ WordNet candidates
def related(synset: Any, relation: str) -> list:
    """`synset.<relation>()` (hypernyms, hyponyms, similar_tos, ...) sorted by synset name.

    NLTK keeps a synset's pointers in a ``set`` of ``(pos, offset)`` tuples and returns them
    unsorted, so these lists come back in an order that changes with ``PYTHONHASHSEED``
    (i.e. per worker process). Sorting by name (the order of ``Synset.__lt__``) makes every
    tier built from them, and the seeded draws over them, identical on every machine.
    Lemma-level pointers (``Lemma.antonyms()``) and ``synsets()`` are lists in file order
    and need no sorting."""
    return sorted(getattr(synset, relation)(), key=lambda s: s.name())


@dataclass
class CandidateSource:
    """Ordered replacement lemmas of one (lemma, pos) from WordNet, cached per generator instance."""

    wordnet: Any
    sibling_limit: int = 5
    #: {pos: corpus vocabulary}: when given, siblings are kept only if the corpus uses them
    vocabulary: Mapping[str, frozenset] = field(default_factory=dict)
    _cache: dict = field(default_factory=dict)

    def _synsets(self, lemma: str, pos: str) -> list:
        out = self.wordnet.synsets(lemma, WN_POS[pos][0])  # NLTK's 'a' includes satellites ('s')
        return [s for s in dict.fromkeys(out) if s.pos() in WN_POS[pos]]

    @staticmethod
    def _single(name: str) -> str | None:
        return None if "_" in name or "-" in name or not name.isalpha() else name.lower()

    def antonyms(self, lemma: str, pos: str) -> tuple[str, ...]:
        """The antonym tier alone (cheap: no hypernym/hyponym walk), used to pick targets."""
        key = ("antonym", lemma, pos)
        if key not in self._cache:
            if pos == "prep":
                self._cache[key] = PREPOSITION_ANTONYMS.get(lemma, ())
            else:
                self._cache[key] = self._clean(self._direct_antonyms(lemma, pos, self._synsets(lemma, pos)), {lemma})
        return self._cache[key]

    def _direct_antonyms(self, lemma: str, pos: str, synsets: list) -> list[str]:
        ant: list[str] = []
        for s in synsets:
            for lem in s.lemmas():
                if lem.name().lower() == lemma:
                    ant += [a.name() for a in lem.antonyms()]
        if not ant:  # no antonym on the word itself: antonyms of its synonyms ('backwards' -> 'forward')
            for s in synsets[:3]:
                for lem in s.lemmas():
                    ant += [a.name() for a in lem.antonyms()]
        if pos == "adv":  # flat adverbs ('fast', 'far', 'wide') take the antonyms of the same-form adjective
            for s in self.wordnet.synsets(lemma, "a"):
                for lem in s.lemmas():
                    if lem.name().lower() == lemma:
                        ant += [a.name() for a in lem.antonyms()]
        return ant

    def _clean(self, names: list[str], seen: set[str]) -> tuple[str, ...]:
        kept = []
        for n in names:
            w = self._single(n)
            if w and w not in seen:
                seen.add(w)
                kept.append(w)
        return tuple(kept)

    def tiers(self, lemma: str, pos: str) -> dict[str, tuple[str, ...]]:
        """{rule: lemmas} for antonym, hypernym-antonym, similar-antonym and sibling (vocabulary comes later)."""
        key = (lemma, pos)
        if key in self._cache:
            return self._cache[key]
        if pos == "prep":
            result = {"antonym": PREPOSITION_ANTONYMS.get(lemma, ()), "hypernym-antonym": (), "similar-antonym": (),
                      "sibling": ()}
            self._cache[key] = result
            return result
        synsets = self._synsets(lemma, pos)
        ant = self._direct_antonyms(lemma, pos, synsets)
        similar_ant: list[str] = []
        for s in synsets[:3]:
            if s.pos() == "s":  # satellite adjective: antonyms of its head adjective
                for head in related(s, "similar_tos"):
                    for lem in head.lemmas():
                        similar_ant += [a.name() for a in lem.antonyms()]
        neighbours: list = []
        for s in synsets[:3]:  # the most frequent senses only: rare senses give odd antonyms
            neighbours += related(s, "hypernyms") + related(s, "instance_hypernyms") + related(s, "hyponyms")
            if pos == "adj":
                neighbours += related(s, "also_sees")
        hyp_ant = [a.name() for r in neighbours for lem in r.lemmas() for a in lem.antonyms()]
        sib: list[str] = []
        if pos in ("noun", "verb"):
            for s in synsets[:2]:  # the most frequent senses only
                for h in related(s, "hypernyms"):
                    for sister in related(h, "hyponyms"):
                        if sister != s:
                            sib += [lem.name() for lem in sister.lemmas()]
        if self.vocabulary.get(pos):
            sib = [n for n in sib if n.lower() in self.vocabulary[pos]]
        seen = {lemma}
        result = {rule: self._clean(names, seen) for rule, names in
                  (("antonym", ant), ("hypernym-antonym", hyp_ant), ("similar-antonym", similar_ant), ("sibling", sib))}
        self._cache[key] = result
        return result


# ------------------------------------------------------------------ one caption
@dataclass(frozen=True)
class Target:
    """The word chosen for replacement: character offsets into the caption, tag and lemma."""

    start: int
    end: int
    text: str
    tag: str
    upos: str
    lemma: str
    index: int


def targets_by_pos(doc: Any) -> dict[str, list[Target]]:
    """Alphabetic tokens of each PoSRank part of speech in a tagged spaCy doc (one pass)."""
    out: dict[str, list[Target]] = {p: [] for p in PARTS_OF_SPEECH}
    for tok in doc:
        pos = UPOS_TO_POS.get(tok.pos_)
        if pos is None or not tok.is_alpha:
            continue
        low = tok.lower_
        if low in SKIP_TARGETS:
            continue
        lemma = low if pos == "prep" else (tok.lemma_.lower() if tok.lemma_.isalpha() else lemmatize(tok.text, tok.pos_))
        out[pos].append(Target(tok.idx, tok.idx + len(tok.text), tok.text, tok.tag_, tok.pos_, lemma, tok.i))
    return out


def targets_of(doc: Any, pos: str) -> list[Target]:
    """Alphabetic tokens of part of speech `pos` in a tagged spaCy doc."""
    return targets_by_pos(doc)[pos]


def surface(lemma: str, target: Target) -> str:
    """`lemma` inflected like `target` and cased like it."""
    return match_case(inflect(lemma, target.tag), target.text)


def ranked_candidates(
    target: Target, pos: str, source: CandidateSource, vocabulary: Sequence[str], rng: Any, k: int
) -> list[tuple[str, str, str]]:
    """Up to `k` (rule, lemma, inflected form) replacements for `target` in priority order;
    the sibling and vocabulary tiers are drawn with `rng`."""
    tiers = source.tiers(target.lemma, pos)
    banned = {target.lemma, target.text.lower()}
    out: list[tuple[str, str, str]] = []
    seen_forms: set[str] = {target.text.lower()}
    tag = target.tag

    def take(rule: str, lemma: str) -> None:
        if lemma in banned:
            return
        form = inflect(lemma, tag)
        low = form.lower()
        if low in seen_forms:
            return
        seen_forms.add(low)
        out.append((rule, lemma, form))

    for rule in ("antonym", "hypernym-antonym", "similar-antonym"):
        for lem in tiers[rule]:
            take(rule, lem)
    siblings = list(tiers["sibling"])  # already limited to the corpus vocabulary by the source
    rng.shuffle(siblings)
    for lem in siblings[: source.sibling_limit]:
        take("sibling", lem)
    if len(out) < k and vocabulary:
        order = rng.sample(range(len(vocabulary)), len(vocabulary)) if len(vocabulary) <= 4 * k else None
        if order is None:  # large vocabulary: draw without replacement lazily
            drawn: set[int] = set()
            tries = 0
            while len(out) < k and tries < 20 * k and len(drawn) < len(vocabulary):
                i = rng.randrange(len(vocabulary))
                tries += 1
                if i not in drawn:
                    drawn.add(i)
                    take("vocabulary", vocabulary[i])
            order = [i for i in range(len(vocabulary)) if i not in drawn] if len(out) < k else []
        for i in order:
            if len(out) >= k:
                break
            take("vocabulary", vocabulary[i])
    return out[:k]


def choose_target(targets: list[Target], pos: str, source: CandidateSource, rng: Any, prefer_antonym: bool) -> Target:
    """Uniform choice among the words of `pos`; among those with an antonym first when asked."""
    if prefer_antonym:
        with_ant = [t for t in targets if source.antonyms(t.lemma, pos)]
        if with_ant:
            return with_ant[rng.randrange(len(with_ant))]
    return targets[rng.randrange(len(targets))]


def word_details(lemma: str, target: Target, article_fixed: bool) -> str:
    """`details_json` of a single-word negative, written directly (this runs once per negative).
    Lemmas and Penn tags hold only letters, spaces and '$', so no JSON escaping is needed."""
    head = '{"article_fixed":true,' if article_fixed else "{"
    return f'{head}"lemma":"{lemma}","tag":"{target.tag}","token_index":{target.index}}}'


def word_negatives(
    rec: Mapping[str, Any], doc: Any, pos: str, *, source: CandidateSource,
    vocabulary: Mapping[str, Sequence[str]], k: int, seed: int, prefer_antonym_targets: bool = True,
    targets: list[Target] | None = None,
) -> dict[str, Any] | None:
    """The MC row of one caption for one part of speech, or None when it has no word of `pos`
    (`targets`: the doc's words of `pos`, when the caller already has them)."""
    text = rec["caption"]
    targets = targets_of(doc, pos) if targets is None else targets
    if not targets:
        return None
    rng = caption_rng(seed, NAME, rec["id"], pos)
    target = choose_target(targets, pos, source, rng, prefer_antonym_targets)
    negatives = []
    seen = {text}
    prefix, suffix = text[: target.start], text[target.end :]
    slot = article_slot(prefix)  # the caption's case and article are read once, not per candidate
    case = case_of(target.text)
    for rule, lemma, form in ranked_candidates(target, pos, source, vocabulary.get(pos, ()), rng, k):
        repl = apply_case(form, case)
        pre, fixed = agree_article(slot, prefix, repl)
        new = pre + repl + suffix
        if new in seen:
            continue
        seen.add(new)
        negatives.append((new, pos, negative_record(NAME, VERSION, rule, pos=pos, span=target.text, replacement=repl,
                                                    seed=seed, details=word_details(lemma, target, fixed))))
    if not negatives:
        return None
    return mc_row(rec["id"], f"{rec['id']}/{pos}", rec["video_id"], text, negatives, category=pos,
                  source_dataset=rec.get("source_dataset"), source_split=rec.get("source_split"))


def phrase_negatives(
    rec: Mapping[str, Any], doc: Any, *, source: CandidateSource,
    vocabulary: Mapping[str, Sequence[str]], k: int, seed: int,
) -> dict[str, Any] | None:
    """Phrase-level negatives: a word of the five parts of speech and, 50:50, the word before or
    after it (also of the five) both replaced, antonyms first, each pair of replacements new."""
    text = rec["caption"]
    by_index: dict[int, tuple[str, Target]] = {}
    for pos, targets in targets_by_pos(doc).items():
        for t in targets:
            by_index[t.index] = (pos, t)
    pairs = []
    for i in sorted(by_index):
        for j in (i - 1, i + 1):
            if j in by_index:
                pairs.append((i, j))
    if not pairs:
        return None
    rng = caption_rng(seed, PHRASE_NAME, rec["id"], "phrase")
    cands: dict[int, list[tuple[str, str]]] = {}
    negatives, seen, tries = [], {text}, 0
    firsts = sorted({i for i, _ in pairs})
    while len(negatives) < k and tries < 10 * k:
        tries += 1
        i = firsts[rng.randrange(len(firsts))]
        side = i - 1 if rng.random() < 0.5 else i + 1
        j = side if (i, side) in pairs else (2 * i - side)
        a, b = sorted((i, j))
        picks = []
        for idx in (a, b):
            pos, t = by_index[idx]
            if idx not in cands:
                cands[idx] = ranked_candidates(t, pos, source, vocabulary.get(pos, ()),
                                               caption_rng(seed, PHRASE_NAME, rec["id"], f"cands-{idx}"), k)
            if not cands[idx]:
                break
            # antonyms first: take the first candidate, later tries walk down the list
            rank = min(int(rng.expovariate(0.5)), len(cands[idx]) - 1)
            picks.append((pos, t, *cands[idx][rank][:2]))
        if len(picks) < 2:
            continue
        (pa, ta, ra, la), (pb, tb, rb, lb) = picks
        sa, sb = surface(la, ta), surface(lb, tb)
        new = text[: ta.start] + sa + text[ta.end : tb.start] + sb + text[tb.end :]
        if new in seen:
            continue
        seen.add(new)
        details = {"parts": [{"pos": pa, "rule": ra, "span": ta.text, "replacement": sa},
                             {"pos": pb, "rule": rb, "span": tb.text, "replacement": sb}]}
        negatives.append((new, "phrase", negative_record(
            PHRASE_NAME, VERSION, f"{ra}+{rb}", pos=f"{pa}+{pb}", span=text[ta.start : tb.end],
            replacement=sa + text[ta.end : tb.start] + sb, seed=seed, details=details)))
    if not negatives:
        return None
    return mc_row(rec["id"], f"{rec['id']}/phrase", rec["video_id"], text, negatives, category="phrase",
                  source_dataset=rec.get("source_dataset"), source_split=rec.get("source_split"))


# ------------------------------------------------------------------ batch function
class PosRankBatchFn:
    """Pure batch function: caption columns in, one MC row per (caption, part of speech) out."""

    def __init__(self, nlp: Any, wordnet: Any, vocabulary: Mapping[str, Sequence[str]], *, k: int = 20,
                 seed: int = 0, parts_of_speech: Sequence[str] = PARTS_OF_SPEECH, phrase: bool = False,
                 sibling_limit: int = 5, prefer_antonym_targets: bool = True, batch_size: int = 256) -> None:
        bad = [p for p in parts_of_speech if p not in PARTS_OF_SPEECH]
        if bad:
            raise ValueError(f"parts_of_speech {bad} unknown; choose from {PARTS_OF_SPEECH}")
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        self.nlp, self.k, self.seed, self.batch_size = nlp, int(k), int(seed), batch_size
        self.parts_of_speech, self.phrase = tuple(parts_of_speech), phrase
        self.vocabulary = {p: tuple(v) for p, v in vocabulary.items()}
        self.prefer_antonym_targets = prefer_antonym_targets
        self.source = CandidateSource(wordnet, sibling_limit=sibling_limit,
                                      vocabulary={p: frozenset(v) for p, v in self.vocabulary.items()})

    def __call__(self, batch: Mapping[str, list]) -> dict[str, list]:
        recs = batch_records(batch)
        rows = []
        for rec, doc in zip(recs, self.nlp.pipe([r["caption"] for r in recs], batch_size=self.batch_size)):
            if self.phrase:
                row = phrase_negatives(rec, doc, source=self.source, vocabulary=self.vocabulary, k=self.k, seed=self.seed)
                if row:
                    rows.append(row)
                continue
            by_pos = targets_by_pos(doc)
            for pos in self.parts_of_speech:
                row = word_negatives(rec, doc, pos, source=self.source, vocabulary=self.vocabulary, k=self.k,
                                     seed=self.seed, prefer_antonym_targets=self.prefer_antonym_targets,
                                     targets=by_pos[pos])
                if row:
                    rows.append(row)
        return rows_to_columns(rows)


def make_batch_fn(*, vocabulary: str | Mapping[str, Iterable[str]] | None = None, k: int = 20, seed: int = 0,
                  parts_of_speech: Sequence[str] = PARTS_OF_SPEECH, phrase: bool = False, sibling_limit: int = 5,
                  prefer_antonym_targets: bool = True, batch_size: int = 256) -> PosRankBatchFn:
    """Factory (run once per worker): loads spaCy, WordNet and the corpus vocabulary (a {pos: [words]}
    JSON path or mapping; an explicit empty mapping turns the vocabulary tier off)."""
    from hardneg.resources import load_spacy, load_wordnet

    if vocabulary is None:
        raise ValueError(
            "posrank needs the corpus vocabulary for its last tier: --set vocabulary=<{pos: [words]} JSON>; "
            "build one with: python3 -m hardneg.generators.posrank --build-vocabulary captions.txt vocab.json"
        )
    if isinstance(vocabulary, (str, Path)):
        vocab = load_vocabulary(vocabulary)
    else:
        vocab = normalize_vocabulary(vocabulary)
    inflect("be", "VBZ")  # loads lemminflect's tables once per worker, like the tagger
    return PosRankBatchFn(load_spacy(("parser", "ner")), load_wordnet(), vocab, k=k, seed=seed,
                          parts_of_speech=parts_of_speech, phrase=phrase, sibling_limit=sibling_limit,
                          prefer_antonym_targets=prefer_antonym_targets, batch_size=batch_size)


def make_phrase_batch_fn(**settings: Any) -> PosRankBatchFn:
    """Factory of the phrase-level (two consecutive words) training negatives."""
    settings["phrase"] = True
    return make_batch_fn(**settings)


def main(argv: list[str] | None = None) -> int:
    """`python3 -m hardneg.generators.posrank --build-vocabulary CAPTIONS OUT`: the corpus vocabulary file."""
    import argparse

    from hardneg.io import atomic_write_text, refuse_overwrite
    from hardneg.resources import load_spacy

    ap = argparse.ArgumentParser(prog="python3 -m hardneg.generators.posrank",
                                 description="Build the {pos: [lemmas]} corpus vocabulary PoSRank draws its last tier from.")
    ap.add_argument("--build-vocabulary", nargs=2, metavar=("CAPTIONS_TXT", "OUT_JSON"), required=True)
    ap.add_argument("--min-count", type=int, default=1, help="keep lemmas seen at least this often (default 1)")
    ap.add_argument("--overwrite", action="store_true")
    args = ap.parse_args(argv)
    src, dst = (Path(p) for p in args.build_vocabulary)
    if not src.is_file():
        raise SystemExit(f"{src} not found (one caption per line)")
    refuse_overwrite(dst, args.overwrite)
    lines = [ln.split("**#**", 1)[-1].strip() for ln in src.read_text(encoding="utf-8").splitlines() if ln.strip()]
    vocab = vocabulary_from_docs(load_spacy(("parser", "ner")).pipe(lines, batch_size=256), args.min_count)
    atomic_write_text(dst, json.dumps({p: list(v) for p, v in vocab.items()}, indent=1) + "\n")
    print(f"{sum(len(v) for v in vocab.values())} lemmas from {len(lines)} captions -> {dst}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
