"""PoSRank single-word (and phrase-level) negatives (Chen et al., ACCV 2024, Sections 4 and 6.3).

For one part of speech, one word of the caption is chosen and replaced by up to K other
words, tried tier by tier in the order of the ``tiers`` setting. Each tier re-implements one
step of the authors' released generator (repository JewelChen2019/Fine-grained-negatives, file
``X-CLIP_fine_grained_vp/dataloaders/generated_negative_sentence.py``, class
``Get_Negative_text_samples``); docs/generators-posrank.md puts every step next to the paper's
sentence and the function it follows, and says which one each recipe follows where they differ.

1. ``antonym`` (paper: "we prioritize the antonym of word w"; code: ``find_synonyms_antonyms``):
   the antonyms of every lemma of every WordNet synset of the word, of ANY part of speech, so
   that prepositions get antonyms through their adjective/adverb senses (near -> far,
   inside -> outside). Kept in WordNet's order, each once (the code returns ``list(set(...))``,
   whose order changes with the hash seed; the released files show WordNet's order).
   ``preposition_map=True`` swaps this tier, for prepositions only, for the hand-made table of
   version 1 (rule ``preposition-map``).
2. ``sibling`` (code: ``replaced_word`` with ``get_hypernyms``/``get_hyponyms``): the hyponyms of
   a hypernym of the word; a hypernym lemma is drawn, then one hyponym lemma of that name's
   synsets, up to ``sibling_limit`` times. WordNet part of speech as the code maps it (ADV, ADJ,
   VERB, NOUN to their own, anything else, e.g. ADP, to NOUN), from the word's spaCy tag in its
   caption (the code tags the word alone with NLTK's tagger, whose data is a separate download;
   ``change_word`` passes the caption's tag as here). The paper names no such tier.
3. ``hypernym-antonym`` (paper: "followed by the antonym of a hypernym or hyponym of the word";
   not in the released code): antonyms of the lemmas of the word's hypernyms and hyponyms.
4. ``vocabulary`` (paper: "Otherwise, we randomly select a word of the same part-of-speech from
   the dataset vocabulary"; code: ``random.choice`` over the vocabulary): uniform draws without
   repetition from the corpus vocabulary of the same part of speech, or with
   ``vocabulary_pos="any"`` the code's rule of ``replaced_word``: a part of speech drawn
   uniformly from the five, then a word of it; ``"same+any"`` draws the same part of speech
   until its words run out, then as ``"any"`` (K stays 20 for a short list: the released
   preposition sets fill up with words of other parts of speech).

The word: one word of the part of speech (spaCy), uniformly, among those with an antonym first
(``prefer_antonym_targets``; the released sets open with an antonym wherever one exists), never a
spaCy stop word as written (``skip_targets="stop-words"``: no released target is one, while a
sentence-initial 'Then' is). Words shorter than ``min_length`` (3) are never replacements: the
released sets hold none (no 'up' after 'downward' although WordNet lists it), as the authors'
'..._len3.json' vocabulary suggests. With ``fit_surface`` (the default) replacements take the
inflection (``is pushing`` -> ``is pulling``) and capitalisation of the word and a/an before it
agrees; ``fit_surface=False`` inserts the word as it is and ``replace_all=True`` replaces every
same-case whole-word occurrence, as ``replace_word_in_sentence`` does (the recipes). No two
negatives are equal and none equals the caption. Each record's ``span_start``/``span_end`` rebuild
the negative exactly: ``positive[:span_start] + replacement + positive[span_end:] == negative``
(the span takes in a changed article, and runs from the first to the last occurrence replaced).
Phrase-level negatives (training) change a word and one neighbour.
"""

from __future__ import annotations

import functools
import inspect
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from hardneg.generators.common import (
    apply_case, article_edit, article_slot, batch_records, caption_rng, case_of, edit_region, match_case, mc_row,
    negative_record, read_caption_lines, rows_to_columns,
)
from hardneg.generators.inflection import inflect, lemmatize
from hardneg.schema import PARTS_OF_SPEECH
from hardneg.settings_keywords import keyword_signature, settings_from

NAME = "posrank-single-word"
PHRASE_NAME = "posrank-phrase"
#: 2.0: the authors' tiers (antonyms over all synsets of any part of speech, the hyponyms of a
#: hypernym, the vocabulary), min_length, exact span offsets; 1.1: WordNet relation lists sorted.
VERSION = "2.0"

#: PoSRank part of speech -> spaCy universal tags it covers.
UPOS = {"noun": ("NOUN",), "verb": ("VERB",), "adj": ("ADJ",), "adv": ("ADV",), "prep": ("ADP",)}
UPOS_TO_POS = {u: p for p, us in UPOS.items() for u in us}
#: Universal tag -> WordNet part of speech, as ``get_hypernyms``/``get_hyponyms`` map it: ADV, ADJ,
#: VERB and NOUN to their own, anything else (ADP, a Penn tag such as 'IN') to NOUN.
WORDNET_POS = {"ADV": "r", "ADJ": "a", "VERB": "v", "NOUN": "n"}
#: The five parts of speech ``replaced_word`` draws a vocabulary part of speech from.
CODE_VOCABULARY_POS = ("adj", "noun", "adv", "verb", "prep")
#: Vocabulary-file keys accepted as aliases (the published VLN-UVO dictionary says 'adp').
POS_ALIASES = {"adp": "prep", "adjective": "adj", "adverb": "adv", "preposition": "prep"}

#: Version 1's hand-made preposition antonyms, now opt-in (``preposition_map=True``).
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
#: Candidate tiers, in the order of the authors' ``replaced_word`` (the paper's extra tier last).
TIERS = ("antonym", "sibling", "hypernym-antonym", "vocabulary")
DEFAULT_TIERS = ("antonym", "sibling", "vocabulary")
#: Provenance rule names a negative can carry.
RULES = ("antonym", "preposition-map", "sibling", "hypernym-antonym", "vocabulary")
#: Version 1's hand list of words never chosen (``skip_targets="list"``).
SKIP_TARGETS = frozenset(
    "then also there here now just only very too so again still even not ever already yet soon "
    "as when while where how why really quite rather almost".split()
)
SKIP_RULES = ("list", "stop-words", "none")
#: Where the vocabulary tier draws from: the target's part of speech (the paper), any of the five
#: (``replaced_word``), or the target's until its words run out, then any (fills K with a short list).
VOCABULARY_POS = ("same", "any", "same+any")


@functools.lru_cache(maxsize=None)
def skip_words(rule: str = "stop-words") -> tuple[frozenset[str], bool]:
    """(words never chosen for replacement, compare them lower-cased?) of a `skip_targets` rule.
    "stop-words": spaCy's English stop words as written, as the released vocabulary was filtered
    ('then' is dropped, a sentence-initial 'Then' stays); "list": version 1's hand list."""
    if rule == "stop-words":
        from spacy.lang.en.stop_words import STOP_WORDS

        return frozenset(STOP_WORDS), False
    if rule == "list":
        return SKIP_TARGETS, True
    if rule == "none":
        return frozenset(), True
    raise ValueError(f"skip_targets must be one of {SKIP_RULES}, got {rule!r}")


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
    """`synset.<relation>()` (hypernyms, hyponyms, ...) sorted by synset name.

    NLTK keeps a synset's pointers in a ``set`` of ``(pos, offset)`` tuples and returns them
    unsorted, so these lists come back in an order that changes with ``PYTHONHASHSEED``
    (i.e. per worker process). Sorting by name (the order of ``Synset.__lt__``) makes every
    tier built from them, and the seeded draws over them, identical on every machine.
    Lemma-level pointers (``Lemma.antonyms()``) and ``synsets()`` are lists in file order
    and need no sorting."""
    return sorted(getattr(synset, relation)(), key=lambda s: s.name())


def lemma_text(name: str) -> str:
    """A WordNet lemma name as caption text: 'low_spirits' -> 'low spirits' (the released files keep
    the underscore)."""
    return name.replace("_", " ")


@dataclass
class CandidateSource:
    """Replacement words of one word from WordNet, per tier, cached per generator instance.

    `word` is the caption's word lower-cased, looked up as the authors' code looks it up
    (``wordnet.synsets(word)``: NLTK's morphy finds the base form of 'pushing', 'men')."""

    wordnet: Any
    min_length: int = 3
    preposition_map: bool = False
    _cache: dict = field(default_factory=dict)

    def _keep(self, names: Iterable[str], word: str) -> tuple[str, ...]:
        """WordNet names as caption text, first occurrence kept, the word itself and too short
        words dropped."""
        out: dict[str, None] = {}
        for n in names:
            t = lemma_text(n)
            if len(t) >= self.min_length and t.lower() != word:
                out.setdefault(t, None)
        return tuple(out)

    def antonyms(self, word: str, pos: str) -> tuple[str, tuple[str, ...]]:
        """(rule, antonyms) of tier 1: ``find_synonyms_antonyms`` (every lemma's antonyms in every
        synset of the word, any part of speech), or for a preposition the hand-made map when asked."""
        key = ("antonym", word, pos == "prep" and self.preposition_map)
        if key not in self._cache:
            if pos == "prep" and self.preposition_map:
                self._cache[key] = ("preposition-map", self._keep(PREPOSITION_ANTONYMS.get(word, ()), word))
            else:
                names = [a.name() for s in self.wordnet.synsets(word) for lem in s.lemmas() for a in lem.antonyms()]
                self._cache[key] = ("antonym", self._keep(names, word))
        return self._cache[key]

    def hypernyms(self, word: str, upos: str) -> tuple[str, ...]:
        """Tier 2, first step (``get_hypernyms``): the hypernym lemma names of the word's synsets in
        the WordNet part of speech mapped from `upos` (as caption text, each once)."""
        key = ("hypernyms", word, upos)
        if key not in self._cache:
            wn_pos = WORDNET_POS.get(upos, "n")
            self._cache[key] = self._keep((lem.name() for s in self.wordnet.synsets(word, wn_pos)
                                           for h in related(s, "hypernyms") for lem in h.lemmas()), "")
        return self._cache[key]

    def hyponyms(self, name: str, upos: str) -> tuple[str, ...]:
        """Tier 2, second step (``get_hyponyms``): the hyponym lemma names of every synset of the
        lemma name `name` (not only the sense it was reached by), same part of speech; cached per
        name, so a hypernym many words share ('person') is read once."""
        key = ("hyponyms", name, upos)
        if key not in self._cache:
            wn_pos = WORDNET_POS.get(upos, "n")
            self._cache[key] = self._keep((lem.name() for s in self.wordnet.synsets(name.replace(" ", "_"), wn_pos)
                                           for c in related(s, "hyponyms") for lem in c.lemmas()), "")
        return self._cache[key]

    def hypernym_antonyms(self, word: str, upos: str) -> tuple[str, ...]:
        """The paper's tier 2: antonyms of the lemmas of the word's hypernyms and hyponyms."""
        key = ("hypernym-antonym", word, upos)
        if key not in self._cache:
            wn_pos = WORDNET_POS.get(upos, "n")
            names = [a.name() for s in self.wordnet.synsets(word, wn_pos)
                     for r in related(s, "hypernyms") + related(s, "hyponyms")
                     for lem in r.lemmas() for a in lem.antonyms()]
            self._cache[key] = self._keep(names, word)
        return self._cache[key]


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


def targets_by_pos(doc: Any, skip_targets: str = "stop-words") -> dict[str, list[Target]]:
    """Alphabetic tokens of each PoSRank part of speech in a tagged spaCy doc (one pass), less the
    words the `skip_targets` rule excludes (see `skip_words`)."""
    skip, lower_skip = skip_words(skip_targets)
    out: dict[str, list[Target]] = {p: [] for p in PARTS_OF_SPEECH}
    for tok in doc:
        pos = UPOS_TO_POS.get(tok.pos_)
        if pos is None or not tok.is_alpha:
            continue
        low = tok.lower_
        if (low if lower_skip else tok.text) in skip:
            continue
        lemma = low if pos == "prep" else (tok.lemma_.lower() if tok.lemma_.isalpha() else lemmatize(tok.text, tok.pos_))
        out[pos].append(Target(tok.idx, tok.idx + len(tok.text), tok.text, tok.tag_, tok.pos_, lemma, tok.i))
    return out


def targets_of(doc: Any, pos: str, skip_targets: str = "stop-words") -> list[Target]:
    """Alphabetic tokens of part of speech `pos` in a tagged spaCy doc."""
    return targets_by_pos(doc, skip_targets)[pos]


def surface(lemma: str, target: Target) -> str:
    """`lemma` inflected like `target` and cased like it."""
    return match_case(inflect(lemma, target.tag), target.text)


@dataclass(frozen=True)
class Settings:
    """How candidates are ranked (the generator's settings that shape the output)."""

    tiers: tuple[str, ...] = DEFAULT_TIERS
    sibling_limit: int = 5
    vocabulary_pos: str = "same"
    min_length: int = 3
    fit_surface: bool = True
    replace_all: bool = False


@dataclass(frozen=True)
class PosRankConfig:
    """Every setting of a PoSRank generator, checked when built (the vocabulary, a file or mapping, is passed
    beside it). The keywords of `make_batch_fn` and `PosRankBatchFn` are these fields; a recipe's `settings:`
    names them too. A new setting is one field here (its check in `__post_init__`), its use, its line in
    `make_batch_fn`'s docstring and docs/generators-posrank.md; one that changes the output bumps VERSION.

    k: negatives per caption and part of speech; seed: every draw; parts_of_speech: which to make negatives
    for; phrase: phrase-level (two neighbouring words) instead; tiers ... replace_all: see `make_batch_fn`;
    batch_size: captions per spaCy batch."""

    k: int = 20
    seed: int = 0
    parts_of_speech: tuple[str, ...] = PARTS_OF_SPEECH
    phrase: bool = False
    tiers: tuple[str, ...] = DEFAULT_TIERS
    sibling_limit: int = 5
    vocabulary_pos: str = "same"
    min_length: int = 3
    preposition_map: bool = False
    skip_targets: str = "stop-words"
    prefer_antonym_targets: bool = True
    fit_surface: bool = True
    replace_all: bool = False
    batch_size: int = 256

    def __post_init__(self) -> None:
        bad = [p for p in self.parts_of_speech if p not in PARTS_OF_SPEECH]
        if bad:
            raise ValueError(f"parts_of_speech {bad} unknown; choose from {PARTS_OF_SPEECH}")
        if self.k < 1:
            raise ValueError(f"k must be at least 1, got {self.k}")
        tiers = tuple(self.tiers)
        bad = [t for t in tiers if t not in TIERS]
        if bad or not tiers or len(set(tiers)) != len(tiers):
            raise ValueError(f"tiers {list(tiers)}: give each of {list(TIERS)} at most once, in the order to try them")
        if self.vocabulary_pos not in VOCABULARY_POS:
            raise ValueError(f"vocabulary_pos must be one of {VOCABULARY_POS} ('same': the paper; 'any': replaced_word; "
                             f"'same+any': the same part of speech, then any once it runs out), got {self.vocabulary_pos!r}")
        if int(self.sibling_limit) < 0:
            raise ValueError(f"sibling_limit must be 0 or more, got {self.sibling_limit}")
        if int(self.min_length) < 1:
            raise ValueError(f"min_length must be at least 1, got {self.min_length}")
        skip_words(self.skip_targets)  # a clear error for an unknown rule
        for name, value in (("k", int(self.k)), ("seed", int(self.seed)), ("tiers", tiers),
                            ("parts_of_speech", tuple(self.parts_of_speech)),
                            ("sibling_limit", int(self.sibling_limit)), ("min_length", int(self.min_length))):
            object.__setattr__(self, name, value)

    def ranking(self) -> Settings:
        """The part that ranks candidates (what `ranked_candidates` takes)."""
        return Settings(self.tiers, self.sibling_limit, self.vocabulary_pos, self.min_length, bool(self.fit_surface),
                        bool(self.replace_all))


def ranked_candidates(
    target: Target, pos: str, source: CandidateSource, vocabulary: Mapping[str, Sequence[str]], rng: Any, k: int,
    settings: Settings = Settings(),
) -> list[tuple[str, str, str, str | None]]:
    """Up to `k` (rule, lemma, inflected form, vocabulary pos) replacements for `target`, tier by
    tier; the sibling and vocabulary tiers are drawn with `rng`."""
    word = target.text.lower()
    out: list[tuple[str, str, str, str | None]] = []
    seen_forms: set[str] = {word, target.lemma}
    tag = target.tag

    def take(rule: str, lemma: str, vocab_pos: str | None = None) -> None:
        if len(lemma) < settings.min_length or lemma.lower() in seen_forms:
            return
        form = inflect(lemma, tag)
        low = form.lower()
        if low in seen_forms:
            return
        seen_forms.add(low)
        seen_forms.add(lemma.lower())
        out.append((rule, lemma, form, vocab_pos))

    for tier in settings.tiers:
        if len(out) >= k:
            break
        if tier == "antonym":
            rule, names = source.antonyms(word, pos)
            for lem in names:
                take(rule, lem)
        elif tier == "hypernym-antonym":
            for lem in source.hypernym_antonyms(word, target.upos):
                take("hypernym-antonym", lem)
        elif tier == "sibling":
            # replaced_word: random.choice over the hypernyms, then over that hypernym's hyponyms;
            # repeated without putting a drawn hyponym back (a hypernym with none left is dropped),
            # until sibling_limit words are taken. Hyponym lists are read only for drawn hypernyms.
            hypernyms = list(source.hypernyms(word, target.upos))
            pools: dict[str, list[str]] = {}
            taken = 0
            while hypernyms and taken < settings.sibling_limit and len(out) < k:
                i = rng.randrange(len(hypernyms))
                h = hypernyms[i]
                pool = pools.get(h)
                if pool is None:
                    pool = pools[h] = list(source.hyponyms(h, target.upos))
                if pool:
                    before = len(out)
                    take("sibling", pool.pop(rng.randrange(len(pool))))
                    taken += len(out) > before
                if not pool:
                    hypernyms.pop(i)
        elif tier == "vocabulary":
            if settings.vocabulary_pos in ("same", "same+any"):
                _vocabulary_same_pos(take, vocabulary.get(pos, ()), rng, k, out)
            if settings.vocabulary_pos in ("any", "same+any") and len(out) < k:
                _vocabulary_any_pos(take, vocabulary, rng, k, out)
    return out[:k]


def _vocabulary_same_pos(take: Any, words: Sequence[str], rng: Any, k: int, out: list) -> None:
    """Uniform draws without repetition from `words` until `out` holds `k` (the code's repeated
    ``random.choice`` with duplicates rejected, which is the same distribution)."""
    if not words:
        return
    if len(words) <= 4 * k:
        for i in rng.sample(range(len(words)), len(words)):
            if len(out) >= k:
                return
            take("vocabulary", words[i])
        return
    drawn: set[int] = set()
    tries = 0
    while len(out) < k and tries < 20 * k and len(drawn) < len(words):
        i = rng.randrange(len(words))
        tries += 1
        if i not in drawn:
            drawn.add(i)
            take("vocabulary", words[i])
    for i in range(len(words)):  # a vocabulary of mostly unusable words: walk the rest in order
        if len(out) >= k:
            return
        if i not in drawn:
            take("vocabulary", words[i])


def _vocabulary_any_pos(take: Any, vocabulary: Mapping[str, Sequence[str]], rng: Any, k: int, out: list) -> None:
    """``replaced_word``'s last resort: a part of speech drawn uniformly from the five, then a word."""
    pools = [p for p in CODE_VOCABULARY_POS if vocabulary.get(p)]
    tries = 0
    while pools and len(out) < k and tries < 50 * k:
        tries += 1
        p = CODE_VOCABULARY_POS[rng.randrange(len(CODE_VOCABULARY_POS))]
        words = vocabulary.get(p, ())
        if words:
            take("vocabulary", words[rng.randrange(len(words))], p)


def choose_target(targets: list[Target], pos: str, source: CandidateSource, rng: Any, prefer_antonym: bool) -> Target:
    """Uniform choice among the words of `pos`; among those with an antonym first when asked
    (the released sets start with an antonym wherever the caption has a word with one)."""
    if prefer_antonym:
        with_ant = [t for t in targets if source.antonyms(t.text.lower(), pos)[1]]
        if with_ant:
            return with_ant[rng.randrange(len(with_ant))]
    return targets[rng.randrange(len(targets))]


def word_details(lemma: str, target: Target, article_fixed: bool, vocabulary_pos: str | None = None,
                 occurrences: int = 1) -> str:
    """`details_json` of a single-word negative, written directly (this runs once per negative):
    keys in sorted order, the lemma through `json.dumps` only when it needs escaping (Penn tags
    hold letters and '$')."""
    head = '{"article_fixed":true,' if article_fixed else "{"
    quoted = f'"{lemma}"' if lemma.isprintable() and '"' not in lemma and "\\" not in lemma else json.dumps(
        lemma, ensure_ascii=False)
    occ = f',"occurrences":{occurrences}' if occurrences > 1 else ""
    vp = f',"vocabulary_pos":"{vocabulary_pos}"' if vocabulary_pos else ""
    return f'{head}"lemma":{quoted}{occ},"tag":"{target.tag}","token_index":{target.index}{vp}}}'


def occurrences(text: str, target: Target, replace_all: bool) -> list[tuple[int, int]]:
    """Character spans of the word to replace: the target alone, or with `replace_all` every
    whole-word, same-case occurrence of it, as ``replace_word_in_sentence``'s
    ``re.sub(r'\\b' + word + r'\\b', ...)`` replaces them."""
    if not replace_all or text.count(target.text) == 1:
        return [(target.start, target.end)]
    spans = [m.span() for m in re.finditer(r"\b" + re.escape(target.text) + r"\b", text)]
    return spans if (target.start, target.end) in spans else [(target.start, target.end)]


def word_negatives(
    rec: Mapping[str, Any], doc: Any, pos: str, *, source: CandidateSource,
    vocabulary: Mapping[str, Sequence[str]], k: int, seed: int, prefer_antonym_targets: bool = True,
    targets: list[Target] | None = None, settings: Settings = Settings(),
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
    spans = occurrences(text, target, settings.replace_all)
    # the caption's case and articles are read once, not per candidate
    slots = [article_slot(text[:a]) if settings.fit_surface else None for a, _ in spans]
    case = case_of(target.text)
    for rule, lemma, form, vocab_pos in ranked_candidates(target, pos, source, vocabulary, rng, k, settings):
        # fitted: inflected, cased and a/an agreed; as-is: the word as WordNet/the vocabulary has it
        repl = apply_case(form, case) if settings.fit_surface else lemma
        edits, fixed = [], False
        for (a, b), slot in zip(spans, slots):
            art = article_edit(slot, repl)
            if art is not None:
                edits.append(art)
                fixed = True
            edits.append((a, b, repl))
        if len(edits) == 1:
            new = text[:target.start] + repl + text[target.end:]
            start, end, span, replacement = target.start, target.end, target.text, repl
        else:  # the span runs from the first edit (an article, another occurrence) to the last
            new, start, end, span, replacement = edit_region(text, edits)
        if new in seen:
            continue
        seen.add(new)
        negatives.append((new, pos, negative_record(
            NAME, VERSION, rule, pos=pos, span=span, replacement=replacement, seed=seed,
            details=word_details(lemma, target, fixed, vocab_pos, len(spans)), span_start=start, span_end=end)))
    if not negatives:
        return None
    return mc_row(rec["id"], f"{rec['id']}/{pos}", rec["video_id"], text, negatives, category=pos,
                  source_dataset=rec.get("source_dataset"), source_split=rec.get("source_split"))


def phrase_negatives(
    rec: Mapping[str, Any], doc: Any, *, source: CandidateSource,
    vocabulary: Mapping[str, Sequence[str]], k: int, seed: int, settings: Settings = Settings(),
    by_pos: Mapping[str, list[Target]] | None = None,
) -> dict[str, Any] | None:
    """Phrase-level negatives: a word of the five parts of speech and, 50:50, the word before or
    after it (also of the five) both replaced, antonyms first, each pair of replacements new."""
    text = rec["caption"]
    by_index: dict[int, tuple[str, Target]] = {}
    for pos, targets in (targets_by_pos(doc) if by_pos is None else by_pos).items():
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
    cands: dict[int, list] = {}
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
                cands[idx] = ranked_candidates(t, pos, source, vocabulary,
                                               caption_rng(seed, PHRASE_NAME, rec["id"], f"cands-{idx}"), k, settings)
            if not cands[idx]:
                break
            # antonyms first: take the first candidate, later tries walk down the list
            rank = min(int(rng.expovariate(0.5)), len(cands[idx]) - 1)
            picks.append((pos, t, *cands[idx][rank][:2]))
        if len(picks) < 2:
            continue
        (pa, ta, ra, la), (pb, tb, rb, lb) = picks
        sa, sb = surface(la, ta), surface(lb, tb)
        replacement = sa + text[ta.end : tb.start] + sb
        new = text[: ta.start] + replacement + text[tb.end :]
        if new in seen:
            continue
        seen.add(new)
        details = {"parts": [{"pos": pa, "rule": ra, "span": ta.text, "replacement": sa},
                             {"pos": pb, "rule": rb, "span": tb.text, "replacement": sb}]}
        negatives.append((new, "phrase", negative_record(
            PHRASE_NAME, VERSION, f"{ra}+{rb}", pos=f"{pa}+{pb}", span=text[ta.start : tb.end],
            replacement=replacement, seed=seed, details=details, span_start=ta.start, span_end=tb.end)))
    if not negatives:
        return None
    return mc_row(rec["id"], f"{rec['id']}/phrase", rec["video_id"], text, negatives, category="phrase",
                  source_dataset=rec.get("source_dataset"), source_split=rec.get("source_split"))


# ------------------------------------------------------------------ batch function
class PosRankBatchFn:
    """Pure batch function: caption columns in, one MC row per (caption, part of speech) out."""

    def __init__(self, nlp: Any, wordnet: Any, vocabulary: Mapping[str, Sequence[str]], *,
                 config: PosRankConfig | None = None, **settings: Any) -> None:
        """`config` (default `PosRankConfig()`), with any of its fields given as keywords set over it."""
        cfg = settings_from(PosRankConfig, config, settings, "PosRankBatchFn")
        self.config = cfg
        self.nlp, self.k, self.seed, self.batch_size = nlp, cfg.k, cfg.seed, cfg.batch_size
        self.parts_of_speech, self.phrase = cfg.parts_of_speech, cfg.phrase
        self.vocabulary = {p: tuple(v) for p, v in vocabulary.items()}
        self.prefer_antonym_targets = cfg.prefer_antonym_targets
        self.settings = cfg.ranking()
        self.skip_targets = cfg.skip_targets
        self.source = CandidateSource(wordnet, min_length=cfg.min_length, preposition_map=bool(cfg.preposition_map))

    def __call__(self, batch: Mapping[str, list]) -> dict[str, list]:
        recs = batch_records(batch)
        rows = []
        for rec, doc in zip(recs, self.nlp.pipe([r["caption"] for r in recs], batch_size=self.batch_size)):
            by_pos = targets_by_pos(doc, self.skip_targets)
            if self.phrase:
                row = phrase_negatives(rec, doc, source=self.source, vocabulary=self.vocabulary, k=self.k,
                                       seed=self.seed, settings=self.settings, by_pos=by_pos)
                if row:
                    rows.append(row)
                continue
            for pos in self.parts_of_speech:
                row = word_negatives(rec, doc, pos, source=self.source, vocabulary=self.vocabulary, k=self.k,
                                     seed=self.seed, prefer_antonym_targets=self.prefer_antonym_targets,
                                     targets=by_pos[pos], settings=self.settings)
                if row:
                    rows.append(row)
        return rows_to_columns(rows)


def make_batch_fn(*, vocabulary: str | Mapping[str, Iterable[str]] | None = None, config: PosRankConfig | None = None,
                  **settings: Any) -> PosRankBatchFn:
    """Factory (run once per worker): loads spaCy, WordNet and the corpus vocabulary (a {pos: [words]}
    JSON path or mapping; an explicit empty mapping turns the vocabulary tier off).

    `tiers`: the candidate tiers in order (see the module docstring); `sibling_limit`: at most this
    many sibling words; `vocabulary_pos`: "same" (the paper), "any" (``replaced_word``) or
    "same+any" (the same part of speech until it runs out, then any);
    `min_length`: shortest replacement; `preposition_map`: version 1's hand-made preposition
    antonyms instead of WordNet's; `skip_targets`: words never replaced ("list": version 1's hand
    list, "stop-words": spaCy's stop words, "none"); `prefer_antonym_targets`: choose among the
    words that have an antonym first; `fit_surface`: inflect, case and fix a/an (False: insert the
    word as it is, as ``replace_word_in_sentence`` does); `replace_all`: replace every same-case
    whole-word occurrence of the chosen word, as ``re.sub`` in ``replace_word_in_sentence`` does.
    The settings are `PosRankConfig`'s fields: pass them as keywords, or a `config` (keywords set over it)."""
    from hardneg.resources import load_spacy, load_wordnet

    cfg = settings_from(PosRankConfig, config, settings, "make_batch_fn")
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
    return PosRankBatchFn(load_spacy(("parser", "ner")), load_wordnet(), vocab, config=cfg)


#: the keywords it takes are PosRankConfig's fields (what `hardneg train --negatives-set` checks keys against)
make_batch_fn.__signature__ = keyword_signature(make_batch_fn, PosRankConfig)


def make_phrase_batch_fn(**settings: Any) -> PosRankBatchFn:
    """Factory of the phrase-level (two consecutive words) training negatives."""
    settings["phrase"] = True
    return make_batch_fn(**settings)


#: the name its records carry (`hardneg.generators.generator_info`)
make_phrase_batch_fn.record_name = PHRASE_NAME
#: the settings it takes are make_batch_fn's (what `hardneg train --negatives-set` checks keys against)
make_phrase_batch_fn.__signature__ = inspect.signature(make_batch_fn).replace(
    parameters=[p for p in inspect.signature(make_batch_fn).parameters.values() if p.name != "phrase"])


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
        raise SystemExit(f"{src} not found (one caption per line, or '<key>**#**<caption>' lines)")
    refuse_overwrite(dst, args.overwrite)
    lines = [caption for _, caption in read_caption_lines(src)]
    vocab = vocabulary_from_docs(load_spacy(("parser", "ner")).pipe(lines, batch_size=256), args.min_count)
    atomic_write_text(dst, json.dumps({p: list(v) for p, v in vocab.items()}, indent=1) + "\n")
    print(f"{sum(len(v) for v in vocab.values())} lemmas from {len(lines)} captions -> {dst}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
