"""Issue 50 positive-control probe (docs/training.md, "The controls run"): train one row alone and print PoSRank
and the coarse / Eq. 3 terms 4 times. Needs the controls inputs (run.py --profile controls prepares them).

    OMP_NUM_THREADS=1 python experiments/training/diagnostics/positive_probe.py ROW LAMBDA N STEPS SEED NTEST
    (EVAL=train: score the first NTEST training scenes against their own training negatives; DIM=64: wider)"""
import sys, time, json, numpy as np
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1]))
import torch; torch.set_num_threads(1)
import training_design as D
from training_runner import PROFILES, prepare_inputs
from run import default_negatives, HERE
row, lam, N, steps, seed, ntest = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
data = prepare_inputs(PROFILES["controls"], 0, 1, default_negatives(0), HERE / "work" / "controls" / "data")
import os
if os.environ.get("EVAL") == "train":  # PoSRank on the first ntest TRAINING scenes (their own training negatives)
    data.a["test_posrank"] = data.a["pool_world"][:ntest].copy()
    data.a["test_caption"] = data.a["train_caption"][:ntest].copy()
    data.a["test_frames"] = data.a["train_frames"][:ntest].copy()
for k in ("test_posrank", "test_caption", "test_frames"):
    data.a[k] = data.a[k][:ntest]
D.LAMBDA = lam
cfg = {**PROFILES["controls"], "n_per_pos": N, "device": "cpu", "dim": int(os.environ.get("DIM", 16))}
net = D.make_net(data.meta["vocabulary"], seed, cfg, False)
opt = torch.optim.AdamW(net.parameters(), lr=cfg["lr"], weight_decay=0.01)
fr = torch.from_numpy(data.a["train_frames"]); tok = torch.from_numpy(data.a["tokens"])
ft = torch.from_numpy(data.a["test_frames"])
def pr():
    r = D.posrank_ranks(net, data, "test", ft, tok, "cls")
    return np.round(np.nanmean(np.where(r > 0, 1 / np.maximum(r, 1), np.nan), 0), 3).tolist()
t0 = time.time(); eqs = []
for step in range(steps):
    b = {k: torch.from_numpy(v) for k, v in D.batch_for(data, row, seed, step, cfg).items()}
    # Eq. 3 term for monitoring (world negatives even for coarse: weights decide)
    loss = D.step_loss(net, fr, tok, b, False)
    opt.zero_grad(); loss.backward(); opt.step()
    if (step + 1) % (steps // 4) == 0:
        with torch.no_grad():
            bw = {k: torch.from_numpy(v) for k, v in D.batch_for(data, "world-word", seed, step, cfg).items()}
            cls, _ = D.encode_video(net, fr[bw["idx"]])
            out = D.member_losses(cls, cls, D._encode_text(net, tok, bw["pos"]), D._encode_text(net, tok, bw["neg"]),
                                  bw["mask"], bw["labels"], bw["teacher"], net.temperature())
        p = pr()
        print(json.dumps({"row": row, "lam": lam, "N": N, "seed": seed, "step": step + 1, "coarse": round(float(out[0]), 3),
                          "eq3": round(float(out[1]), 3), "posrank": p, "mean": round(float(np.mean(p)), 4),
                          "s": round(time.time() - t0)}), flush=True)
