"""Does the world leak the answer through the text? The blind baselines on the world's test split.

Builds the benchmark `world` from N test scenes (captions only: a text-only model needs no video),
scores every multiple-choice config with `blind-unigram` through the project's scorer, evaluates it
with the results engine (headline metrics, 95% cluster-bootstrap intervals, chance), and runs the
`blind-text` analysis (the unigram predictions and a surface-feature classifier trained with grouped
cross-validation), and two attacks that hold the whole test file (issue 28): the candidate that appears
most often across the files, and a bag-of-words model trained on train scenes. Each must be at chance
within its interval.

As an anchor it also builds PoSRank's own scheme on the same captions (`--anchor`): per part of
speech, negatives that change ANY word of that part of speech (every slot, antonyms first, up to 19),
still all verified false. There the positive is the one candidate that shares all but one word with
every other, and the surface classifier finds it: the reason the world changes one slot per item.

    python3 perf/bench_world_blind.py [--n 1000] [--seed 0] [--quick]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

#: the per-part-of-speech configs hold the same items as `posrank` (its groups below)
CONFIGS = ("posrank", "counterfactual", "temporal")


def subset(items, rows):
    from hardneg.analysis.inputs import MCItems

    pick = lambda xs: [x for x, keep in zip(xs, rows) if keep]  # noqa: E731
    return MCItems(ids=pick(items.ids), video_ids=pick(items.video_ids), captions=pick(items.captions),
                   label=items.label[rows], negative_types=pick(items.negative_types),
                   manipulated_index=pick(items.manipulated_index), category=pick(items.category),
                   provenance=pick(items.provenance))


def write_scenes(raw: Path, n: int, seed: int) -> None:
    import json

    from hardneg.world import sample_scene

    raw.mkdir(parents=True)
    (raw / "scenes.jsonl").write_text("".join(json.dumps(sample_scene(seed, "test", i).to_dict(), sort_keys=True) + "\n"
                                              for i in range(n)), encoding="utf-8")


def all_slot_items(n: int, seed: int):
    """PoSRank's scheme on the world's captions: any slot of the part of speech changes (verified false)."""
    from hardneg.analysis.inputs import MCItems
    from hardneg.world import check, render, sample_scene
    from hardneg.world.grammar import pos_of
    from hardneg.world.negatives import POS_ORDER, slot_alternatives

    ids, vids, caps = [], [], []
    for i in range(n):
        s = sample_scene(seed, "test", i)
        c = s.caption
        rng = np.random.default_rng([seed, i])
        for pos in POS_ORDER:
            alts = [(slot, w) for slot in c.filled_slots() if pos_of(slot) == pos for w in slot_alternatives(c, slot)]
            if not alts:
                continue
            order = rng.permutation(len(alts))
            negs = [render(c.with_slot(*alts[k])) for k in order][:19]
            assert all(check(s, t) == "false" for t in negs)
            ids.append(f"{pos}:{s.id}")
            vids.append(s.id)
            caps.append([s.text, *negs])
    n_items = len(ids)
    return MCItems(ids=ids, video_ids=vids, captions=caps, label=np.zeros(n_items, np.int64),
                   negative_types=[["positive"] + ["x"] * (len(c) - 1) for c in caps], manipulated_index=[None] * n_items,
                   category=[i.split(":")[0] for i in ids], provenance=[[] for _ in ids])


def pooled(n: int, seeds: int) -> None:
    """blind-unigram's accuracy per part of speech over `seeds` worlds of `n` scenes (binomial 95% interval):
    one world's 1,000 items per part of speech leave a 2-point interval; this one is about 3 times narrower."""
    from hardneg.models.blind import UnigramBlindModel
    from hardneg.world import render, sample_scene
    from hardneg.world.negatives import POS_ORDER, posrank_item

    model = UnigramBlindModel()
    print(f"\nblind-unigram pooled over worlds of seeds 0..{seeds - 1}, {n} test scenes each:")
    print("| part of speech | items | blind-unigram Accuracy % | chance % |\n|---|---|---|---|")
    for pos in POS_ORDER:
        wins, chance = [], []
        for seed in range(seeds):
            for i in range(n):
                scene = sample_scene(seed, "test", i)
                item = posrank_item(scene, pos)
                score = model.encode_text([scene.text] + [render(c.caption) for c in item.negatives])[:, 0]
                wins.append(float(score[0] > score[1:].max()))
                chance.append(1 / (1 + len(item.negatives)))
        p, half = float(np.mean(wins)), 1.96 * float(np.std(wins)) / np.sqrt(len(wins))
        print(f"| {pos} | {len(wins)} | {pct(p)} [{pct(p - half)}, {pct(p + half)}] | {pct(float(np.mean(chance)))} |")


def leak_attacks(built: Path, n: int, seed: int, resamples: int) -> list[str]:
    """Issue 28: two attacks that hold the whole test file, each with a 95% interval beside chance.

    * frequency: the candidate that appears most often across every config file of the build;
    * bag of words: a logistic regression on word counts, trained on items of n TRAIN scenes."""
    import pyarrow.parquet as pq

    from hardneg.ranking import bootstrap_ci
    from hardneg.world import sample_scene
    from hardneg.world.grammar import render_spans
    from hardneg.world.leakage import BagOfWords, chance, frequency_guess
    from hardneg.world.negatives import benchmark_item

    items, labels, videos = [], [], []
    for f in sorted(built.glob("*/test-*.parquet")):
        t = pq.read_table(f).to_pydict()
        if "captions" in t:
            items += t["captions"]
            labels += t["label"]
            videos += t["video_id"]
    train = []
    for i in range(n):
        it = benchmark_item(sample_scene(seed, "train", i))
        train.append([render_spans(it.positive)[0]] + [render_spans(c.caption)[0] for c in it.negatives])
    attacks = {"frequency across the test files": frequency_guess(items, labels),
               f"bag of words trained on {n} train scenes": BagOfWords().fit(train).score(items, labels)}
    ch = chance(items)
    print(f"\nText-only attacks holding every test file ({len(items)} items of all configs; ties count 1/k):")
    print("| attack | Accuracy (%) | minus chance (points) | chance (%) |\n|---|---|---|---|")
    flagged = []
    for name, hits in attacks.items():
        acc = bootstrap_ci(hits, np.asarray(videos), n_resamples=resamples)
        gap = bootstrap_ci(hits - ch, np.asarray(videos), n_resamples=resamples)
        print(f"| {name} | {pct(acc.estimate)} [{pct(acc.low)}, {pct(acc.high)}] | {100 * gap.estimate:+.1f} "
              f"[{100 * gap.low:+.1f}, {100 * gap.high:+.1f}] | {pct(float(ch.mean()))} |")
        if gap.low > 0:
            flagged.append(name)
    return flagged


def pct(v: float) -> str:
    return f"{100 * v:.1f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000, help="test scenes")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--no-anchor", action="store_true", help="skip PoSRank's all-slot scheme")
    ap.add_argument("--pooled-seeds", type=int, default=10,
                    help="also blind-unigram's part-of-speech accuracy pooled over this many worlds of N scenes")
    ap.add_argument("--quick", action="store_true", help="200 scenes, 200 resamples")
    args = ap.parse_args()
    if args.quick:
        args.n, args.resamples = 200, 200

    import pyarrow.parquet as pq

    from hardneg.analysis.blind_text import blind_text_check, surface_classifier_scores
    from hardneg.analysis.inputs import MCItems
    from hardneg.datasets import build_benchmark
    from hardneg.evaluation import evaluate_predictions
    from hardneg.scoring import score_benchmark

    work = Path(tempfile.mkdtemp(prefix="world-blind-"))
    write_scenes(work / "raw", args.n, args.seed)
    built = build_benchmark("world", work / "raw", work / "built").out
    print(f"World seed {args.seed}, {args.n} test scenes; blind-unigram scored with `hardneg score`, evaluated with "
          f"the results engine (95% intervals, {args.resamples} cluster resamples over videos, ties expected).")
    print("| config / group | items | blind-unigram Accuracy (%) | blind-unigram PoSRank (%) | surface classifier "
          "Accuracy (%) | chance Accuracy / PoSRank (%) |")
    print("|---|---|---|---|---|---|")
    flagged = []
    for config in CONFIGS:
        pred = work / f"unigram-{config}.parquet"
        score_benchmark("blind-unigram", str(built), config, pred, benchmark="world", progress=False)
        res = evaluate_predictions(pred, n_resamples=args.resamples, seed=0)
        items = MCItems.from_table(pq.read_table(next((built / config).glob("test-*.parquet"))))
        surface = surface_classifier_scores(items, seed=0)
        groups = [None] + sorted(set(items.category))
        for group in groups:
            rows = np.asarray([group is None or c == group for c in items.category])
            sub = subset(items, rows)
            v = blind_text_check(sub, {"surface": (surface[0][rows], surface[1][rows])},
                                 n_resamples=args.resamples).values["surface"]
            acc_key, rr_key = ("Accuracy", "PoSRank") if group is None else (f"Accuracy_{group}", f"PoSRank_{group}")
            cells, chances = [], []
            for key in (acc_key, rr_key):
                if key not in res["metrics"]:  # PoSRank is declared on the part-of-speech configs only
                    cells.append("–")
                    chances.append("–")
                    continue
                m, ch = res["metrics"][key], res["chance"][key]
                if not m["low"] <= ch <= m["high"]:
                    flagged.append(f"{config}/{group or 'all'} {key}")
                cells.append(f"{pct(m['value'])} [{pct(m['low'])}, {pct(m['high'])}]")
                chances.append(pct(ch))
            if v["verdict"] != "not distinguishable from chance":
                flagged.append(f"{config}/{group or 'all'} surface classifier")
            chance = " / ".join(chances)
            print(f"| {config}{'' if group is None else ' / ' + group} | {int(rows.sum())} | {cells[0]} | {cells[1]} | "
                  f"{pct(v['accuracy'])} [{pct(v['ci_low'])}, {pct(v['ci_high'])}] | {chance} |")
    if not args.no_anchor:
        items = all_slot_items(args.n, args.seed)
        s, mask = surface_classifier_scores(items, seed=0)
        v = blind_text_check(items, {"surface": (s, mask)}, n_resamples=args.resamples).values["surface"]
        print(f"| anchor: PoSRank's any-slot scheme | {len(items)} | | | {pct(v['accuracy'])} [{pct(v['ci_low'])}, "
              f"{pct(v['ci_high'])}] | {pct(v['chance'])} |")
    flagged += leak_attacks(built, args.n, args.seed, args.resamples)
    print("intervals that miss chance: " + (", ".join(flagged) if flagged else "none"))
    if args.pooled_seeds:
        pooled(args.n, args.pooled_seeds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
