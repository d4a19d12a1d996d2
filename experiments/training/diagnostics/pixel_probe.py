"""Issue 50: a linear probe on the model's own 16 px prepared frames (the controls inputs): can a linear model read
the slot a word-level negative changes? Prints train and validation accuracy per slot."""
import sys, numpy as np, json
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1]))
from training_world import Data
from hardneg.world.grammar import parse
from sklearn.linear_model import LogisticRegression
d = Data.load(__import__("pathlib").Path(__file__).resolve().parents[1] / "work" / "controls" / "data")
voc = d.meta["vocabulary"]; tok = d.a["tokens"]
def text(r): return " ".join(voc[t] for t in tok[r] if not voc[t].startswith("<")).replace(" ,", ",")
X = d.a["train_frames"].reshape(len(d.a["train_frames"]), -1); Xv = d.a["val_frames"].reshape(len(d.a["val_frames"]), -1)
ct = [parse(text(r)) for r in d.a["train_caption"]]; cv = [parse(text(r)) for r in d.a["val_caption"]]
get = {"a.shape": lambda c: c.a.shape, "b.shape": lambda c: c.b.shape, "a.colour": lambda c: c.a.colour,
       "a.size": lambda c: c.a.size, "e1.verb": lambda c: c.e1.verb, "e2.verb": lambda c: c.e2.verb,
       "relation": lambda c: c.relation, "e1.manner": lambda c: c.e1.manner}
mean, sd = X.mean(0), X.std(0) + 1e-6
X, Xv = (X - mean) / sd, (Xv - mean) / sd
for k, f in get.items():
    y, yv = np.array([f(c) for c in ct]), np.array([f(c) for c in cv])
    vals, cnt = np.unique(y, return_counts=True)
    m = LogisticRegression(max_iter=300, C=0.01).fit(X, y)
    print(json.dumps({"slot": k, "classes": len(vals), "majority": round(cnt.max() / cnt.sum(), 3),
                      "train_acc": round(m.score(X, y), 3), "val_acc": round(m.score(Xv, yv), 3)}), flush=True)
