"""Issue 34's design of the training experiment: equal steps to a plateau, seed-level statistics.

Why a new design (docs/training.md, "The equal-step design"): the time-budget design cut every run
at 120 s of a shared GPU, so rows stopped at different step counts, still improving, and its
p-values treated the trained models as fixed. Here

* a **pilot** (coarse, generator phrase-level, Eq. 1 at one seed, validated every `eval_every`
  steps) finds where validation plateaus;
* then **every row at every seed trains to the same step count** (>= the plateau; no wall-clock
  cap) and is scored at that step, with learning curves (validation and test) at 3 common steps;
* the rows and seeds of a wave train together as one **vectorised ensemble** (`Ensemble`:
  `torch.func.stack_module_state` + `vmap(grad(...))`, one AdamW over the stacked weights; AdamW
  is elementwise, so each member follows exactly the run it would follow alone);
* the work folder keeps a **checkpoint** after every validation, so the design splits across
  calls of at most 10 minutes (`bench_training.py --resume`), and a resumed design gives the same
  numbers as one uninterrupted call (batches and negatives depend on (seed, step) only);
* **statistics are at the seed level**: per seed one number per row, paired differences over
  seeds (paired t, and the exact sign-flip permutation test), a primary family declared in
  `PRIMARY` before any run and Holm-corrected, intervals from the seed spread, the minimum
  detectable effect from the seed variance.

Objectives (`member_losses`; each term equals its function in `hardneg.training.losses`, tested):
PoSRank Eq. 3 as printed (the main rows), Eq. 3 with the positive in the denominator (a labelled
ablation), Feint6K Eq. 1 with the world's truth as the teacher over a blind action rewriter (labels
not all one value), Feint6K Eq. 2 with an oracle teacher (`training_world.oracle_similarity`).
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from training_stats import ALPHA, POWER, _t, detectable, holm, paired_seed_test, positive_wins  # noqa: E402,F401

#: key -> (row name, objective, negatives pool, head). Objectives: "coarse"; "eq3" (PoSRank Eq. 3 as
#: printed); "eq3-withpos" (the positive in the denominator: an ablation); "eq1" (Feint6K Eq. 1, the
#: truth teacher's labels); "eq2" (Feint6K Eq. 2, the oracle teacher's soft targets)
ROWS = {
    "coarse": ("coarse only", "coarse", None),
    "world-word": ("+ world word-level, N per part of speech (Eq. 3 as printed)", "eq3", "world"),
    "gen-word": ("+ generator word-level (Eq. 3 as printed)", "eq3", "word"),
    "gen-phrase": ("+ generator phrase-level (Eq. 3 as printed)", "eq3", "phrase"),
    "prompt": ("+ fine-grained prompting, phrase-level (Eq. 3 as printed)", "eq3", "phrase"),
    "eq1": ("+ LLM-teacher-lbl (Eq. 1), truth teacher", "eq1", "rewrites"),
    "eq2": ("+ LLM-teacher-lgt (Eq. 2), oracle teacher", "eq2", "rewrites"),
    "world-word-withpos": ("ablation: world word-level, positive in the denominator", "eq3-withpos", "world"),
}
PILOT_ROWS = ("coarse", "gen-phrase", "eq1")
CATEGORIES = ("noun", "adj", "verb", "adv", "prep", "action", "direction", "sequence", "manner")
POS = CATEGORIES[:5]
#: declared before any run (and copied into the work folder's design.json when a design starts):
#: (row a, row b, metric, the paper's claim). Metric "fine" = test accuracy, macro over the 9 item
#: categories; "retrieval" = mean of V2T and T2V mean R@1/5/10 on the test scenes; a category name =
#: that category's test accuracy.
PRIMARY = (
    ("world-word", "coarse", "fine", "word-level hard negatives help fine-grained understanding (PoSRank)"),
    ("gen-phrase", "gen-word", "retrieval", "phrase-level beats word-level on coarse retrieval (PoSRank Table 4)"),
    ("prompt", "gen-phrase", "fine", "fine-grained prompting beats phrase-level on fine-grained metrics (PoSRank)"),
    ("eq1", "coarse", "action", "LLM-teacher-lbl helps on actions (Feint6K)"),
    ("eq2", "coarse", "action", "LLM-teacher-lgt helps on actions (Feint6K)"),
)
LAMBDA = 0.2
MASKED = -1e9  # a missing candidate's logit: finite, so masked rows give no NaN gradients under vmap
PROFILES = {
    # the CI configuration: checks the pipeline end to end (every row, pilot, resume), not the result
    "ci": {"train": 32, "val": 18, "test": 27, "batch": 4, "n_per_pos": 1, "pilot_steps": 4, "eval_every": 2,
           "min_steps": 4, "seeds": 2, "dim": 16, "image_size": 8},
    # the tests' configuration (tests/training/test_design.py: resume equals one uninterrupted call)
    "tiny": {"train": 16, "val": 9, "test": 18, "batch": 4, "n_per_pos": 1, "pilot_steps": 4, "eval_every": 2,
             "min_steps": 4, "seeds": 2, "dim": 16, "image_size": 8},
    # the largest configuration that fits ~10 minutes of this 2-core machine (docs/training.md)
    "cpu": {"train": 400, "val": 27, "test": 135, "batch": 8, "n_per_pos": 1, "pilot_steps": 12,
            "eval_every": 4, "min_steps": 8, "seeds": 6, "dim": 16, "image_size": 16},
    # the GPU design (issue 34): not yet run
    "gpu": {"train": 10000, "val": 500, "test": 2000, "batch": 128, "n_per_pos": 16, "pilot_steps": 9000,
            "eval_every": 300, "min_steps": 3000, "seeds": 6, "dim": 64, "image_size": 32},
}


# ------------------------------------------------------------------------------------ the data


def prepare(profile: dict, world_seed: int, workers: int, negatives_file: Path | None):
    """Arrays of the design: frames, the text table (closed vocabulary), pools, items, teacher targets.

    Negatives whose words the text tower would read as <unk> are MASKED (dropped from their pool):
    otherwise such a negative is told apart from the text alone (issue 34: 19-22% of the generator
    rows' negatives). `meta["masked_unknown"]` counts them per pool."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from training_world import Data
    from hardneg.models.trainable import TinyTemporal, build_vocabulary
    from hardneg.world import sample_scene
    from training_world import build, closed_vocabulary_texts, oracle_similarity, read_generator_negatives

    n_per_pos = profile["n_per_pos"]
    captions = [sample_scene(world_seed, "train", i).text for i in range(profile["train"])]
    gen = {}
    if negatives_file is not None and Path(negatives_file).is_file():
        gen, _ = read_generator_negatives(Path(negatives_file), captions)
    world = build(world_seed, profile["train"], profile["val"], profile["test"], 0, workers, progress=False,
                  test_items="one", rewrites=5 * n_per_pos)
    vocab = build_vocabulary(closed_vocabulary_texts())
    tok = TinyTemporal(vocab, dim=8, image_size=8)
    unk = tok.index["<unk>"]
    texts: dict[str, int] = {}

    def tid(t: str) -> int:
        return texts.setdefault(t, len(texts))

    def known(t: str) -> bool:
        ids, _ = tok.tokenize([t])
        return not bool((ids == unk).any())

    a: dict[str, np.ndarray] = {}
    for part in ("train", "val", "test"):
        w = world[part]
        a[f"{part}_frames"] = w["frames"]
        a[f"{part}_caption"] = np.asarray([tid(c) for c in w["captions"]], np.int64)
        rows = [(s, cat, [tid(c) for c in cands]) for s, items in enumerate(w["items"]) if items
                for _, cat, cands in items]
        width = max((len(r[2]) for r in rows), default=1)
        cand = np.full((len(rows), width), -1, np.int64)
        for i, r in enumerate(rows):
            cand[i, :len(r[2])] = r[2]
        a[f"{part}_item_scene"] = np.asarray([r[0] for r in rows], np.int64)
        a[f"{part}_item_cat"] = np.asarray([CATEGORIES.index(r[1]) for r in rows], np.int64)
        a[f"{part}_item_cand"] = cand
    tr = world["train"]
    n = len(captions)
    masked = {}
    # world word-level: PoSRank's T_i^p, up to N per part of speech, as (n, 5, 16) (sampled per step)
    wp = np.full((n, len(POS), 16), -1, np.int64)
    for i, d in enumerate(tr["world_negatives"]):
        for k, pos in enumerate(POS):
            ids = [tid(t) for t in d[pos][:16]]
            wp[i, k, :len(ids)] = ids
    a["pool_world"] = wp
    # the oracle teacher's similarity of each world negative to its positive (Eq. 2)
    sim = np.zeros(wp.shape, np.float32)
    inv = {v: k for k, v in texts.items()}
    for i in range(n):
        for k in range(len(POS)):
            for j in range(16):
                if wp[i, k, j] >= 0:
                    sim[i, k, j] = oracle_similarity(captions[i], inv[int(wp[i, k, j])])
    a["pool_world_sim"] = sim
    for name, lists in gen.items():
        if name == "action":
            continue
        keep = [[t for t in negs if known(t)] for negs in lists]
        masked[name] = int(sum(len(x) for x in lists) - sum(len(x) for x in keep))
        width = max(1, max(len(x) for x in keep))
        ids = np.full((n, width), -1, np.int64)
        for i, x in enumerate(keep):
            ids[i, :len(x)] = [tid(t) for t in x]
        a[f"pool_{name}"] = ids
    rw = tr["rewrites"]
    ids = np.full((n, max(len(x) for x in rw)), -1, np.int64)
    lab = np.zeros(ids.shape, np.int64)
    for i, x in enumerate(rw):
        ids[i, :len(x)] = [tid(t) for t in x]
        lab[i, :len(x)] = tr["rewrite_truth"][i]
    a["pool_rewrites"], a["pool_rewrites_truth"] = ids, lab
    # Eq. 2's oracle teacher over the same rewrites: they change 1 to 3 slots (verb, manner, direction),
    # so the similarities differ, and a rewrite that is true gets the positive's similarity, 1
    inv = {v: k for k, v in texts.items()}
    a["pool_rewrites_sim"] = np.asarray([[oracle_similarity(captions[i], inv[int(t)]) if t >= 0 else 0.0
                                          for t in row] for i, row in enumerate(ids)], np.float32)
    table = sorted(texts, key=texts.get)
    tokens, _ = tok.tokenize(table)
    a["tokens"] = tokens.numpy()
    meta = {"arrays": sorted(a), "vocabulary": vocab, "n_texts": len(table), "masked_unknown": masked,
            "pools_with_unknown_words": {k[5:]: int((a["tokens"][np.clip(v, 0, None)] == unk).any(-1)[v >= 0].sum())
                                         for k, v in a.items() if k.startswith("pool_") and v.dtype == np.int64
                                         and not k.endswith("truth")},
            "rewrite_labels": {"true": int(lab.sum()), "all": int((ids >= 0).sum())},
            "generators": sorted(gen)}
    return Data(a, meta)


def runnable_rows(data, wanted) -> list[str]:
    """The rows whose negatives exist (generator rows need the generator negatives file)."""
    return [k for k in wanted if ROWS[k][2] is None or f"pool_{ROWS[k][2]}" in data.a]


# ----------------------------------------------------------------------------------- objectives


def member_losses(video, prompt_video, pos, negs, mask, labels, teacher, tau):
    """The loss terms of one model on one batch, every objective at once (weights pick them), written
    so that `vmap` can batch them over an ensemble: no data-dependent shapes, no infinities.

    video/prompt_video (B, D); pos (B, D); negs (B, K, D); mask (B, K) the negatives that exist;
    labels (B, K) the Eq. 1 teacher's labels (1 = matches after all: leaves the denominator);
    teacher (B, 1+K) Eq. 2's z_teacher. Returns (coarse, eq3 printed, eq3 with positive, eq1, eq2),
    each equal to its function in `hardneg.training.losses` (tests/training/test_design.py)."""
    import torch
    import torch.nn.functional as F

    v, t = F.normalize(video, dim=-1), F.normalize(pos, dim=-1)
    sim = v @ t.T / tau
    target = torch.arange(sim.shape[0], device=sim.device)
    coarse = F.cross_entropy(sim, target) + F.cross_entropy(sim.T, target)

    def logits(vv, keep):
        vv = F.normalize(vv, dim=-1)
        c = torch.cat([t.unsqueeze(1), F.normalize(negs, dim=-1)], 1)
        lg = torch.einsum("bd,bkd->bk", vv, c) / tau
        keep = torch.cat([torch.ones_like(keep[:, :1]), keep], 1)
        return lg.masked_fill(~keep, MASKED), keep

    lg, keep = logits(prompt_video, mask)
    has = mask.any(1)
    printed = torch.where(has, torch.logsumexp(lg[:, 1:], 1) - lg[:, 0], torch.zeros_like(lg[:, 0]))
    eq3 = printed.sum() / has.sum().clamp_min(1)
    withpos = -torch.log_softmax(lg, 1)[:, 0].mean()
    lg1, _ = logits(video, mask & (labels == 0))
    eq1 = -torch.log_softmax(lg1, 1)[:, 0].mean()
    lg2, keep2 = logits(video, mask)
    ls = torch.log_softmax(lg2, 1)
    tt = teacher.to(ls.dtype)
    eq2 = torch.where(keep2 & (tt > 0), tt * (torch.log(tt.clamp_min(1e-30)) - ls), torch.zeros_like(ls)).sum(1).mean()
    return coarse, eq3, withpos, eq1, eq2


#: objective -> weights of (eq3 printed, eq3 with positive, eq1, eq2) in L = L_coarse + lambda * sum
WEIGHTS = {"coarse": (0, 0, 0, 0), "eq3": (1, 0, 0, 0), "eq3-withpos": (0, 1, 0, 0), "eq1": (0, 0, 1, 0),
           "eq2": (0, 0, 0, 1)}


def teacher_targets(sim: np.ndarray, mask: np.ndarray, tau: float = 0.07) -> np.ndarray:
    """Feint6K Eq. 2's z_LLM over {positive, negatives}: softmax of sim(e_p, e_t) / tau, the positive's
    similarity to itself 1, missing candidates 0. `sim` (B, K) the oracle similarities of the negatives."""
    s = np.concatenate([np.ones((sim.shape[0], 1)), sim], 1) / tau
    keep = np.concatenate([np.ones((sim.shape[0], 1), bool), mask], 1)
    s = np.where(keep, s, -np.inf)
    e = np.exp(s - s.max(1, keepdims=True))
    return (e / e.sum(1, keepdims=True)).astype(np.float32)


def batch_for(data, key: str, seed: int, step: int, cfg: dict) -> dict[str, np.ndarray]:
    """The batch of row `key` at `seed`, `step`: depends on (seed, step, row) only, so a resumed run
    draws what an uninterrupted one draws. Every row at a seed sees the same videos in the same order."""
    n, B = len(data.a["train_caption"]), cfg["batch"]
    per_epoch = max(1, n // B)
    epoch, b = divmod(step, per_epoch)
    idx = np.random.default_rng([seed, epoch]).permutation(n)[b * B:(b + 1) * B]
    _, objective, source = ROWS[key]
    rng = np.random.default_rng([seed, 1_000_003, step, list(ROWS).index(key)])
    N, K = cfg["n_per_pos"], 5 * cfg["n_per_pos"]
    labels = np.zeros((B, K), np.int64)
    sims = np.zeros((B, K), np.float32)
    pool = source or "world"  # coarse gets dummy negatives with zero weight
    if pool == "world":  # N per part of speech (PoSRank Sec. 7), drawn from each part of speech's own pool
        p = data.a["pool_world"][idx]
        keys = rng.random(p.shape)
        keys[p < 0] = np.inf
        sel = np.argsort(keys, axis=2, kind="stable")[:, :, :N]
        pick = np.take_along_axis(p, sel, 2).reshape(B, K)
        sims = np.take_along_axis(data.a["pool_world_sim"][idx], sel, 2).reshape(B, K)
    elif pool == "rewrites":  # Eq. 1 and Eq. 2: the first K rewrites, as the blind rewriter gave them
        pick = data.a["pool_rewrites"][idx][:, :K]
        labels = data.a["pool_rewrites_truth"][idx][:, :K]
        sims = data.a["pool_rewrites_sim"][idx][:, :K]
    else:  # K = 5N drawn from the caption's generator pool (all of it when smaller)
        p = data.a[f"pool_{pool}"][idx]
        keys = rng.random(p.shape)
        keys[p < 0] = np.inf
        sel = np.argsort(keys, axis=1, kind="stable")[:, :K]
        pick = np.take_along_axis(p, sel, 1)
        if pick.shape[1] < K:
            pick = np.concatenate([pick, np.full((B, K - pick.shape[1]), -1, np.int64)], 1)
    mask = pick >= 0
    return {"idx": idx, "pos": data.a["train_caption"][idx], "neg": np.where(mask, pick, 0), "mask": mask,
            "labels": labels, "teacher": teacher_targets(sims, mask),
            "w": np.asarray(WEIGHTS[objective], np.float32)}


# ------------------------------------------------------------------------------------ the model


def make_net(vocab, seed: int, cfg: dict, prompt: bool):
    """tiny-temporal from `seed` alone (the prompt token from its own generator afterwards: every row
    at a seed starts from the same weights)."""
    import torch
    from torch import nn

    from hardneg.models.trainable import TinyTemporal

    torch.manual_seed(seed)
    net = TinyTemporal(vocab, dim=cfg["dim"], image_size=cfg["image_size"], n_frames=8, prompt=False)
    if prompt:
        g = torch.Generator().manual_seed(1_000_003 + seed)
        net.prompt = nn.Parameter(torch.randn(1, 1, cfg["dim"], generator=g) * 0.02)
    return net


def _encode_text(net, tokens, rows):
    ids = tokens[rows.reshape(-1)]
    return net.encode_tokens(ids, ids == 0).view(*rows.shape, -1)


def encode_video(net, frames):
    """Video embeddings of raw uint8 frames, or of frames already prepared once (`prepare_frames`, float)."""
    return net.encode_prepared(frames) if frames.is_floating_point() else net.encode_video(frames)


def step_loss(net, frames, tokens, batch: dict, use_prompt: bool):
    """L = L_coarse + lambda * (the row's term) for one model on its batch (tensors on the device)."""
    cls, prm = encode_video(net, frames[batch["idx"]])
    pos = _encode_text(net, tokens, batch["pos"])
    neg = _encode_text(net, tokens, batch["neg"])
    tau = net.temperature()
    coarse, eq3, withpos, eq1, eq2 = member_losses(cls, prm if use_prompt else cls, pos, neg, batch["mask"],
                                                   batch["labels"], batch["teacher"], tau)
    w = batch["w"]
    return coarse + LAMBDA * (w[0] * eq3 + w[1] * withpos + w[2] * eq1 + w[3] * eq2)


def _step_loss_module():
    import torch

    class StepLoss(torch.nn.Module):
        """`step_loss` as a module's forward, so that `torch.func.functional_call` can run it with a
        member's weights (the model's own forward returns embeddings, not the loss)."""

        def __init__(self, net, prompt: bool):
            super().__init__()
            self.net, self.use_prompt = net, prompt

        def forward(self, frames, tokens, batch):
            return step_loss(self.net, frames, tokens, batch, self.use_prompt)

    return StepLoss


def _StepLoss(net, prompt: bool):
    return _step_loss_module()(net, prompt)


class Ensemble:
    """Models of one architecture trained together: weights stacked on a leading axis, one `vmap`ped
    gradient per step, one AdamW over the stacked tensors (elementwise: each member's update is the one
    it would get alone). `members` is a list of (row, seed)."""

    def __init__(self, members: list[tuple[str, int]], vocab, cfg: dict, device: str, prompt: bool):
        import copy

        import torch
        from torch.func import stack_module_state

        self.members, self.cfg, self.prompt, self.device = list(members), cfg, prompt, device
        nets = [make_net(vocab, seed, cfg, prompt).to(device) for _, seed in members]
        params, buffers = stack_module_state(nets)
        self.params = {k: v.detach().clone().requires_grad_(True) for k, v in params.items()}
        self.buffers = buffers
        self.base = copy.deepcopy(nets[0])
        self.wrapper = _StepLoss(self.base, prompt)
        self.opt = torch.optim.AdamW(list(self.params.values()), lr=cfg["lr"], weight_decay=0.01)
        self.losses = [[] for _ in members]

    def _member_loss(self, params, buffers, frames, tokens, batch):
        from torch.func import functional_call

        weights = {f"net.{k}": v for k, v in {**params, **buffers}.items()}
        return functional_call(self.wrapper, weights, (frames, tokens, batch))

    def step(self, data, step: int, frames, tokens) -> None:
        import torch
        from torch.func import grad_and_value, vmap

        batches = [batch_for(data, key, seed, step, self.cfg) for key, seed in self.members]
        stacked = {k: torch.from_numpy(np.stack([b[k] for b in batches])).to(self.device) for k in batches[0]}
        g, loss = vmap(grad_and_value(self._member_loss), in_dims=(0, 0, None, None, 0),
                       randomness="same")(self.params, self.buffers, frames, tokens, stacked)
        for k, p in self.params.items():
            p.grad = g[k]
        self.opt.step()
        for i, v in enumerate(loss.detach().cpu().tolist()):
            self.losses[i].append(v)

    def member_net(self, i: int):
        """Member i as a plain module (a copy of its weights), for evaluation."""
        import copy

        import torch

        net = copy.deepcopy(self.base)
        with torch.no_grad():
            for k, p in net.named_parameters():
                p.copy_(self.params[k][i])
        return net

    def state(self) -> dict:
        return {"members": self.members, "params": {k: v.detach().cpu() for k, v in self.params.items()},
                "opt": self.opt.state_dict(), "losses": self.losses}

    def load(self, state: dict) -> None:
        import torch

        if [tuple(m) for m in state["members"]] != self.members:
            raise SystemExit("error: the checkpoint holds other members than this design; start a new --out")
        with torch.no_grad():
            for k, v in state["params"].items():
                self.params[k].copy_(v.to(self.device))
        self.opt.load_state_dict(state["opt"])
        self.losses = state["losses"]


def train_separately(data, key: str, seed: int, steps: int, cfg: dict, device: str = "cpu"):
    """One model trained alone with ordinary autograd and its own AdamW: the reference the ensemble
    must equal (tests/training/test_design.py)."""
    import torch

    _, objective, _ = ROWS[key]
    net = make_net(data.meta["vocabulary"], seed, cfg, key == "prompt").to(device)
    opt = torch.optim.AdamW(net.parameters(), lr=cfg["lr"], weight_decay=0.01)
    frames = torch.from_numpy(data.a["train_frames"]).to(device)
    tokens = torch.from_numpy(data.a["tokens"]).to(device)
    for step in range(steps):
        b = {k: torch.from_numpy(v).to(device) for k, v in batch_for(data, key, seed, step, cfg).items()}
        loss = step_loss(net, frames, tokens, b, key == "prompt")
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return net


# ---------------------------------------------------------------------------------- evaluation


def evaluate(net, data, part: str, frames, tokens, head: str) -> np.ndarray:
    """Per item of `part`: 1 where the positive scores strictly above every negative."""
    import torch
    import torch.nn.functional as F

    cand, scene = data.a[f"{part}_item_cand"], data.a[f"{part}_item_scene"]
    net.eval()
    with torch.no_grad():
        cls, prm = encode_video(net, frames)
        v = F.normalize(prm if head == "prompt" else cls, dim=-1)
        uniq = np.unique(cand[cand >= 0])
        emb = F.normalize(_encode_text(net, tokens, torch.from_numpy(uniq).to(v.device)), dim=-1)
        correct = positive_wins(v, emb, uniq, cand, scene)
    net.train()
    return correct


def retrieval(net, data, frames, tokens) -> float:
    """Mean of V2T and T2V mean R@1/5/10 over the test scenes (CLS head, each scene's true caption)."""
    import torch
    import torch.nn.functional as F

    net.eval()
    with torch.no_grad():
        v = F.normalize(encode_video(net, frames)[0], dim=-1)
        t = F.normalize(_encode_text(net, tokens, torch.from_numpy(data.a["test_caption"]).to(v.device)), dim=-1)
        sim = v @ t.T
        out = []
        for s in (sim, sim.T):
            rank = (s > s.diag()[:, None]).sum(1)
            out.append(np.mean([(rank < k).float().mean().item() for k in (1, 5, 10)]))
    net.train()
    return float(np.mean(out))


def macro(correct: np.ndarray, cats: np.ndarray) -> float:
    return float(np.mean([correct[cats == c].mean() for c in np.unique(cats)]))


# ---------------------------------------------------------------------------------- a wave


def run_wave(data, name: str, members: list[tuple[str, int]], steps: int, cfg: dict, folder: Path,
             curve_steps: tuple[int, ...] = (), deadline: float | None = None, stop_after: int | None = None):
    """Train `members` to `steps`, validating every `eval_every` steps (and scoring the test scenes at
    `curve_steps` and at `steps`). Checkpoints to `folder/<name>.pt` after every validation and picks up
    from it. Returns the wave's record, or None when it stopped early (deadline / `stop_after` step)."""
    import torch

    from hardneg.io import atomic_write_bytes

    dev = cfg["device"]
    frames = {p: torch.from_numpy(data.a[f"{p}_frames"]).to(dev) for p in ("train", "val", "test")}
    tokens = torch.from_numpy(data.a["tokens"]).to(dev)
    groups = {False: [m for m in members if m[0] != "prompt"], True: [m for m in members if m[0] == "prompt"]}
    ens = {p: Ensemble(ms, data.meta["vocabulary"], cfg, dev, p) for p, ms in groups.items() if ms}
    ckpt = folder / f"{name}.pt"
    rec: dict[str, Any] = {"members": [list(m) for m in members], "steps": steps, "curve": {}, "scores": {}}
    start = 0
    if ckpt.is_file():
        import io

        st = torch.load(io.BytesIO(ckpt.read_bytes()), weights_only=False)
        for p, e in ens.items():
            e.load(st["ensembles"][str(p)])
        rec, start = st["record"], st["step"]
    val_cats = data.a["val_item_cat"]
    E = cfg["eval_every"]
    for step in range(start, steps):
        for e in ens.values():
            e.step(data, step, frames["train"], tokens)
        done = step + 1
        if done % E and done != steps:
            continue
        for e in ens.values():
            for i, (key, seed) in enumerate(e.members):
                net = e.member_net(i)
                head = "prompt" if key == "prompt" else "cls"
                val = macro(evaluate(net, data, "val", frames["val"], tokens, head), val_cats)
                loss = float(np.mean(e.losses[i][-E:]))
                rec["curve"].setdefault(f"{key}/{seed}", []).append({"step": done, "val": round(val, 6),
                                                                      "loss": round(loss, 6)})
                if done in curve_steps or done == steps:
                    rec["scores"].setdefault(f"{key}/{seed}", {})[str(done)] = {
                        "test_correct": evaluate(net, data, "test", frames["test"], tokens, head).tolist(),
                        "retrieval": retrieval(net, data, frames["test"], tokens), "val": val}
        buf = __import__("io").BytesIO()
        torch.save({"step": done, "record": rec, "ensembles": {str(p): e.state() for p, e in ens.items()}}, buf)
        atomic_write_bytes(ckpt, buf.getvalue())
        if done < steps and ((deadline and time.time() > deadline) or (stop_after and done >= stop_after)):
            return None
    return rec


def plateau(curve: list[dict], tol: float = 0.01, window: int = 3) -> tuple[int, bool]:
    """(step, reached): the first validation step whose moving average (`window` evaluations) is within
    `tol` of the best moving average of the curve. `reached` is False when that is the curve's last
    step (still improving: the pilot was too short)."""
    steps = [c["step"] for c in curve]
    vals = np.asarray([c["val"] for c in curve], float)
    w = min(window, len(vals))
    smooth = np.convolve(vals, np.ones(w) / w, mode="valid")
    best = smooth.max()
    first = int(np.argmax(smooth >= best - tol)) + w - 1
    return steps[first], first < len(steps) - 1


# ---------------------------------------------------------------------------------- statistics


def seed_metric(data, score: dict, metric: str) -> float:
    cats = data.a["test_item_cat"]
    c = np.asarray(score["test_correct"], float)
    if metric == "fine":
        return macro(c, cats)
    if metric == "retrieval":
        return float(score["retrieval"])
    k = CATEGORIES.index(metric)
    return float(c[cats == k].mean()) if (cats == k).any() else float("nan")


def summarize(data, record: dict, seeds: list[int], rows: list[str]) -> dict[str, Any]:
    """The equal-step table, learning curves, the primary family (Holm) and the secondary tests."""
    steps = str(record["steps"])
    score = record["scores"]

    def per_seed(key, metric, at=steps):
        return np.asarray([seed_metric(data, score[f"{key}/{s}"][at], metric) for s in seeds])

    t = _t()
    out_rows = {}
    curve_steps = sorted({int(k) for v in score.values() for k in v})
    for key in rows:
        r = {"name": ROWS[key][0]}
        for metric in ("fine", "retrieval") + CATEGORIES:
            x = per_seed(key, metric)
            x = x[np.isfinite(x)]
            half = float(t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x))) if len(x) > 1 else float("nan")
            r[metric] = {"mean": float(x.mean()) if len(x) else float("nan"), "low": float(x.mean() - half) if len(x) else
                         float("nan"), "high": float(x.mean() + half) if len(x) else float("nan"), "seeds": x.tolist()}
        r["curve"] = {str(s): {"fine": float(per_seed(key, "fine", str(s)).mean()),
                               "val": float(np.mean([score[f"{key}/{sd}"][str(s)]["val"] for sd in seeds]))}
                      for s in curve_steps}
        out_rows[key] = r
    primary = []
    for a, b, metric, claim in PRIMARY:
        if a in rows and b in rows:
            primary.append({"a": a, "b": b, "metric": metric, "claim": claim,
                            **paired_seed_test(per_seed(a, metric), per_seed(b, metric))})
    for p, adj in zip(primary, holm([p["p_t"] for p in primary])):
        p["p_holm"] = adj
        p["mde"] = detectable(p["sd"], p["n"], len(primary))
    secondary = []
    for key in rows:
        if key == "coarse":
            continue
        for metric in CATEGORIES:
            x, y = per_seed(key, metric), per_seed("coarse", metric)
            if np.isfinite(x).all() and np.isfinite(y).all():
                secondary.append({"a": key, "b": "coarse", "metric": metric, **paired_seed_test(x, y)})
    for s, adj in zip(secondary, holm([s["p_t"] if np.isfinite(s["p_t"]) else 1.0 for s in secondary])):
        s["p_holm"] = adj
        s["mde"] = detectable(s["sd"], s["n"], len(secondary))
    cats = data.a["test_item_cat"]
    chance = {CATEGORIES[c]: float(np.mean(1.0 / (data.a["test_item_cand"][cats == c] >= 0).sum(1)))
              for c in np.unique(cats)}
    return {"steps": record["steps"], "curve_steps": curve_steps, "seeds": seeds, "rows": out_rows,
            "primary": primary, "secondary": secondary, "chance": chance,
            "chance_fine": float(np.mean(list(chance.values())))}


# ---------------------------------------------------------------------------------- tables


def _pct(x: float, digits: int = 1) -> str:
    return "–" if x is None or not np.isfinite(x) else f"{100 * x:.{digits}f}"


def _pts(x: float) -> str:
    return "–" if x is None or not np.isfinite(x) else f"{100 * x:+.1f}"


def pilot_table(res: dict) -> str:
    """Validation accuracy (%, macro over the 9 categories) of the pilot rows at every validation step."""
    pilot = res["pilot"]
    keys = list(pilot["curve"])
    steps = [c["step"] for c in pilot["curve"][keys[0]]]
    lines = ["| step | " + " | ".join(f"{ROWS[k.split('/')[0]][0]} val (%)" for k in keys) + " |",
             "|---|" + "---|" * len(keys)]
    for i, s in enumerate(steps):
        lines.append(f"| {s} | " + " | ".join(_pct(pilot["curve"][k][i]["val"]) for k in keys) + " |")
    lines.append(f"\nplateau (first step within 1 point of the best 3-evaluation moving average, the latest over "
                 f"the pilot rows): step {pilot['plateau']}" + ("" if pilot["reached"] else
                 " (NOT reached: the pilot's last step; the pilot was too short)"))
    return "\n".join(lines)


def equal_step_table(summary: dict) -> str:
    """Per row at the common step: test accuracy (macro over 9 categories), action, retrieval, each the
    mean over seeds with its 95% seed-level t interval (%)."""
    lines = [f"| training ({summary['steps']} steps, {len(summary['seeds'])} seeds) | fine-grained test accuracy (%) | "
             "action (%) | retrieval, mean R@1/5/10 (%) |", "|---|---|---|---|"]
    for key, r in summary["rows"].items():
        cells = [f"{_pct(r[m]['mean'])} [{_pct(r[m]['low'])}, {_pct(r[m]['high'])}]"
                 for m in ("fine", "action", "retrieval")]
        lines.append(f"| {r['name']} | " + " | ".join(cells) + " |")
    lines.append(f"| chance | {_pct(summary['chance_fine'])} | {_pct(summary['chance'].get('action'))} | |")
    return "\n".join(lines)


def curve_table(summary: dict) -> str:
    """Learning curves: validation and test accuracy (%, mean over seeds) at the common steps."""
    st = summary["curve_steps"]
    lines = ["| training | " + " | ".join(f"step {s}: val / test (%)" for s in st) + " |", "|---|" + "---|" * len(st)]
    for r in summary["rows"].values():
        lines.append(f"| {r['name']} | " + " | ".join(f"{_pct(r['curve'][str(s)]['val'])} / "
                                                       f"{_pct(r['curve'][str(s)]['fine'])}" for s in st) + " |")
    return "\n".join(lines)


def primary_table(summary: dict) -> str:
    """The primary family, declared before the run: seed-level paired differences (points), their 95%
    t interval, paired-t p, sign-flip p, Holm-adjusted p, and the minimum detectable effect (points)."""
    lines = ["| contrast (metric) | difference (points) [95% CI] | p (paired t) | p (sign-flip, exact) | p (Holm) | "
             "detectable effect (points) |", "|---|---|---|---|---|---|"]
    for p in summary["primary"]:
        lines.append(f"| {p['a']} vs {p['b']} ({p['metric']}) | {_pts(p['difference'])} [{_pts(p['low'])}, "
                     f"{_pts(p['high'])}] | {p['p_t']:.3g} | {p['p_signflip']:.3g} | {p['p_holm']:.3g} | "
                     f"{100 * p['mde']:.1f} |")
    return "\n".join(lines)


def secondary_table(summary: dict) -> str:
    """Secondary: per category, each row vs coarse (difference in points, Holm-adjusted p over this family)."""
    cats = [c for c in CATEGORIES if c in summary["chance"]]
    got = {(s["a"], s["metric"]): s for s in summary["secondary"]}
    lines = ["| training vs coarse | " + " | ".join(f"{c} (points, p Holm)" for c in cats) + " |",
             "|---|" + "---|" * len(cats)]
    for key, r in summary["rows"].items():
        if key == "coarse":
            continue
        cells = []
        for c in cats:
            s = got.get((key, c))
            cells.append("–" if s is None else f"{_pts(s['difference'])} ({s['p_holm']:.2g})")
        lines.append(f"| {r['name']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def report(res: dict) -> str:
    parts = []
    if res.get("pilot", {}).get("plateau") is not None:
        parts.append("Pilot (seed " + str(res["pilot"]["seed"]) + "):\n\n" + pilot_table(res))
    if res.get("summary"):
        s = res["summary"]
        parts += [equal_step_table(s), curve_table(s), "Primary family (declared before the run, Holm over "
                  f"{len(s['primary'])}):\n\n" + primary_table(s), "Secondary (per category):\n\n" + secondary_table(s)]
    return "\n\n".join(parts)


def design_json(profile: dict, seeds: list[int], rows: list[str]) -> str:
    """What is fixed before any run: the profile, seeds, rows and the primary family."""
    return json.dumps({"profile": profile, "seeds": seeds, "rows": rows,
                       "primary": [list(p) for p in PRIMARY], "lambda": LAMBDA}, indent=1, sort_keys=True)


# ------------------------------------------------------------------------------------ the driver


def run_design(profile_name: str, out: Path, resume: bool, device: str = "cpu", world_seed: int = 0,
               workers: int = 1, negatives: Path | None = None, max_call_s: float | None = None,
               stop_after: int | None = None, rows: list[str] | None = None, lr: float = 1e-3) -> int:
    """Pilot, then every row at every seed to the same step count; results in `out/results.json`.

    Returns 0 when the design is finished, 3 when this call stopped at its time limit (`max_call_s`)
    or at `stop_after` steps of its current wave, with everything checkpointed: rerun with --resume."""
    import sys

    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from training_world import Data
    from hardneg.io import atomic_write_text

    out = Path(out)
    profile = dict(PROFILES[profile_name])
    design_file, results_file, data_dir = out / "design.json", out / "results.json", out / "data"
    seeds = list(range(profile["seeds"]))
    if design_file.exists() and not resume:
        raise SystemExit(f"error: {out} already holds a design; pass --resume to continue it, or choose a new --out")
    if resume and not design_file.exists():
        raise SystemExit(f"error: --resume: {out} holds no design.json; start one without --resume")
    deadline = time.time() + max_call_s if max_call_s else None
    t0 = time.perf_counter()
    if resume:
        fixed = json.loads(design_file.read_text())
        if fixed["profile"] != profile:
            raise SystemExit(f"error: {out} was started with another profile; resume it with the same --design")
        data = Data.load(data_dir)
        res = json.loads(results_file.read_text())
    else:
        out.mkdir(parents=True, exist_ok=True)
        data = prepare(profile, world_seed, workers, negatives)
        data.save(data_dir)
        want = runnable_rows(data, rows or list(ROWS))
        atomic_write_text(design_file, design_json(profile, seeds, want) + "\n")
        res = {"design": "equal-steps (issue 34)", "profile_name": profile_name, "profile": profile, "seeds": seeds,
               "rows": want, "primary_declared": [list(p) for p in PRIMARY], "world_seed": world_seed,
               "device": torch.cuda.get_device_name(0) if device.startswith("cuda") else
               f"cpu ({torch.get_num_threads()} threads)", "versions": {"torch": torch.__version__},
               "data": {k: v for k, v in data.meta.items() if k not in ("arrays", "vocabulary")},
               "pilot": {"seed": 0}, "timings_s": {"prepare": round(time.perf_counter() - t0, 1)}}
        atomic_write_text(results_file, json.dumps(res, indent=1) + "\n")
    cfg = {**profile, "device": device, "lr": lr}
    want = res["rows"]

    def save():
        atomic_write_text(results_file, json.dumps(res, indent=1, default=float) + "\n")

    if res["pilot"].get("plateau") is None:
        t1 = time.perf_counter()
        members = [(k, 0) for k in PILOT_ROWS if k in want]
        rec = run_wave(data, "pilot", members, profile["pilot_steps"], cfg, out, deadline=deadline,
                       stop_after=stop_after)
        res["timings_s"]["pilot"] = round(res["timings_s"].get("pilot", 0) + time.perf_counter() - t1, 1)
        if rec is None:
            save()
            print(f"pilot checkpointed in {out}; rerun with --resume", flush=True)
            return 3
        res["pilot"]["curve"] = rec["curve"]
        found = [plateau(c) for c in rec["curve"].values()]
        res["pilot"]["plateau"] = max(s for s, _ in found)
        res["pilot"]["reached"] = all(r for _, r in found)
        E = profile["eval_every"]
        steps = max(res["pilot"]["plateau"], profile["min_steps"])
        res["steps"] = int(math.ceil(steps / E) * E)
        thirds = sorted({int(math.ceil(res["steps"] * f / 3 / E) * E) for f in (1, 2, 3)})
        res["curve_steps"] = thirds
        save()
        print(report(res), flush=True)
    t1 = time.perf_counter()
    members = [(k, s) for s in seeds for k in want]
    rec = run_wave(data, "main", members, res["steps"], cfg, out, curve_steps=tuple(res["curve_steps"]),
                   deadline=deadline, stop_after=stop_after)
    res["timings_s"]["main"] = round(res["timings_s"].get("main", 0) + time.perf_counter() - t1, 1)
    if rec is None:
        save()
        print(f"main wave checkpointed in {out}; rerun with --resume", flush=True)
        return 3
    res["main"] = {"curve": rec["curve"], "scores": rec["scores"]}
    res["summary"] = summarize(data, rec, seeds, want)
    save()
    print(report(res), flush=True)
    return 0
