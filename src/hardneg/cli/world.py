"""`hardneg world generate OUT [--train N] [--test N] [--seed S] [--width W] [--height H] [--frames T] [--fps F]`.

Writes a synthetic world (scenes.jsonl, world.json, videos/) that `hardneg build world --raw OUT`
turns into the benchmark `world`, and whose train split `hardneg train` reads. `hardneg world check
OUT "caption"` judges captions against every scene (true / false / ungrammatical).
"""

from __future__ import annotations

import argparse

DESCRIPTION = """\
A synthetic video world with ground truth: each scene is two objects, the first doing two things
in order while in one spatial relation to the second, with a caption from a small grammar and an
H.264 video. Deterministic in --seed and the frame settings; an interrupted run resumes.

  hardneg world generate world-raw --train 1000 --test 200 --seed 0
  hardneg build world --raw world-raw --out world-built
  hardneg world check world-raw --scene world-v2-s0-test-00000 "a small red square moves slowly left above ..."
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    from hardneg.world import WorldConfig

    d = WorldConfig()
    p = subparsers.add_parser("world", help="generate a synthetic video world with ground truth (the `world` benchmark)",
                              description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="world_command", metavar="<generate|check>", required=True)
    from hardneg.expected import help_line

    g = sub.add_parser("generate", help="write scenes, captions and videos to a folder",
                       description=f"Write scenes, captions and videos to a folder. {help_line('world generate')}")
    g.add_argument("out", help="folder to write (must not exist unless --overwrite)")
    g.add_argument("--train", type=int, default=1000, help="scenes in the train split (default 1000)")
    g.add_argument("--test", type=int, default=200, help="scenes in the test split (default 200)")
    g.add_argument("--seed", type=int, default=0, help="the world's seed (default 0)")
    g.add_argument("--width", type=int, default=d.width, help=f"frame width in pixels (default {d.width})")
    g.add_argument("--height", type=int, default=d.height, help=f"frame height in pixels (default {d.height})")
    g.add_argument("--frames", type=int, default=d.n_frames, help=f"frames per video (default {d.n_frames})")
    g.add_argument("--fps", type=int, default=d.fps, help=f"frames per second (default {d.fps})")
    g.add_argument("--overwrite", action="store_true", help="replace an existing OUT")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")
    g.add_argument("--workers", type=int, default=None,
                   help="processes writing videos (default: the available cores; the bytes are the same for any count)")
    c = sub.add_parser("check", help="judge captions against a world's scenes: true, false or ungrammatical")
    c.add_argument("world", help="a folder written by `hardneg world generate`")
    c.add_argument("captions", nargs="+", help="captions to judge")
    c.add_argument("--scene", help="only this scene id (default: every scene)")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from hardneg.world import WorldConfig, generate_world, judge, load_scenes

    if args.world_command == "generate":
        from hardneg.expected import announce

        config = WorldConfig(args.width, args.height, args.frames, args.fps)
        announce("world generate", args.train + args.test)
        out = generate_world(args.out, n_train=args.train, n_test=args.test, seed=args.seed, config=config,
                             overwrite=args.overwrite, progress=not args.no_progress, workers=args.workers)
        print(f"wrote {args.train} train + {args.test} test scenes to {out} "
              f"({config.width}x{config.height}, {config.n_frames} frames); next: hardneg build world --raw {out} --out DIR")
        return 0
    scenes = load_scenes(args.world)
    if args.scene:
        scenes = [s for s in scenes if s.id == args.scene]
        if not scenes:
            raise ValueError(f"--scene {args.scene!r} is not in {args.world}/scenes.jsonl")
    for text in args.captions:
        for s in scenes:
            v = judge(s, text)
            print(f"{s.id}\t{v.value}\t{v.reason}")
    return 0
