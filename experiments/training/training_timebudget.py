"""Does training against hard negatives teach a model what the negatives test? Measured on `world`.

SUPERSEDED: the experiment is `run.py` (issue 43's design, docs/training.md). This is issue 28's
time-budget design, kept because its H100 tables (history in docs/training.md) regenerate from
`experiments/training/results/timebudget-h100.json.gz` (`report`), and `--make-negatives` writes the
generator negatives file every design reads.

Issue 28's time-budget design (issue 34 says why it cannot answer the question). First a
**learnability probe**: for each attribute a negative changes (noun,
adjective, size, verb, adverb, preposition, action, direction, sequence, manner) a supervised
classifier on the video encoder's input (the `tiny-temporal` video tower at `--image-size`, one
head per attribute) is trained on the training scenes and scored on held-out test scenes. An
attribute whose accuracy is not well above chance is out of reach of any objective at that
resolution, and the table says so.

Then the **experiment**: `tiny-temporal` is trained from the same initialisation at each seed
(vocabulary: the world's closed word list, not the negatives' words) with each row's objective,
N = 16 negatives per caption for every row that has negatives, lambda = 0.2:

    coarse only             L_coarse (PoSRank Sec. 6.1)
    world word-level        + lambda L_fine (PoSRank Eq. 3/4) over the world's own verified negatives
    generator word-level    + lambda L_fine over `posrank` negatives (in-world vocabulary tier)
    generator phrase-level  + lambda L_fine over `posrank_phrase` negatives
    fine-grained prompting  phrase-level, L_fine on a visual prompt token (PoSRank Sec. 6.4)
    Eq. 1, oracle teacher   + lambda Feint6K Eq. 1 over ALL the action swaps (up to 16), the
                            teacher's binary labels = the world's truth (`hardneg.world.check`)
    Eq. 1, no teacher       the same with every label 0 (the generator's own claim)

Each run is evaluated every `eval_every` steps on a validation split (training-split scenes never
trained on); the step with the best validation accuracy is kept (patience: `patience` evaluations),
and only that checkpoint is scored on the test scenes and on training scenes. Accuracy is the
share of the world's verified multiple-choice items (PoSRank per part of speech, counterfactual
action, temporal direction/sequence/manner) where the positive scores strictly above every
negative. Paired differences to coarse-only: `hardneg.ranking.paired_test` (seeds stacked,
clusters = test scenes), Holm-corrected over every test in the table; the minimum detectable
effect is (z_{1-alpha/(2m)} + z_{0.8}) x SE, alpha = 0.05, m tests (Holm's strictest step).

    python experiments/training/training_timebudget.py --quick                    # a tiny world, a smoke test (minutes on CPU)
    python experiments/training/training_timebudget.py --profile cpu              # the largest CPU configuration (docs/training.md)
    python experiments/training/training_timebudget.py --scale --device cuda      # >= 10,000 training scenes, 3 seeds (a GPU)
    python experiments/training/training_timebudget.py --report OUT/results.json  # reprint the tables of a finished run
    python experiments/training/training_timebudget.py --report experiments/training/results/timebudget-h100.json.gz

Writes `<out>/results.json` after every run (so a cut-off run keeps what finished) and prints
the probe table and the experiment table as Markdown. Discussion: docs/training.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from training_stats import holm, positive_wins  # noqa: E402  (one Holm and one item rule for every design)
from training_world import Data  # noqa: E402

ROWS = {  # key -> (row name, objective, negatives source)
    "coarse": ("coarse only", "coarse", None),
    "world-word": ("+ world word-level negatives (Eq. 4)", "fine", "world"),
    "gen-word": ("+ generator word-level negatives (Eq. 4)", "fine", "word"),
    "gen-phrase": ("+ generator phrase-level negatives", "fine", "phrase"),
    "prompt": ("+ fine-grained prompting (phrase-level)", "prompt", "phrase"),
    "eq1-oracle": ("LLM-teacher-lbl (Eq. 1), oracle teacher", "eq1-oracle", "action"),
    "eq1-zero": ("LLM-teacher-lbl (Eq. 1), no teacher (labels 0)", "eq1-zero", "action"),
}
CATEGORIES = ("noun", "adj", "verb", "adv", "prep", "action", "direction", "sequence", "manner")
PROFILES = {
    "quick": {"train": 192, "val": 48, "test": 96, "train_eval": 96, "steps": 40, "eval_every": 20, "patience": 2,
              "batch_size": 16, "probe_steps": 40, "seeds": "0,1,2"},
    "cpu": {"train": 2000, "val": 200, "test": 400, "train_eval": 200, "steps": 150, "eval_every": 25,
            "patience": 3, "batch_size": 32, "probe_steps": 300, "seeds": "0,1,2"},
    "scale": {"train": 10000, "val": 500, "test": 2000, "train_eval": 1000, "steps": 3000, "eval_every": 150,
              "patience": 4, "batch_size": 128, "probe_steps": 1000, "seeds": "0,1,2"},
}
N_NEGATIVES = 16
LAMBDA = 0.2
LEARNABLE = 0.25  # probe: "well above chance" = the interval's low end beyond chance + 25% of (1 - chance)


# ------------------------------------------------------------------------------------ data


def prepare(profile: dict, seed: int, workers: int, negatives_file: Path | None, image_size: int) -> Data:
    """The world, its text table (tokenized with the closed vocabulary), negative pools and items."""
    from hardneg.models.trainable import TinyTemporal, build_vocabulary
    from hardneg.world import sample_scene
    from training_world import build, closed_vocabulary_texts, read_generator_negatives

    t0 = time.perf_counter()
    captions = [sample_scene(seed, "train", i).text for i in range(profile["train"])]
    gen, gen_meta = {}, {}
    if negatives_file is not None and negatives_file.is_file():
        gen, gen_meta = read_generator_negatives(negatives_file, captions)
    else:
        print(f"  no generator negatives file ({negatives_file}): generator rows are skipped", file=sys.stderr)
    judge = {i: negs for i, negs in enumerate(gen.get("action", []))}
    world = build(seed, profile["train"], profile["val"], profile["test"], profile["train_eval"], workers,
                  judge=judge)
    t_world = time.perf_counter() - t0
    vocab = build_vocabulary(closed_vocabulary_texts())
    texts: dict[str, int] = {}

    def tid(t: str) -> int:
        return texts.setdefault(t, len(texts))

    arrays: dict[str, np.ndarray] = {}
    for part in ("train", "val", "test"):
        w = world[part]
        arrays[f"{part}_frames"] = w["frames"]
        arrays[f"{part}_caption"] = np.asarray([tid(c) for c in w["captions"]], np.int64)
        for a, v in w["attrs"].items():
            arrays[f"{part}_attr_{a}"] = v
        rows = [(s, kind, cat, [tid(c) for c in cands]) for s, items in enumerate(w["items"]) if items
                for kind, cat, cands in items]
        width = max((len(r[3]) for r in rows), default=1)
        cand = np.full((len(rows), width), -1, np.int64)
        for i, r in enumerate(rows):
            cand[i, :len(r[3])] = r[3]
        arrays[f"{part}_item_scene"] = np.asarray([r[0] for r in rows], np.int64)
        arrays[f"{part}_item_cat"] = np.asarray([CATEGORIES.index(r[2]) for r in rows], np.int64)
        arrays[f"{part}_item_cand"] = cand

    def pool(lists: list[list[str]], labels: list[list[int]] | None = None) -> None:
        width = max(1, max(len(x) for x in lists))
        ids = np.full((len(lists), width), -1, np.int64)
        lab = np.zeros((len(lists), width), np.int64)
        for i, x in enumerate(lists):
            ids[i, :len(x)] = [tid(t) for t in x]
            if labels is not None:
                lab[i, :len(x)] = labels[i]
        return ids, lab

    tr = world["train"]
    sources = {"world": [[n for pos in sorted(d) for n in d[pos]] for d in tr["world_negatives"]]}
    sources.update(gen)
    counts = {}
    for name, lists in sources.items():
        ids, lab = pool(lists, tr["truth"] if name == "action" else None)
        arrays[f"pool_{name}"] = ids
        if name == "action":
            arrays["pool_action_truth"] = lab
        counts[name] = {"mean": float(np.mean([len(x) for x in lists])), "min": int(min(len(x) for x in lists)),
                        "max": int(max(len(x) for x in lists))}
    tok = TinyTemporal(vocab, image_size=image_size)
    all_texts = sorted(texts, key=texts.get)
    ids, pad = tok.tokenize(all_texts)
    arrays["tokens"] = ids.numpy()
    unk = tok.index["<unk>"]
    meta = {"arrays": sorted(arrays), "vocabulary": vocab, "pool_sizes": counts, "generators": gen_meta,
            "world_seconds": round(t_world, 1), "n_texts": len(all_texts),
            "texts_with_unknown_words": int((ids == unk).any(1).sum()),
            "oracle_true_action_swaps": int(arrays.get("pool_action_truth", np.zeros(1)).sum())}
    return Data(arrays, meta)


# -------------------------------------------------------------------------------- the model


def make_net(vocab, seed: int, image_size: int, prompt: bool, dim: int):
    """tiny-temporal initialised from `seed` alone: the prompt token (when wanted) comes from its own
    generator afterwards, so every row at a seed starts from the same weights."""
    import torch
    from torch import nn

    from hardneg.models.trainable import TinyTemporal

    torch.manual_seed(seed)
    net = TinyTemporal(vocab, dim=dim, image_size=image_size, n_frames=8, prompt=False)
    if prompt:
        g = torch.Generator().manual_seed(1_000_003 + seed)
        net.prompt = nn.Parameter(torch.randn(1, 1, dim, generator=g) * 0.02)
    return net


class Texts:
    """Token ids of the text table on the device; embeddings by id."""

    def __init__(self, tokens: np.ndarray, device: str):
        import torch

        self.ids = torch.from_numpy(tokens).to(device)

    def encode(self, net, rows):
        ids = self.ids[rows]
        width = int((ids != 0).sum(1).max())
        ids = ids[:, :max(width, 1)]
        return net.encode_tokens(ids, ids == 0)


def video_embeddings(net, frames, head: str, chunk: int = 256):
    import torch

    out = []
    for i in range(0, frames.shape[0], chunk):
        cls, prm = net.encode_video(frames[i:i + chunk])
        out.append((prm if head == "prompt" and prm is not None else cls).float())
    return torch.cat(out)


def evaluate(net, data: Data, part: str, frames, texts: Texts, head: str, autocast) -> np.ndarray:
    """1 where the positive of an item scores strictly above each of its negatives, per item."""
    import torch
    import torch.nn.functional as F

    cand = data.a[f"{part}_item_cand"]
    scene = data.a[f"{part}_item_scene"]
    net.eval()
    with torch.no_grad(), autocast():
        v = F.normalize(video_embeddings(net, frames, head), dim=-1)
        uniq = np.unique(cand[cand >= 0])
        emb = torch.cat([texts.encode(net, torch.from_numpy(uniq[i:i + 8192]).to(v.device)).float()
                         for i in range(0, len(uniq), 8192)])
        correct = positive_wins(v, F.normalize(emb, dim=-1), uniq, cand, scene)
    net.train()
    return correct


def retrieval(net, data: Data, frames, texts: Texts, autocast, n: int = 1000) -> dict[str, float]:
    """Text-to-video and video-to-text mean of R@1/5/10 among the first `n` test scenes (coarse head)."""
    import torch
    import torch.nn.functional as F

    net.eval()
    with torch.no_grad(), autocast():
        m = min(n, frames.shape[0])
        v = F.normalize(video_embeddings(net, frames[:m], "cls"), dim=-1)
        t = F.normalize(texts.encode(net, torch.from_numpy(data.a["test_caption"][:m]).to(v.device)).float(), dim=-1)
        sim = v @ t.T
        out = {}
        for name, s in (("V2T", sim), ("T2V", sim.T)):
            rank = (s > s.diag()[:, None]).sum(1)
            out[name] = float(np.mean([(rank < k).float().mean().item() for k in (1, 5, 10)]))
    net.train()
    return out


def macro(correct: np.ndarray, cats: np.ndarray) -> float:
    return float(np.mean([correct[cats == c].mean() for c in np.unique(cats)]))


def train_run(data: Data, key: str, seed: int, cfg: dict[str, Any]) -> dict[str, Any]:
    """One row at one seed: train, select the step on validation, score train and test scenes."""
    import contextlib

    import torch

    from hardneg.training.losses import coarse_loss, fine_loss, llm_teacher_label_loss

    name, objective, source = ROWS[key]
    dev = cfg["device"]
    cuda = dev.startswith("cuda")

    def autocast():
        return torch.autocast("cuda", dtype=torch.bfloat16) if cuda else contextlib.nullcontext()

    t_start = time.perf_counter()
    net = make_net(data.meta["vocabulary"], seed, cfg["image_size"], objective == "prompt", cfg["dim"]).to(dev)
    head = "prompt" if objective == "prompt" else "cls"
    opt = torch.optim.AdamW(net.parameters(), lr=cfg["lr"], weight_decay=0.01)
    texts = Texts(data.a["tokens"], dev)
    frames = {p: torch.from_numpy(data.a[f"{p}_frames"]).to(dev) for p in ("train", "val", "test")}
    caps = data.a["train_caption"]
    pool = data.a[f"pool_{source}"] if source else None
    truth = data.a.get("pool_action_truth") if objective == "eq1-oracle" else None
    n_train, B = len(caps), cfg["batch_size"]
    per_epoch = max(1, n_train // B)
    val_cats = data.a["val_item_cat"]
    best = {"score": -1.0, "step": 0, "state": None}
    curve, losses, bad, stopped = [], [], 0, "steps"
    order_epoch, order = -1, None
    for step in range(cfg["steps"]):
        epoch, b = divmod(step, per_epoch)
        if epoch != order_epoch:
            order, order_epoch = np.random.default_rng([seed, epoch]).permutation(n_train), epoch
        idx = order[b * B:(b + 1) * B]
        rng = np.random.default_rng([seed, 1_000_003, step])
        with autocast():
            cls, prm = net.encode_video(frames["train"][torch.from_numpy(idx).to(dev)])
            pos = texts.encode(net, torch.from_numpy(caps[idx]).to(dev))
            cls, pos = cls.float(), pos.float()
            tau = net.temperature()
            loss = coarse_loss(cls, pos, tau)
            if pool is not None:
                p = pool[idx]
                if objective.startswith("eq1"):  # Eq. 1 over all the candidates the generator gave
                    pick = p[:, :N_NEGATIVES]
                    lab = truth[idx][:, :N_NEGATIVES] if truth is not None else np.zeros_like(pick)
                else:  # N = 16 drawn from the caption's pool (all of it when smaller)
                    keys = rng.random(p.shape)
                    keys[p < 0] = np.inf
                    sel = np.argsort(keys, axis=1, kind="stable")[:, :N_NEGATIVES]
                    pick = np.take_along_axis(p, sel, 1)
                    lab = np.zeros_like(pick)
                mask = pick >= 0
                neg = texts.encode(net, torch.from_numpy(np.where(mask, pick, 0).reshape(-1)).to(dev))
                neg = neg.float().view(len(idx), pick.shape[1], -1)
                mask_t = torch.from_numpy(mask).to(dev)
                if objective.startswith("eq1"):
                    labels = torch.from_numpy(np.where(mask, lab, 1)).to(dev)  # a missing candidate leaves, as label 1
                    extra = llm_teacher_label_loss(cls, pos, neg, tau, labels=labels)
                else:
                    fv = prm.float() if objective == "prompt" else cls
                    extra = fine_loss(fv, pos, neg, tau, mask_t)
                loss = loss + LAMBDA * extra
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
        done = step + 1
        if done % cfg["eval_every"] == 0 or done == cfg["steps"]:
            score = macro(evaluate(net, data, "val", frames["val"], texts, head, autocast), val_cats)
            curve.append({"step": done, "val_accuracy": round(score, 6),
                          "train_loss": round(float(np.mean(losses[-cfg["eval_every"]:])), 6)})
            if score > best["score"]:
                best = {"score": score, "step": done,
                        "state": {k: v.detach().clone() for k, v in net.state_dict().items()}}
                bad = 0
            else:
                bad += 1
                if bad >= cfg["patience"]:
                    stopped = "patience"
                    break
            if (cfg.get("max_run_s") and time.perf_counter() - t_start > cfg["max_run_s"]) or \
                    (cfg.get("deadline") and time.time() > cfg["deadline"]):
                stopped = "time budget"
                break
    net.load_state_dict(best["state"])
    out = {"row": key, "seed": seed, "best_step": best["step"], "val_accuracy": best["score"], "curve": curve,
           "stopped": stopped, "steps_run": len(losses), "seconds": round(time.perf_counter() - t_start, 1)}
    out["test_correct"] = evaluate(net, data, "test", frames["test"], texts, head, autocast).tolist()
    out["train_correct"] = evaluate(net, data, "train", frames["train"], texts, head, autocast).tolist()
    out["retrieval"] = retrieval(net, data, frames["test"], texts, autocast)
    return out


# ---------------------------------------------------------------------------------- the probe


def probe(data: Data, cfg: dict[str, Any], image_size: int, seed: int = 0) -> dict[str, Any]:
    """Supervised classifiers (one head per attribute) on the video tower at `image_size`, trained on the
    training scenes and scored on the VALIDATION scenes (issue 34: the image size it picks must not be
    chosen on the test scenes)."""
    import contextlib

    import torch
    from torch import nn

    from hardneg.ranking import bootstrap_ci
    from training_world import ATTRIBUTES, n_classes

    dev = cfg["device"]
    cuda = dev.startswith("cuda")
    classes = n_classes()
    net = make_net(data.meta["vocabulary"], seed, image_size, False, cfg["dim"]).to(dev)
    heads = nn.ModuleDict({a: nn.Linear(cfg["dim"], classes[a]) for a in ATTRIBUTES}).to(dev)
    params = [p for n, p in net.named_parameters() if not n.startswith(("word", "text"))] + list(heads.parameters())
    opt = torch.optim.AdamW(params, lr=cfg["lr"], weight_decay=0.01)
    frames = {p: torch.from_numpy(data.a[f"{p}_frames"]).to(dev) for p in ("train", "val")}
    y = {p: {a: torch.from_numpy(data.a[f"{p}_attr_{a}"]).to(dev) for a in ATTRIBUTES} for p in ("train", "val")}
    n, B = frames["train"].shape[0], cfg["batch_size"]
    per_epoch = max(1, n // B)
    ce = nn.CrossEntropyLoss(ignore_index=-1)
    ac = (lambda: torch.autocast("cuda", dtype=torch.bfloat16)) if cuda else contextlib.nullcontext
    t0 = time.perf_counter()
    for step in range(cfg["probe_steps"]):
        epoch, b = divmod(step, per_epoch)
        idx = torch.from_numpy(np.random.default_rng([seed, 77, epoch]).permutation(n)[b * B:(b + 1) * B]).to(dev)
        with ac():
            h, _ = net.encode_video(frames["train"][idx])
            loss = sum(ce(heads[a](h.float()), y["train"][a][idx]) for a in ATTRIBUTES)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    net.eval()
    with torch.no_grad(), ac():
        h = torch.cat([net.encode_video(frames["val"][i:i + 256])[0].float()
                       for i in range(0, frames["val"].shape[0], 256)])
    table = {}
    for a in ATTRIBUTES:
        target = y["val"][a].cpu().numpy()
        keep = target >= 0
        pred = heads[a](h).argmax(1).cpu().numpy()
        hit = (pred == target)[keep].astype(np.float64)
        ci = bootstrap_ci(hit, n_resamples=cfg["resamples"])
        majority = float(np.bincount(target[keep]).max() / keep.sum()) if keep.any() else float("nan")
        chance = max(majority, 1.0 / classes[a])
        table[a] = {"accuracy": ci.estimate, "low": ci.low, "high": ci.high, "chance": chance,
                    "n_test": int(keep.sum()), "classes": classes[a],
                    "learnable": bool(ci.low > chance + LEARNABLE * (1 - chance))}
    return {"image_size": image_size, "steps": cfg["probe_steps"], "seconds": round(time.perf_counter() - t0, 1),
            "attributes": table}


# ------------------------------------------------------------------------------ statistics


def _z(q: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(q)


def summarize(data: Data, runs: list[dict[str, Any]], resamples: int) -> dict[str, Any]:
    """Per row: train/test accuracy (mean over seeds, macro over categories, and per category); paired
    differences to coarse-only with Holm-adjusted p-values and the minimum detectable effect."""
    from hardneg.ranking import bootstrap_ci, paired_test

    cats = {p: data.a[f"{p}_item_cat"] for p in ("train", "test")}
    scenes = data.a["test_item_scene"]
    by_row: dict[str, dict[int, dict]] = {}
    for r in runs:
        by_row.setdefault(r["row"], {})[r["seed"]] = r
    seeds = sorted(set.intersection(*[set(v) for v in by_row.values()])) if by_row else []
    if not seeds:
        return {"seeds": [], "rows": {}, "tests": [], "chance": {}, "chance_all": float("nan")}
    rows: dict[str, Any] = {}
    counts = np.bincount(cats["test"], minlength=len(CATEGORIES))
    weight = len(cats["test"]) / (len(np.unique(cats["test"])) * counts[cats["test"]])  # macro mean = weighted mean

    def stacked(key: str) -> np.ndarray:
        return np.concatenate([np.asarray(by_row[key][s]["test_correct"], np.float64) for s in seeds])

    clusters = np.tile(scenes, len(seeds))
    for key, per_seed in by_row.items():
        if not seeds:
            break
        row: dict[str, Any] = {"name": ROWS[key][0], "seeds": seeds}
        for part in ("train", "test"):
            vals = [macro(np.asarray(per_seed[s][f"{part}_correct"]), cats[part]) for s in seeds]
            row[f"{part}_accuracy"] = float(np.mean(vals))
            row[f"{part}_accuracy_seeds"] = vals
        st = stacked(key)
        ci = bootstrap_ci(st * np.tile(weight, len(seeds)), clusters, n_resamples=resamples)
        row["test_interval"] = [ci.low, ci.high]
        row["per_category"] = {CATEGORIES[c]: float(st[np.tile(cats["test"], len(seeds)) == c].mean())
                               for c in np.unique(cats["test"])}
        row["retrieval"] = {d: float(np.mean([per_seed[s]["retrieval"][d] for s in seeds])) for d in ("V2T", "T2V")}
        row["best_steps"] = [per_seed[s]["best_step"] for s in seeds]
        row["stopped"] = [per_seed[s]["stopped"] for s in seeds]
        rows[key] = row
    tests = []
    if "coarse" in rows:
        base = stacked("coarse")
        tcat = np.tile(cats["test"], len(seeds))
        for key in rows:
            if key == "coarse":
                continue
            st = stacked(key)
            for metric in ("all",) + tuple(CATEGORIES[c] for c in np.unique(cats["test"])):
                if metric == "all":
                    a, b, cl = st * np.tile(weight, len(seeds)), base * np.tile(weight, len(seeds)), clusters
                else:
                    sel = tcat == CATEGORIES.index(metric)
                    a, b, cl = st[sel], base[sel], clusters[sel]
                pt = paired_test(a, b, cl, n_resamples=resamples)
                seed_diffs = []
                n_items = len(cats["test"])
                for i, _ in enumerate(seeds):
                    part = slice(i * n_items, (i + 1) * n_items)
                    keep = np.ones(n_items, bool) if metric == "all" else cats["test"] == CATEGORIES.index(metric)
                    wa = (st[part] * (weight if metric == "all" else 1))[keep]
                    wb = (base[part] * (weight if metric == "all" else 1))[keep]
                    seed_diffs.append(float(wa.mean() - wb.mean()))
                tests.append({"row": key, "metric": metric, "difference": pt.difference, "low": pt.low,
                              "high": pt.high, "p_value": pt.p_value, "seed_differences": seed_diffs,
                              "se": (pt.high - pt.low) / (2 * _z(0.975))})
        adj = holm([t["p_value"] for t in tests])
        m = len(tests)
        for t, p in zip(tests, adj):
            t["p_holm"] = p
            t["mde"] = (_z(1 - 0.05 / (2 * m)) + _z(0.8)) * t["se"] if m else float("nan")
    chance = {CATEGORIES[c]: float(np.mean(1.0 / (data.a["test_item_cand"][cats["test"] == c] >= 0).sum(1)))
              for c in np.unique(cats["test"])}
    chance_all = float(np.mean(list(chance.values())))
    return {"seeds": seeds, "rows": rows, "tests": tests, "chance": chance, "chance_all": chance_all}


# ---------------------------------------------------------------------------------- tables


def pct(x: float | None, digits: int = 1) -> str:
    return "–" if x is None or not np.isfinite(x) else f"{100 * x:.{digits}f}"


def probe_table(res: dict[str, Any]) -> str:
    lines = ["| attribute | classes | test scenes | probe accuracy (%) | chance (%) | within reach |", "|---|---|---|---|---|---|"]
    for a, r in res["attributes"].items():
        lines.append(f"| {a} | {r['classes']} | {r['n_test']} | {pct(r['accuracy'])} [{pct(r['low'])}, "
                     f"{pct(r['high'])}] | {pct(r['chance'])} | {'yes' if r['learnable'] else 'no'} |")
    return "\n".join(lines)


def experiment_table(summary: dict[str, Any]) -> str:
    """Per row: train and test accuracy (macro over the 9 item categories, mean of the seeds), the paired
    difference to coarse-only with its Holm-adjusted p-value and minimum detectable effect."""
    overall = {t["row"]: t for t in summary["tests"] if t["metric"] == "all"}
    lines = ["| training | train accuracy (%) | test accuracy (%) | vs coarse, test (points) | p (Holm) | "
             "detectable effect (points) | V2T mean R@1/5/10 (%) | best steps |",
             "|---|---|---|---|---|---|---|---|"]
    for key, r in summary["rows"].items():
        t = overall.get(key)
        diff = "–" if t is None else f"{100 * t['difference']:+.1f} [{100 * t['low']:+.1f}, {100 * t['high']:+.1f}]"
        p = "–" if t is None else f"{t['p_holm']:.3g}"
        mde = "–" if t is None else f"{100 * t['mde']:.1f}"
        lines.append(f"| {r['name']} | {pct(r['train_accuracy'])} | {pct(r['test_accuracy'])} [{pct(r['test_interval'][0])}, "
                     f"{pct(r['test_interval'][1])}] | {diff} | {p} | {mde} | {pct(r['retrieval']['V2T'])} | "
                     f"{', '.join(map(str, r['best_steps']))} |")
    lines.append(f"| chance | {pct(summary['chance_all'])} | {pct(summary['chance_all'])} | | | | | |")
    return "\n".join(lines)


def category_table(summary: dict[str, Any]) -> str:
    """Test accuracy per item category, and per category the paired difference (Holm-adjusted p)."""
    tests = {(t["row"], t["metric"]): t for t in summary["tests"]}
    cats = list(summary["chance"])
    lines = ["| training | " + " | ".join(f"{c} (%)" for c in cats) + " |", "|---|" + "---|" * len(cats)]
    for key, r in summary["rows"].items():
        cells = []
        for c in cats:
            cell = pct(r["per_category"].get(c))
            t = tests.get((key, c))
            if t is not None:
                cell += f" ({100 * t['difference']:+.1f}, p {t['p_holm']:.2g})"
            cells.append(cell)
        lines.append(f"| {r['name']} | " + " | ".join(cells) + " |")
    lines.append("| chance | " + " | ".join(pct(summary["chance"][c]) for c in cats) + " |")
    return "\n".join(lines)


def report(results: dict[str, Any]) -> str:
    parts = []
    for pr in results.get("probes", []):
        parts.append(f"Probe at {pr['image_size']} px ({pr['steps']} steps):\n\n" + probe_table(pr))
    if results.get("summary"):
        parts.append(experiment_table(results["summary"]))
        parts.append(category_table(results["summary"]))
    return "\n\n".join(parts)


# ------------------------------------------------------------------------------------ main


_DATA: Data | None = None


def _worker_init(folder: str, threads: int) -> None:
    global _DATA
    import torch

    torch.set_num_threads(threads)
    _DATA = Data.load(Path(folder))


def _worker_run(args: tuple) -> dict[str, Any]:
    key, seed, cfg = args
    return train_run(_DATA, key, seed, cfg)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="a tiny world, few steps (a smoke test)")
    mode.add_argument("--scale", action="store_true", help=">= 10,000 training scenes (a GPU)")
    mode.add_argument("--profile", choices=sorted(PROFILES), default=None)
    mode.add_argument("--report", type=Path, default=None, help="reprint the tables of a results.json of this design")
    mode.add_argument("--make-negatives", type=Path, default=None,
                      help="run the generators (spaCy) on the profile's training captions and write this file")
    ap.add_argument("--out", type=Path, default=Path("bench-training"), help="work folder (results.json)")
    ap.add_argument("--negatives", type=Path, default=None,
                    help="generator negatives (default: experiments/training/data/world-negatives-s<seed>-train<N>.json.gz)")
    ap.add_argument("--rows", default=",".join(ROWS))
    ap.add_argument("--seeds", default=None)
    ap.add_argument("--world-seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--train", type=int, default=None, help="training scenes (default: the profile's)")
    ap.add_argument("--image-size", default="32", help="the video tower's input size: 32, 64, or 'auto' (probe "
                    "both, train at the smaller one that has the most attributes within reach)")
    ap.add_argument("--probe-sizes", default=None, help="image sizes to probe (default: --image-size, or 32,64)")
    ap.add_argument("--no-probe", action="store_true")
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--workers", type=int, default=None, help="processes building the world (default: the cores)")
    ap.add_argument("--jobs", type=int, default=1, help="training runs at once (processes; a GPU has room for several)")
    ap.add_argument("--threads", type=int, default=None, help="torch threads per run (fixed for bit-for-bit reruns)")
    ap.add_argument("--max-run-s", type=float, default=None, help="stop a run's training after this many seconds "
                    "(recorded as 'time budget' in results.json: such a run is not reproducible bit for bit)")
    ap.add_argument("--budget-s", type=float, default=None, help="whole-command budget: every run stops training "
                    "(at its next validation) once it is near, keeping time for the statistics (recorded as 'time budget')")
    ap.add_argument("--resamples", type=int, default=10000)
    args = ap.parse_args(argv)

    if args.report:
        raw = args.report.read_bytes()
        if args.report.suffix == ".gz":
            import gzip

            raw = gzip.decompress(raw)
        res = json.loads(raw)
        print(report(res))
        return 0
    import torch

    from hardneg.io import atomic_write_text
    from training_world import default_workers, make_generator_negatives

    profile = dict(PROFILES["quick" if args.quick else "scale" if args.scale else args.profile or "cpu"])
    if args.train:
        profile["train"] = args.train
    if args.steps:
        profile["steps"] = args.steps
    here = Path(__file__).resolve().parent
    negatives = args.negatives or here / "data" / f"world-negatives-s{args.world_seed}-train{profile['train']}.json.gz"
    if args.make_negatives:
        from hardneg.world import sample_scene

        caps = [sample_scene(args.world_seed, "train", i).text for i in range(profile["train"])]
        print(make_generator_negatives(caps, args.make_negatives))
        return 0
    if not negatives.is_file():  # a larger world's file holds every caption of a smaller one
        bigger = sorted(here.glob(f"data/world-negatives-s{args.world_seed}-train*.json.gz"))
        negatives = bigger[-1] if bigger else negatives
    threads = args.threads or (1 if args.jobs > 1 else torch.get_num_threads())
    torch.set_num_threads(threads)
    seeds = [int(s) for s in (args.seeds or profile["seeds"]).split(",")]
    workers = args.workers or default_workers()
    auto = args.image_size == "auto"
    image_size = 32 if auto else int(args.image_size)
    cfg = {"device": args.device, "image_size": image_size, "dim": args.dim, "lr": args.lr,
           "batch_size": profile["batch_size"], "steps": profile["steps"], "eval_every": profile["eval_every"],
           "patience": profile["patience"], "probe_steps": profile["probe_steps"], "resamples": args.resamples,
           "max_run_s": args.max_run_s}
    if args.budget_s:
        cfg["deadline"] = time.time() + args.budget_s - 60  # the statistics and saving take under a minute
    args.out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    data = prepare(profile, args.world_seed, workers, negatives, image_size)
    t_prep = time.perf_counter() - t0
    print(f"world: {profile['train']} train / {profile['val']} val / {profile['test']} test scenes in {t_prep:.0f}s "
          f"({workers} workers); pools {data.meta['pool_sizes']}", flush=True)
    results: dict[str, Any] = {
        "profile": profile, "config": {k: v for k, v in cfg.items()}, "seeds": seeds, "threads": threads,
        "jobs": args.jobs, "world_seed": args.world_seed, "negatives_file": str(negatives) if negatives.is_file() else None,
        "data": {k: v for k, v in data.meta.items() if k not in ("arrays", "vocabulary")},
        "device": torch.cuda.get_device_name(0) if args.device.startswith("cuda") else f"cpu ({threads} threads)",
        "versions": {"torch": torch.__version__}, "probes": [], "runs": [], "timings_s": {"prepare": round(t_prep, 1)}}

    def save() -> None:
        atomic_write_text(args.out / "results.json", json.dumps(results, indent=1, default=float) + "\n")

    if not args.no_probe:
        sizes = args.probe_sizes or ("32,64" if auto else str(image_size))
        for size in [int(s) for s in sizes.split(",")]:
            pr = probe(data, cfg, size)
            results["probes"].append(pr)
            print(f"\nProbe at {size} px ({pr['seconds']}s):\n\n" + probe_table(pr), flush=True)
            save()
    if auto and results["probes"]:
        reach = {pr["image_size"]: sum(a["learnable"] for a in pr["attributes"].values()) for pr in results["probes"]}
        cfg["image_size"] = min(reach, key=lambda k: (-reach[k], k))
        results["config"]["image_size"] = cfg["image_size"]
        print(f"image size: {cfg['image_size']} px (attributes within reach per size: {reach})", flush=True)
    wanted = [k for k in args.rows.split(",") if k]
    unknown = [k for k in wanted if k not in ROWS]
    if unknown:
        raise SystemExit(f"--rows: unknown {unknown}; choose from {list(ROWS)}")
    runnable = [k for k in wanted if ROWS[k][2] is None or f"pool_{ROWS[k][2]}" in data.a]
    if "eq1-zero" in runnable and "eq1-oracle" in runnable and data.meta["oracle_true_action_swaps"] == 0:
        runnable.remove("eq1-zero")  # the oracle labels every swap 0: the two rows are the same run
        results["eq1_zero_skipped"] = "the oracle teacher labels every action swap 0, so Eq. 1 without a teacher is the same run"
        print(f"  {results['eq1_zero_skipped']}", flush=True)
    jobs = [(k, s, cfg) for s in seeds for k in runnable]
    t1 = time.perf_counter()

    def finished(r: dict[str, Any]) -> None:
        results["runs"].append(r)
        print(f"  {ROWS[r['row']][0]}, seed {r['seed']}: best step {r['best_step']} (val {100 * r['val_accuracy']:.1f}%), "
              f"{r['steps_run']} steps, {r['seconds']}s, stopped by {r['stopped']}", flush=True)
        save()

    if args.jobs > 1:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor, as_completed

        folder = args.out / "data"
        data.save(folder)
        with ProcessPoolExecutor(args.jobs, mp_context=mp.get_context("spawn"), initializer=_worker_init,
                                 initargs=(str(folder), threads)) as pool:
            futures = {pool.submit(_worker_run, j): j for j in jobs}
            for f in as_completed(futures):
                try:
                    finished(f.result())
                except Exception as exc:  # one failed run must not lose the others: recorded, reported
                    key, seed, _ = futures[f]
                    results.setdefault("failed_runs", []).append({"row": key, "seed": seed, "error": repr(exc)[:500]})
                    print(f"  {key}, seed {seed}: FAILED {exc!r}"[:600], flush=True)
                    save()
    else:
        for j in jobs:
            finished(train_run(data, *j))
    results["timings_s"]["training"] = round(time.perf_counter() - t1, 1)
    results["runs"].sort(key=lambda r: (list(ROWS).index(r["row"]), r["seed"]))
    results["summary"] = summarize(data, results["runs"], args.resamples)
    save()
    print("\n" + experiment_table(results["summary"]) + "\n\n" + category_table(results["summary"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
