"""Contrast sets (MSR-VTT multiple choice): the authors' TSVs plus generator output for the unreleased sets.

Released TSVs: header `clip ending0 ending1 ending2 ending3 ending4 label`, one
release also with `c_label` (the index of the manipulated option). The verb sets
come as one LM-generated and one human-written file; which one a file is comes
from its name (`human` -> verb_human, `lm` -> verb_lm). The random, gender and
LSMDC-IDs sets were never released: `hardneg generate` rebuilds them, and their
output (Parquet or JSONL rows of MC_ITEM_SCHEMA) is taken as extra configs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow.parquet as pq

from hardneg.datasets.hub_layout import BenchmarkBuild, ConfigData, release_build
from hardneg.datasets.raw_common import RawFormatError, check_mc_row, mc_table, parse_int, provenance, read_delimited
from hardneg.schema import CONTRAST_SET_TYPES, MC_ITEM_SCHEMA, check_columns

N_OPTIONS = 5
#: Config order in the card: the authors' releases first (the first is the default config).
CONFIG_ORDER = ("verb_human", "verb_lm", "random", "gender", "id")
ENDINGS = [f"ending{j}" for j in range(N_OPTIONS)]



def set_type_of(path: Path) -> str:
    """verb_human or verb_lm, from the file name."""
    name = path.stem.lower()
    if "human" in name:
        return "verb_human"
    if "lm" in re.split(r"[^a-z0-9]+", name):
        return "verb_lm"
    raise RawFormatError(path, "cannot tell from the file name whether this is the human or the LM verb set", "rename it to contain 'human' or 'lm' (e.g. msrvtt_lm_contrast_set.tsv)")


def read_tsv(path: Path) -> tuple[str, list[dict], list[int]]:
    """Items of one released contrast-set TSV."""
    set_type = set_type_of(path)
    items, where = [], []
    for row_no, row in read_delimited(path, "\t", ["clip", *ENDINGS, "label"], optional=["c_label"]):
        clip = row["clip"].strip()
        if not clip:
            raise RawFormatError(path, "empty clip id", "write the MSR-VTT video id (e.g. video9770)", row_no)
        captions = [row[e].strip() for e in ENDINGS]
        for j, c in enumerate(captions):
            if not c:
                raise RawFormatError(path, f"missing caption ending{j} for clip {clip!r}", "fill in all five endings", row_no)
        label = parse_int(row["label"], path, row_no, "label", 0, N_OPTIONS - 1)
        manipulated = None
        if "c_label" in row:
            manipulated = parse_int(row["c_label"], path, row_no, "c_label", 0, N_OPTIONS - 1)
            if manipulated == label:
                raise RawFormatError(path, f"c_label equals label ({label})", "c_label is the index of the manipulated (negative) option", row_no)
        types, prov = [], []
        for j in range(N_OPTIONS):
            if j == label:
                types.append("positive")
                prov.append(provenance("positive", details={"source": "msrvtt caption"}))
            elif manipulated is None:
                types.append("unknown")
                prov.append(provenance("dataset", details={"note": "manipulated or random option; c_label absent from this release"}))
            elif j == manipulated:
                types.append(set_type)
                prov.append(
                    provenance(
                        "human" if set_type == "verb_human" else "generator",
                        generator=None if set_type == "verb_human" else "contrast-sets-verb-lm",
                        generator_version=None if set_type == "verb_human" else "authors-release",
                        pos="verb",
                    )
                )
            else:
                types.append("random")
                prov.append(provenance("dataset", details={"source": "caption of another msrvtt video"}))
        items.append(
            {
                "id": f"{set_type}:{clip}",
                "video_id": clip,
                "source_dataset": "msrvtt",
                "source_split": "test",
                "category": set_type,
                "captions": captions,
                "label": label,
                "manipulated_index": manipulated,
                "negative_types": types,
                "provenance": prov,
            }
        )
        where.append(row_no)
    if not items:
        raise RawFormatError(path, "no rows after the header", "re-download the file")
    return set_type, items, where


def read_generated(path: Path) -> dict[str, tuple[list[dict], list]]:
    """Generator output (MC_ITEM_SCHEMA rows) grouped by `category` (the set type)."""
    if path.suffix == ".parquet":
        table = pq.read_table(path)
        try:
            check_columns(table, MC_ITEM_SCHEMA, str(path))
        except ValueError as exc:
            raise RawFormatError(path, str(exc), "write the rows with hardneg.schema.MC_ITEM_SCHEMA (hardneg generate does)") from None
        rows, where = table.select(MC_ITEM_SCHEMA.names).to_pylist(), list(range(table.num_rows))
    else:
        rows, where = [], []
        with open(path, encoding="utf-8") as fh:
            for line_no, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise RawFormatError(path, f"invalid JSON ({exc.msg})", "one JSON object per line; the line may be truncated", line_no) from None
                missing = [n for n in MC_ITEM_SCHEMA.names if n not in row]
                if missing:
                    raise RawFormatError(path, f"missing fields {missing}", f"each line needs {MC_ITEM_SCHEMA.names}", line_no)
                rows.append({n: row[n] for n in MC_ITEM_SCHEMA.names})
                where.append(line_no)
    groups: dict[str, tuple[list[dict], list]] = {}
    for row, at in zip(rows, where):
        check_mc_row(row, path, at)
        category = row.get("category")
        if category not in CONTRAST_SET_TYPES:
            raise RawFormatError(path, f"category {category!r} is not a contrast-set type", f"set category to one of {list(CONTRAST_SET_TYPES)}", at)
        groups.setdefault(category, ([], []))
        groups[category][0].append(row)
        groups[category][1].append(at)
    return groups


def _merge_same_set(path_a: Path, a: list[dict], path_b: Path, b: list[dict]) -> None:
    """Two releases of one set (with and without c_label) must agree on everything but c_label."""
    if len(a) != len(b):
        raise RawFormatError(path_b, f"{len(b)} items while {path_a.name} has {len(a)}", "both files should be releases of the same set")
    for i, (x, y) in enumerate(zip(a, b)):
        if (x["video_id"], x["captions"], x["label"]) != (y["video_id"], y["captions"], y["label"]):
            raise RawFormatError(path_b, f"differs from {path_a.name} (clip {y['video_id']!r})", "keep only one release of each set in the raw folder", i + 2)


def parse(raw: Path) -> BenchmarkBuild:
    """Validate and convert the released TSVs and any generator output in `raw`."""
    tsvs = sorted(raw.glob("*.tsv"))
    generated = sorted([*raw.glob("*.parquet"), *raw.glob("*.jsonl")])
    if not tsvs and not generated:
        raise FileNotFoundError(f"{raw}: no contrast-set file found; expected *.tsv (clip ending0..4 label [c_label]) or generator output *.parquet/*.jsonl")
    sets: dict[str, tuple[Path, list[dict], list]] = {}
    report: dict = {"manipulated_index": {}, "c_label_absent": [], "cross_checked_releases": []}
    for path in tsvs:
        set_type, items, where = read_tsv(path)
        if set_type in sets:
            other_path, other, _ = sets[set_type]
            _merge_same_set(other_path, other, path, items)
            report["cross_checked_releases"].append([other_path.name, path.name])
            if items[0]["manipulated_index"] is None:
                continue  # keep the release that has c_label
        sets[set_type] = (path, items, where)
    # generator output may come as several shards: pool them per set, in id order (shard-independent bytes)
    pooled: dict[str, list[tuple[dict, str]]] = {}
    first_file: dict[str, Path] = {}
    for path in generated:
        for set_type, (items, where) in read_generated(path).items():
            if set_type in sets:
                raise RawFormatError(path, f"set {set_type!r} is also given by {sets[set_type][0].name}", "keep one source per set type")
            first_file.setdefault(set_type, path)
            pooled.setdefault(set_type, []).extend((it, f"{at} of {path.name}") for it, at in zip(items, where))
    for set_type, pairs in pooled.items():
        pairs.sort(key=lambda p: p[0]["id"])
        sets[set_type] = (first_file[set_type], [p[0] for p in pairs], [p[1] for p in pairs])
    configs, raw_files = [], []
    for set_type in CONFIG_ORDER:
        if set_type not in sets:
            continue
        path, items, where = sets[set_type]
        table = mc_table(items, path, where)
        configs.append(ConfigData(set_type, {"test": table}))
        raw_files.append(path.name)
        manipulated = [it["manipulated_index"] for it in items]
        if all(m is None for m in manipulated):
            report["c_label_absent"].append(set_type)
        else:
            report["manipulated_index"][set_type] = {str(k): manipulated.count(k) for k in sorted(set(m for m in manipulated if m is not None))}
    report["n_candidates"] = {c.name: sorted(set(len(x) for x in c.splits["test"].column("captions").to_pylist())) for c in configs}
    return release_build("contrast_sets", configs, raw_files, report)


