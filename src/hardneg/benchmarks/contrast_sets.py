"""Contrast sets (Park et al., NAACL 2022): 5-way multiple choice with one manipulated caption.

The raw-release parser (`parse`) lives here with the declaration:

Contrast sets (MSR-VTT multiple choice): the authors' TSVs plus generator output for the unreleased sets.

Released TSVs: header `clip ending0 ending1 ending2 ending3 ending4 label`, one
release also with `c_label` (the index of the manipulated option). The verb sets
come as one LM-generated and one human-written file; which one a file is comes
from its name (`human` -> verb_human, `lm` -> verb_lm). The random, gender and
LSMDC-IDs sets were never released: `hardneg generate` rebuilds them, and their
output (Parquet or JSONL rows of MC_ITEM_SCHEMA) is taken as extra configs.

Files are recognized by content: a table whose header is `clip ending0..4 label
[c_label]` is a release whatever its extension (a tab-separated file named `.csv` is
read as TSV, and the build report says so); Parquet files (by their magic bytes) and
JSON-lines files of item objects are generator output.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow.parquet as pq

from hardneg.benchmarks.base import Benchmark, Headline, Metric, ReleaseFile, ReportedRow, Source
from hardneg.benchmarks.video_sources import MSRVTT_ZIP
from hardneg.datasets.hub_layout import BenchmarkBuild, ConfigData, release_build
from hardneg.datasets.raw_common import (
    RawFolder,
    RawFormatError,
    check_mc_row,
    delimiter_note,
    first_line,
    loads_json,
    match_header,
    mc_table,
    parse_int,
    provenance,
    read_delimited,
    read_head,
    read_text,
)
from hardneg.schema import CONTRAST_SET_TYPES, MC_ITEM_SCHEMA, check_columns

_T2 = "Park et al., Exposing the Limits of Video-Text Models through Contrast Sets, Table 2 (MSR-VTT)"
_T3 = "Park et al., Exposing the Limits of Video-Text Models through Contrast Sets, Table 3 (LSMDC-IDs)"


def _row(model: str, source: str, **by_config: float) -> ReportedRow:
    return ReportedRow(model, source, {(c, "Accuracy"): v / 100 for c, v in by_config.items()})


#: the pinned sources `hardneg fetch` reads (docs/fetching.md): jamespark3922/video-lang-contrast-set at 26e101db1d70 (2023-02-28)
SOURCE = Source(
    repo="github.com/jamespark3922/video-lang-contrast-set", commit="26e101db1d700a5961261cc152a927c9bcef0c74",
    license="none stated (no LICENSE file; README states no data license)",
    files=(
        ReleaseFile("msrvtt/msrvtt_human_contrast_set.tsv",
                    664724, "d5ebfb8f59299e497cd1a1f5ad16437e391be060ece594f6eb40a9f1013dbe43"),
        ReleaseFile("msrvtt/msrvtt_lm_contrast_set.tsv",
                    630301, "1626eb0b8ca202effac5ea8c7e1572368d7ea0b9a08a288e7a2042453560b90b"),
        ReleaseFile("msrvtt/msrvtt_human_contrast_set.csv",
                    669840, "c0433a62b94b1f2d93842b66669977313734aaaf91e21bff20793820928d646a",
                    raw_name="msrvtt_human_contrast_set_with_c_label.tsv", commit="1b2d7518c2f9a2897acccf1a1c00239d38dd11d1", optional=True),
    ),
    videos=
    MSRVTT_ZIP,
    notes=("HEAD of master (2023-02-28, 'Update README.md'); the .tsv files are unchanged since d254362 "
           "(2022-07-24). realdata's msrvtt_human_contrast_set.tsv equals HEAD's blob; realdata's "
           "_with_c_label.tsv equals the blob of msrvtt/msrvtt_human_contrast_set.csv at 1b2d751 (no other commit "
           "holds it). verb_lm (msrvtt_lm_contrast_set.tsv) is not in realdata; its hash comes from the snapshot."),
)


BENCHMARK = Benchmark(
    source=SOURCE,
    name="contrast_sets",
    title="Contrast sets",
    order=20,
    #: one number: the unweighted mean of Accuracy over the contrast sets (the paper reports them side by side)
    overall=Headline("mean", ("random", "gender", "verb_lm", "verb_human", "id")),
    task="multiple_choice",
    hub_id="video-hardneg/contrast-sets",
    pretty_name="Contrast sets for video-text models (MSR-VTT multiple choice)",
    paper_title="Exposing the Limits of Video-Text Models through Contrast Sets",
    paper_url="https://aclanthology.org/2022.naacl-main.261/",
    citation="""@inproceedings{park2022exposing,
  title     = {Exposing the Limits of Video-Text Models through Contrast Sets},
  author    = {Park, Jae Sung and Shen, Sheng and Farhadi, Ali and Darrell, Trevor and Choi, Yejin and Rohrbach, Anna},
  booktitle = {Proceedings of the 2022 Conference of the North American Chapter of the Association for Computational Linguistics (NAACL)},
  year      = {2022}
}""",
    licenses=("unknown",),
    license_note=(
        "The authors' repository (github.com/jamespark3922/video-lang-contrast-set) states no data license that "
        "we could confirm; the captions come from MSR-VTT, distributed for research use. Configs rebuilt by "
        "video-hardneg generators (random, gender, id) are Apache-2.0 as code output over those captions."
    ),
    description=(
        "Contrast sets test whether a video-text model notices a small, meaningful change in a caption. Each item "
        "is a 5-way multiple choice for one MSR-VTT video: the true caption, one manipulated copy of it (a verb "
        "phrase changed by a language model or by a person, a gender word flipped, or a character ID swapped) "
        "and captions of other videos."
    ),
    negatives=(
        "`verb_lm`: a verb phrase of the positive replaced by a language model, filtered for plausibility and "
        "contradiction. `verb_human`: the same items with a human-written verb replacement. The option named by "
        "`c_label` (`manipulated_index`) has the set's type; the other non-positive options are captions of other "
        "videos (type `random`). Where a release has no `c_label` the non-positive options have type `unknown`. "
        "`random`, `gender` and `id` were never released by the authors: those configs come from video-hardneg's "
        "generators and carry their rule, word map, seed and version in `provenance`."
    ),
    limitations=(
        "Three of the four options are captions of other videos, which most models reject easily, so accuracy "
        "mixes the hard manipulated option with easy random ones: look at the `manipulated` breakdown. The "
        "random, gender and id configs are rebuilt by our generators, not released by the authors, so they are "
        "close to but not the same items as the paper's."
    ),
    source_datasets=("MSR-VTT", "LSMDC"),
    parser="hardneg.benchmarks.contrast_sets:parse",
    raw_files=("*.tsv (clip ending0..4 label [c_label]; 'human'/'lm' in the name),\n"
               "generator output *.parquet / *.jsonl (MC_ITEM_SCHEMA rows)"),
    # `Accuracy` (a 5-way choice accuracy), named `R@1` before video-hardneg 0.2: the same number, renamed so
    # that a metric is named by what it computes (see the card's "Migration" note)
    metrics=(Metric("Accuracy", "R@1", "share of items whose true caption scores highest of the 5 options"),),
    ks=(1,),
    original_ties="expected",
    original_ties_note="the authors' evaluation takes an argmax; their code does not define ties",
    breakdowns=("category",),
    sample="contrast_sets",
    tags=("contrast-sets", "msr-vtt"),
    usage_note=(
        "**Metric: `Accuracy`** (a 5-way choice accuracy; the `accuracy` evaluate module, "
        "`evaluate.load(hardneg.metric_path(\"accuracy\"))`). Migration: before video-hardneg 0.2 this number was "
        "reported as `R@1` (of the `rcad_accuracy` module, in `results.json`, on the board and in submissions); it is "
        "the same value, renamed because a metric is named by what it computes. Old results files keep `R@1`: read "
        "it as `Accuracy`."
    ),
    config_descriptions={
        "random": "5 options, negatives are captions of other videos (rebuilt)",
        "gender": "gender word of the positive flipped (rebuilt)",
        "verb_lm": "verb phrase replaced by a language model (authors' release)",
        "verb_human": "verb phrase replaced by a person (authors' release)",
        "id": "LSMDC character IDs swapped (rebuilt)",
    },
    reported=(
        _row("CLIP zero-shot", _T2, random=91.1, gender=69.6, verb_lm=65.4, verb_human=64.1),
        _row("MMT", _T2, random=97.6, gender=84.0, verb_lm=83.4, verb_human=80.3),
        _row("MMT-CLIP", _T2, random=97.2, gender=84.0, verb_lm=80.9, verb_human=78.3),
        _row("CLIP4CLIP", _T2, random=98.4, gender=82.7, verb_lm=83.7, verb_human=80.2),
        _row("CLIP2Video", _T2, random=98.3, gender=78.5, verb_lm=81.1, verb_human=79.0),
        _row("Human", _T2, verb_lm=92.7, verb_human=94.5),
        _row("CLIP zero-shot (LSMDC-IDs)", _T3, id=39.8),
        _row("MMT (LSMDC-IDs)", _T3, id=65.2),
        _row("MMT-CLIP (LSMDC-IDs)", _T3, id=70.1),
        _row("CLIP4CLIP (LSMDC-IDs)", _T3, id=69.1),
    ),
)


# --- the raw-release parser ---------------------------------------------------------------

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


COLUMNS = ["clip", *ENDINGS, "label"]


def read_tsv(path: Path, delimiter: str = "\t") -> tuple[str, list[dict], list[int]]:
    """Items of one released contrast-set table (tab-separated as released, or comma-separated)."""
    set_type = set_type_of(path)
    items, where = [], []
    for row_no, row in read_delimited(path, delimiter, COLUMNS, optional=["c_label"]):
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
    if read_head(path, 4).startswith("PAR1"):
        try:
            table = pq.read_table(path)
        except Exception as exc:  # pyarrow raises several types for a damaged file
            raise RawFormatError(path, f"not a readable Parquet file ({type(exc).__name__}: {exc})", "re-run hardneg generate, or re-copy the file") from None
        try:
            check_columns(table, MC_ITEM_SCHEMA, str(path))
        except ValueError as exc:
            raise RawFormatError(path, str(exc), "write the rows with hardneg.schema.MC_ITEM_SCHEMA (hardneg generate does)") from None
        rows, where = table.select(MC_ITEM_SCHEMA.names).to_pylist(), list(range(table.num_rows))
    else:
        rows, where = [], []
        for line_no, line in enumerate(read_text(path).splitlines(), start=1):
            if not line.strip():
                continue
            row = loads_json(line, path, row=line_no, what="the line")
            if not isinstance(row, dict):
                raise RawFormatError(path, f"the line is {type(row).__name__} {str(line.strip())[:40]!r}, not a JSON object", "one item object per line (MC_ITEM_SCHEMA fields)", line_no)
            missing = [n for n in MC_ITEM_SCHEMA.names if n not in row]
            if missing:
                raise RawFormatError(path, f"missing fields {missing}", f"each line needs {MC_ITEM_SCHEMA.names}", line_no)
            rows.append({n: row[n] for n in MC_ITEM_SCHEMA.names})
            where.append(line_no)
        if not rows:
            raise RawFormatError(path, "no items in the file", "re-run hardneg generate, or re-copy the file")
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


def _is_item_line(line: str) -> bool:
    try:
        row = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return isinstance(row, dict) and "captions" in row and "label" in row


def parse(raw: Path) -> BenchmarkBuild:
    """Validate and convert the released tables and any generator output under `raw` (recognized by content)."""
    folder = RawFolder(raw, "contrast_sets", lambda p: "contrast" in p.name.lower() or p.suffix.lower() in (".tsv", ".csv", ".jsonl", ".parquet"))
    tables: list[tuple[Path, str]] = []
    generated: list[Path] = []
    for path in folder.files:
        head = read_head(path)
        line = first_line(head)
        if head.startswith("PAR1") or path.suffix.lower() == ".parquet":
            generated.append(path)
        elif (delimiter := match_header(line, COLUMNS)) is not None:
            tables.append((path, delimiter))
        elif "\x00" in head:
            folder.malformed(path, "binary file, neither a contrast-set table nor Parquet")
        elif path.suffix.lower() == ".jsonl" or _is_item_line(line):
            generated.append(path)
        elif path.suffix.lower() == ".tsv" and "contrast" in path.name.lower():
            tables.append((path, "\t"))  # a release name with a wrong header: read it to name the problem
        else:
            folder.malformed(path, f"first line {line[:80]!r} is neither the header clip,ending0..4,label[,c_label] nor an item object")
    if not tables and not generated:
        raise folder.nothing_found("*.tsv (clip ending0..4 label [c_label]) or generator output *.parquet/*.jsonl")
    sets: dict[str, tuple[Path, list[dict], list]] = {}
    report: dict = {"manipulated_index": {}, "c_label_absent": [], "cross_checked_releases": []}
    read_as: dict[Path, str] = {}
    for path, delimiter in tables:
        set_type, items, where = read_tsv(path, delimiter)
        read_as[path] = f"{set_type} release, {delimiter_note(path, delimiter)}, {'with' if items[0]['manipulated_index'] is not None else 'without'} c_label"
        if set_type in sets:
            other_path, other, _ = sets[set_type]
            _merge_same_set(other_path, other, path, items)
            report["cross_checked_releases"].append([folder.rel(other_path), folder.rel(path)])
            if items[0]["manipulated_index"] is None:
                folder.use(path, f"{read_as[path]}: cross-checked row by row against {folder.rel(other_path)}, which is built (it has c_label)")
                continue  # keep the release that has c_label
            folder.use(other_path, f"{read_as[other_path]}: cross-checked row by row against {folder.rel(path)}, which is built (it has c_label)")
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
            read_as[path] = read_as.get(path, "generator output (MC_ITEM_SCHEMA rows)") + f"; {len(items)} {set_type} items"
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
        raw_files.append(folder.rel(path))
        manipulated = [it["manipulated_index"] for it in items]
        if all(m is None for m in manipulated):
            report["c_label_absent"].append(set_type)
        else:
            report["manipulated_index"][set_type] = {str(k): manipulated.count(k) for k in sorted(set(m for m in manipulated if m is not None))}
    report["n_candidates"] = {c.name: sorted(set(len(x) for x in c.splits["test"].column("captions").to_pylist())) for c in configs}
    for path, how in read_as.items():
        if folder.status(path) is None:
            folder.use(path, how)
    for path in generated:  # generator shards are pooled per set: each one is used
        if folder.status(path) is None:
            folder.use(path, "generator output (MC_ITEM_SCHEMA rows)")
    report["files"] = folder.report()
    return release_build("contrast_sets", configs, raw_files, report)
