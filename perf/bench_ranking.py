"""Side-by-side timing of the ranking core against IR/ML metric libraries.

One process, the same synthetic scores for everyone. Each library's input conversion
(dicts, DataFrames, tensors, sorted arrays) is timed apart from its compute, and the
ratio uses conversion + compute. Also printed: the time to read the scores once
(``scores.sum()``) and one NumPy comparison pass, the floor any exact method pays.

    python perf/bench_ranking.py            # the issue's sizes
    python perf/bench_ranking.py --quick    # smaller sizes; all anchors: ~8 min on 2 busy cores
    python perf/bench_ranking.py --skip-slow  # drop ir_measures, ranx (dict), torchmetrics on big cases
    python perf/bench_ranking.py --quick --skip-slow --slow-limit 0   # ~1 min

Tie-free random float32 scores, so every library computes the same quantity; the
"value" column shows one shared measure from each as a cross-check.
"""

from __future__ import annotations

import argparse
import gc
import time

import numpy as np

from hardneg.ranking import Qrels, multiple_choice, retrieval

SLOW_ANCHORS = ("ir_measures", "ranx (dict)", "torchmetrics")


def best_of(fn, repeat):
    """(best seconds, last result) over ``repeat`` calls."""
    best, out = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


# --- multiple choice -------------------------------------------------------------------------

def mc_anchors(scores, positive):
    """name -> (convert() -> inputs, compute(inputs) -> shared value (MRR or R@1), measures)."""
    n, c = scores.shape
    rows = np.arange(n)

    def sk_convert():
        return None  # takes the NumPy arrays as they are

    def sk_compute(_):
        from sklearn.metrics import top_k_accuracy_score

        out = [top_k_accuracy_score(positive, scores, k=k, labels=np.arange(c)) for k in (1, 2)]
        return out[0]

    def tm_convert():
        import torch

        return torch.from_numpy(scores), torch.from_numpy(positive)

    def tm_compute(inputs):
        from torchmetrics.functional.classification import multiclass_accuracy

        preds, target = inputs
        out = [float(multiclass_accuracy(preds, target, num_classes=c, top_k=k, average="micro")) for k in (1, 2)]
        return out[0]

    def trec_convert():
        qrels = {str(i): {str(int(positive[i])): 1} for i in range(n)}
        run = {str(i): {str(j): float(v) for j, v in enumerate(row)} for i, row in enumerate(scores.tolist())}
        return qrels, run

    def trec_compute(inputs):
        import pytrec_eval

        qrels, run = inputs
        res = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank", "success"}).evaluate(run)
        return float(np.mean([r["success_1"] for r in res.values()]))

    def irm_convert():
        import pandas as pd

        qrels = pd.DataFrame({"query_id": rows.astype(str), "doc_id": positive.astype(str), "relevance": 1})
        run = pd.DataFrame(
            {
                "query_id": np.repeat(rows, c).astype(str),
                "doc_id": np.tile(np.arange(c), n).astype(str),
                "score": scores.ravel().astype(np.float64),
            }
        )
        return qrels, run

    def irm_compute(inputs):
        import ir_measures
        from ir_measures import RR, Success

        agg = ir_measures.calc_aggregate([RR, Success @ 1, Success @ 2], *inputs)
        return agg[Success @ 1]

    def ranx_convert():
        qrels = np.stack([positive.astype(np.float64), np.ones(n)], axis=1)[:, None, :]
        order = np.argsort(-scores, axis=1, kind="stable")
        run = np.stack([order.astype(np.float64), np.take_along_axis(scores, order, 1).astype(np.float64)], axis=2)
        return qrels, run

    def ranx_compute(inputs):
        import ranx

        return ranx.evaluate(*inputs, ["mrr", "hit_rate@1", "hit_rate@2"])["hit_rate@1"]

    def ranx_dict_convert():
        import ranx

        qrels, run = trec_convert()
        return ranx.Qrels(qrels), ranx.Run(run)

    return {
        "scikit-learn": (sk_convert, sk_compute, "R@1,R@2 (top_k_accuracy_score; its MRR, LRAP, loops per row)"),
        "ranx (dict)": (ranx_dict_convert, ranx_compute, "mrr,hit_rate@1,2 (ranx.Qrels/Run from dicts)"),
        "torchmetrics": (tm_convert, tm_compute, "R@1,R@2 (top-k accuracy)"),
        "pytrec_eval": (trec_convert, trec_compute, "MRR,success@1,5,10"),
        "ir_measures": (irm_convert, irm_compute, "RR,Success@1,2"),
        "ranx": (ranx_convert, ranx_compute, "mrr,hit_rate@1,2 (NumPy arrays, rows argsorted)"),
    }


def import_anchors(skip):
    """Import every anchor library up front so import time is not counted as conversion."""
    import importlib

    for name, module in (
        ("scikit-learn", "sklearn.metrics"),
        ("torchmetrics", "torchmetrics.retrieval"),
        ("torchmetrics", "torchmetrics.functional.classification"),
        ("pytrec_eval", "pytrec_eval"),
        ("ir_measures", "ir_measures"),
        ("ranx", "ranx"),
        ("ranx", "pandas"),
    ):
        if name not in skip:
            importlib.import_module(module)


def warm_up_ranx():
    """Compile ranx's numba kernels once, outside the timings."""
    import ranx

    q = np.array([[[0.0, 1.0]]])
    r = np.array([[[0.0, 0.5], [1.0, 0.2]]])
    ranx.evaluate(q, r, ["mrr", "hit_rate@1", "map"])
    ranx.evaluate(ranx_typed([np.array([[0.0, 1.0]])]), r, ["map", "hit_rate@1"])


def ranx_typed(arrays):
    from numba.typed import List

    out = List()
    for a in arrays:
        out.append(a)
    return out


# --- retrieval -------------------------------------------------------------------------------

def retrieval_anchors(scores, q_idx, d_idx):
    n_q, n_v = scores.shape

    def sk_convert():
        dense = np.zeros(scores.shape, dtype=bool)
        dense[q_idx, d_idx] = True
        return dense

    def sk_compute(dense):
        from sklearn.metrics import label_ranking_average_precision_score

        return label_ranking_average_precision_score(dense, scores)

    def tm_convert():
        import torch

        dense = np.zeros(scores.shape, dtype=bool)
        dense[q_idx, d_idx] = True
        preds = torch.from_numpy(scores.ravel())
        target = torch.from_numpy(dense.ravel())
        indexes = torch.arange(n_q).repeat_interleave(n_v)
        return preds, target, indexes

    def tm_compute(inputs):
        from torchmetrics.retrieval import RetrievalHitRate, RetrievalMAP

        value = None
        for metric in [RetrievalMAP()] + [RetrievalHitRate(top_k=k) for k in (1, 5, 10)]:
            metric.update(*inputs)
            out = float(metric.compute())
            value = out if value is None else value
        return value

    def trec_convert():
        qrels: dict[str, dict[str, int]] = {}
        for qi, di in zip(q_idx.tolist(), d_idx.tolist()):
            qrels.setdefault(str(qi), {})[str(di)] = 1
        docs = [str(j) for j in range(n_v)]
        run = {str(i): dict(zip(docs, row)) for i, row in enumerate(scores.astype(np.float64).tolist())}
        return qrels, run

    def trec_compute(inputs):
        import pytrec_eval

        qrels, run = inputs
        res = pytrec_eval.RelevanceEvaluator(qrels, {"map", "success"}).evaluate(run)
        return float(np.mean([r["map"] for r in res.values()]))

    def irm_convert():
        import pandas as pd

        qrels = pd.DataFrame({"query_id": q_idx.astype(str), "doc_id": d_idx.astype(str), "relevance": 1})
        run = pd.DataFrame(
            {
                "query_id": np.repeat(np.arange(n_q), n_v).astype(str),
                "doc_id": np.tile(np.arange(n_v), n_q).astype(str),
                "score": scores.ravel().astype(np.float64),
            }
        )
        return qrels, run

    def irm_compute(inputs):
        import ir_measures
        from ir_measures import AP, Success

        agg = ir_measures.calc_aggregate([AP, Success @ 1, Success @ 5, Success @ 10], *inputs)
        return agg[AP]

    def ranx_convert():
        bounds = np.searchsorted(q_idx, np.arange(n_q + 1))
        pairs = np.stack([d_idx.astype(np.float64), np.ones(d_idx.size)], axis=1)
        qrels = ranx_typed([pairs[bounds[i] : bounds[i + 1]] for i in range(n_q)])
        order = np.argsort(-scores, axis=1, kind="stable")
        run = np.stack([order.astype(np.float64), np.take_along_axis(scores, order, 1).astype(np.float64)], axis=2)
        return qrels, run

    def ranx_compute(inputs):
        import ranx

        return ranx.evaluate(*inputs, ["map", "hit_rate@1", "hit_rate@5", "hit_rate@10"])["map"]

    def ranx_dict_convert():
        import ranx

        qrels, run = trec_convert()
        return ranx.Qrels(qrels), ranx.Run(run)

    return {
        "scikit-learn": (sk_convert, sk_compute, "mAP (LRAP); no C@K"),
        "ranx (dict)": (ranx_dict_convert, ranx_compute, "map,hit_rate@1,5,10 (ranx.Qrels/Run from dicts)"),
        "torchmetrics": (tm_convert, tm_compute, "mAP,C@1,5,10"),
        "pytrec_eval": (trec_convert, trec_compute, "map,success@1,5,10"),
        "ir_measures": (irm_convert, irm_compute, "AP,Success@1,5,10"),
        "ranx": (ranx_convert, ranx_compute, "map,hit_rate@1,5,10 (typed lists + argsorted arrays)"),
    }


# --- driver --------------------------------------------------------------------------------------

def run_case(title, n_entries, core_fn, core_value, floor, anchors, args, value_name):
    print(f"\n== {title} ==")
    t_read, _ = best_of(floor[0], args.repeat)
    t_pass, _ = best_of(floor[1], args.repeat)
    t_core, res = best_of(core_fn, args.repeat)
    print(f"  read scores once (scores.sum())      {t_read * 1e3:10.2f} ms")
    print(f"  one NumPy comparison pass            {t_pass * 1e3:10.2f} ms")
    print(f"  hardneg core (all measures)          {t_core * 1e3:10.2f} ms   {value_name}={core_value(res):.6f}")
    print(f"    core / read once = {t_core / t_read:7.1f}x    core / one pass = {t_core / t_pass:6.2f}x")
    print(f"  {'anchor':<14}{'convert ms':>12}{'compute ms':>12}{'total ms':>12}{'anchor/core':>13}  {value_name:<9} measures")
    totals = {}
    for name, (convert, compute, measures) in anchors.items():
        if name in args.skip or name.split(" ")[0] in args.skip or (args.skip_slow and name in SLOW_ANCHORS and n_entries > args.slow_limit):
            print(f"  {name:<14}{'skipped':>12}")
            continue
        try:
            t_conv, inputs = best_of(convert, 1)
            t_comp, value = best_of(lambda: compute(inputs), 1)
        except Exception as exc:  # an anchor failing must not hide the others
            print(f"  {name:<14} failed: {type(exc).__name__}: {exc}")
            continue
        del inputs
        total = t_conv + t_comp
        totals[name] = total
        print(
            f"  {name:<14}{t_conv * 1e3:12.1f}{t_comp * 1e3:12.1f}{total * 1e3:12.1f}{total / t_core:12.1f}x"
            f"  {value:.6f}  {measures}"
        )
    if totals:
        fastest = min(totals, key=totals.get)
        print(f"  fastest anchor: {fastest}; core is {totals[fastest] / t_core:.1f}x faster (target >= 20x)")
    return {"core": t_core, "read": t_read, "pass": t_pass, **totals}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller sizes (MC 100k x 6, 20k x 21; retrieval 3,000 x 670, 1,000 x 1,000)")
    parser.add_argument("--skip-slow", action="store_true", help="skip ir_measures, ranx (dict) and torchmetrics (minutes each at full size) on cases above --slow-limit score entries")
    parser.add_argument("--slow-limit", type=int, default=2_000_000, help="score entries above which --skip-slow applies (default 2,000,000)")
    parser.add_argument("--skip", default="", help="comma-separated anchors to skip, e.g. ir_measures,pytrec_eval")
    parser.add_argument("--repeat", type=int, default=7, help="best-of repeats for the core and the floors (anchors run once)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    args.skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    rng = np.random.default_rng(args.seed)
    import_anchors(args.skip)
    if "ranx" not in args.skip:
        warm_up_ranx()

    mc_sizes = [(100_000, 6), (20_000, 21)] if args.quick else [(1_000_000, 6), (100_000, 21)]
    ret_sizes = [(3_000, 670), (1_000, 1_000)] if args.quick else [(27_763, 670), (1_000, 1_000)]
    for n, c in mc_sizes:
        scores = rng.random((n, c), dtype=np.float32)
        positive = rng.integers(0, c, n)
        rows = np.arange(n)
        run_case(
            f"multiple choice {n:,} x {c}: R@1, R@2, MeanR, MedianR, MRR (ties='expected')",
            scores.size,
            lambda: multiple_choice(scores, positive, ks=(1, 2)),
            lambda r: r["R@1"],
            (lambda: scores.sum(), lambda: (scores > scores[rows, positive][:, None]).sum(axis=1)),
            mc_anchors(scores, positive),
            args,
            "R@1",
        )
    for n_q, n_v in ret_sizes:
        scores = rng.random((n_q, n_v), dtype=np.float32)
        n_pos = rng.integers(1, 41, n_q)
        q_idx = np.repeat(np.arange(n_q), n_pos)
        d_idx = np.concatenate([rng.choice(n_v, k, replace=False) for k in n_pos])
        order = np.lexsort((d_idx, q_idx))
        q_idx, d_idx = q_idx[order], d_idx[order]
        qrels = Qrels(q_idx, d_idx)
        first = np.zeros(n_q, dtype=np.int64)
        run_case(
            f"retrieval {n_q:,} x {n_v:,} (1-40 positives/query): C@1, C@5, C@10, mAP (ties='expected')",
            scores.size,
            lambda: retrieval(scores, qrels, ks=(1, 5, 10)),
            lambda r: r["mAP"],
            (lambda: scores.sum(), lambda: (scores > scores[np.arange(n_q), first][:, None]).sum(axis=1)),
            retrieval_anchors(scores, q_idx, d_idx),
            args,
            "mAP",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
