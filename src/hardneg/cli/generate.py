"""`hardneg generate`: rebuild a benchmark's negatives (or make new ones) for a caption corpus.

A recipe (``generators/<name>.yaml``) pins the generator, its settings and the seed of a
published split; a bare generator name runs it with its defaults. Execution (batches,
processes or Ray, resume, atomic shards) is the shared `hardneg.runner`; this command adds
the input mapping, the recipe, and the final `MC_ITEM_SCHEMA` file ``<out>/items.parquet``.
"""

from __future__ import annotations

import argparse
import functools
import json
from pathlib import Path
from typing import Any

DESCRIPTION = """Generate hard negatives for a caption corpus, each with its provenance record.

RECIPE is a recipe name from generators/ (e.g. posrank_uvo_adverb, contrast_gender_msrvtt),
a path to a recipe .yaml/.json, or a generator name (gender, character_id, posrank,
posrank_phrase, verb_phrase, llm_teacher) run with its defaults.

Output: OUT/items.parquet (hardneg.schema.MC_ITEM_SCHEMA: positive first, label 0, one
provenance record per candidate, sorted by id), OUT/recipe.json (what ran), and OUT/shards/
(the runner's resumable shards: rerun the same command after an interruption to resume).

Input .txt files hold one caption per line (ids: line numbers) or the releases'
'<key>**#**<caption>' lines (ids: the keys, video_id: the key's video part).

examples:
  hardneg generate posrank --input captions.txt --out negs/ --set vocabulary=vocab.json --workers 2
  hardneg generate posrank_uvo_adverb --input VLN-UVO/captions.txt --out uvo_adv \\
      --set vocabulary=vln_uvo_word_dic_20230920.json
"""


def recipe_dirs() -> list[Path]:
    """Where recipe files live: the checkout's generators/ and the copy shipped in the wheel."""
    here = Path(__file__).resolve()
    return [here.parents[3] / "generators", here.parents[1] / "_shipped" / "generators"]


def load_recipe(spec: str) -> dict[str, Any]:
    """A recipe dict {name, generator, version, seed, settings, ...} from a name, a path or a generator."""
    import yaml

    from hardneg.generators import GENERATORS

    path = Path(spec)
    if not path.is_file():
        for d in recipe_dirs():
            for ext in (".yaml", ".yml", ".json"):
                if (d / f"{spec}{ext}").is_file():
                    path = d / f"{spec}{ext}"
                    break
            if path.is_file():
                break
    if path.is_file():
        recipe = yaml.safe_load(path.read_text()) or {}
        if not isinstance(recipe, dict) or "generator" not in recipe:
            raise ValueError(f"recipe {path} must be a mapping with at least a 'generator' key")
        recipe.setdefault("name", path.stem)
        recipe["path"] = str(path)
    elif spec in GENERATORS:
        recipe = {"name": spec, "generator": spec}
    else:
        raise ValueError(
            f"{spec!r} is neither a recipe file, a recipe in {recipe_dirs()[0]}, nor a generator "
            f"({', '.join(sorted(GENERATORS))})"
        )
    if recipe["generator"] not in GENERATORS:
        raise ValueError(f"recipe {recipe['name']}: unknown generator {recipe['generator']!r}")
    recipe.setdefault("seed", 0)
    recipe["settings"] = dict(recipe.get("settings") or {})
    return recipe


def parse_set(values: list[str]) -> dict[str, Any]:
    """--set key=value pairs; values are read as JSON when they parse, else as strings."""
    out = {}
    for item in values:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--set {item!r}: expected key=value, e.g. --set k=20")
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    return out


def release_table(path: Path, id_column: str) -> Any:
    """A caption .txt file in the release format ``<key>**#**<caption>`` as a table (ids: the keys;
    video_id: the key's video part, e.g. ``--7qK_w-g3Y`` of ``--7qK_w-g3Y##*##1``; captions: the
    text after the separator), or None for a plain file (one caption per line), which the runner
    reads as before (ids: zero-padded line numbers). One file is one format."""
    import pyarrow as pa

    from hardneg.generators.common import CAPTION_KEY_SEPARATOR, read_caption_lines, release_video_id

    lines = read_caption_lines(path)
    keyed = [key is not None for key, _ in lines]
    if not any(keyed):
        return None
    if not all(keyed):
        n = keyed.index(False) + 1
        raise ValueError(f"--input {path}: non-empty line {n} has no '{CAPTION_KEY_SEPARATOR}' although others do; "
                         f"use one format per file: '<key>{CAPTION_KEY_SEPARATOR}<caption>' lines or one caption per line")
    empty = next((key for key, caption in lines if not key or not caption), None)
    if empty is not None:
        raise ValueError(f"--input {path}: the line with key {empty!r} has an empty key or caption")
    keys = [key for key, _ in lines]
    return pa.table({id_column: pa.array(keys, pa.string()), "text": pa.array([c for _, c in lines], pa.string()),
                     "video_id": pa.array([release_video_id(k) for k in keys], pa.string())})


def read_captions(args: argparse.Namespace) -> Any:
    """The input as an Arrow table with `source_id`, `caption` (+ video_id/movie if present)."""
    import pyarrow as pa

    from hardneg.runner import load_input

    src = Path(args.input)
    keyed = release_table(src, args.id_column) if src.is_file() and src.suffix.lower() == ".txt" else None
    if keyed is not None:
        table = load_input(keyed, id_column=args.id_column)
    elif src.exists():
        table = load_input(src, id_column=args.id_column)
    elif args.input.count("/") == 1 and not args.input.startswith((".", "/")):
        try:
            import datasets
        except ImportError as exc:
            raise ValueError(f"{args.input} looks like a Hub dataset; pip install -e '.[datasets]' (from the clone; video-hardneg is not on PyPI)") from exc
        ds = datasets.load_dataset(args.input, args.config, split=args.split)
        table = ds.with_format("arrow")[:]
        if args.id_column not in table.column_names:
            table = table.append_column(args.id_column, pa.array([f"{i:08d}" for i in range(table.num_rows)]))
    else:
        raise FileNotFoundError(f"--input {args.input} is neither a file nor a Hub dataset id (owner/name)")
    caption_col = args.caption_column
    if caption_col not in table.column_names and caption_col == "caption" and "text" in table.column_names:
        caption_col = "text"  # plain-text input
    for col, flag in ((caption_col, "--caption-column"), (args.id_column, "--id-column")):
        if col not in table.column_names:
            raise ValueError(f"input {args.input} has no column {col!r} (columns: {table.column_names}); pass {flag}")
    cols = {"source_id": table[args.id_column].cast(pa.string()), "caption": table[caption_col]}
    for name, col in (("video_id", args.video_id_column), ("movie", "movie"),
                      ("source_dataset", "source_dataset"), ("source_split", "source_split")):
        if col and col in table.column_names:
            cols[name] = table[col]
    out = pa.table(cols)
    if args.limit:
        out = out.slice(0, args.limit)
    return out


def add_parser(subparsers: Any) -> None:
    from hardneg.runner import add_backend_arguments

    p = subparsers.add_parser("generate", help="generate hard negatives for a caption corpus",
                              description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("recipe", metavar="RECIPE", help="recipe name or file, or a generator name")
    p.add_argument("--input", required=True,
                   help="captions: .txt (one per line, or release lines '<key>**#**<caption>': ids are the keys), "
                        ".csv/.tsv, .jsonl, .parquet, or a Hub dataset id")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--caption-column", default="caption", help="caption column (default caption; .txt: text)")
    p.add_argument("--id-column", default="id",
                   help="unique caption id column (default id; .txt: the line's key, else its line number)")
    p.add_argument("--video-id-column", default="video_id", help="video id column (default video_id; else the caption id)")
    p.add_argument("--split", default="train", help="split of a Hub dataset input (default train)")
    p.add_argument("--config", default=None, help="config of a Hub dataset input")
    p.add_argument("--seed", type=int, default=None, help="override the recipe's seed")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a generator setting (JSON value), e.g. --set k=20 --set vocabulary=vocab.json")
    p.add_argument("--limit", type=int, default=None, help="only the first N captions (for a quick look)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing output instead of resuming")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_backend_arguments(p, default_batch_size=256)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hardneg.generators import generator_factory, generator_info
    from hardneg.generators.common import to_mc_table
    from hardneg.io import atomic_write_parquet, atomic_write_text
    from hardneg.runner import backend_kwargs, read_output, run_map

    recipe = load_recipe(args.recipe)
    recipe["settings"].update(parse_set(args.set))
    if args.seed is not None:
        recipe["seed"] = args.seed
    name, version = generator_info(recipe["generator"])
    if recipe.get("version") and str(recipe["version"]) != version:
        raise ValueError(
            f"recipe {recipe['name']} pins {name} version {recipe['version']} but this package has {version}; "
            "install the matching video-hardneg release to rebuild it exactly"
        )
    factory = functools.partial(generator_factory(recipe["generator"]), seed=int(recipe["seed"]), **recipe["settings"])
    table = read_captions(args)
    if recipe.get("source_dataset") and "source_dataset" not in table.column_names:
        import pyarrow as pa

        table = table.append_column("source_dataset", pa.array([str(recipe["source_dataset"])] * table.num_rows))
    out = Path(args.out)
    items = out / "items.parquet"
    resolved = {k: v for k, v in recipe.items() if k != "path"} | {"generator_record_name": name, "generator_version": version}
    recipe_text = json.dumps(resolved, indent=2, sort_keys=True, default=str) + "\n"
    recipe_file = out / "recipe.json"
    if recipe_file.is_file() and not args.overwrite and recipe_file.read_text() != recipe_text:
        raise FileExistsError(
            f"{out} holds a run with other settings ({recipe_file}); resume only with the same recipe, "
            "seed and --set values, or pass --overwrite / choose another --out"
        )
    if args.overwrite and out.exists():
        for stale in (items, recipe_file):
            stale.unlink(missing_ok=True)
    atomic_write_text(recipe_file, recipe_text)
    summary = run_map(factory, table, out / "shards", id_column="source_id", overwrite=args.overwrite,
                      progress=not args.no_progress, **backend_kwargs(args))
    mc = to_mc_table(read_output(out / "shards"))
    mc = mc.sort_by([("id", "ascending")])
    atomic_write_parquet(mc, items)
    print(f"{mc.num_rows} items from {summary.rows_in} captions -> {items}")
    return 0
