"""The training objectives of the two papers that say how to fix what the benchmarks find.

Every loss takes raw (unnormalised) embeddings and L2-normalises them, so `s(v, t)` is the
cosine similarity divided by a temperature `tau` (CLIP's learned logit scale is `1 / tau`).
All losses are means over the batch. Shapes: `video` (B, D); `positive` / `text` (B, D);
`negatives` (B, K, D) with an optional `mask` (B, K) of the negatives that exist (a generator
may give fewer than K for some captions).

Choices where the papers are vague (docs/training.md says the same):
* temperature: neither paper states one for its loss; the default is CLIP's 0.07, and the
  trainer passes the model's learned logit scale.
* `fine_loss` (PoSRank Eq. 3): the printed denominator sums over the negatives only. We keep the
  positive in the denominator (a softmax over {positive, negatives}), as Eq. 1 of Feint6K and
  every InfoNCE do: without it the loss is unbounded below and minimised by pushing the
  negatives away alone.
* `llm_teacher_logit_loss` (Feint6K Eq. 2): "L_KL(z_video-text, z_LLM)" is read as knowledge
  distillation's KL(z_LLM || z_video-text) (the cited Hinton et al.: the teacher's distribution
  is the target).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from hardneg.training.objectives import OBJECTIVES  # noqa: F401  (the names; records: objectives.py)

DEFAULT_TAU = 0.07
#: PoSRank Sec. 7: lambda = 0.2, N = 16 negatives per part of speech
DEFAULT_LAMBDA = 0.2
DEFAULT_N = 16


def _normalize(x: torch.Tensor) -> torch.Tensor:
    return F.normalize(x, dim=-1, eps=1e-12)


def _tau(tau) -> torch.Tensor | float:
    if isinstance(tau, torch.Tensor):
        return tau
    if not tau > 0:
        raise ValueError(f"temperature must be positive, got {tau}")
    return float(tau)


def candidate_logits(video: torch.Tensor, positive: torch.Tensor, negatives: torch.Tensor, tau=DEFAULT_TAU,
                     mask: torch.Tensor | None = None) -> torch.Tensor:
    """(B, 1+K) logits s(v_i, c)/tau over {positive, negatives}; missing negatives get -inf."""
    if negatives.dim() != 3 or negatives.shape[0] != video.shape[0]:
        raise ValueError(f"negatives must be (B, K, D) with B = {video.shape[0]}, got {tuple(negatives.shape)}")
    v = _normalize(video)
    cands = torch.cat([_normalize(positive).unsqueeze(1), _normalize(negatives)], dim=1)  # (B, 1+K, D)
    logits = torch.einsum("bd,bkd->bk", v, cands) / _tau(tau)
    if mask is not None:
        keep = torch.cat([torch.ones_like(mask[:, :1], dtype=torch.bool), mask.bool()], dim=1)
        logits = logits.masked_fill(~keep, float("-inf"))
    return logits


def coarse_loss(video: torch.Tensor, text: torch.Tensor, tau=DEFAULT_TAU) -> torch.Tensor:
    """PoSRank Sec. 6.1, L_coarse = L_v2t + L_t2v (symmetric InfoNCE over the batch):

        L_v2t = -1/B sum_i log( exp(s(v_i, t_i)) / sum_j exp(s(v_i, t_j)) )
        L_t2v = -1/B sum_i log( exp(s(v_i, t_i)) / sum_j exp(s(v_j, t_i)) )

    with s(v, t) = cos(v, t) / tau. The paper sums the two directions (CLIP averages them)."""
    if video.shape != text.shape:
        raise ValueError(f"video {tuple(video.shape)} and text {tuple(text.shape)} must be (B, D) pairs")
    sim = _normalize(video) @ _normalize(text).T / _tau(tau)
    target = torch.arange(sim.shape[0], device=sim.device)
    return F.cross_entropy(sim, target) + F.cross_entropy(sim.T, target)


FINE_DENOMINATORS = ("with-positive", "printed")


def fine_loss(video: torch.Tensor, positive: torch.Tensor, negatives: torch.Tensor, tau=DEFAULT_TAU,
              mask: torch.Tensor | None = None, denominator: str = "with-positive") -> torch.Tensor:
    """PoSRank Eq. 3, L_fine: each video against its caption and its word-level negatives

        L_fine = -1/B sum_i log( exp(s(v_i, t_i)) / (exp(s(v_i, t_i)) + sum_{p in P} sum_{t in T_i^p} exp(s(v_i, t))) )

    `negatives[i]` holds T_i^p for every part of speech p, flattened (N per part of speech: K = |P| N).
    `denominator="with-positive"` (the default) keeps the positive in the denominator (see the module
    docstring); `"printed"` is Eq. 3 exactly as printed, negatives only:

        L_fine = -1/B sum_i log( exp(s(v_i, t_i)) / sum_{p in P} sum_{t in T_i^p} exp(s(v_i, t)) )

    (unbounded below; a caption with no negative at all has no printed term and is left out of the mean)."""
    if denominator not in FINE_DENOMINATORS:
        raise ValueError(f"denominator must be one of {FINE_DENOMINATORS}, got {denominator!r}")
    logits = candidate_logits(video, positive, negatives, tau, mask)
    if denominator == "with-positive":
        return -torch.log_softmax(logits, dim=1)[:, 0].mean()
    negs = logits[:, 1:]
    has = torch.isfinite(negs).any(dim=1)
    if not bool(has.any()):
        raise ValueError("Eq. 3 as printed needs at least one negative: every caption's negatives are masked out")
    terms = torch.logsumexp(negs[has], dim=1) - logits[has, 0]
    return terms.mean()


def posrank_loss(video: torch.Tensor, text: torch.Tensor, negatives: torch.Tensor, tau=DEFAULT_TAU,
                 lam: float = DEFAULT_LAMBDA, mask: torch.Tensor | None = None,
                 fine_video: torch.Tensor | None = None) -> torch.Tensor:
    """PoSRank Eq. 4: L = L_coarse + lambda L_fine (lambda = 0.2).

    `fine_video`: the video embedding L_fine is computed on. Fine-grained prompting (Sec. 6.4)
    passes the prompt token's output here while the CLS output (`video`) keeps L_coarse;
    None uses `video` for both."""
    fv = video if fine_video is None else fine_video
    return coarse_loss(video, text, tau) + lam * fine_loss(fv, text, negatives, tau, mask)


def llm_teacher_label_loss(video: torch.Tensor, positive: torch.Tensor, negatives: torch.Tensor, tau=DEFAULT_TAU,
                           labels: torch.Tensor | None = None) -> torch.Tensor:
    """Feint6K Eq. 1 (LLM-teacher-lbl), NT-Xent over the positive and its k synthesized negatives:

        l = -log( exp(sim(f_v, f_p)/tau) / (exp(sim(f_v, f_p)/tau) + sum_{i=1..k} exp(sim(f_v, f_{n_i})/tau)) )

    `labels` (B, k): the teacher's binary pseudo-labels of the negatives (1 = the caption matches
    the video after all, 0 = unmatched). Only captions labelled 0 are negatives; a caption the
    teacher labels 1 leaves the denominator. None: every synthesized caption is labelled 0."""
    mask = None if labels is None else (labels == 0)
    logits = candidate_logits(video, positive, negatives, tau, mask)
    return -torch.log_softmax(logits, dim=1)[:, 0].mean()


def llm_teacher_logit_loss(video: torch.Tensor, positive: torch.Tensor, negatives: torch.Tensor,
                           teacher: torch.Tensor, tau=DEFAULT_TAU, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Feint6K Eq. 2 (LLM-teacher-lgt), KL between the teacher's and the model's softmax over {p, n_1..n_k}:

        z_video-text,t = exp(sim(f_v, f_t)/tau) / sum_{t' in {p, n_i}} exp(sim(f_v, f_t')/tau)
        z_LLM,t        = exp(sim(e_p, e_t)/tau) / sum_{t' in {p, n_i}} exp(sim(e_p, e_t')/tau)
        l = KL(z_LLM || z_video-text) = sum_t z_LLM,t (log z_LLM,t - log z_video-text,t)

    `teacher` (B, 1+k): z_LLM, the positive first (`hardneg.generators.llm_teacher.soft_targets`
    computes it from a sentence-embedding model's caption similarities); rows sum to 1 over
    the candidates that exist."""
    logits = candidate_logits(video, positive, negatives, tau, mask)
    if teacher.shape != logits.shape:
        raise ValueError(f"teacher must be (B, 1+k) = {tuple(logits.shape)}, got {tuple(teacher.shape)}")
    log_student = torch.log_softmax(logits, dim=1)
    present = torch.isfinite(logits)
    t = teacher.to(log_student.dtype)
    terms = torch.where(present & (t > 0), t * (torch.log(t.clamp_min(1e-300)) - log_student),
                        torch.zeros_like(log_student))
    return terms.sum(dim=1).mean()

