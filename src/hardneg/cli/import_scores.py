"""`hardneg import-scores BENCHMARK FILE --data BUILT --model-id ORG/NAME --out PRED.parquet`."""

from __future__ import annotations

import argparse

DESCRIPTION = """\
Turn a paper's released per-item outputs (scores or judged answers) into the predictions file
that `hardneg evaluate`, `hardneg run` and `hardneg submit` read, so a paper's table is
recomputed from its own outputs (with intervals, and its authors' tie rule via
`hardneg evaluate --ties original`). The file's rows are joined to the items of one config of a
built benchmark (--data). Rows that match no item and items with no row are counted and shown;
by default nothing is written then (--on-mismatch refuse), or the matched items are written and
the coverage is recorded (--on-mismatch keep). The source file (name, SHA-256, format, counts) is
recorded in the predictions' metadata. The output is written atomically and never replaces a
file unless --overwrite.

formats each benchmark reads (its declaration's importers; the first is the default):
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    from hardneg import benchmarks
    from hardneg.importing import ON_MISMATCH

    with_importers = {n: b for n, b in benchmarks.all_benchmarks().items() if b.score_importers}
    listing = "\n".join(f"  {n:<18} {i.name}: {i.description}" for n, b in with_importers.items()
                        for i in b.score_importers)
    p = subparsers.add_parser(
        "import-scores", help="turn a paper's released per-item outputs into a predictions file",
        description=DESCRIPTION + (listing or "  (no benchmark declares one)") + """

example:
  hardneg build videocon-ssv2 --raw videocon/datasets --out built/videocon-ssv2
  hardneg import-scores videocon-ssv2 eval_ssv2_temporal_scores.csv --data built/videocon-ssv2 \\
      --model-id videocon/owl-con --out owl-con-ssv2.parquet
  hardneg evaluate owl-con-ssv2.parquet --ties original""",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("benchmark", choices=list(with_importers), help="the benchmark the file belongs to")
    p.add_argument("file", help="the released per-item file")
    p.add_argument("--data", required=True, help="the built benchmark folder (hardneg build) or its Hub id")
    p.add_argument("--model-id", required=True, help="ORG/NAME of the model whose outputs the file holds")
    p.add_argument("--model-revision", default=None, help="the model's revision, if known")
    p.add_argument("--out", required=True, help="predictions Parquet to write")
    p.add_argument("--config", default=None, help="config to import into (default: the folder's first one)")
    p.add_argument("--format", dest="fmt", default=None, help="which of the benchmark's formats the file is "
                   "(default: its first)")
    p.add_argument("--on-mismatch", choices=ON_MISMATCH, default="refuse",
                   help="rows that match no item / items with no row: refuse (default, nothing written) or keep "
                        "the matched items")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from hardneg.importing import import_scores, mismatch_text

    result = import_scores(args.benchmark, args.file, args.data, args.model_id, args.out, config=args.config,
                           fmt=args.fmt, on_mismatch=args.on_mismatch, model_revision=args.model_revision,
                           overwrite=args.overwrite)
    source = result.metadata["imported_from"]
    what = "queries" if result.metadata["task"] == "retrieval" else "items"
    print(f"imported {source['file']} ({source['format']}, {source['rows_read']:,} rows) -> {result.out}")
    print(f"  {result.n_written:,} of {result.n_items:,} {what} of {args.benchmark} / {result.metadata['config']}")
    if source["rows_for_other_configs"]:
        print(f"  {source['rows_for_other_configs']:,} rows belong to other configs of {args.benchmark} (not imported here)")
    problem = mismatch_text(result.unmatched, result.missing, what[:-1] if what == "items" else "query")
    if problem:
        print(f"  kept the matched {what} (--on-mismatch keep): {problem}")
    for note in source["notes"]:
        print(f"  note: {note}")
    print(f"  evaluate with: hardneg evaluate {result.out} --ties original")
    return 0
