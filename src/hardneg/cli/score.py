"""`hardneg score`: run a video-text model over a benchmark config and write predictions."""

from __future__ import annotations

import argparse

DESCRIPTION = """Score a video-text model on a benchmark and write a predictions Parquet file
(ids and scores, plus the model revision, frame settings and data revision in its metadata).

Videos are read from --videos DIR by video id (<id>.mp4, .webm, .mkv, ...); missing or
unreadable videos are counted and reported, and their items are left out of the file
(hardneg evaluate states the coverage). Video embeddings are cached under --cache-dir, keyed
by model revision + frame settings + video content, so a rerun or another benchmark on the
same videos recomputes nothing. An interrupted run resumes when the same command is rerun, and
rerunning a finished run that left items out (missing or unreadable videos, now fixed) replaces
its file without --overwrite when every item the file scores is scored again.

examples:
  hardneg score --model openai/clip-vit-base-patch32 --dataset video-hardneg/feint6k \\
      --config msrvtt --videos ~/videos/msrvtt --out clip-feint6k.parquet
  hardneg score --model blind-unigram --dataset built/contrast_sets --config verb_human --out blind.parquet
  hardneg score --model tiny-clip --dataset built/posrank --config vln_uvo --videos vids --out p.parquet
models: a CLIP or X-CLIP Hub id or folder, st:<sentence-transformers id>, blind-unigram,
blind-lm:<causal LM id>, blind-st:<sentence-transformers id>, tiny-clip (built in), a video LLM Hub id or folder
(Qwen2-VL, Qwen2.5-VL, LLaVA-OneVision, LLaVA-NeXT-Video, Video-LLaVA; vlm:<id>) or tiny-vlm (built in): scored by the
benchmark's protocol unless --protocol/--prompt say otherwise (docs/models.md, "Video LLMs")."""


def add_parser(subparsers) -> None:
    from hardneg.cli.model_flags import add_model_flags, add_model_identity_flags
    from hardneg.runner import add_backend_arguments

    from hardneg.expected import help_line

    p = subparsers.add_parser("score", help="score a video-text model on a benchmark and write predictions",
                              description=f"{DESCRIPTION}\n\n{help_line('score')}",
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="model name, Hub id or local folder (see below)")
    add_model_identity_flags(p)
    p.add_argument("--dataset", required=True, help="built dataset folder or Hub dataset id (e.g. video-hardneg/feint6k)")
    p.add_argument("--config", required=True, help="dataset config (e.g. msrvtt, verb_human, vln_uvo)")
    p.add_argument("--split", default=None,
                   help="split(s), comma-separated (default: every split of the config, e.g. all parts of speech)")
    p.add_argument("--benchmark", default=None, help="benchmark name when the dataset does not say (`hardneg list` shows them)")
    p.add_argument("--data-revision", default=None, help="Hub revision of the dataset")
    p.add_argument("--videos", default=None, help="folder of videos named by video id (not needed for blind baselines)")
    p.add_argument("--out", required=True,
                   help="predictions Parquet to write ('-': standard output, the summary goes to standard error; "
                        "no resume)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing --out (not needed to rerun a "
                   "run that left items out: see above)")
    p.set_defaults(out_may_be_stdout=True)
    g = p.add_argument_group("frames and device")
    g.add_argument("--frames", type=int, default=8, help="frames sampled uniformly per video (default 8)")
    g.add_argument("--fps", type=float, default=None, help="resample to this frame rate before sampling (default: all frames)")
    g.add_argument("--resize", type=int, default=224, help="shorter side of decoded frames in pixels (default 224; 0 keeps the size)")
    g.add_argument("--decoder", default="pyav", choices=("pyav", "torchcodec", "nvdec"),
                   help="video decoder (default pyav: on a pool of processes, one per core, from 4 cores; below, on threads of "
                        "one process, which measured faster there; $HARDNEG_DECODE_WORKERS=N forces a pool of N); torchcodec (CPU) and nvdec (the GPU's video decoder, NVDEC, through PyAV) "
                        "are optional and fall back to pyav with a message where they cannot load; see "
                        "docs/scoring-speed.md")
    g.add_argument("--scaler", default="pil", choices=("pil", "swscale"),
                   help="how pyav frames are resized (default pil: the pixels of every earlier release; swscale is faster)")
    add_model_flags(g)
    g.add_argument("--cache-dir", default=None, help="embedding cache (default $HARDNEG_CACHE or ~/.cache/hardneg)")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_backend_arguments(p, default_batch_size=64)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import contextlib
    import sys
    import tempfile
    from pathlib import Path

    from hardneg.cli.model_flags import frame_settings, model_spec
    from hardneg.io import is_stdout, write_stdout
    from hardneg.runner import backend_kwargs
    from hardneg.scoring import score
    from hardneg.settings import Execution, ScoreJob

    execution = Execution(**backend_kwargs(args), progress=not args.no_progress)
    splits = [s for s in args.split.split(",") if s] if args.split else None
    if is_stdout(args.out):  # score into a temporary file, then send its bytes to standard output
        with tempfile.TemporaryDirectory(prefix="hardneg-score-") as tmp:
            out = Path(tmp) / "predictions.parquet"
            args = argparse.Namespace(**{**vars(args), "out": str(out), "overwrite": True})
            with contextlib.redirect_stdout(sys.stderr):
                code = run(args)
            write_stdout(out.read_bytes())
            return code
    job = ScoreJob(args.dataset, args.config, args.out, splits=splits, videos=args.videos, benchmark=args.benchmark,
                   data_revision=args.data_revision, cache_dir=args.cache_dir, overwrite=args.overwrite)
    res = score(job, model_spec(args), frame_settings(args), execution)
    print(res.summary())
    vr = res.video_report
    if vr["missing"] or vr["unreadable"]:
        print(f"warning: {vr['missing']} videos missing, {vr['unreadable']} unreadable "
              f"(e.g. {(vr['missing_ids'] or list(vr['unreadable_ids']))[:3]}); their items are not in the file")
    return 0
