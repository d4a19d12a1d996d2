"""LLM-teacher mask-filling negatives and soft targets (Ma et al., Feint6K, Section 4.2).

An action token (a spaCy VERB; the paper used an AMR parser) is replaced by the mask token
of a masked language model (XLM-RoBERTa in the paper) and the top-k fills that are whole
words, differ from the original and are again tagged as verbs become negatives (k = 10).
:func:`soft_targets` is Eq. 2's teacher distribution from sentence-embedding similarities,
a pure function that training code can call.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from hardneg.generators.common import batch_records, caption_rng, mc_row, negative_record, rows_to_columns

NAME = "llm-teacher-mask-fill"
VERSION = "1.1"  # 1.1: exact span offsets in the provenance
DEFAULT_MLM = "FacebookAI/xlm-roberta-base"
#: The paper does not state tau; 0.07 is the usual contrastive temperature.
DEFAULT_TAU = 0.07


def soft_targets(positive_embedding: Any, caption_embeddings: Any, tau: float = DEFAULT_TAU) -> np.ndarray:
    """Eq. 2: z_t = exp(cos(e_p, e_t)/tau) / sum_t' exp(cos(e_p, e_t')/tau) over the candidate set.

    `caption_embeddings` (n, d) holds the positive and its negatives (the set the softmax runs
    over); `positive_embedding` (d,) is e_p. Returns n probabilities summing to 1.
    """
    if tau <= 0:
        raise ValueError(f"tau must be positive, got {tau}")
    e_p = np.asarray(positive_embedding, dtype=np.float64).reshape(-1)
    e = np.asarray(caption_embeddings, dtype=np.float64)
    if e.ndim != 2 or e.shape[1] != e_p.shape[0]:
        raise ValueError(f"caption_embeddings must be (n, {e_p.shape[0]}), got {e.shape}")
    cos = (e @ e_p) / (np.linalg.norm(e, axis=1) * np.linalg.norm(e_p) + 1e-12)
    logits = cos / tau
    logits -= logits.max()
    z = np.exp(logits)
    return z / z.sum()


def action_tokens(doc: Any) -> list[Any]:
    """Candidate action tokens: alphabetic main verbs."""
    return [t for t in doc if t.pos_ == "VERB" and t.is_alpha]


class MaskFiller:
    """Top fills of a masked LM at one masked position, whole words only, in score order."""

    def __init__(self, model: Any, tokenizer: Any, device: str = "cpu") -> None:
        if tokenizer.mask_token is None:
            raise ValueError(f"{type(tokenizer).__name__} has no mask token: use a masked language model")
        self.model, self.tok, self.device = model.eval().to(device), tokenizer, device
        vocab = tokenizer.get_vocab()
        self.word_start_marker = next((m for m in ("\u2581", "\u0120") if sum(t.startswith(m) for t in vocab) > len(vocab) // 10), None)
        self.special = set(tokenizer.all_special_ids)

    def fills(self, masked_texts: Sequence[str], search_k: int) -> list[list[tuple[str, float]]]:
        import torch

        enc = self.tok(list(masked_texts), return_tensors="pt", padding=True, truncation=True).to(self.device)
        with torch.no_grad():
            logits = self.model(**enc).logits
        out = []
        for row in range(len(masked_texts)):
            pos = (enc["input_ids"][row] == self.tok.mask_token_id).nonzero()
            if len(pos) != 1:
                out.append([])
                continue
            scores = logits[row, int(pos[0])].float().cpu().numpy()
            order = np.argsort(-scores, kind="stable")[: search_k + len(self.special)]
            words = []
            for i in order:
                if int(i) in self.special:
                    continue
                piece = self.tok.convert_ids_to_tokens(int(i))
                if self.word_start_marker and not piece.startswith(self.word_start_marker):
                    continue  # a word piece would glue onto the previous word
                words.append((self.tok.decode([int(i)]).strip(), float(scores[i])))
                if len(words) >= search_k:
                    break
            out.append(words)
        return out


class LlmTeacherBatchFn:
    """Pure batch function: captions in, one MC row (positive + up to k mask fills) per caption out."""

    def __init__(self, nlp: Any, filler: MaskFiller, *, model_id: str, k: int = 10, search_k: int = 50,
                 seed: int = 0, sentence_model: Any = None, tau: float = DEFAULT_TAU) -> None:
        self.nlp, self.filler, self.model_id = nlp, filler, model_id
        self.k, self.search_k, self.seed, self.sentence_model, self.tau = int(k), int(search_k), int(seed), sentence_model, tau

    def __call__(self, batch: Mapping[str, list]) -> dict[str, list]:
        recs = batch_records(batch)
        docs = list(self.nlp.pipe([r["caption"] for r in recs]))
        jobs = []
        for rec, doc in zip(recs, docs):
            verbs = action_tokens(doc)
            if not verbs:
                continue
            tok = verbs[caption_rng(self.seed, NAME, rec["id"], "action").randrange(len(verbs))]
            text = rec["caption"]
            masked = text[: tok.idx] + self.filler.tok.mask_token + text[tok.idx + len(tok.text):]
            jobs.append((rec, tok, masked))
        fills = self.filler.fills([m for _, _, m in jobs], self.search_k) if jobs else []
        rows = []
        for (rec, tok, _), options in zip(jobs, fills):
            text = rec["caption"]
            cands = []
            for rank, (word, score) in enumerate(options):
                if not word.isalpha() or word.lower() == tok.lower_:
                    continue
                new = text[: tok.idx] + word + text[tok.idx + len(tok.text):]
                cands.append((rank, word, score, new))
            # keep fills that are action tokens again (tagged as a verb at the same place)
            kept, seen = [], {text}
            for (rank, word, score, new), cdoc in zip(cands, self.nlp.pipe([c[3] for c in cands])):
                span = cdoc.char_span(tok.idx, tok.idx + len(word))
                if span is None or len(span) != 1 or span[0].pos_ != "VERB" or new in seen:
                    continue
                seen.add(new)
                kept.append((rank, word, score, new))
                if len(kept) >= self.k:
                    break
            if not kept:
                continue
            targets = None
            if self.sentence_model is not None:
                emb = self.sentence_model.encode([text] + [c[3] for c in kept], convert_to_numpy=True)
                targets = soft_targets(emb[0], emb, self.tau)
            negatives = []
            for j, (rank, word, score, new) in enumerate(kept):
                details = {"model": self.model_id, "rank": rank, "logit": score, "token_index": tok.i}
                if targets is not None:
                    details["soft_target"] = float(targets[j + 1])
                    details["soft_target_positive"] = float(targets[0])
                    details["tau"] = self.tau
                negatives.append((new, "llm_fill", negative_record(
                    NAME, VERSION, "mlm-fill", pos="verb", span=tok.text, replacement=word, seed=self.seed,
                    details=details, span_start=tok.idx, span_end=tok.idx + len(tok.text))))
            rows.append(mc_row(rec["id"], f"{rec['id']}/llm_fill", rec["video_id"], text, negatives,
                               category="llm_fill", source_dataset=rec.get("source_dataset"),
                               source_split=rec.get("source_split")))
        return rows_to_columns(rows)


def make_batch_fn(*, model: str = DEFAULT_MLM, k: int = 10, search_k: int = 50, seed: int = 0,
                  sentence_model: str | None = None, tau: float = DEFAULT_TAU, device: str = "cpu") -> LlmTeacherBatchFn:
    """Factory (once per worker): the masked LM (a Hub id or a local folder), spaCy, and optionally
    a sentence-transformers model to record Eq. 2 soft targets."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from hardneg.resources import load_sentence_model, load_spacy

    filler = MaskFiller(AutoModelForMaskedLM.from_pretrained(model), AutoTokenizer.from_pretrained(model), device)
    sent = load_sentence_model(sentence_model, device) if sentence_model else None
    return LlmTeacherBatchFn(load_spacy(("parser", "ner")), filler, model_id=model, k=k, search_k=search_k, seed=seed,
                             sentence_model=sent, tau=tau)
