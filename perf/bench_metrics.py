"""The `evaluate` metric modules against the ranking core they wrap, side by side in one process.

Same synthetic data for every contender. For each case it prints the core's time, the module's
`compute` time (input encoding, evaluate's Arrow cache write + read-back, the core call) and their
ratio; the target is a ratio under 5 on 1,000,000 x 6. A "naive" module (evaluate's default
per-example encoding of the same inputs, Python lists handed to `_compute`) shows what the
whole-batch Arrow path avoids.

    python perf/bench_metrics.py            # all cases (a few minutes on 2 cores)
    python perf/bench_metrics.py --quick    # 10x smaller, for a smoke run
"""

from __future__ import annotations

import argparse
import tempfile
import textwrap
import time
import uuid
from pathlib import Path

import evaluate
import numpy as np

from hardneg.metric_modules import metric_path
from hardneg.ranking import Qrels, bootstrap_ci, multiple_choice, retrieval

NAIVE_MODULE = '''
import datasets
import evaluate
import numpy as np

from hardneg.ranking import multiple_choice


class NaiveRcad(evaluate.Metric):
    """R@K the way a module is usually written: list features, evaluate's default encoding."""

    def _info(self):
        return evaluate.MetricInfo(
            description="naive baseline", citation="", inputs_description="",
            features=datasets.Features({"predictions": datasets.Sequence(datasets.Value("float64")),
                                        "references": datasets.Value("int64")}),
        )

    def _compute(self, predictions, references, ks=(1, 2)):
        r = multiple_choice(np.asarray(predictions), np.asarray(references), ks=ks)
        return {f"R@{k}": r.aggregate[f"R@{k}"] for k in ks}
'''


def best_of(fn, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def load(name_or_path: str):
    path = name_or_path if "/" in name_or_path else metric_path(name_or_path)
    return evaluate.load(path, experiment_id=uuid.uuid4().hex)


def row(case: str, core_s: float, module_s: float, note: str = "") -> None:
    print(f"{case:<46} {core_s:>9.3f} {module_s:>10.3f} {module_s / core_s:>7.2f}x  {note}")


def multiple_choice_cases(n: int, repeats: int, naive: bool) -> None:
    rng = np.random.default_rng(0)
    scores = rng.random((n, 6)).astype(np.float32)
    positive = rng.integers(0, 6, n)
    core_s, core = best_of(lambda: multiple_choice(scores, positive, ks=(1, 2)), repeats)
    rcad = load("rcad_accuracy")
    mod_s, out = best_of(lambda: rcad.compute(predictions=scores, references=positive, n_resamples=0), repeats)
    assert out["R@1"] == core.aggregate["R@1"] and out["R@2"] == core.aggregate["R@2"]
    row(f"rcad_accuracy R@1,R@2  {n:,} x 6", core_s, mod_s)

    mean_rank = load("mean_rank")
    mod_s, out = best_of(lambda: mean_rank.compute(predictions=scores, references=positive, n_resamples=0), repeats)
    assert out["MeanR"] == core.aggregate["MeanR"]
    row(f"mean_rank MeanR,MedianR  {n:,} x 6", core_s, mod_s)

    def streamed():
        step = 10_000
        for lo in range(0, n, step):
            rcad.add_batch(predictions=scores[lo : lo + step], references=positive[lo : lo + step])
        return rcad.compute(n_resamples=0)

    mod_s, out = best_of(streamed, 1)
    assert out["R@1"] == core.aggregate["R@1"]
    row(f"rcad_accuracy add_batch x{n // 10_000} + compute", core_s, mod_s, "streamed, 10,000 per batch")

    score_lists, positive_list = scores.tolist(), positive.tolist()
    lists_s, out = best_of(lambda: rcad.compute(predictions=score_lists, references=positive_list,
                                                n_resamples=0), 1)
    row(f"rcad_accuracy from Python lists  {n:,} x 6", core_s, lists_s, "input as list of lists")

    if naive:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "naive_rcad"
            folder.mkdir()
            (folder / "naive_rcad.py").write_text(textwrap.dedent(NAIVE_MODULE))
            naive_module = load(str(folder))
            naive_s, out = best_of(lambda: naive_module.compute(predictions=scores, references=positive), 1)
        assert out["R@1"] == core.aggregate["R@1"]
        row(f"naive evaluate module (baseline)  {n:,} x 6", core_s, naive_s, "per-example encoding")


def interval_case(n: int, n_resamples: int) -> None:
    """With intervals: the core's bootstrap_ci per score vs the module (one set of resamples for all scores)."""
    rng = np.random.default_rng(1)
    scores = rng.random((n, 6))
    positive = rng.integers(0, 6, n)
    videos = rng.integers(0, n // 4, n).astype(str)

    def core_with_ci():
        r = multiple_choice(scores, positive, ks=(1, 2))
        return {k: bootstrap_ci(r.per_example[k], videos, n_resamples=n_resamples, seed=0) for k in ("R@1", "R@2")}

    core_s, ci = best_of(core_with_ci, 1)
    rcad = load("rcad_accuracy")
    mod_s, out = best_of(lambda: rcad.compute(predictions=scores, references=positive, video_ids=videos,
                                              n_resamples=n_resamples, seed=0), 1)
    assert abs(out["R@1_ci"][0] - ci["R@1"].low) < 1e-9 and abs(out["R@1_ci"][1] - ci["R@1"].high) < 1e-9
    row(f"rcad_accuracy + {n_resamples} resamples  {n:,} x 6", core_s, mod_s, f"{n // 4:,} videos")


def retrieval_case(q: int, v: int, max_positives: int, repeats: int) -> None:
    rng = np.random.default_rng(2)
    scores = rng.random((q, v)).astype(np.float32)
    counts = rng.integers(1, max_positives + 1, q)
    relevant = [np.sort(rng.choice(v, size=int(c), replace=False)) for c in counts]
    original = np.array([r[0] for r in relevant])
    qrels = Qrels(np.repeat(np.arange(q), counts), np.concatenate(relevant))
    ks = (1, 5, 10)
    core_s, core = best_of(lambda: retrieval(scores, qrels, original=original, ks=ks), repeats)
    c_at_k = load("correct_at_k")
    mod_s, out = best_of(lambda: c_at_k.compute(predictions=scores, references=relevant, original=original,
                                                n_resamples=0), repeats)
    assert out["C@5"] == core.aggregate["C@5"]
    row(f"correct_at_k  {q:,} x {v:,} (1-{max_positives} pos.)", core_s, mod_s)
    mean_ap = load("mean_average_precision")
    mod_s, out = best_of(lambda: mean_ap.compute(predictions=scores, references=relevant, original=original,
                                                 n_resamples=0), repeats)
    assert out["mAP"] == core.aggregate["mAP"]
    row(f"mean_average_precision  {q:,} x {v:,}", core_s, mod_s)


def posrank_case(n: int, repeats: int) -> None:
    rng = np.random.default_rng(3)
    scores = rng.random((n, 21))
    positive = np.zeros(n, dtype=np.int64)
    pos = rng.choice(["noun", "verb", "adjective", "adverb", "preposition"], n)
    core_s, core = best_of(lambda: multiple_choice(scores, positive, ks=(1,), groups={"pos": pos}), repeats)
    module = load("posrank")
    mod_s, out = best_of(lambda: module.compute(predictions=scores, references=positive, pos=pos, n_resamples=0),
                         repeats)
    assert out["PoSRank_noun"] == core.by_group["pos"]["noun"]["MRR"]
    row(f"posrank  {n:,} x 21", core_s, mod_s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="10x smaller inputs (smoke run)")
    parser.add_argument("--repeats", type=int, default=3, help="best of this many runs per timing (default 3)")
    parser.add_argument("--no-naive", action="store_true", help="skip the naive baseline module (slowest part)")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    print(f"{'case':<46} {'core s':>9} {'module s':>10} {'ratio':>8}")
    multiple_choice_cases(1_000_000 // scale, args.repeats, not args.no_naive)
    posrank_case(100_000 // scale, args.repeats)
    retrieval_case(27_763 // scale, 670, 40, args.repeats)
    retrieval_case(1_000, 1_000, 40, args.repeats)
    interval_case(100_000 // scale, 1000)


if __name__ == "__main__":
    main()
