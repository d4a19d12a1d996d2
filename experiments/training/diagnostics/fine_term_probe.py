"""Issue 50: why the positive control fails. Trains one tiny-temporal on the controls world with a chosen weight of
the coarse term and of PoSRank's Eq. 3 (world word-level negatives, N per part of speech) and prints, a few times,
the two terms' training values and PoSRank per part of speech (noun, adj, verb, adv, prep) on 300 training scenes
and on the test scenes. One JSON line per evaluation (docs/training.md, "Why the positive control fails").

    OMP_NUM_THREADS=1 python experiments/training/diagnostics/fine_term_probe.py --lam 0.2 --steps 3000
    --group adj   batches drawn from scenes that share both colours: the coarse term's in-batch captions never
                  differ in colour (PoSRank Sec. 6.1's premise: coarse training captions carry no fine-grained
                  difference), so only the Eq. 3 term can teach colours
    --coarse 0    the Eq. 3 term alone;  --n 64: a 64-scene subset (memorisation);  --save/--load a state
"""
import argparse
import json
import time
from collections import defaultdict

import numpy as np
import torch

from probe_world import frames_at, load_world, parsed_caption
import training_design as D
from hardneg.models.trainable import TinyTemporal

GROUPS = {"verb": lambda c: (c.e1.verb, c.e2.verb), "adv": lambda c: (c.e1.manner, c.e2.manner),
          "prep": lambda c: (c.relation,), "adj": lambda c: (c.a.colour, c.b.colour)}


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000, help="training scenes used (the first n)")
    ap.add_argument("--size", type=int, default=16, help="frame size in pixels (a power of two)")
    ap.add_argument("--dim", type=int, default=16)
    ap.add_argument("--lam", type=float, default=0.2, help="weight of Eq. 3 (as printed)")
    ap.add_argument("--coarse", type=float, default=1.0, help="weight of the coarse term")
    ap.add_argument("--steps", type=int, default=1200)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--N", type=int, default=1, help="world negatives per part of speech per item")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ntest", type=int, default=300)
    ap.add_argument("--evals", type=int, default=4)
    ap.add_argument("--group", choices=sorted(GROUPS), default=None,
                    help="draw each batch from scenes sharing this slot's words (see above)")
    ap.add_argument("--load", default=None, help="start from this state dict (torch.save of the net, ours)")
    ap.add_argument("--save", default=None)
    ap.add_argument("--step0", type=int, default=0, help="first step number (batches depend on it)")
    ap.add_argument("--pool", choices=("mean", "max", "cls"), default="mean",
                    help="the text tower's pooling of its word outputs (tiny-temporal's own is the mean)")
    ap.add_argument("--only", choices=D.POS, default=None,
                    help="keep only this part of speech's negatives in Eq. 3 (the others masked out)")
    ap.add_argument("--split", action="store_true",
                    help="one AdamW state per term: the coarse term steps at --lr, Eq. 3 at lambda x --lr, each on "
                         "its own gradient (so lambda weighs the two terms' steps, not their gradients' norms)")
    ap.add_argument("--withpos", action="store_true",
                    help="Eq. 3 with the positive in its denominator (bounded below by 0) instead of as printed")
    ap.add_argument("--tag", default="")
    return ap.parse_args()


def main():
    a = parse_args()
    torch.set_num_threads(1)
    d = load_world()
    fr = frames_at(d, a.size)
    for k in ("train_caption", "pool_world", "pool_world_sim"):
        d.a[k] = d.a[k][:a.n]
    d.a["train_posrank"] = d.a["pool_world"][:min(a.n, 300)]
    for k in ("test_posrank", "test_caption"):
        d.a[k] = d.a[k][:a.ntest]
    train(a, d, fr, lambda row: print(json.dumps({k: v for k, v in row.items() if k != "test_rr"}), flush=True))


def reciprocal_ranks(net, d, part: str, frames) -> np.ndarray:
    """(scenes, 5) 1 / PoSRank's rank of each scene's caption per part of speech (NaN where it has no negative)."""
    tok = torch.from_numpy(d.a["tokens"])
    r = D.posrank_ranks(net, d, part, frames, tok, "cls")
    return np.where(r > 0, 1 / np.maximum(r, 1), np.nan)


def train(a, d, fr: dict, log) -> TinyTemporal:
    """Train one tiny-temporal as `a` (this script's arguments) says on world `d` with frames `fr`, calling `log`
    with a dict `a.evals` times (the terms' means since the last one, PoSRank on training and test scenes, and
    the test scenes' reciprocal ranks under "test_rr"); returns the net."""
    n_train = len(d.a["train_caption"])
    nt = min(n_train, 300)
    ftr, fte = torch.from_numpy(fr["train"][:n_train]), torch.from_numpy(fr["test"][:len(d.a["test_caption"])])
    tok = torch.from_numpy(d.a["tokens"])
    cfg = {"batch": a.batch, "n_per_pos": a.N}
    groups = grouped_scenes(d, a.group, a.batch) if a.group else None
    torch.manual_seed(a.seed)
    net = TinyTemporal(d.meta["vocabulary"], dim=a.dim, image_size=a.size, n_frames=8)
    if a.pool != "mean":
        repool(net, a.pool)
    if a.load:
        net.load_state_dict(torch.load(a.load, weights_only=True))
    opt = torch.optim.AdamW(net.parameters(), lr=a.lr, weight_decay=0.01)
    opt_fine = torch.optim.AdamW(net.parameters(), lr=a.lr * a.lam, weight_decay=0.0) if a.split else None
    fine = 2 if getattr(a, "withpos", False) else 1  # member_losses: 1 Eq. 3 as printed, 2 with the positive

    def mrr(part, frames):
        saved = d.a["train_caption"]
        if part == "train":
            d.a["train_caption"], d.a["train_posrank"] = saved[:nt], d.a["pool_world"][:nt]
        rr = reciprocal_ranks(net, d, part, frames)
        d.a["train_caption"] = saved
        return rr

    t0, seen = time.time(), []
    for step in range(a.step0, a.step0 + a.steps):
        raw = D.batch_for(d, "world-word", a.seed, step, cfg) if groups is None else grouped_batch(d, groups, a, step)
        if a.only:  # negatives are laid out part of speech by part of speech, N each
            keep = np.repeat(np.asarray(D.POS) == a.only, a.N)
            raw["mask"] = raw["mask"] & keep[None, :]
        b = {k: torch.from_numpy(v) for k, v in raw.items()}
        cls, _ = D.encode_video(net, ftr[b["idx"]])
        out = D.member_losses(cls, cls, D._encode_text(net, tok, b["pos"]), D._encode_text(net, tok, b["neg"]),
                              b["mask"], b["labels"], b["teacher"], net.temperature())
        if opt_fine is None:
            loss = a.coarse * out[0] + a.lam * out[fine]
            opt.zero_grad()
            loss.backward()
            opt.step()
        else:  # each term's gradient through its own optimizer state, the coarse step first
            params = [p for p in net.parameters()]
            g_fine = torch.autograd.grad(out[fine], params, retain_graph=True, allow_unused=True)
            opt.zero_grad()
            (a.coarse * out[0]).backward()
            opt.step()
            opt_fine.zero_grad()
            for p, g in zip(params, g_fine):
                p.grad = g
            opt_fine.step()
        seen.append([float(out[0].detach()), float(out[fine].detach())])
        if (step + 1 - a.step0) % max(1, a.steps // a.evals) == 0:
            rr_train, rr_test = mrr("train", ftr[:nt]), mrr("test", fte)
            tr, te = np.round(np.nanmean(rr_train, 0), 3), np.round(np.nanmean(rr_test, 0), 3)
            m = np.mean(seen, 0)
            seen = []
            log({"tag": a.tag, "step": step + 1, "coarse": round(float(m[0]), 3), "eq3": round(float(m[1]), 3),
                 "tau": round(float(net.temperature().detach()), 4), "train_posrank": tr.tolist(),
                 "test_posrank": te.tolist(), "test_mean": round(float(te.mean()), 3),
                 "s": round(time.time() - t0), "test_rr": rr_test})
    if a.save:
        torch.save(net.state_dict(), a.save)
    return net


def repool(net, how: str) -> None:
    """Replace tiny-temporal's mean over the word outputs by their max or the CLS output (this probe only)."""
    def encode_tokens(ids, pad):
        x = net.text_encoder(net.word(ids) + net.word_pos[: ids.shape[1]], src_key_padding_mask=pad)
        pooled = x[:, 0] if how == "cls" else x.masked_fill(pad.unsqueeze(-1), float("-inf")).max(1).values
        return net.text_proj(net.text_norm(pooled))

    net.encode_tokens = encode_tokens


def grouped_scenes(d, slot: str, batch: int) -> list[np.ndarray]:
    """Training scenes grouped by the words of `slot` (parsed from their captions); groups of at least `batch`."""
    by = defaultdict(list)
    for i, r in enumerate(d.a["train_caption"]):
        by[GROUPS[slot](parsed_caption(d, r))].append(i)
    return [np.asarray(v) for v in by.values() if len(v) >= batch]


def grouped_batch(d, groups, a, step: int) -> dict:
    """`batch_for`'s world word-level batch, its scenes drawn from one group (a group as likely as its size)."""
    rng = np.random.default_rng([a.seed, 7, step])
    sizes = np.asarray([len(g) for g in groups], float)
    idx = rng.choice(groups[rng.choice(len(groups), p=sizes / sizes.sum())], a.batch, replace=False)
    B, N, K = a.batch, a.N, 5 * a.N
    p = d.a["pool_world"][idx]
    keys = rng.random(p.shape)
    keys[p < 0] = np.inf
    pick = np.take_along_axis(p, np.argsort(keys, axis=2, kind="stable")[:, :, :N], 2).reshape(B, K)
    mask = pick >= 0
    return {"idx": idx, "pos": d.a["train_caption"][idx], "neg": np.where(mask, pick, 0), "mask": mask,
            "labels": np.zeros((B, K), np.int64), "teacher": np.zeros((B, K + 1), np.float32)}


if __name__ == "__main__":
    main()
