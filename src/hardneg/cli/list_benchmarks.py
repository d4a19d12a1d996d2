"""`hardneg list`: every declared benchmark, its task, configs, sizes, metrics, license, Hub id and paper.

Everything comes from the declarations (`hardneg.benchmarks`) and, for configs and sizes, from
built folders: `--data DIR` (one `DIR/<benchmark>/` per benchmark), else the built-in samples,
built into a temporary folder. (The module is not called `list` so that it does not shadow the
builtin inside `hardneg.cli`.)
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

DESCRIPTION = """List the benchmarks hardneg knows (built in, installed packages' entry points,
$HARDNEG_BENCHMARKS): task, configs with their sizes, headline metrics, licenses, Hub id and paper.
Sizes are the rows of --data DIR's built folders (DIR/<benchmark>/), or of the tiny built-in
samples when --data is not given (a few items each: their configs are a subset of the release's)."""


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("list", help="list the benchmarks: task, configs, sizes, metrics, license, Hub id, paper",
                              description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default=None, help="folder of built benchmarks (<data>/<benchmark>/) to read configs and sizes from")
    p.add_argument("--no-samples", action="store_true", help="do not build the built-in samples (declared configs only)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=run)


def declared_configs(decl) -> list[str]:
    """Configs the declaration names: described ones, then those of the papers' reported rows."""
    names = list(decl.config_descriptions)
    for row in decl.reported:
        names += [config for config, _ in row.values]
    return list(dict.fromkeys(names))


def _rows(folder: Path, files: list[str]) -> int:
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(folder / f).metadata.num_rows for f in files)


def built_sizes(decl, folder: Path) -> dict[str, dict[str, Any]]:
    """{scoreable config: {"rows", "splits": {split: rows}, <companion>: rows}} of a built folder."""
    from hardneg.items import card_configs

    configs = card_configs(folder)
    out: dict[str, dict[str, Any]] = {}
    for config in decl.scoreable(configs):
        splits = {s: _rows(folder, files) for s, files in configs[config].items()}
        entry: dict[str, Any] = {"rows": sum(splits.values()), "splits": splits}
        for suffix in decl.companion_suffixes:
            companion = configs.get(config + suffix)
            if companion is not None:
                entry[suffix.strip("-_")] = sum(_rows(folder, files) for files in companion.values())
        out[config] = entry
    return out


def describe(data: str | Path | None = None, samples: bool = True) -> list[dict[str, Any]]:
    """One dict per benchmark: the declaration's summary, its metrics and configs, and built sizes."""
    from hardneg import benchmarks
    from hardneg.items import folder_benchmark

    decls = benchmarks.all_benchmarks()
    folders: dict[str, Path] = {}
    source = None
    scratch = None
    errors: dict[str, str] = {}
    if data is not None:
        root = Path(data)
        if not root.is_dir():
            raise FileNotFoundError(f"--data {root} does not exist; build benchmarks with `hardneg build`")
        own = folder_benchmark(root)
        folders = {own: root} if own else {n: root / n for n in decls if (root / n / "README.md").is_file()}
        source = str(root)
    elif samples:
        from hardneg.datasets import build_samples

        scratch = Path(tempfile.mkdtemp(prefix="hardneg-list-"))
        source = "built-in sample"
        for name, decl in decls.items():
            if not decl.sample:
                continue
            try:
                folders.update(build_samples(scratch, overwrite=True, benchmarks=(name,)))
            except Exception as exc:  # one broken sample must not hide the other benchmarks
                errors[name] = f"{type(exc).__name__}: {exc}"
    try:
        out = []
        for name, decl in decls.items():
            entry = dict(decl.summary())
            entry.update(paper_title=decl.paper_title, description=decl.description,
                         metric_descriptions={m.key: m.description for m in decl.metrics},
                         declared_configs={c: decl.config_descriptions.get(c, "") for c in declared_configs(decl)},
                         sizes_from=source if name in folders else None,
                         sizes=built_sizes(decl, folders[name]) if name in folders else {})
            if name in errors:
                entry["sample_error"] = errors[name]
            out.append(entry)
        return out
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def _config_text(config: str, size: dict[str, Any] | None) -> str:
    if not size:
        return config
    extra = [f"{v} {k}" for k, v in size.items() if k not in ("rows", "splits")]
    return f"{config} ({size['rows']} rows" + (f"; {', '.join(extra)}" if extra else "") + ")"


def format_text(entries: list[dict[str, Any]]) -> str:
    blocks = []
    for e in entries:
        built = ", ".join(_config_text(c, size) for c, size in e["sizes"].items())
        others = [c for c in e["declared_configs"] if c not in e["sizes"]]
        if built:
            shown = f"{built}  (sizes: {e['sizes_from']})" + (f"; also declared: {', '.join(others)}" if others else "")
        else:
            shown = ", ".join(others) or "(none declared)"
        lines = [f"{e['name']}: {e['title']} [{e['task']}]",
                 f"  metrics:  {', '.join(e['metrics'])}",
                 f"  configs:  {shown}",
                 f"  license:  {', '.join(e['license'])}",
                 f"  hub:      {e['hub_id']}",
                 f"  paper:    {e['paper_title']} <{e['paper']}>"]
        if e.get("sample_error"):
            lines.append(f"  sample:   could not be built ({e['sample_error'][:200]})")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def run(args: argparse.Namespace) -> int:
    entries = describe(args.data, samples=not args.no_samples)
    print(json.dumps(entries, indent=2) if args.json else format_text(entries))
    return 0
