"""Issue 50: can PoSRank's fine term teach the text tower colour words when nothing else trains? The video tower
is frozen at a state that sees colours (perception_probe.py all 16 3000 SAVE); only the text tower (and the
temperature) trains, on Eq. 3 with 4 adjective negatives per item ("withpos": the positive in the denominator;
"printed": as printed). Prints adjective PoSRank on 300 training and 300 test scenes.

    OMP_NUM_THREADS=1 python experiments/training/diagnostics/text_tower_probe.py MODE TOWER_STATE"""
import json
import sys

import numpy as np
import torch

from probe_world import frames_at, load_world
import training_design as D
from hardneg.models.trainable import TinyTemporal
import torch.nn.functional as F
d = load_world(); fr = frames_at(d, 16); tok = torch.from_numpy(d.a["tokens"])
torch.manual_seed(0)
net = TinyTemporal(d.meta["vocabulary"], dim=16, image_size=16, n_frames=8)
torch.set_num_threads(1)
net.load_state_dict(torch.load(sys.argv[2], weights_only=True))
mode = sys.argv[1]  # "withpos" or "printed"
with torch.no_grad():
    V = net.encode_prepared(torch.from_numpy(fr["train"]))[0]
    Vt = net.encode_prepared(torch.from_numpy(fr["test"][:300]))[0]
params = [p for n, p in net.named_parameters() if n.startswith(("word", "text"))] + [net.logit_scale]
opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01)
cap = d.a["train_caption"]; pw = d.a["pool_world"]
def adj_mrr(Vx, capx, pwx):
    with torch.no_grad():
        v = F.normalize(Vx, dim=-1)
        tp = F.normalize(D._encode_text(net, tok, torch.from_numpy(capx)), dim=-1)
        neg = pwx[:, 1, :]; ok = neg >= 0
        tn = F.normalize(D._encode_text(net, tok, torch.from_numpy(np.where(ok, neg, 0))), dim=-1)
        sp = (v * tp).sum(-1, keepdim=True); sn = torch.einsum("nd,nkd->nk", v, tn)
        above = ((sn >= sp) & torch.from_numpy(ok)).sum(1)
        return float((1 / (1 + above.float())).mean())
print(json.dumps({"mode": mode, "step": 0, "train_adj_mrr": round(adj_mrr(V[:300], cap[:300], pw[:300]), 3),
                  "test_adj_mrr": round(adj_mrr(Vt, d.a["test_caption"][:300], d.a["test_posrank"][:300]), 3)}), flush=True)
for step in range(1500):
    rng = np.random.default_rng([0, step]); idx = rng.choice(2000, 8, replace=False)
    p = pw[idx, 1, :]; keys = rng.random(p.shape); keys[p < 0] = np.inf
    pick = np.take_along_axis(p, np.argsort(keys, 1)[:, :4], 1); mask = pick >= 0
    v = F.normalize(V[idx], dim=-1)
    tp = F.normalize(D._encode_text(net, tok, torch.from_numpy(cap[idx])), dim=-1)
    tn = F.normalize(D._encode_text(net, tok, torch.from_numpy(np.where(mask, pick, 0))), dim=-1)
    lg = torch.cat([(v * tp).sum(-1, keepdim=True), torch.einsum("bd,bkd->bk", v, tn)], 1) / net.temperature()
    lg = lg.masked_fill(~torch.cat([torch.ones(8, 1, dtype=bool), torch.from_numpy(mask)], 1), -1e9)
    loss = -torch.log_softmax(lg, 1)[:, 0].mean() if mode == "withpos" else (torch.logsumexp(lg[:, 1:], 1) - lg[:, 0]).mean()
    opt.zero_grad(); loss.backward(); opt.step()
    if (step + 1) % 500 == 0:
        print(json.dumps({"mode": mode, "step": step + 1, "loss": round(float(loss.detach()), 3), "tau": round(float(net.temperature().detach()), 4),
                          "train_adj_mrr": round(adj_mrr(V[:300], cap[:300], pw[:300]), 3),
                          "test_adj_mrr": round(adj_mrr(Vt, d.a["test_caption"][:300], d.a["test_posrank"][:300]), 3)}), flush=True)
