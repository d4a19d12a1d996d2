"""Issue 50: after K steps of coarse training, how large is the gradient of PoSRank's Eq. 3 term (world
word-level negatives, N = 1) beside the coarse term's, per tower, and how much does it point the same way?
Mean over the next 40 batches of the norms and of the cosine between the two gradients.

    OMP_NUM_THREADS=1 python experiments/training/diagnostics/gradient_probe.py K"""
import json
import sys

import numpy as np
import torch

from probe_world import frames_at, load_world
import training_design as D
from hardneg.models.trainable import TinyTemporal


def main():
    k = int(sys.argv[1])
    torch.set_num_threads(1)
    d = load_world()
    ftr, tok = torch.from_numpy(frames_at(d, 16)["train"]), torch.from_numpy(d.a["tokens"])
    cfg = {"batch": 8, "n_per_pos": 1}
    torch.manual_seed(0)
    net = TinyTemporal(d.meta["vocabulary"], dim=16, image_size=16, n_frames=8)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=0.01)

    def terms(step):
        b = {n: torch.from_numpy(v) for n, v in D.batch_for(d, "world-word", 0, step, cfg).items()}
        cls, _ = D.encode_video(net, ftr[b["idx"]])
        return D.member_losses(cls, cls, D._encode_text(net, tok, b["pos"]), D._encode_text(net, tok, b["neg"]),
                               b["mask"], b["labels"], b["teacher"], net.temperature())

    for s in range(k):
        loss = terms(s)[0]
        opt.zero_grad()
        loss.backward()
        opt.step()
    towers = {"video": ("frame_cnn", "video", "cls", "time_pos"), "text": ("word", "text")}
    params = {t: [p for n, p in net.named_parameters() if n.startswith(pre)] for t, pre in towers.items()}
    got = {t: {"coarse": [], "eq3": [], "cos": []} for t in towers}
    for s in range(k, k + 40):
        out = terms(s)
        for t, ps in params.items():
            gc = torch.cat([g.flatten() for g in torch.autograd.grad(out[0], ps, retain_graph=True)])
            gf = torch.cat([g.flatten() for g in torch.autograd.grad(out[1], ps, retain_graph=True)])
            got[t]["coarse"].append(gc.norm().item())
            got[t]["eq3"].append(gf.norm().item())
            got[t]["cos"].append(torch.nn.functional.cosine_similarity(gc, gf, 0).item())
    print(json.dumps({"K": k, **{t: {n: round(float(np.mean(v)), 3) for n, v in r.items()} for t, r in got.items()}}))


if __name__ == "__main__":
    main()
