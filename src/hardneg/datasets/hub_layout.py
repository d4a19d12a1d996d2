"""Write a benchmark as a Hub dataset repo folder: Parquet per config and split, and a README card.

`datasets` 4+ runs no loading scripts, so the card's YAML (`configs:` with
`data_files`, `dataset_info` features) is what `load_dataset(folder_or_repo, config)`
reads. Output is deterministic: the same tables give byte-identical files (fixed
row order, fixed Parquet settings, no timestamps), so a rebuild shows no diff.
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from hardneg import __version__
from hardneg.io import atomic_directory
from hardneg.schema import NEGATIVE_TYPES, SCHEMA_VERSION

#: Fixed Parquet writer settings (part of the byte-identical-output promise).
PARQUET_OPTIONS: dict[str, Any] = {
    "compression": "zstd",
    "compression_level": 3,
    "row_group_size": 10_000,
    "use_dictionary": True,
    "write_statistics": True,
    "data_page_version": "1.0",
    "version": "2.6",
}

#: Name of the JSON build report written next to the card.
REPORT_NAME = "build_report.json"


@dataclass
class ConfigData:
    """One Hub config: a table per split, all splits with the same schema."""

    name: str
    splits: dict[str, pa.Table]
    description: str = ""


@dataclass
class BenchmarkBuild:
    """Everything a Hub repo of one benchmark holds, before it is written.

    A parser fills `benchmark`, `configs`, `raw_files` and `report` (`release_build`); the card facts come
    from the declaration, which the build path passes in (`with_declaration`): this module never looks a
    benchmark up, so `hardneg.benchmarks` can use it without a cycle.
    """

    benchmark: str
    configs: list[ConfigData] = field(default_factory=list)
    raw_files: list[str] = field(default_factory=list)
    report: dict[str, Any] = field(default_factory=dict)
    pretty_name: str = ""
    hub_repo: str = ""
    licenses: list[str] = field(default_factory=list)
    license_note: str = ""
    citation: str = ""
    description: str = ""
    negatives: str = ""
    task: str = "multiple_choice"  # "multiple_choice" | "retrieval"
    tags: list[str] = field(default_factory=list)
    usage_note: str = ""
    limitations: str = ""
    source_datasets: list[str] = field(default_factory=list)
    paper_title: str = ""
    paper_url: str = ""
    #: the headline metrics as the card lists them: (key, header, definition, chance), from the declaration's
    #: keys and the results vocabulary (`hardneg.vocabulary`)
    metrics: list[tuple[str, str, str, str]] = field(default_factory=list)
    #: the negative types an item of this benchmark may carry (the shared ones plus the declaration's)
    negative_types: list[str] = field(default_factory=lambda: list(NEGATIVE_TYPES))
    #: how the benchmark's one number is made from its configs (`Benchmark.overall`), one line for the card
    overall_text: str = ""


def release_build(benchmark, configs: list[ConfigData], raw_files: list[str], report: dict[str, Any]) -> BenchmarkBuild:
    """What a parser returns: its configs and files under the benchmark's name (a name or its declaration);
    the build path adds the declaration's card facts (`with_declaration`)."""
    name = benchmark if isinstance(benchmark, str) else benchmark.name
    return BenchmarkBuild(benchmark=name, configs=configs, raw_files=raw_files, report=report)


def with_declaration(build: BenchmarkBuild, decl) -> BenchmarkBuild:
    """Fill the card facts of `build` from its declaration `decl` (a `hardneg.benchmarks.Benchmark`, passed in).

    Text a parser put in `usage_note` or `limitations` (a build-specific note) is kept after the declaration's.
    """
    if build.benchmark != decl.name:
        raise ValueError(f"the {decl.name} parser returned a build named {build.benchmark!r}; "
                         f"pass the declaration's name ({decl.name!r}) to release_build")
    for c in build.configs:
        if not c.description:
            c.description = decl.config_descriptions.get(c.name, "")
    build.pretty_name, build.hub_repo, build.task = decl.pretty_name, decl.hub_id, decl.task
    build.licenses, build.license_note, build.citation = list(decl.licenses), decl.license_note, decl.citation
    build.description, build.negatives, build.tags = decl.description, decl.negatives, list(decl.tags)
    # what a parser wrote into these two (e.g. its validation against the paper) follows the declaration's text
    build.usage_note = "\n\n".join(t for t in (decl.usage_note, build.usage_note.strip()) if t)
    build.limitations = "\n\n".join(t for t in (decl.limitations, build.limitations.strip()) if t)
    build.source_datasets = list(decl.source_datasets)
    build.paper_title, build.paper_url, build.metrics = decl.paper_title, decl.paper_url, card_metrics(decl.metrics)
    build.negative_types = list(dict.fromkeys([*NEGATIVE_TYPES, *decl.negative_types]))
    configs = decl.scoreable([c.name for c in build.configs])
    if decl.overall_metric is not None and configs:
        build.overall_text = (f"The benchmark's one number (what `hardneg run` prints, `results.json` holds under "
                              f"`{decl.name}` and the leaderboard's Overall shows): `{decl.overall_metric.key}` "
                              f"{decl.overall_rule(configs).describe(configs)}.")
    return build


def card_metrics(declared) -> list[tuple[str, str, str, str]]:
    """(key, header, definition, chance) of each declared metric and its original-label twin, from the vocabulary."""
    from hardneg import vocabulary

    out = []
    for m in declared:
        for one in (m, m.baseline):
            if one is not None:
                e = vocabulary.entry(one.key)
                per_group = f" (`{one.key}_<{m.over}>` for one {m.over})" if one.over else ""
                out.append((one.key, vocabulary.header(one.key), one.description + per_group, e.chance))
    return out


def _metrics_section(build: BenchmarkBuild) -> list[str]:
    if not build.metrics:
        return []
    lines = ["## Metrics", "",
             "Machine outputs (`evaluate` modules, `results.json`, submissions) hold fractions in [0, 1]; "
             "displays show them in percent with one decimal, ranks as ranks (`hardneg.vocabulary`).", "",
             "| key | shown as | what it computes | chance |", "|---|---|---|---|"]
    lines += [f"| `{k}` | {h} | {d} | {c} |" for k, h, d, c in build.metrics]
    if build.overall_text:
        lines += ["", build.overall_text]
    return lines + [""]


def parquet_path(config: str, split: str) -> str:
    """Path of a split's Parquet file inside the repo (Hub's naming convention)."""
    return f"{config}/{split}-00000-of-00001.parquet"


def _hf_features(schema: pa.Schema):
    from datasets import Features

    return Features.from_arrow_schema(schema)


def parquet_bytes(table: pa.Table) -> bytes:
    """Serialise a table with the fixed settings and the `datasets` features in the metadata."""
    features = _hf_features(table.schema)
    meta = dict(table.schema.metadata or {})
    meta[b"huggingface"] = json.dumps({"info": {"features": features.to_dict()}}, sort_keys=True).encode()
    table = table.replace_schema_metadata(meta)
    sink = io.BytesIO()
    pq.write_table(table, sink, **PARQUET_OPTIONS)
    return sink.getvalue()


def card_yaml(build: BenchmarkBuild, sizes: dict[tuple[str, str], int]) -> dict[str, Any]:
    """The card's YAML header: license(s), configs with data_files, dataset_info features and counts."""
    configs = []
    infos = []
    for i, cfg in enumerate(build.configs):
        entry: dict[str, Any] = {"config_name": cfg.name}
        if i == 0:
            entry["default"] = True
        entry["data_files"] = [{"split": s, "path": parquet_path(cfg.name, s)} for s in cfg.splits]
        configs.append(entry)
        first = next(iter(cfg.splits.values()))
        infos.append(
            {
                "config_name": cfg.name,
                "features": _hf_features(first.schema)._to_yaml_list(),
                "splits": [
                    {"name": s, "num_bytes": t.nbytes, "num_examples": t.num_rows} for s, t in cfg.splits.items()
                ],
                "download_size": sum(sizes[(cfg.name, s)] for s in cfg.splits),
            }
        )
    return {
        "pretty_name": build.pretty_name,
        "license": build.licenses if len(build.licenses) > 1 else build.licenses[0],
        "language": ["en"],
        "task_categories": ["video-text-to-text" if build.task == "multiple_choice" else "text-retrieval"],
        "tags": ["video-text", "hard-negatives", "video-hardneg", *build.tags],
        **({"source_datasets": build.source_datasets} if build.source_datasets else {}),
        "size_categories": [_size_category(max((t.num_rows for c in build.configs for t in c.splits.values()), default=0))],
        "configs": configs,
        "dataset_info": infos,
    }


def _size_category(n: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return name
    return "1M<n<10M"


def render_card(build: BenchmarkBuild, sizes: dict[tuple[str, str], int]) -> str:
    """README.md of the repo: YAML header, then what it measures, how to load, counts, license, citation."""
    header = yaml.safe_dump(card_yaml(build, sizes), sort_keys=False, allow_unicode=True, width=1000)
    rows = "\n".join(
        f"| `{c.name}` | `{s}` | {t.num_rows:,} | {c.description} |" for c in build.configs for s, t in c.splits.items()
    )
    first = build.configs[0]
    first_split = next(iter(first.splits))
    lines = [
        "---",
        header.rstrip(),
        "---",
        "",
        f"# {build.pretty_name}",
        "",
        build.description.strip(),
        "",
        "## Load it",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        f'ds = load_dataset("{build.hub_repo}", "{first.name}", split="{first_split}")',
        "```",
        "",
        "A folder built with `hardneg build` loads the same way: "
        f'`load_dataset("path/to/folder", "{first.name}")`.',
    ]
    if build.usage_note:
        lines += ["", build.usage_note.strip()]
    lines += [
        "",
        "## Configs, splits and counts",
        "",
        "| config | split | rows | what |",
        "|---|---|---|---|",
        rows,
        "",
        "## How the negatives were made",
        "",
        build.negatives.strip(),
        "",
        *_metrics_section(build),
        *(["## Limitations", "", build.limitations.strip(), ""] if build.limitations else []),
        *(["## Paper", "", f"[{build.paper_title}]({build.paper_url})", ""] if build.paper_url else []),
        "## Schema",
        "",
        _schema_text(build.task, build.negative_types),
        "",
        "Videos are referenced by `video_id`, never copied. Source videos (YouTube) disappear over time: "
        "`hardneg.datasets.videos.coverage_report` lists which ones your local copy lacks, and results "
        "should state how many items they were computed on.",
        "",
        "## License",
        "",
        build.license_note.strip(),
        "",
        "## Citation",
        "",
        "```bibtex",
        build.citation.strip(),
        "```",
        "",
        "## Build provenance",
        "",
        f"Built by video-hardneg {__version__} (schema {SCHEMA_VERSION}) from: "
        + ", ".join(f"`{name}`" for name in build.raw_files)
        + f". The full build report is in `{REPORT_NAME}`.",
        "",
    ]
    return "\n".join(lines)


def _schema_text(task: str, negative_types: list[str]) -> str:
    if task == "multiple_choice":
        return (
            "One row per item: `id`, `video_id`, `source_dataset`, `source_split`, `category` (item group), "
            "`captions` (all candidates), `label` (index of the positive), `manipulated_index` (contrast sets: "
            "the manipulated option, else null), `negative_types` (one per candidate: "
            + ", ".join(f"`{t}`" for t in negative_types) + ") and "
            "`provenance` (one record per candidate: origin human/dataset/generator, generator and version, rule, "
            "part of speech, replaced span with its character offsets `span_start`/`span_end` in the positive, "
            "replacement, seed, JSON details)."
        )
    return (
        "Three configs per source dataset: `<name>` holds the relevance rows (`query_id`, `video_id`, `label` 1/0 by "
        "majority vote, `source` = `original` for the caption's own video or `fire` for an added judgment, "
        "`n_judgments`, `agreement`, `unresolved`); `<name>-queries` the queries (`query_id`, `text`, the original "
        "`video_id`); `<name>-videos` the video collection in the order score vectors use."
    )


def write_blob(path: Path, data: bytes) -> None:
    """Write one file of the repo folder (inside the temporary folder of `atomic_directory`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def write_hub_folder(build: BenchmarkBuild, out: str | Path, overwrite: bool = False, extra_report: dict[str, Any] | None = None) -> Path:
    """Write the whole repo folder atomically; refuses an existing `out` unless `overwrite`."""
    if not build.configs:
        raise ValueError(f"{build.benchmark}: nothing to write (no configs were found in the raw files)")
    blobs: dict[str, bytes] = {}
    sizes: dict[tuple[str, str], int] = {}
    for cfg in build.configs:
        schemas = {s: t.schema.remove_metadata() for s, t in cfg.splits.items()}
        first = next(iter(schemas.values()))
        for s, sch in schemas.items():
            if not sch.equals(first):
                raise ValueError(f"config {cfg.name}: split {s} has a different schema from the others")
        for split, table in cfg.splits.items():
            data = parquet_bytes(table)
            blobs[parquet_path(cfg.name, split)] = data
            sizes[(cfg.name, split)] = len(data)
    report = dict(build.report)
    if extra_report:
        report.update(extra_report)
    report = {
        "benchmark": build.benchmark,
        "hardneg_version": __version__,
        "schema_version": SCHEMA_VERSION,
        "raw_files": build.raw_files,
        "counts": {c.name: {s: t.num_rows for s, t in c.splits.items()} for c in build.configs},
        **report,
    }
    blobs[REPORT_NAME] = (json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()
    blobs["README.md"] = render_card(build, sizes).encode()
    with atomic_directory(out, overwrite=overwrite) as tmp:
        os.chmod(tmp, 0o755)  # mkdtemp makes it private; a repo folder is meant to be shared
        for rel, data in sorted(blobs.items()):
            write_blob(tmp / rel, data)
    return Path(out)
