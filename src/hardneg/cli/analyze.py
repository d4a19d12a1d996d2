"""`hardneg analyze <analysis>`: run one of the papers' analyses and write JSON + PNG + a printed table.

Each analysis is a library function in `hardneg.analysis`; this module only reads
the built datasets and `hardneg score` predictions, calls it, and writes
OUT/<analysis>.json and OUT/<analysis>.png atomically (never over an existing
result unless --overwrite).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from hardneg.io import atomic_write_text, refuse_overwrite

DESCRIPTION = """Run one of the papers' analyses on your models and data.

FIRE (retrieval; inputs: the FIRE queries/videos/qrels Parquet files of one source dataset and
one predictions file per system from `hardneg score`, named NAME=PATH or by their model_id):
  label-correction    C@K and mAP as "A (B + C)": FIRE positives (A), original only (B), gain (C)  [Table 1]
  pooling-bias        all judgments vs only the other pooled systems' top-k judgments       [Table 4]
  judgment-budget     bootstrap N queries: 95th percentile of |deviation| from the full score [Sec. 4.3]
  overlap             top-k overlap and rank-biased overlap between every pair of systems    [Table 3]
  caption-length      known positives and each system's correctness by caption length        [Figs. 2-3]
Multiple choice (inputs: an MC_ITEM_SCHEMA items Parquet and predictions of it):
  contrast-breakdown  accuracy on verb-antonym negatives and on the 15% most/least similar  [contrast sets Table 5]
  sensitivity         distribution of ds = s(v, negative) - s(v, positive), object vs action [Feint6K Fig. 5]
  blind-text          text-only baselines (surface-feature classifier, text-only predictions) vs chance
  duplicates          share of captions identical to another after removing k words per POS [PoSRank Fig. 3]
Across benchmarks (inputs: one model's predictions files on several benchmarks or configs):
  cross-benchmark     R@1 on the videos all inputs share, and per pair both right / only one / both wrong

Writes OUT/<analysis>.json (table, parameters, details) and OUT/<analysis>.png, and prints the table.

examples:
  hardneg analyze label-correction --queries fire/msrvtt-queries/test.parquet --videos fire/msrvtt-videos/test.parquet \\
      --qrels fire/msrvtt-qrels/test.parquet --predictions clip4clip=preds/c4c.parquet tt=preds/tt.parquet --out analyses/
  hardneg analyze blind-text --items contrast_sets/verb_lm/test.parquet --predictions blind=preds/blind.parquet --out analyses/
  hardneg analyze duplicates --captions captions.txt --out analyses/
"""

FIRE_ANALYSES = ("label-correction", "pooling-bias", "judgment-budget", "overlap", "caption-length")
MC_ANALYSES = ("contrast-breakdown", "sensitivity", "blind-text")
ANALYSES = FIRE_ANALYSES + MC_ANALYSES + ("duplicates", "cross-benchmark")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", required=True, help="output folder for <analysis>.json and <analysis>.png")
    p.add_argument("--overwrite", action="store_true", help="replace existing results in --out")
    p.add_argument("--no-plot", action="store_true", help="write only the JSON")


def _fire_inputs(p: argparse.ArgumentParser, qrels_required: bool = True, min_systems: int = 1) -> None:
    p.add_argument("--queries", required=True, help="FIRE queries Parquet (QUERY_SCHEMA)")
    p.add_argument("--videos", required=True, help="FIRE videos Parquet (VIDEO_SCHEMA), the collection order")
    p.add_argument("--qrels", required=qrels_required, help="FIRE qrels Parquet (QREL_SCHEMA, source original|fire)")
    p.add_argument("--predictions", nargs="+", required=True, metavar="[NAME=]PATH",
                   help=f"retrieval predictions of {min_systems}+ systems (name defaults to the file's model_id)")
    p.add_argument("--ties", default="expected", help="tie rule of the ranking core (default expected; fire = original code)")


def _mc_inputs(p: argparse.ArgumentParser, predictions_required: bool = True) -> None:
    p.add_argument("--items", required=True, nargs="+", help="multiple-choice items Parquet file(s) (MC_ITEM_SCHEMA)")
    p.add_argument("--predictions", nargs="+", required=predictions_required, default=[], metavar="[NAME=]PATH",
                   help="predictions of these items (name defaults to the file's model_id)")
    p.add_argument("--ties", default="expected", help="tie rule of the ranking core (default expected)")


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "analyze",
        help="run one of the papers' analyses (FIRE, contrast sets, Feint6K, PoSRank)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="analysis", metavar="<analysis>", required=True)
    ks = dict(nargs="+", type=int, default=[1, 5, 10], help="cut-offs K of C@K (default 1 5 10)")

    p = sub.add_parser("label-correction", help="FIRE Table 1: A (B + C)")
    _fire_inputs(p)
    p.add_argument("--ks", **ks)
    _common(p)

    p = sub.add_parser("pooling-bias", help="FIRE Table 4: all vs other systems' judgments")
    _fire_inputs(p)
    p.add_argument("--ks", **ks)
    p.add_argument("--pool-from", choices=("auto", "column", "topk"), default="auto",
                   help="which pairs each system surfaced: the qrels' pooled_by/models column, or each system's "
                        "top-k in the given predictions (auto: the column when present)")
    p.add_argument("--pool-depth", type=int, default=10, help="pool depth k for --pool-from topk (default 10)")
    _common(p)

    p = sub.add_parser("judgment-budget", help="FIRE Sec. 4.3: bootstrap sample sizes")
    _fire_inputs(p)
    p.add_argument("--system", help="which system to analyse (default: the first predictions file)")
    p.add_argument("--metrics", nargs="+", default=["C@1", "C@5", "C@10", "AP"],
                   help="per-query values of the ranking core to re-sample (default C@1 C@5 C@10 AP)")
    p.add_argument("--sizes", nargs="+", type=int, default=[500, 1000, 3000], help="sample sizes N (default 500 1000 3000)")
    p.add_argument("--resamples", type=int, default=10_000, help="re-samples per N (default 10000)")
    p.add_argument("--quantile", type=float, default=0.95, help="quantile of |deviation| reported (default 0.95)")
    p.add_argument("--seed", type=int, default=0)
    _common(p)

    p = sub.add_parser("overlap", help="FIRE Table 3: top-k overlap and RBO")
    _fire_inputs(p, qrels_required=False, min_systems=2)
    p.add_argument("--k", type=int, default=10, help="depth of the compared top-k lists (default 10)")
    p.add_argument("--p", type=float, default=0.9, help="RBO persistence p (default 0.9)")
    _common(p)

    p = sub.add_parser("caption-length", help="FIRE Figs. 2-3: positives and correctness by caption length")
    _fire_inputs(p)
    p.add_argument("--unit", choices=("words", "chars"), default="words")
    p.add_argument("--bin-width", type=int, default=2, help="bin width in --unit (default 2)")
    p.add_argument("--metric", default="C@1", help="per-query correctness measure, C@K with FIRE positives (default C@1)")
    _common(p)

    p = sub.add_parser("contrast-breakdown", help="contrast sets Table 5: antonyms and High/Low similarity")
    _mc_inputs(p)
    p.add_argument("--sentence-encoder", nargs="*", default=None, metavar="MODEL",
                   help="sentence-transformers models for similarity (default all-MiniLM-L6-v2; give none to skip)")
    p.add_argument("--text-encoder", nargs="*", default=[], metavar="MODEL",
                   help="video-text models (hardneg.models names/ids) whose own text encoder also ranks similarity")
    p.add_argument("--fraction", type=float, default=0.15, help="share of most/least similar items (default 0.15)")
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap re-samples for the intervals")
    _common(p)

    p = sub.add_parser("sensitivity", help="Feint6K Fig. 5: object vs action swaps")
    _mc_inputs(p)
    p.add_argument("--kind", nargs="*", default=[], metavar="TYPE=KIND",
                   help="map a negative type to a kind of swap (defaults: noun/id/gender=object, "
                        "verb/verb_lm/verb_human/counterfactual=action)")
    _common(p)

    p = sub.add_parser("blind-text", help="text-only baselines vs chance")
    _mc_inputs(p, predictions_required=False)
    p.add_argument("--no-classifier", action="store_true", help="skip the surface-feature classifier")
    p.add_argument("--folds", type=int, default=5, help="cross-validation folds (grouped by video; default 5)")
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap re-samples for the intervals")
    p.add_argument("--seed", type=int, default=0)
    _common(p)

    p = sub.add_parser("duplicates", help="PoSRank Fig. 3: captions identical after removing k words")
    p.add_argument("--captions", required=True,
                   help="captions: a .txt (one per line, or the PoSRank `<video>##*##<i>**#**<caption>` lines), "
                        "an MC items Parquet (its positives) or a queries Parquet (text)")
    p.add_argument("--max-removed", type=int, default=4, help="largest k (default 4)")
    p.add_argument("--pos", nargs="+", default=None, help="parts of speech (default noun verb adj adv prep)")
    p.add_argument("--no-dedupe", action="store_true", help="keep exact duplicate captions")
    p.add_argument("--seed", type=int, default=0)
    _common(p)

    from hardneg.analysis.cross_benchmark import add_arguments

    p = sub.add_parser("cross-benchmark", help="one model across benchmarks: accuracy and agreement on shared videos")
    add_arguments(p)
    _common(p)

    parser.set_defaults(func=run)
    return parser


# ------------------------------------------------------------------ runners
def _fire(args):
    from hardneg.analysis.inputs import read_judgments, read_named_predictions, retrieval_scores

    if args.qrels:
        judgments = read_judgments(args.queries, args.videos, args.qrels)
    else:  # overlap needs only the query and video order
        from hardneg.analysis.inputs import judgments_from_tables, read_parquet
        from hardneg.schema import QREL_SCHEMA, QUERY_SCHEMA, VIDEO_SCHEMA

        judgments = judgments_from_tables(read_parquet(args.queries, QUERY_SCHEMA, "queries"),
                                          read_parquet(args.videos, VIDEO_SCHEMA, "videos"), QREL_SCHEMA.empty_table())
    preds = read_named_predictions(args.predictions)
    systems = {p.name: retrieval_scores(judgments, p) for p in preds}
    return judgments, systems


def _mc(args):
    from hardneg.analysis.inputs import read_mc_items, read_named_predictions

    items = read_mc_items(args.items)
    preds = read_named_predictions(args.predictions)
    return items, {p.name: items.score_matrix(p) for p in preds}


def _caption_list(path: str) -> list[str]:
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"captions file {p} does not exist")
    if p.suffix == ".parquet":
        import pyarrow.parquet as pq

        t = pq.read_table(p)
        if "captions" in t.column_names and "label" in t.column_names:
            return [c[lab] for c, lab in zip(t.column("captions").to_pylist(), t.column("label").to_pylist())]
        if "text" in t.column_names:
            return [str(x) for x in t.column("text").to_pylist()]
        raise ValueError(f"{p}: expected MC items (captions, label) or queries (text) columns")
    from hardneg.generators.common import split_caption_line

    # PoSRank release format `<video>##*##<i>**#**<caption>` or one caption per line: the one shared parser
    lines = [ln.strip() for ln in p.read_text(encoding="utf-8").splitlines()]
    return [split_caption_line(ln)[1] for ln in lines if ln]


def compute(args) -> Any:
    """Run the chosen analysis and return its result object."""
    from hardneg import analysis as A

    name = args.analysis
    ks = tuple(getattr(args, "ks", (1, 5, 10)))
    if name == "label-correction":
        j, systems = _fire(args)
        return A.label_correction(systems, j, ks=ks, ties=args.ties)
    if name == "pooling-bias":
        j, systems = _fire(args)
        use_column = args.pool_from == "column" or (args.pool_from == "auto" and j.pooled_by is not None)
        pools = A.pools_from_column(j) if use_column else A.pools_from_topk(systems, j, args.pool_depth)
        result = A.pooling_bias(systems, j, pools, ks=ks, ties=args.ties)
        result.params["pool_from"] = "qrels column" if use_column else f"top-{args.pool_depth} of the given predictions"
        return result
    if name == "judgment-budget":
        from hardneg.ranking import retrieval

        j, systems = _fire(args)
        system = args.system or next(iter(systems))
        if system not in systems:
            raise ValueError(f"--system {system!r} is not among the predictions {list(systems)}")
        ks_needed = sorted({int(m[2:]) for m in args.metrics if m.startswith("C@")} | {1})
        per = retrieval(systems[system], relevant=j.relevant(), original=j.original, ks=ks_needed, ties=args.ties).per_example
        unknown = [m for m in args.metrics if m not in per]
        if unknown:
            raise ValueError(f"--metrics {unknown} are not per-query values of the ranking core; choose from {sorted(per)}")
        return A.judgment_budget({m: per[m] for m in args.metrics}, sizes=tuple(args.sizes), n_resamples=args.resamples,
                                 seed=args.seed, quantile=args.quantile, system=system)
    if name == "overlap":
        _, systems = _fire(args)
        return A.system_overlap(systems, k=args.k, p=args.p)
    if name == "caption-length":
        from hardneg.ranking import retrieval

        j, systems = _fire(args)
        if not args.metric.startswith("C@"):
            raise ValueError(f"--metric {args.metric!r} must be C@K (e.g. C@1)")
        k = int(args.metric[2:])
        correct = {s: retrieval(sc, relevant=j.relevant(), original=j.original, ks=(k,), ties=args.ties).per_example[args.metric]
                   for s, sc in systems.items()}
        return A.caption_length_analysis(j.texts, j.n_positives(), correct, unit=args.unit, bin_width=args.bin_width,
                                         metric=args.metric)
    if name == "contrast-breakdown":
        from hardneg.analysis.contrast_sets_breakdown import antonym_flags, contrast_negative_index, cosine_similarity, sentence_encoder

        items, scores = _mc(args)
        neg = contrast_negative_index(items)
        has = neg >= 0
        if not has.any():
            raise ValueError(f"{args.items}: no item has a contrast negative (manipulated_index, or a non-random negative)")
        pos_txt = [c[lab] for c, lab in zip(items.captions, items.label)]
        neg_txt = [c[k] if k >= 0 else c[lab] for c, k, lab in zip(items.captions, neg, items.label)]
        antonym = antonym_flags(pos_txt, neg_txt) & has
        encoders: dict[str, Any] = {}
        st_models = ["sentence-transformers/all-MiniLM-L6-v2"] if args.sentence_encoder is None else args.sentence_encoder
        for m in st_models:
            encoders["SentBERT" if m.endswith("all-MiniLM-L6-v2") else m] = sentence_encoder(m)
        for m in args.text_encoder:
            from hardneg.models.registry import load_model

            model = load_model(m)
            encoders[f"{m} text"] = model.encode_text
        sims = {}
        for enc_name, enc in encoders.items():
            s = np.full(len(items), np.nan)
            sel = np.nonzero(has)[0]
            s[sel] = cosine_similarity(enc, [pos_txt[i] for i in sel], [neg_txt[i] for i in sel])
            sims[enc_name] = s
        return A.contrast_breakdown(items, scores, antonym, sims, fraction=args.fraction, ties=args.ties,
                                    n_resamples=args.resamples)
    if name == "sensitivity":
        items, scores = _mc(args)
        from hardneg.analysis.feint6k_sensitivity import DEFAULT_KINDS

        kinds = dict(DEFAULT_KINDS)
        for kv in args.kind:
            t, sep, k = kv.partition("=")
            if not sep or not t or not k:
                raise ValueError(f"--kind {kv!r} must be TYPE=KIND, e.g. noun=object")
            kinds[t] = k
        return A.sensitivity(items, scores, kinds=kinds)
    if name == "blind-text":
        items, scores = _mc(args)
        baselines = dict(scores)
        if not args.no_classifier:
            baselines["surface-feature classifier"] = A.surface_classifier_scores(items, folds=args.folds, seed=args.seed)
        if not baselines:
            raise ValueError("nothing to check: give --predictions of a text-only model or drop --no-classifier")
        return A.blind_text_check(items, baselines, ties=args.ties, n_resamples=args.resamples, seed=args.seed)
    if name == "duplicates":
        from hardneg.analysis.posrank_duplicates import tag_captions
        from hardneg.schema import PARTS_OF_SPEECH

        caps = _caption_list(args.captions)
        if not caps:
            raise ValueError(f"{args.captions}: no captions")
        pos = tuple(args.pos or PARTS_OF_SPEECH)
        bad = [p for p in pos if p not in PARTS_OF_SPEECH]
        if bad:
            raise ValueError(f"--pos {bad} unknown; choose from {list(PARTS_OF_SPEECH)}")
        tokens, tags = tag_captions(caps)
        return A.duplicate_analysis(tokens, tags, parts_of_speech=pos, max_removed=args.max_removed, seed=args.seed,
                                    dedupe=not args.no_dedupe)
    if name == "cross-benchmark":
        from hardneg.analysis.cross_benchmark import from_args

        return from_args(args)
    raise ValueError(f"unknown analysis {name!r}; choose from {list(ANALYSES)}")


def run(args) -> int:
    out = Path(args.out)
    json_path, png_path = out / f"{args.analysis}.json", out / f"{args.analysis}.png"
    refuse_overwrite(json_path, args.overwrite)
    if not args.no_plot:
        refuse_overwrite(png_path, args.overwrite)
    result = compute(args)
    result.params.setdefault("inputs", {k: v for k, v in vars(args).items()
                                        if k in ("queries", "videos", "qrels", "items", "predictions", "captions")})
    if not args.no_plot:
        result.plot(png_path)
    atomic_write_text(json_path, json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n")
    print(result.title)
    print(result.format_table())
    for note in result.notes:
        print(f"note: {note}")
    print(f"wrote {json_path}" + ("" if args.no_plot else f" and {png_path}"))
    return 0
