"""Issue 50 negative control: PoSRank of i.i.d. random scores, random bag-of-words and position-word text
scorers, and untrained tiny-temporals, on 300 test scenes, beside H(K+1)/(K+1) (docs/training.md)."""
import sys, time, numpy as np
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1]))
import torch; torch.set_num_threads(1)
from training_runner import PROFILES
from training_design import prepare, POS, posrank_ranks, make_net
p = dict(PROFILES["controls"]); p.update(train=100, val=20, test=300)
data = prepare(p, 0, 1, None); a = data.a

cand = a["test_posrank"]; cap = a["test_caption"]; tok = a["tokens"]
K = (cand>=0).sum(2)
def H(k): return np.sum(1/np.arange(1,k+1))
chance = np.array([[H(k+1)/(k+1) for k in row] for row in K]).mean(0)
print("chance formula", chance.round(3))
def mrr_from_scores(s):  # s (n, ntexts) score per text per scene
    ids = np.concatenate([np.repeat(cap[:,None,None],5,1), cand],2)
    sc = np.take_along_axis(s[:,None,:].repeat(5,1), np.clip(ids,0,None), 2)
    above = ((sc[:,:,1:] >= sc[:,:,:1]) & (cand>=0)).sum(2)
    return (1/(1+above)).mean(0)
rng = np.random.default_rng(0)
n, T = len(cap), len(tok)
res = [mrr_from_scores(rng.random((n, T))) for _ in range(3)]
print("iid random scorer", np.mean(res,0).round(3))
V = tok.max()+1
res=[]
for r in range(5):
    w = rng.normal(size=V); w[0]=0
    s = w[tok].sum(1)  # blind bag-of-words scorer, same for every scene
    res.append(mrr_from_scores(np.repeat(s[None], n, 0)))
print("blind additive bag-of-words scorer", np.mean(res,0).round(3))
res=[]
for r in range(5):
    w = rng.normal(size=(tok.shape[1], V)); w[:,0]=0
    s = w[np.arange(tok.shape[1])[None], tok].sum(1)
    res.append(mrr_from_scores(np.repeat(s[None], n, 0)))
print("blind additive position-word scorer", np.mean(res,0).round(3))
frames = torch.from_numpy(a["test_frames"]); tokens = torch.from_numpy(tok)
from hardneg.models.trainable import build_vocabulary
from training_world import closed_vocabulary_texts
vocab = build_vocabulary(closed_vocabulary_texts())
res=[]
for seed in range(3):
    net = make_net(vocab, seed, p, False)
    r = posrank_ranks(net, data, "test", frames, tokens, "cls")
    res.append(np.where(r>0, 1/np.maximum(r,1), np.nan).mean(0))
print("untrained tiny-temporal", np.nanmean(res,0).round(3))
