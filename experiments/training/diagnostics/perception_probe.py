"""Issue 50: can the tiny-temporal video tower learn one slot of the scene from its pixels at all? It is trained
with direct supervision (a linear head, cross-entropy on the slot's word) on the controls world's 2,000 training
scenes and scored on 500 test scenes: the ceiling of what any caption objective can teach it at that size.

    OMP_NUM_THREADS=1 python experiments/training/diagnostics/perception_probe.py SLOT SIZE STEPS
    SLOT: verb (first event), verb2, manner (slowly/quickly), relation, colour (first object), shape"""
import json
import sys
import time

import numpy as np
import torch

from probe_world import frames_at, load_world
from hardneg.models.trainable import TinyTemporal
from hardneg.world.grammar import parse

SLOTS = {"verb": lambda c: c.e1.verb, "verb2": lambda c: c.e2.verb, "manner": lambda c: c.e1.manner,
         "relation": lambda c: c.relation, "colour": lambda c: c.a.colour, "shape": lambda c: c.a.shape}


def main():
    slot, size, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    torch.set_num_threads(1)
    d = load_world()
    z = frames_at(d, size)
    voc, T = d.meta["vocabulary"], d.a["tokens"]

    def word(r):
        return SLOTS[slot](parse(" ".join(voc[t] for t in T[r] if not voc[t].startswith("<")).replace(" ,", ",")))

    ytr = [word(r) for r in d.a["train_caption"]]
    yte = [word(r) for r in d.a["test_caption"][:500]]
    classes = sorted(set(ytr))
    ytr = torch.tensor([classes.index(v) for v in ytr])
    yte = torch.tensor([classes.index(v) if v in classes else -1 for v in yte])
    torch.manual_seed(0)
    net = TinyTemporal(voc, dim=16, image_size=size, n_frames=8)
    head = torch.nn.Linear(16, len(classes))
    opt = torch.optim.AdamW(list(net.parameters()) + list(head.parameters()), lr=1e-3, weight_decay=0.01)
    ftr, fte = torch.from_numpy(z["train"]), torch.from_numpy(z["test"][:500])
    t0 = time.time()
    for s in range(steps):
        idx = torch.from_numpy(np.random.default_rng([0, s]).choice(len(ftr), 8, replace=False))
        loss = torch.nn.functional.cross_entropy(head(net.encode_prepared(ftr[idx])[0]), ytr[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if (s + 1) % max(1, steps // 3) == 0:
            with torch.no_grad():
                acc = (head(net.encode_prepared(fte)[0]).argmax(1) == yte).float().mean().item()
            print(json.dumps({"slot": slot, "size": size, "step": s + 1, "classes": len(classes),
                              "majority": round(float(np.bincount(ytr.numpy()).max() / len(ytr)), 3),
                              "test_acc": round(acc, 3), "s": round(time.time() - t0)}), flush=True)


if __name__ == "__main__":
    main()
