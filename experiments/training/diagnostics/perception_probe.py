"""Issue 50: can the tiny-temporal video tower learn one slot of the scene from its pixels at all? It is trained
with direct supervision (a linear head, cross-entropy on the slot's word) on the controls world's 2,000 training
scenes and scored on 500 test scenes: the ceiling of what any caption objective can teach it at that size.

    OMP_NUM_THREADS=1 python experiments/training/diagnostics/perception_probe.py SLOT SIZE STEPS [SAVE]
    SLOT: verb (first event), verb2, manner (slowly/quickly), relation, colour (first object), shape, colour2,
    shape2, or "all": one head per slot, summed losses (a tower pretrained to see the scene, as the paper's
    models start from CLIP); SAVE: write the tower's state there (fine_term_probe.py --load)"""
import json
import sys
import time

import numpy as np
import torch

from probe_world import frames_at, load_world, parsed_caption
from hardneg.models.trainable import TinyTemporal

SLOTS = {"verb": lambda c: c.e1.verb, "verb2": lambda c: c.e2.verb, "manner": lambda c: c.e1.manner,
         "relation": lambda c: c.relation, "colour": lambda c: c.a.colour, "shape": lambda c: c.a.shape,
         "colour2": lambda c: c.b.colour, "shape2": lambda c: c.b.shape}


def main():
    slot, size, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    save = sys.argv[4] if len(sys.argv) > 4 else None
    torch.set_num_threads(1)
    d = load_world()
    net = pretrain(d, frames_at(d, size), sorted(SLOTS) if slot == "all" else [slot], (size, steps, 0),
                   lambda row: print(json.dumps(row), flush=True))
    if save:
        torch.save(net.state_dict(), save)


def pretrain(d, z: dict, slots: list[str], run: tuple[int, int, int], log) -> TinyTemporal:
    """Train a tiny-temporal's video tower and one linear head per slot on the slots' words (cross-entropy, summed);
    `run` = (frame size, steps, seed): the seed sets the initial weights and the batches. `log` gets each slot's test
    accuracy on 500 test scenes three times. Returns the net (its text tower untouched)."""
    size, steps, seed = run
    voc = d.meta["vocabulary"]
    ctr = [parsed_caption(d, r) for r in d.a["train_caption"]]
    cte = [parsed_caption(d, r) for r in d.a["test_caption"][:500]]
    classes = {s_: sorted({SLOTS[s_](c) for c in ctr}) for s_ in slots}
    ytr = {s_: torch.tensor([classes[s_].index(SLOTS[s_](c)) for c in ctr]) for s_ in slots}
    yte = {s_: torch.tensor([classes[s_].index(SLOTS[s_](c)) if SLOTS[s_](c) in classes[s_] else -1 for c in cte])
           for s_ in slots}
    torch.manual_seed(seed)
    net = TinyTemporal(voc, dim=16, image_size=size, n_frames=8)
    heads = torch.nn.ModuleDict({s_: torch.nn.Linear(16, len(classes[s_])) for s_ in slots})
    opt = torch.optim.AdamW(list(net.parameters()) + list(heads.parameters()), lr=1e-3, weight_decay=0.01)
    ftr, fte = torch.from_numpy(z["train"][:len(ctr)]), torch.from_numpy(z["test"][:500])
    t0 = time.time()
    for s in range(steps):
        idx = torch.from_numpy(np.random.default_rng([seed, s]).choice(len(ftr), 8, replace=False))
        v = net.encode_prepared(ftr[idx])[0]
        loss = sum(torch.nn.functional.cross_entropy(heads[s_](v), ytr[s_][idx]) for s_ in slots)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if (s + 1) % max(1, steps // 3) == 0:
            with torch.no_grad():
                v = net.encode_prepared(fte)[0]
                for s_ in slots:
                    acc = (heads[s_](v).argmax(1) == yte[s_]).float().mean().item()
                    log({"slot": s_, "size": size, "step": s + 1, "classes": len(classes[s_]),
                         "majority": round(float(np.bincount(ytr[s_].numpy()).max() / len(ctr)), 3),
                         "test_acc": round(acc, 3), "s": round(time.time() - t0)})
    return net


if __name__ == "__main__":
    main()
