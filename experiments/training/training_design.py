"""What the training experiment trains: the data, the rows' objectives, the batches, the model, the evaluation.

Issue 34 built these pieces and issue 43 kept them: `training_runner` trains one model per job with them.
* `prepare`: the world's arrays (frames, a text table tokenized with the closed vocabulary, negative
  pools, the test items in the release's layout, the Eq. 1 labels and Eq. 2 similarities);
* `ROWS`: each row's objective and negatives pool; `batch_for`: the batch of a row at (seed, step),
  a function of (seed, step, row) only, so a rerun or a resumed run draws the same;
* `member_losses`: every objective term at once (each equal to its function in
  `hardneg.training.losses`, tested): PoSRank Eq. 3 as printed (the main rows), Eq. 3 with the
  positive in the denominator (an ablation), Feint6K Eq. 1 with the world's truth as the teacher over a
  blind action rewriter, Feint6K Eq. 2 with an oracle teacher (`training_world.oracle_similarity`);
* `make_net`, `step_loss`, `evaluate` (the item rule: `training_stats.positive_wins`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from training_stats import positive_wins  # noqa: E402  (one item rule for every design)

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
    # issue 50's negative control: the coarse objective on captions shuffled against the videos (a fixed
    # permutation, `shuffled_captions`): nothing ties a caption to its video, so every test metric must stay at chance
    "shuffled": ("negative control: coarse on captions shuffled against videos", "coarse", None),
}
CATEGORIES = ("noun", "adj", "verb", "adv", "prep", "action", "direction", "sequence", "manner")
POS = CATEGORIES[:5]
LAMBDA = 0.2
MASKED = -1e9  # a missing candidate's logit: finite, so masked rows give no NaN gradients under vmap
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
    paper = bool(profile.get("posrank_eval"))  # issue 50: PoSRank's own test, word-level negatives per scene
    world = build(world_seed, profile["train"], profile["val"], profile["test"], 0, workers, progress=False,
                  test_items="one", rewrites=5 * n_per_pos,
                  negatives_parts=("train", "val", "test") if paper else ("train",))
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
    if paper:  # PoSRank's evaluation sets T_i^p of the validation and test scenes: (n, 5, 16) text ids, -1 pads
        for part in ("val", "test"):
            tp = np.full((len(world[part]["captions"]), len(POS), 16), -1, np.int64)
            for i, d in enumerate(world[part]["world_negatives"]):
                for k, pos in enumerate(POS):
                    got = [tid(t) for t in d[pos][:16]]
                    tp[i, k, :len(got)] = got
            a[f"{part}_posrank"] = tp
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
    captions = shuffled_captions(data.a["train_caption"]) if key == "shuffled" else data.a["train_caption"]
    return {"idx": idx, "pos": captions[idx], "neg": np.where(mask, pick, 0), "mask": mask,
            "labels": labels, "teacher": teacher_targets(sims, mask),
            "w": np.asarray(WEIGHTS[objective], np.float32)}


def shuffled_captions(captions: np.ndarray) -> np.ndarray:
    """The negative control's captions: the training captions under one fixed permutation (the same for every
    seed), so each video is paired with another scene's caption throughout training."""
    return captions[np.random.default_rng([50, 1]).permutation(len(captions))]


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


def macro(correct: np.ndarray, cats: np.ndarray) -> float:
    return float(np.mean([correct[cats == c].mean() for c in np.unique(cats)]))


def posrank_ranks(net, data, part: str, frames, tokens, head: str) -> np.ndarray:
    """PoSRank's evaluation (its Sec. 4, "Evaluation Criteria"): per scene of `part` and part of speech p, the
    1-based rank r_i^p of the true caption among itself and the scene's word-level negatives T_i^p (a negative
    that ties the caption ranks above it); 0 where the scene has no negative of p. PoSRank^p = mean of 1 / r."""
    import torch
    import torch.nn.functional as F

    cand = data.a[f"{part}_posrank"]  # (n, 5, 16)
    n = cand.shape[0]
    net.eval()
    with torch.no_grad():
        cls, prm = encode_video(net, frames)
        v = F.normalize(prm if head == "prompt" else cls, dim=-1)
        ids = np.concatenate([np.repeat(data.a[f"{part}_caption"][:, None, None], len(POS), 1), cand], 2)
        uniq = np.unique(ids[ids >= 0])
        where = np.full(int(uniq.max()) + 1, 0, np.int64)
        where[uniq] = np.arange(len(uniq))
        emb = F.normalize(_encode_text(net, tokens, torch.from_numpy(uniq).to(v.device)), dim=-1)
        s = torch.einsum("nd,npkd->npk", v, emb[torch.from_numpy(where[np.clip(ids, 0, None)]).to(v.device)]).cpu().numpy()
    net.train()
    neg = s[:, :, 1:]
    above = ((neg >= s[:, :, :1]) & (cand >= 0)).sum(2)
    return np.where((cand >= 0).any(2), 1 + above, 0).reshape(n, len(POS))
