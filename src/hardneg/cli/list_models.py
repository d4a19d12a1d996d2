"""`hardneg models`: every video-LLM model type of the installed `transformers`, its path, protocols and whether a
tiny-model test verifies it in this version (`hardneg.models.vlm.support`; docs/models.md holds the same table)."""

from __future__ import annotations

import argparse
import json

DESCRIPTION = """Every model type the installed transformers has a video processor and an image-text-to-text model
for: the path hardneg scores it by (a hand-written family, or the generic one through its own processor), its protocols, and whether a tiny
random-weight model of the type is tested in this version (verified)."""


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("models", help="list the video-LLM model types: path, protocols, verified by a tiny model",
                              description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--markdown", action="store_true", help="print the Markdown table of docs/models.md")
    p.add_argument("--encoders", action="store_true",
                   help="list the dual-encoder types `dual:<id>` takes instead (how frames are pooled, the score)")
    p.set_defaults(func=run)


def tiny_model_names() -> list[str]:
    """The built-in tiny random-weight models by their `--model` names (offline): tiny-clip, tiny-vlm and
    tiny-vlm:<arch> for each tiny video LLM, tiny-dual:<kind> for each tiny dual encoder."""
    from hardneg.models.tiny_dual import names as dual_names
    from hardneg.models.vlm.tiny import ARCHITECTURES, cli_name

    return ["tiny-clip", *(cli_name(a) for a in ARCHITECTURES), *dual_names()]


def run_encoders(args: argparse.Namespace) -> int:
    from hardneg.models.dual_types import ENCODERS, encoders_markdown_table

    if args.json:
        print(json.dumps([{"model_type": k, "path": p, "frames": f, "score": s, "verified": True,
                           "tiny": f"tiny-dual:{k}"} for k, (p, f, s) in ENCODERS.items()], indent=2))
    elif args.markdown:
        print(encoders_markdown_table(), end="")
    else:
        for kind, (path, frames, score) in ENCODERS.items():
            print(f"{kind:<11} verified  {path}\n{'':<21}frames: {frames}\n{'':<21}score: {score}")
        print(f"\n{len(ENCODERS)} dual-encoder types (dual:<Hub id or folder>), each verified by a tiny-model test; "
              f"its tiny model runs offline as --model tiny-dual:<type> ({', '.join(f'tiny-dual:{k}' for k in ENCODERS)})")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.encoders:
        return run_encoders(args)
    from hardneg.models.vlm.published import template_source
    from hardneg.models.vlm.support import markdown_table, table

    rows = table()
    if args.json:
        print(json.dumps([{"model_type": r.model_type, "path": r.path, "protocols": list(r.protocols),
                           "verified": r.verified, "tiny": r.tiny, "stand_in_template": r.stand_in_template,
                           "template_source": template_source(r.model_type) if r.verified else None}
                          for r in rows], indent=2))
        return 0
    if args.markdown:
        print(markdown_table(rows), end="")
        return 0
    width = max(len(r.model_type) for r in rows)
    print(f"{'model type':<{width}}  {'verified':<8}  {'path':<26}  protocols")
    for r in rows:
        mark = ("yes*" if r.stand_in_template else "yes") if r.verified else "no"
        refused = r.path.startswith("refused: ")
        path = "refused" if refused else r.path
        none = f"none: {r.path[len('refused: '):]}" if refused else "none (unsupported)"
        print(f"{r.model_type:<{width}}  {mark:<8}  {path:<26}  {', '.join(r.protocols) if r.protocols else none}")
    n_ok = sum(r.verified for r in rows)
    print(f"\n{len(rows)} video-LLM model types in this transformers; {sum(r.supported for r in rows)} scored, "
          f"{n_ok} verified by a tiny-model test in this version")
    tiny = [r.tiny for r in rows if r.tiny]
    print(f"tiny models (random weights, offline: --model NAME): {', '.join(tiny)}")
    if any(r.stand_in_template for r in rows):
        print("yes*: verified with a stand-in chat template on the tiny model (the published one was not found in "
              "public sources; --markdown or --json says where it was looked for); --json's template_source says "
              "where each published one was read")
    return 0
