"""The `hardneg` command: one entry point, one module per subcommand.

Each subcommand lives in `hardneg.cli.<module>` and exposes
``add_parser(subparsers)`` (which registers its parser and sets
``func=run``) and ``run(args) -> int``. Modules are imported lazily so that
`hardneg --help` stays fast and a missing optional extra only breaks its own
subcommand, with a message saying which extra to install.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from hardneg import __version__

#: subcommand -> (module, extra that provides its dependencies, one-line help)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "quickstart": ("hardneg.cli.quickstart", "models", "score the built-in sample with the built-in tiny model and print results"),
    "list": ("hardneg.cli.list_benchmarks", "datasets", "list the benchmarks: task, configs, sizes, metrics, license, Hub id, paper"),
    "models": ("hardneg.cli.list_models", "models", "list the video-LLM model types: path, protocols, verified by a tiny model"),
    "run": ("hardneg.cli.run", "models", "score a model on many benchmarks and print every headline metric"),
    "build": ("hardneg.cli.build", "datasets", "build a benchmark's Hub dataset repo from its raw release"),
    "fetch": ("hardneg.cli.fetch", "datasets", "download a benchmark's pinned release files and videos, checked"),
    "generate": ("hardneg.cli.generate", "generate", "generate hard negatives for a caption corpus"),
    "score": ("hardneg.cli.score", "models", "score a video-text model on a benchmark and write predictions"),
    "import-scores": ("hardneg.cli.import_scores", "metrics", "turn a paper's released per-item outputs into a predictions file"),
    "evaluate": ("hardneg.cli.evaluate", "metrics", "compute every metric of a predictions file with intervals"),
    "analyze": ("hardneg.cli.analyze", "plots", "run one of the papers' analyses (FIRE, contrast sets, Feint6K, PoSRank)"),
    "train": ("hardneg.cli.train", "models", "train a video-text model against hard negatives (PoSRank, LLM-teacher)"),
    "submit": ("hardneg.cli.submit", "demo", "submit predictions (a file or a `hardneg run` folder) to the leaderboard"),
    "leaderboard": ("hardneg.cli.leaderboard", "demo", "run the leaderboard locally (serve) or print its Overall table (show)"),
    "demo": ("hardneg.cli.demo", "demo", "start the demo Space on this machine (from a clone or an installed wheel)"),
    "world": ("hardneg.cli.world", "models", "generate a synthetic video world with ground truth (the `world` benchmark)"),
    "export": ("hardneg.cli.export", "lmms-eval", "write lmms-eval task folders for the benchmarks (lmms-eval --include_path)"),
    "metric-path": ("hardneg.cli.metric_path", "metrics", "print the folder of a shipped evaluate metric module"),
}


def install_hint(extra: str) -> str:
    """How to install an extra: from the clone (video-hardneg is not on PyPI; see docs/install.md)."""
    return (f"Install it from your clone of video-hardneg with: pip install -e '.[{extra}]' "
            "(the package is not on PyPI)")


#: options that name a folder: '-' (standard output) is only for files, so it is refused there
FOLDER_OPTIONS = ("out",)


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hardneg",
        description=(
            "video-hardneg: benchmarks, exact tie-aware metrics, negative generators, model scoring, "
            "a demo and a leaderboard for hard-negative video-text evaluation."
        ),
    )
    parser.add_argument("--version", action="version", version=f"video-hardneg {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="<command>")
    wanted = next((a for a in argv if not a.startswith("-")), None)
    for name, (module_name, extra, help_text) in COMMANDS.items():
        if wanted == name:
            try:
                module = importlib.import_module(module_name)
            except ImportError as exc:  # a missing optional dependency
                raise SystemExit(f"hardneg {name}: missing dependency ({exc}). {install_hint(extra)}") from exc
            module.add_parser(sub)
        else:
            sub.add_parser(name, help=help_text)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0 if args.command is None else 2
    for option in FOLDER_OPTIONS:
        if getattr(args, option, None) == "-" and not getattr(args, "out_may_be_stdout", False):
            print(f"hardneg {args.command}: error: --{option} names a folder here; '-' (standard output) only "
                  "stands for a file. Give a folder path.", file=sys.stderr)
            return 2
    try:
        return int(args.func(args) or 0)
    except (ValueError, FileExistsError, FileNotFoundError, ConnectionError, PermissionError) as exc:
        print(f"hardneg {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except RuntimeError as exc:  # a decoder library missing here, or work whose worker process died, has a fix
        from hardneg.pool import PoolError
        from hardneg.video import DecoderUnavailable

        if not isinstance(exc, (DecoderUnavailable, PoolError)):
            raise
        print(f"hardneg {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
