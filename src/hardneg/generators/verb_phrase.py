"""Language-model verb-phrase contrast sets (Park et al., Section 3.2 and Appendix A.3).

A verb phrase (a verb, or a verb followed by a preposition/particle) found with spaCy is
replaced by T5's sentinel ``<extra_id_0>``; T5 proposes K = 50 fills by beam search. A fill
is kept when all of these hold (each score is recorded):

* it contains a verb, and every verb lemma in it occurs at least ``min_verb_count`` (30)
  times in the training captions;
* GPT-2 perplexity: with ``ppl_diff = (ppl_o - ppl_m) / ppl_o``, keep if ``ppl_diff < 0.6``
  or (``ppl_diff < 1.4`` and ``ppl_m < 750``);
* semantic inconsistency: a candidate verb is a WordNet antonym of the original verb, or the
  word vectors of the two verbs have cosine < 0.4 and the sentence embeddings cosine < 0.8.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from hardneg.generators.common import batch_records, caption_rng, mc_row, negative_record, rows_to_columns
from hardneg.settings_keywords import keyword_signature, settings_from

NAME = "contrast-verb-lm"
VERSION = "1.1"  # 1.1: exact span offsets in the provenance
DEFAULT_T5 = "google-t5/t5-base"
DEFAULT_GPT2 = "openai-community/gpt2-xl"
SENTINEL_0, SENTINEL_1 = "<extra_id_0>", "<extra_id_1>"


# ------------------------------------------------------------------ pure rules
def perplexity_rule(ppl_o: float, ppl_m: float, diff_max: float = 0.6, diff_max_if_low: float = 1.4,
                    ppl_m_max: float = 750.0) -> tuple[bool, float]:
    """(keep, ppl_diff) of the paper's fluency rule."""
    diff = (ppl_o - ppl_m) / ppl_o
    return (diff < diff_max) or (diff < diff_max_if_low and ppl_m < ppl_m_max), diff


def semantic_rule(is_antonym: bool, word_cos: float | None, sent_cos: float, word_cos_max: float = 0.4,
                  sent_cos_max: float = 0.8) -> bool:
    """Inconsistent with the original: an antonym, or both similarities low (no word vector: not low)."""
    return bool(is_antonym) or (word_cos is not None and word_cos < word_cos_max and sent_cos < sent_cos_max)


def verb_phrases(doc: Any) -> list[tuple[int, int]]:
    """Character spans of verb phrases: a VERB, extended by a directly following ADP/particle."""
    spans = []
    for t in doc:
        if t.pos_ == "VERB" and t.is_alpha:
            end = t.idx + len(t.text)
            nxt = doc[t.i + 1] if t.i + 1 < len(doc) else None
            if nxt is not None and (nxt.pos_ == "ADP" or nxt.tag_ == "RP"):
                end = nxt.idx + len(nxt.text)
            spans.append((t.idx, end))
    return spans


def verb_counts_from(docs: Iterable[Any]) -> Counter:
    """Lemma counts of verbs in tagged training captions (the rare-verb filter's reference)."""
    return Counter(t.lemma_.lower() for doc in docs for t in doc if t.pos_ == "VERB")


def parse_fill(decoded: str) -> str:
    """The text T5 generated for sentinel 0 (between <extra_id_0> and <extra_id_1>/end)."""
    s = decoded
    for tok in ("<pad>", "</s>"):
        s = s.replace(tok, " ")
    if SENTINEL_0 in s:
        s = s.split(SENTINEL_0, 1)[1]
    s = s.split("<extra_id_", 1)[0]
    return " ".join(s.split())


def cosine(a: Any, b: Any) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-12))


# ------------------------------------------------------------------ models
class Perplexity:
    """Per-sentence perplexity under a causal LM (mean token NLL after a BOS token, exponentiated)."""

    def __init__(self, model: Any, tokenizer: Any, device: str = "cpu") -> None:
        self.model, self.tok, self.device = model.eval().to(device), tokenizer, device
        self.bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id

    def __call__(self, texts: Sequence[str], batch_size: int = 32) -> list[float]:
        import torch

        out = []
        for i in range(0, len(texts), batch_size):
            ids = [[self.bos] + self.tok(t, add_special_tokens=False)["input_ids"] for t in texts[i : i + batch_size]]
            width = max(len(x) for x in ids)
            inp = torch.tensor([x + [self.bos] * (width - len(x)) for x in ids])
            mask = torch.tensor([[1] * len(x) + [0] * (width - len(x)) for x in ids])
            with torch.no_grad():
                logits = self.model(input_ids=inp.to(self.device), attention_mask=mask.to(self.device)).logits.float()
            logp = torch.log_softmax(logits[:, :-1], dim=-1)
            nll = -logp.gather(2, inp[:, 1:].unsqueeze(-1).to(self.device)).squeeze(-1)
            m = mask[:, 1:].to(self.device).float()
            mean = (nll * m).sum(1) / m.sum(1).clamp(min=1)
            out += [math.exp(min(float(v), 700.0)) for v in mean.cpu()]
        return out


@dataclass(frozen=True)
class VerbPhraseConfig:
    """The settings of the verb-phrase generator's filters and search. The keywords of
    `make_batch_fn` (beside the models it loads) and `VerbPhraseBatchFn` (beside the models it is given) are
    these fields; a recipe's `settings:` names them too. A new setting is one field here, its use, and a line in
    docs/generators.md; one that changes the output bumps VERSION.

    seed: the span drawn per caption; k: T5 beams (fills) per caption; min_verb_count: the rare-verb filter;
    word_cos_max, sent_cos_max: the semantic rule; ppl_diff_max, ppl_diff_max_if_low, ppl_m_max: the
    perplexity rule; max_negatives: kept per caption; max_new_tokens: of a fill; model_ids: {role: model id}
    recorded in each negative's details (kept as (role, id) pairs so the object stays frozen; a mapping is
    accepted); device: where T5 runs."""

    seed: int = 0
    k: int = 50
    min_verb_count: int = 30
    word_cos_max: float = 0.4
    sent_cos_max: float = 0.8
    ppl_diff_max: float = 0.6
    ppl_diff_max_if_low: float = 1.4
    ppl_m_max: float = 750.0
    max_negatives: int = 5
    max_new_tokens: int = 8
    model_ids: tuple[tuple[str, str], ...] = ()
    device: str = "cpu"

    def __post_init__(self) -> None:
        ids = self.model_ids
        ids = tuple((ids or {}).items()) if isinstance(ids, Mapping) or ids is None else tuple(tuple(p) for p in ids)
        for name, value in (("seed", int(self.seed)), ("k", int(self.k)), ("min_verb_count", int(self.min_verb_count)),
                            ("max_negatives", int(self.max_negatives)), ("model_ids", ids)):
            object.__setattr__(self, name, value)

    @property
    def ppl_limits(self) -> tuple[float, float, float]:
        """(diff_max, diff_max_if_low, ppl_m_max) of `perplexity_rule`."""
        return self.ppl_diff_max, self.ppl_diff_max_if_low, self.ppl_m_max


class VerbPhraseBatchFn:
    """Pure batch function: captions in, one MC row (positive + kept LM verb contrasts) per caption."""

    def __init__(self, nlp: Any, t5: Any, t5_tokenizer: Any, ppl: Perplexity, sentence_model: Any, glove: Any,
                 wordnet: Any, verb_counts: Mapping[str, int], *, config: VerbPhraseConfig | None = None,
                 **settings: Any) -> None:
        """The models and the verb counts, and `config` (default `VerbPhraseConfig()`) with any of its fields given
        as keywords set over it."""
        cfg = settings_from(VerbPhraseConfig, config, settings, "VerbPhraseBatchFn")
        if SENTINEL_0 not in t5_tokenizer.get_vocab():
            raise ValueError(f"the span-infilling tokenizer has no {SENTINEL_0} sentinel: use a T5 model")
        self.config, device = cfg, cfg.device
        self.nlp, self.t5, self.t5_tok, self.ppl = nlp, t5.eval().to(device), t5_tokenizer, ppl
        self.sent, self.glove, self.wordnet, self.verb_counts = sentence_model, glove, wordnet, dict(verb_counts)
        self.seed, self.k, self.min_verb_count = cfg.seed, cfg.k, cfg.min_verb_count
        self.word_cos_max, self.sent_cos_max, self.max_negatives = cfg.word_cos_max, cfg.sent_cos_max, cfg.max_negatives
        self.ppl_limits = cfg.ppl_limits
        self.max_new_tokens, self.model_ids, self.device = cfg.max_new_tokens, dict(cfg.model_ids), device

    def _antonyms(self, lemma: str) -> set[str]:
        return {a.name().lower() for s in self.wordnet.synsets(lemma, "v") for l in s.lemmas() for a in l.antonyms()}

    def _generate(self, masked: list[str]) -> list[list[str]]:
        import torch

        enc = self.t5_tok(masked, return_tensors="pt", padding=True).to(self.device)
        with torch.no_grad():
            gen = self.t5.generate(**enc, num_beams=self.k, num_return_sequences=self.k, do_sample=False,
                                   max_new_tokens=self.max_new_tokens)
        texts = self.t5_tok.batch_decode(gen, skip_special_tokens=False)
        return [[parse_fill(t) for t in texts[i * self.k : (i + 1) * self.k]] for i in range(len(masked))]

    def __call__(self, batch: Mapping[str, list]) -> dict[str, list]:
        recs = batch_records(batch)
        jobs = []
        for rec, doc in zip(recs, self.nlp.pipe([r["caption"] for r in recs])):
            spans = verb_phrases(doc)
            if not spans:
                continue
            start, end = spans[caption_rng(self.seed, NAME, rec["id"], "span").randrange(len(spans))]
            verb = next(t for t in doc if t.idx == start)
            jobs.append((rec, start, end, verb.lemma_.lower()))
        if not jobs:
            return rows_to_columns([])
        fills = self._generate([r["caption"][:s] + SENTINEL_0 + r["caption"][e:] for r, s, e, _ in jobs])
        rows = []
        for (rec, start, end, orig_lemma), options in zip(jobs, fills):
            row = self._filter(rec, start, end, orig_lemma, options)
            if row:
                rows.append(row)
        return rows_to_columns(rows)

    def _filter(self, rec: Mapping[str, Any], start: int, end: int, orig_lemma: str, options: list[str]) -> dict | None:
        text, span = rec["caption"], rec["caption"][start:end]
        stats = Counter(candidates=len(options))
        cands, seen = [], {text}
        for rank, fill in enumerate(options):
            new = text[:start] + fill + text[end:]
            if not fill or fill.lower() == span.lower() or new in seen:
                stats["duplicate_or_same"] += 1
                continue
            seen.add(new)
            cands.append((rank, fill, new))
        # 1) a verb in the fill, 2) every fill verb frequent in training captions
        verbed = []
        for (rank, fill, new), doc in zip(cands, self.nlp.pipe([c[2] for c in cands])):
            verbs = [t.lemma_.lower() for t in doc if t.pos_ == "VERB" and start <= t.idx < start + len(fill)]
            if not verbs:
                stats["no_verb"] += 1
                continue
            counts = {v: self.verb_counts.get(v, 0) for v in verbs}
            if min(counts.values()) < self.min_verb_count:
                stats["rare_verb"] += 1
                continue
            if orig_lemma in verbs:
                stats["same_verb"] += 1
                continue
            verbed.append((rank, fill, new, verbs, counts))
        if not verbed:
            return None
        # 3) fluency under GPT-2
        ppls = self.ppl([text] + [c[2] for c in verbed])
        fluent = []
        for (rank, fill, new, verbs, counts), ppl_m in zip(verbed, ppls[1:]):
            keep, diff = perplexity_rule(ppls[0], ppl_m, *self.ppl_limits)
            if keep:
                fluent.append((rank, fill, new, verbs, counts, ppl_m, diff))
            else:
                stats["perplexity"] += 1
        if not fluent:
            return None
        # 4) semantic inconsistency
        emb = self.sent.encode([text] + [c[2] for c in fluent], convert_to_numpy=True)
        antonyms = self._antonyms(orig_lemma)
        v_orig = self.glove.get(orig_lemma)
        kept = []
        for j, (rank, fill, new, verbs, counts, ppl_m, diff) in enumerate(fluent):
            is_ant = any(v in antonyms for v in verbs)
            wcos = [cosine(v_orig, self.glove.get(v)) for v in verbs if v_orig is not None and self.glove.get(v) is not None]
            word_cos = min(wcos) if wcos else None
            sent_cos = cosine(emb[0], emb[j + 1])
            if not semantic_rule(is_ant, word_cos, sent_cos, self.word_cos_max, self.sent_cos_max):
                stats["semantic"] += 1
                continue
            details = {"beam_rank": rank, "verbs": verbs, "verb_counts": counts, "ppl_o": ppls[0], "ppl_m": ppl_m,
                       "ppl_diff": diff, "antonym": is_ant, "word_cos": word_cos, "sentence_cos": sent_cos,
                       "filters_passed": ["has_verb", "verb_count", "perplexity", "antonym" if is_ant else "low_similarity"],
                       "models": self.model_ids}
            kept.append((new, fill, details))
            if len(kept) >= self.max_negatives:
                break
        if not kept:
            return None
        rejected = dict(sorted(stats.items()))  # how many candidates each filter removed, for the audit
        negatives = [(new, "verb_lm", negative_record(NAME, VERSION, "lm-infill", pos="verb", span=span,
                                                      replacement=fill, seed=self.seed,
                                                      details={**details, "rejected": rejected},
                                                      span_start=start, span_end=end))
                     for new, fill, details in kept]
        return mc_row(rec["id"], f"{rec['id']}/verb_lm", rec["video_id"], text, negatives, category="verb_lm",
                      source_dataset=rec.get("source_dataset"), source_split=rec.get("source_split"),
                      manipulated_index=1)


def make_batch_fn(*, verb_counts: str | Mapping[str, int] | None = None, infill_model: str = DEFAULT_T5,
                  perplexity_model: str = DEFAULT_GPT2, sentence_model: str | None = None,
                  config: VerbPhraseConfig | None = None, **settings: Any) -> VerbPhraseBatchFn:
    """Factory (once per worker). `verb_counts`: {lemma: count} or a captions .txt file (one per line)
    of the training split to count verbs in; required unless min_verb_count is 0. The models are Hub ids or
    folders; the other settings are `VerbPhraseConfig`'s fields, as keywords or a `config` (keywords set over
    it). `model_ids` is filled in from the models loaded."""
    from pathlib import Path

    from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

    from hardneg.resources import DEFAULT_SENTENCE_MODEL, load_glove, load_sentence_model, load_spacy, load_wordnet

    if "model_ids" in settings:
        raise TypeError("make_batch_fn(): model_ids is recorded from infill_model, perplexity_model and "
                        "sentence_model; pass those instead")
    cfg = settings_from(VerbPhraseConfig, config, settings, "make_batch_fn")
    device = cfg.device
    nlp = load_spacy(("parser", "ner"))
    if verb_counts is None:
        if cfg.min_verb_count > 0:
            raise ValueError("verb_counts is required (training captions .txt or {lemma: count}) unless min_verb_count=0")
        counts: Mapping[str, int] = {}
    elif isinstance(verb_counts, (str, Path)):
        p = Path(verb_counts)
        if not p.is_file():
            raise FileNotFoundError(f"verb_counts file {p} not found (training captions, one per line)")
        counts = verb_counts_from(nlp.pipe(l.strip() for l in p.read_text().splitlines() if l.strip()))
    else:
        counts = verb_counts
    sentence_model = sentence_model or DEFAULT_SENTENCE_MODEL
    t5 = AutoModelForSeq2SeqLM.from_pretrained(infill_model)
    lm = AutoModelForCausalLM.from_pretrained(perplexity_model)
    model_ids = {"infill": infill_model, "perplexity": perplexity_model, "sentence": sentence_model,
                 "word_vectors": "glove-6b-50d"}
    return VerbPhraseBatchFn(
        nlp, t5, AutoTokenizer.from_pretrained(infill_model), Perplexity(lm, AutoTokenizer.from_pretrained(perplexity_model), device),
        load_sentence_model(sentence_model, device), load_glove(), load_wordnet(), counts,
        config=replace(cfg, model_ids=model_ids))


#: the keywords it takes: the models, and VerbPhraseConfig's fields but model_ids (what `hardneg train
#: --negatives-set` checks keys against)
make_batch_fn.__signature__ = keyword_signature(make_batch_fn, VerbPhraseConfig, drop=("model_ids",))
