"""`hardneg run`: score one model on many benchmarks and print one table (`hardneg.run_model`)."""

from __future__ import annotations

import argparse

DESCRIPTION = """Score a model on every config of the chosen benchmarks, evaluate each with the
one results engine, write <out>/results.json and print the headline metrics with intervals.

Without --data the built-in samples are built into <out>/data and synthetic videos are made for
them (offline; a check that your model runs, not a measurement). With --data DIR, DIR holds one
folder per benchmark (DIR/<benchmark>/, written by hardneg build), or is one built folder.
Predictions already in --out that were scored with the same model, frames, data and videos are
reused, so an interrupted run continues where it stopped.

Real data without paths: benchmarks named with --benchmarks that `hardneg fetch` put in the cache
($HARDNEG_CACHE/fetch) are scored on their real release and videos when --data and --videos are left
out; the results record the release commit and the videos' coverage. A named benchmark not fetched
is scored on its built-in sample, and the fetch command and its download size are printed; --fetch
downloads it first (nothing is downloaded unasked). docs/fetching.md.

examples:
  hardneg run --model tiny-clip --out runs/tiny                       # built-in samples
  hardneg run --model openai/clip-vit-base-patch32 --benchmarks all --data built --videos ~/videos --out runs/clip
  hardneg run --model blind-unigram --benchmarks contrast_sets,posrank --data built --out runs/blind
  hardneg run --model tiny-vlm --out runs/vlm                         # a video LLM, each benchmark's protocol
  hardneg fetch tempcompass && hardneg run --model Qwen/Qwen3-VL-2B-Instruct --benchmarks tempcompass  # real data
Python: hardneg.run_model(model, ...) takes the same arguments and also any object with
encode_video/encode_text or score(video, captions) (docs/models.md)."""


def add_parser(subparsers) -> None:
    from hardneg.cli.model_flags import add_model_flags, add_model_identity_flags
    from hardneg.ranking import TIE_RULES

    p = subparsers.add_parser("run", help="score a model on many benchmarks and print every headline metric",
                              description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    from hardneg.cli.list_models import tiny_model_names

    p.add_argument("--model", required=True,
                   help="model name, Hub id or local folder (as hardneg score); the built-in tiny random-weight "
                        f"models (offline): {', '.join(tiny_model_names())} (`hardneg models` says which type each is)")
    add_model_identity_flags(p)
    p.add_argument("--benchmarks", default="all", help="'all' (default) or comma-separated names (hardneg list)")
    p.add_argument("--data", default=None, help="folder of built benchmarks (<data>/<benchmark>/) or one built "
                                                "folder (default: the built-in samples)")
    p.add_argument("--videos", default=None, help="folder of videos named by video id (default with the samples: "
                                                  "synthetic videos)")
    p.add_argument("--out", default=None, help="work folder: predictions/, results.json (default: runs/<model>)")
    p.add_argument("--fetch", action="store_true", help="without --data: download what `hardneg fetch` would for the "
                                                        "named benchmarks first (never done unasked)")
    p.add_argument("--overwrite", action="store_true", help="rescore everything, replacing what --out holds")
    g = p.add_argument_group("evaluation")
    g.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1000; 0: no intervals)")
    g.add_argument("--ties", default="expected", choices=TIE_RULES, help="tie rule (default expected)")
    g.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    g = p.add_argument_group("frames and device")
    g.add_argument("--frames", type=int, default=8, help="frames sampled uniformly per video (default 8)")
    g.add_argument("--fps", type=float, default=None, help="resample to this frame rate before sampling")
    g.add_argument("--resize", type=int, default=224, help="shorter side of decoded frames (default 224; 0 keeps it)")
    add_model_flags(g)
    g.add_argument("--judge", default=None,
                   help="video LLMs, generate-match only: a causal LM (Hub id or folder) that judges the answers the "
                        "protocol set's rule cannot decide, with the set's judge prompt (docs/models.md, 'Undecided "
                        "answers'); without it they score as the set says (wrong, or a tie)")
    g.add_argument("--batch-size", type=int, default=64, help="items per scoring batch (default 64)")
    g.add_argument("--cache-dir", default=None, help="embedding cache (default $HARDNEG_CACHE or ~/.cache/hardneg)")
    g.add_argument("--no-charts", action="store_true", help="no PNG chart per config")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def video_llm_note(model: str, revision: str | None = None) -> str | None:
    """For a video LLM (or a checkpoint of a video-LLM model type), whether its type is verified by a tiny-model
    test in this version, said before the model loads (`hardneg.models.vlm.support`); None for other models."""
    from hardneg.models.vlm.support import model_type_of, verification_note, video_llm_types

    model_type = model_type_of(model, revision)
    is_vlm = model.startswith(("vlm:", "tiny-vlm")) or model_type in video_llm_types()
    return verification_note(model_type) if is_vlm else None


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from hardneg.cli.model_flags import frame_settings, model_spec
    from hardneg.run import RESULTS_FILE, format_table, run_specs
    from hardneg.settings import EvalSettings, Execution, RunSpec

    note = video_llm_note(args.model, args.model_revision)
    if note:
        print(note, flush=True)
    if args.out is None:
        args.out = str(Path("runs") / Path(args.model_id or args.model).name)
    if args.data is None and args.videos is None:  # the fetched release where there is one (hardneg.fetching)
        from hardneg.fetching.layout import FetchSettings
        from hardneg.fetching.runs import run_data

        fetched = run_data(args.benchmarks, args.fetch, FetchSettings(cache=Path(args.cache_dir))
                           if args.cache_dir else None)
        args.data, args.videos = fetched.data, fetched.videos
        for line in fetched.notes:
            print(line, flush=True)
    evaluation = EvalSettings(ties=args.ties, n_resamples=args.resamples, seed=args.seed)
    run = RunSpec(args.benchmarks, data=args.data, videos=args.videos, out=args.out, cache_dir=args.cache_dir,
                  overwrite=args.overwrite, charts=not args.no_charts, progress=not args.no_progress,
                  evaluation=evaluation)
    results = run_specs(model_spec(args), run, frame_settings(args),
                        Execution(batch_size=args.batch_size, progress=False))
    where = "built-in samples" if args.data is None else args.data
    print(format_table(results, f"model: {args.model_id or args.model} ({where}; ties={args.ties})"))
    for line in protocol_notes(results):
        print(line)
    print(f"\nresults: {Path(args.out) / RESULTS_FILE}")
    return 0


def protocol_notes(results: dict) -> list[str]:
    """One line per benchmark scored in a protocol set it does not declare (`Benchmark.vlm_for` fell back to its
    default protocol), naming what it used, so that the fallback is never silent."""
    seen, out = set(), []
    for key, res in results.items():
        model = (res.get("run") or {}).get("model") or {} if isinstance(res, dict) else {}
        source = str(model.get("prompt_source") or "")
        bench = res.get("benchmark") if isinstance(res, dict) else None
        if source.startswith("protocol set '") and bench not in seen:
            seen.add(bench)
            out.append(f"note: {source}")
    return out
