"""`hardneg train`: train a video-text model against hard negatives (PoSRank Sec. 6, Feint6K Sec. 4)."""

from __future__ import annotations

import argparse
import json

DESCRIPTION = """Train a video-text model on (video, caption) pairs with one of the papers' objectives and
write a checkpoint folder that `hardneg score`, `hardneg run` and the demo load by path.

objectives (docs/training.md has the equations):
{objectives}

The run is seeded and resumable: rerun the same command with --resume after an interruption and
the final checkpoint is the same, byte for byte. A folder holding another run is refused unless
--resume or --overwrite. Several GPUs or nodes: launch with torchrun (DDP), e.g.
  torchrun --nproc_per_node 4 -m hardneg train ...

examples:
  hardneg train --data built/world --out runs/word --objective word
  hardneg train --model tiny-clip --data pairs/ --out runs/clip --objective prompt --steps 200
  hardneg train --data built/world --out runs/lbl --objective llm-lbl --negatives negs.parquet
  hardneg score --model runs/word --dataset built/world --config <config> --videos built/world/videos --out p.parquet
models: tiny-temporal (built in; sees frame order), tiny-clip, a CLIP Hub id or folder, or a
checkpoint of `hardneg train` to continue from."""


def _settings(pairs: list[str]) -> dict:
    out = {}
    for p in pairs or []:
        if "=" not in p:
            raise ValueError(f"--negatives-set {p!r}: write key=value (value as JSON, e.g. k=10 or parts_of_speech='[\"verb\"]')")
        k, v = p.split("=", 1)
        try:
            out[k] = json.loads(v)
        except json.JSONDecodeError:
            out[k] = v
    return out


def check_generator_settings(objective: str, negatives: str | None, settings: dict) -> None:
    """Each --negatives-set key must be a setting of the generator that runs (a typo was passed on and failed
    deep inside with a TypeError); a ValueError lists the generator's settings."""
    import inspect
    from pathlib import Path

    from hardneg.generators import GENERATORS, generator_factory
    from hardneg.training.objectives import OBJECTIVE_RECORDS

    if not settings:
        return
    record = OBJECTIVE_RECORDS.get(objective)
    name = negatives or (record.generator if record else None)
    if name is None or name not in GENERATORS:
        if name is None or Path(name).suffix == ".parquet" or Path(name).is_file():
            raise ValueError(f"--negatives-set {sorted(settings)}: settings go to a generator run on the fly, but "
                             f"{'objective ' + objective + ' uses none' if name is None else repr(name) + ' is a file'}; "
                             "drop --negatives-set")
        return  # an unknown generator name is refused by train() with the list of generators
    params = inspect.signature(generator_factory(name)).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return
    known = sorted(p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD))
    unknown = sorted(set(settings) - set(known))
    if unknown:
        raise ValueError(f"--negatives-set {', '.join(repr(k) for k in unknown)}: not a setting of generator "
                         f"{name!r}; its settings are {', '.join(known)}")


def add_parser(subparsers) -> None:
    from hardneg.expected import help_line
    from hardneg.training.objectives import OBJECTIVES, help_lines

    p = subparsers.add_parser("train", help="train a video-text model against hard negatives",
                              description=f"{DESCRIPTION.format(objectives=help_lines())}\n\n{help_line('train')}\n{help_line('train with negatives')}",
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="tiny-temporal", help="model to train (default tiny-temporal)")
    p.add_argument("--data", required=True, help="built benchmark folder with a train split, or a folder of video-caption pairs")
    p.add_argument("--videos", default=None, help="folder of the training videos (default: <data>/videos or <data>)")
    p.add_argument("--out", required=True, help="checkpoint folder to write")
    p.add_argument("--objective", default="coarse", choices=OBJECTIVES)
    p.add_argument("--negatives", default=None,
                   help="generator run on the fly (posrank, posrank_phrase, llm_teacher, verb_phrase) or a Parquet "
                        "file of generator output (default: the objective's generator)")
    p.add_argument("--negatives-set", action="append", metavar="KEY=VALUE", help="a generator setting (repeatable)")
    p.add_argument("--steps", type=int, default=None, help="optimiser steps (default: --epochs over the data)")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lam", type=float, default=0.2, help="lambda of Eq. 4 (and of the LLM-teacher term); default 0.2")
    p.add_argument("--n-negatives", type=int, default=16, help="N negatives per part of speech (category); default 16")
    p.add_argument("--frames", type=int, default=8, help="frames sampled per video (default 8)")
    p.add_argument("--resize", type=int, default=None, help="shorter side of decoded frames (default: 64 for tiny-temporal)")
    p.add_argument("--teacher", default=None, help="sentence-embedding model of Eq. 2 (default all-MiniLM-L6-v2)")
    p.add_argument("--limit", type=int, default=None, help="use only the first N training pairs")
    p.add_argument("--save-every", type=int, default=50, help="checkpoint every N steps (default 50)")
    p.add_argument("--device", default=None, help="cpu or cuda (default: a GPU when visible)")
    p.add_argument("--resume", action="store_true", help="continue the run in --out")
    p.add_argument("--overwrite", action="store_true", help="replace the run in --out")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=run)


def spec_from_args(args):
    """The `TrainSpec` of a `hardneg train` command line: the one place its flags become settings."""
    from hardneg.training.spec import DEFAULT_TEACHER, TrainSpec

    settings = _settings(args.negatives_set)
    check_generator_settings(args.objective, args.negatives, settings)
    return TrainSpec(model=args.model, data=args.data, out=args.out, objective=args.objective,
                     negatives=args.negatives, negatives_settings=settings, videos=args.videos, steps=args.steps,
                     epochs=args.epochs, batch_size=args.batch_size, lr=args.lr, seed=args.seed, lam=args.lam,
                     n_negatives=args.n_negatives, n_frames=args.frames, resize=args.resize,
                     teacher=args.teacher or DEFAULT_TEACHER, limit=args.limit, save_every=args.save_every,
                     device=args.device, resume=args.resume, overwrite=args.overwrite, progress=not args.no_progress)


def run(args) -> int:
    from hardneg.training.trainer import run_training

    res = run_training(spec_from_args(args))
    import os

    if int(os.environ.get("RANK", "0")) == 0:
        start = f" (resumed at step {res.resumed_from})" if res.resumed_from else ""
        loss = "n/a" if res.last_loss is None else f"{res.last_loss:.4f}"
        print(f"trained {res.steps} steps{start}; last loss {loss}; checkpoint: {res.out}")
        print(f"score it: hardneg score --model {res.out} --dataset <built folder> --config <config> --videos <dir> --out p.parquet")
    return 0
