"""FIRE (Rodriguez et al., EACL Findings 2023): extra relevance labels for MSR-VTT / MSVD retrieval.

The raw-release parser (`parse`) lives here with the declaration:

FIRE: extra relevance judgments for MSR-VTT (1k-A test) and MSVD (test) text-to-video retrieval.

The release is one JSON with `annotations` (pairs whose judgments agree, with a
`label`) and `disagreements` (pairs whose judgments do not), each row carrying
`annotator_ids, video_id, query, annotator_labels, response_ids, queue_ids, models,
dataset`. Judgments of one (query, video) pair are pooled and decided by majority
vote; a tie is kept as an `unresolved` row with label 0, never dropped.

The JSON names queries by their text only, so the original positive of each query
comes from the test split's captions: `<config>_queries.csv` with columns
`video_id,sentence` (optionally `query_id`; the JSFusion MSR-VTT test CSV
`key,vid_key,video_id,sentence` works as is).

Files are recognized by content: the release is the JSON object with `annotations`
/ `disagreements`, whatever its name; a queries file is any table whose header has
`video_id` and `sentence` (comma- or tab-separated, whatever the extension), its
dataset taken from the name (`msrvtt` / `msvd`) or else from the video ids.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa

from hardneg.benchmarks.base import Benchmark, Headline, Metric, ReleaseFile, ReportedRow, Source, VideoSource
from hardneg.benchmarks.video_sources import MSRVTT_ZIP
from hardneg.datasets.hub_layout import BenchmarkBuild, ConfigData, release_build
from hardneg.datasets.raw_common import (
    RawFolder,
    RawFormatError,
    check_text,
    delimiter_note,
    first_line,
    json_kind,
    load_json_strict,
    looks_binary,
    match_header,
    read_delimited,
    read_head,
)
from hardneg.schema import QREL_SCHEMA, QUERY_SCHEMA, VIDEO_SCHEMA

_T1 = "Rodriguez et al., Fighting FIRe with FIRE, Table 1"


def _row(model: str, **by_config: dict) -> ReportedRow:
    """by_config: config -> {metric: (A with FIRE labels, B original labels, C = A - B)} in percent."""
    values = {}
    for config, metrics in by_config.items():
        for key, (a, b, _c) in metrics.items():
            values[(config, key)] = a / 100
            values[(config, f"{key}_original")] = b / 100
    return ReportedRow(model, _T1, values)


def _with_original(key: str, source: str, original_source: str, text: str) -> Metric:
    original = Metric(f"{key}_original", original_source, f"{text}, counting only the caption's own video")
    return Metric(key, source, f"{text}, with the FIRE labels", baseline=original)


#: the pinned sources `hardneg fetch` reads (docs/fetching.md): facebookresearch/mm-retrieval-evaluation at 49ec7239d64e (2022-08-29)
SOURCE = Source(
    repo="github.com/facebookresearch/mm-retrieval-evaluation", commit="49ec7239d64ed40c57fddfde53a49bdb0bfee941",
    license=("LICENSE file: CC BY-NC-SA 4.0; README 'License': CC BY-NC 2.0 (they disagree; the JSON's own "
             "'license' field is the release metadata)"),
    files=(
        ReleaseFile("data/fire_msrvtt_dataset.json",
                    6809410, "db0fff4323d14d3107e7377cfa091efebd4f413f1b1864c72528de136a7ce0c2", lfs=True),
        ReleaseFile("data/fire_msvd_dataset.json",
                    158573971, "8506c9f55fa3f47301449c440d5491eb11344181bc0920b5e32f29234a95330a", lfs=True),
        ReleaseFile("data/fire_aggregated_dataset.json",
                    165382935, "cd8dea6f7931dfd61176c746cff0b7012351ec144410dd9cf092360dab7b1607", optional=True, lfs=True),
    ),
    videos=(
        replace(MSRVTT_ZIP, part="msrvtt"),
        VideoSource(
            "manual", official="https://www.cs.utexas.edu/users/ml/clamp/videoDescription/YouTubeClips.tar",
            steps=(("Download YouTubeClips.tar from "
                    "https://www.cs.utexas.edu/users/ml/clamp/videoDescription/YouTubeClips.tar (the URL FIRE's "
                    "bin/download_data.sh uses; size and sha256 not published)"), "tar xf YouTubeClips.tar  -> YouTubeClips/<ytid>_<start>_<end>.avi (1,970 clips)", ("keep the 670 test clips (CLIP4Clip msvd_data.zip test_list.txt) or all; FIRE converts them "
                    "to mp4 with msvd_to_mp4.py; hardneg reads .avi as is if its decoder does, else convert"), "pass the folder: video id = file name without extension (e.g. -4wsuPCjDBc_5_15)",),
            why=("no pinned, hash-known Hub copy found; the UT Austin tarball is the official source (no licence "
                 "text; research use)"),
            part="msvd",
            evidence=("facebookresearch/mm-retrieval-evaluation@49ec7239 bin/download_data.sh, msvd_to_mp4.py, "
                      "mmr/tasks.py MsvdData (data/msvd_data/test_list.txt, raw-captions.pkl)")),
    ),
    notes=("FIRE's release: the repo the paper's first-page footnote (pedro.ai/multimodal-retrieval-evaluation) "
           "points to, archived on GitHub. All data files are Git LFS (.gitattributes: data/*.json, "
           "data/predictions.zip); the pointers at 49ec723 are unchanged since the initial commit 4d86dce "
           "(2022-06-27). Found via find_string '2210.05038' (a public lab notebook citing the footnote) after "
           "searching code/docs/issues for 'Fighting FIRe with FIRE' without a link."),
)


BENCHMARK = Benchmark(
    source=SOURCE,
    name="fire",
    title="FIRE",
    order=40,
    #: one number: the unweighted mean of C@1 over the re-annotated datasets (Table 1 columns)
    overall=Headline("mean", ("msrvtt", "msvd")),
    task="retrieval",
    hub_id="video-hardneg/fire",
    pretty_name="FIRE: extra relevance labels for MSR-VTT and MSVD text-to-video retrieval",
    paper_title="Fighting FIRe with FIRE: Assessing the Validity of Text-to-Video Retrieval Benchmarks",
    paper_url="https://aclanthology.org/2023.findings-eacl.5/",
    citation="""@inproceedings{rodriguez2023fighting,
  title     = {Fighting {FIRe} with {FIRE}: Assessing the Validity of Text-to-Video Retrieval Benchmarks},
  author    = {Rodriguez, Pedro and Azab, Mahmoud and Silvert, Becka and Sanchez, Renato and Labson, Linzy and Shah, Hardik and Moon, Seungwhan},
  booktitle = {Findings of the Association for Computational Linguistics: EACL 2023},
  year      = {2023}
}""",
    licenses=("cc-by-nc-sa-4.0", "cc-by-nc-2.0"),
    license_note=(
        "The FIRE data's LICENSE file says CC BY-NC-SA 4.0 while its README says CC BY-NC 2.0; both are recorded "
        "here until the authors resolve it: use the data under the stricter terms (non-commercial, share-alike). "
        "Captions and videos belong to MSR-VTT and MSVD."
    ),
    description=(
        "Text-to-video retrieval benchmarks count only a caption's own video as relevant, so a model that returns "
        "another matching video is marked wrong. FIRE adds human relevance judgments of the top-10 predictions of "
        "several models on MSR-VTT (1k-A test) and MSVD (test), so metrics can be computed with the original "
        "positives only, with FIRE positives, and their difference (\"A (B + C)\")."
    ),
    negatives=(
        "Not negatives but extra positives: annotators marked a (caption, video) pair relevant only if everything the "
        "caption mentions is in the video. Judgments of one pair are pooled and decided by majority vote; ties are "
        "kept with `unresolved = true` and label 0. Rows with `source = original` are the benchmark's own pairs."
    ),
    limitations=(
        "Only the top-10 predictions of the judged models were labelled, so a relevant video that none of them "
        "ranked high stays unlabelled (pooling bias; `hardneg analyze fire-pooling-bias`). Models that were not "
        "judged are favoured less by the extra labels than the judged ones."
    ),
    source_datasets=("MSR-VTT", "MSVD"),
    parser="hardneg.benchmarks.fire:parse",
    raw_files="the release JSON (annotations, disagreements) + <config>_queries.csv (video_id,sentence)",
    metrics=(
        _with_original("C@1", "C@1", "R@1", "share of queries with a relevant video ranked first"),
        _with_original("C@5", "C@5", "R@5", "share of queries with a relevant video in the top 5"),
        _with_original("C@10", "C@10", "R@10", "share of queries with a relevant video in the top 10"),
        _with_original("mAP", "AP", "AP_original", "mean average precision (FIRE Eq. 2)"),
    ),
    ks=(1, 5, 10),
    original_ties="fire",
    original_ties_note="FIRE code: stable descending argsort; AP over relevant videos found in the top 20",
    sample="fire",
    tags=("fire", "text-to-video-retrieval", "msr-vtt", "msvd"),
    companion_suffixes=("-queries", "-videos"),
    usage_note=(
        "Each row of `<name>-queries` carries `relevant` (indices into the `<name>-videos` table's row order of every "
        "video judged relevant) and `original` (the index of the caption's own video), so `references` and "
        "`original` of the `correct_at_k` and `mean_average_precision` modules come straight from it. The "
        "`<name>` config holds every judged (query, video) row with its votes."
    ),
    reported=(
        _row("TeachText",
             msrvtt={"C@1": (24.1, 23.3, 0.8), "C@5": (53.2, 50.9, 2.3), "C@10": (67.0, 64.8, 2.2), "mAP": (36.1, 35.8, 0.296)},
             msvd={"C@1": (34.7, 19.6, 15.2), "C@5": (64.7, 48.9, 15.8), "C@10": (76.1, 63.9, 12.2), "mAP": (44.3, 33.1, 11.2)}),
        _row("Support-Set Bottlenecks (ssb)",
             msrvtt={"C@1": (27.3, 26.8, 0.5), "C@5": (55.9, 54.5, 1.4), "C@10": (68.9, 66.3, 2.6), "mAP": (39.3, 39.2, 0.0374)}),
        _row("CLIP4Clip",
             msrvtt={"C@1": (67.4, 42.4, 25.0), "C@5": (90.7, 70.4, 20.3), "C@10": (95.7, 80.2, 15.5), "mAP": (69.5, 54.9, 14.7)},
             msvd={"C@1": (65.3, 46.6, 18.8), "C@5": (89.6, 76.8, 12.8), "C@10": (94.0, 85.4, 8.61), "mAP": (71.3, 59.7, 11.6)}),
    ),
)


# --- the raw-release parser ---------------------------------------------------------------

DATASETS = {"MSRVTT": "msrvtt", "MSVD": "msvd"}
SOURCE_SPLIT = {"msrvtt": "test-1k-A", "msvd": "test"}
LABELS = {"relevant": 1, "irrelevant": 0}
FIELDS = ("annotator_ids", "video_id", "query", "annotator_labels", "response_ids", "queue_ids", "models", "dataset")
_NEEDED = frozenset(FIELDS)
_NEEDED_WITH_LABEL = frozenset(FIELDS + ("label",))
#: The paper's Table 2, for the build report to compare against.
PAPER_TABLE2 = {
    "msrvtt": {"pairs": 24_183, "labels": 24_507, "agreement": 24_167, "relevant": 2_855, "irrelevant": 21_312, "disagreement": 16},
    "msvd": {"pairs": 555_391, "labels": 659_126, "agreement": 553_832, "relevant": 39_909, "irrelevant": 513_923, "disagreement": 1_559},
}



def normalize(text: str) -> str:
    """Query text as matched between the FIRE JSON and the captions file."""
    return " ".join(text.split())


QUERY_COLUMNS = ["video_id", "sentence"]
QUERY_OPTIONAL = ["query_id", "key", "vid_key"]
_LIST_FIELDS = ("annotator_ids", "response_ids", "queue_ids", "models")
_VIDEO_IDS = {"msrvtt": re.compile(r"video[0-9]+"), "msvd": re.compile(r"[A-Za-z0-9_-]{11}_[0-9]+_[0-9]+")}


def find_release(raw: Path, folder: RawFolder | None = None) -> Path:
    """The release JSON (an object with 'annotations'/'disagreements'), recognized by content."""
    folder = folder or RawFolder(raw, "fire")
    candidates = []
    for path in folder.files:
        head = read_head(path, 4096)
        if json_kind(head) != "object":
            if path.suffix.lower() == ".json":  # named as the release is, but not a JSON object
                folder.malformed(path, f"not a JSON object (it starts {head[:40]!r})")
            continue
        if '"annotations"' in head or '"disagreements"' in head:
            candidates.append(path)
            continue
        try:
            data = load_json_strict(path, check_duplicate_keys=False)
        except RawFormatError as exc:
            folder.malformed(path, f"not readable as JSON, so not the release ({exc})")
            continue
        if isinstance(data, dict) and ("annotations" in data or "disagreements" in data):
            candidates.append(path)
        else:
            folder.malformed(path, "JSON without 'annotations' or 'disagreements', not the FIRE release")
    if not candidates:
        raise folder.nothing_found("the FIRE release JSON, *.json (an object with 'annotations' and 'disagreements')")
    if len(candidates) > 1:
        raise ValueError(f"{raw}: several FIRE JSON files {[folder.rel(p) for p in candidates]}; keep one release in the raw folder")
    return candidates[0]


def _check_row(row: Any, path: Path, where: str, with_label: bool) -> tuple[str, str, str, list[int]]:
    """(config, query, video, judgments as 0/1) of one annotation or disagreement row."""
    if not isinstance(row, dict):
        raise RawFormatError(path, "entry is not an object", "each entry is an object with the FIRE fields", where)
    needed = _NEEDED_WITH_LABEL if with_label else _NEEDED
    if not needed <= row.keys():
        missing = sorted(needed - row.keys())
        raise RawFormatError(path, f"missing fields {missing}", f"entries need {sorted(needed)}", where)
    dataset = DATASETS.get(row["dataset"].upper()) if isinstance(row["dataset"], str) else None
    if dataset is None:
        raise RawFormatError(path, f"field 'dataset' is {row['dataset']!r}, not a known dataset", f"use one of {list(DATASETS)}", where)
    for f in ("query", "video_id"):
        check_text(row[f], path, where, f, f"every entry needs its {f} as a non-empty string; re-download the release")
    for f in _LIST_FIELDS:
        if not isinstance(row[f], list):
            raise RawFormatError(path, f"field '{f}' is {type(row[f]).__name__} {str(row[f])[:40]!r}, not a list", "re-download the release", where)
    labels = row["annotator_labels"]
    try:
        votes = [LABELS[lab] for lab in labels] if isinstance(labels, list) else None
    except (KeyError, TypeError):
        votes = None
    if votes is None:
        raise RawFormatError(path, f"annotator_labels {labels!r} are not a list of 'relevant'/'irrelevant'", "re-download the release", where)
    if with_label:
        if not isinstance(row["label"], str) or row["label"] not in LABELS:
            raise RawFormatError(path, f"label {row['label']!r} is not 'relevant' or 'irrelevant'", "re-download the release", where)
        if not votes:
            votes = [LABELS[row["label"]]]
    elif not votes:
        raise RawFormatError(path, "a disagreement without annotator_labels", "re-download the release", where)
    return dataset, row["query"], row["video_id"].strip(), votes


def read_release(path: Path) -> tuple[dict[str, dict], dict[str, Any]]:
    """Pooled judgments per config: {(normalized query, video): [0/1 votes]}, and row statistics."""
    data = load_json_strict(path, check_duplicate_keys=False)  # records are a list; repeated pairs are pooled
    if not isinstance(data, dict) or not isinstance(data.get("annotations"), list) or not isinstance(data.get("disagreements", []), list):
        raise RawFormatError(path, "top level must be an object with lists 'annotations' and 'disagreements'", "re-download the FIRE release", row=1)
    pooled: dict[str, dict[tuple[str, str], list[int]]] = {}
    stats: dict[str, dict[str, int]] = {}
    for kind, with_label in (("annotations", True), ("disagreements", False)):
        for i, row in enumerate(data.get(kind, [])):
            config, query, video, votes = _check_row(row, path, f"{kind}[{i}]", with_label)
            s = stats.setdefault(config, {"annotation_rows": 0, "disagreement_rows": 0, "labels": 0, "label_differs_from_vote": 0})
            s["annotation_rows" if with_label else "disagreement_rows"] += 1
            s["labels"] += len(votes)
            if with_label and 2 * sum(votes) != len(votes) and int(2 * sum(votes) > len(votes)) != LABELS[row["label"]]:
                s["label_differs_from_vote"] += 1
            pooled.setdefault(config, {}).setdefault((normalize(query), video), []).extend(votes)
    meta = {k: data[k] for k in ("license", "website", "source_ds", "created_ds", "datasets") if k in data}
    return pooled, {"rows": stats, "release_metadata": meta}


def read_queries(path: Path, config: str, delimiter: str | None = None, table: list | None = None) -> list[dict[str, str]]:
    """Queries in file order with ids; error on duplicate ids."""
    rows = []
    seen: dict[str, int] = {}
    delimiter = delimiter or ("\t" if path.suffix == ".tsv" else ",")
    table = read_delimited(path, delimiter, QUERY_COLUMNS, optional=QUERY_OPTIONAL) if table is None else table
    for row_no, row in table:
        text, video = row["sentence"].strip(), row["video_id"].strip()
        if not text or not video:
            raise RawFormatError(path, "missing sentence or video_id", "every query needs its text and its original video", row_no)
        qid = (row.get("query_id") or row.get("key") or f"{config}-q{len(rows):05d}").strip()
        if qid in seen:
            raise RawFormatError(path, f"duplicate query id {qid!r} (first at row {seen[qid]})", "query ids must be unique", row_no)
        seen[qid] = row_no
        rows.append({"query_id": qid, "text": text, "video_id": video})
    if not rows:
        raise RawFormatError(path, "no queries after the header", "list the test split's captions")
    return rows


def vote(votes: list[int]) -> tuple[int, float, bool]:
    """(label, agreement with it, unresolved) by majority; a tie is unresolved with label 0."""
    n, r = len(votes), sum(votes)
    if 2 * r == n:
        return 0, 0.5, True
    label = int(2 * r > n)
    return label, (r if label else n - r) / n, False


def build_config(config: str, queries: list[dict], pairs: dict[tuple[str, str], list[int]], queries_path: Path, release: Path):
    """The qrels, queries and videos tables of one source dataset, and its counts."""
    by_text: dict[str, list[int]] = {}
    for qi, q in enumerate(queries):
        by_text.setdefault(normalize(q["text"]), []).append(qi)
    unmatched = sorted({t for t, _ in pairs if t not in by_text})
    if unmatched:
        raise RawFormatError(
            release,
            f"{len(unmatched)} {config} queries are not in {queries_path.name}, e.g. {unmatched[0]!r}",
            f"give the captions of the split FIRE annotated ({SOURCE_SPLIT[config]}) in {queries_path.name}",
        )
    per_query: list[list[tuple[str, list[int]]]] = [[] for _ in queries]
    for (text, video), votes in pairs.items():
        for qi in by_text[text]:
            per_query[qi].append((video, votes))
    counts = {"pairs": len(pairs), "relevant": 0, "irrelevant": 0, "unresolved": 0, "original_judged_irrelevant": 0, "fire_positive_rows": 0}
    for votes in pairs.values():
        label, _, unresolved = vote(votes)
        counts["unresolved" if unresolved else ("relevant" if label else "irrelevant")] += 1

    rows: list[tuple] = []  # (query_id, video_id, label, source, n_judgments, agreement, unresolved)
    for q, judged in zip(queries, per_query):
        judged_map = dict(judged)
        orig = judged_map.pop(q["video_id"], None)
        if orig is None:
            rows.append((q["query_id"], q["video_id"], 1, "original", 0, None, False))
        else:
            counts["original_judged_irrelevant"] += int(2 * sum(orig) < len(orig))
            rows.append((q["query_id"], q["video_id"], 1, "original", len(orig), sum(orig) / len(orig), False))
        for video in sorted(judged_map):
            label, agreement, unresolved = vote(judged_map[video])
            counts["fire_positive_rows"] += label
            rows.append((q["query_id"], video, label, "fire", len(judged_map[video]), agreement, unresolved))
    columns = list(zip(*rows)) if rows else [[] for _ in QREL_SCHEMA]
    qrels = pa.Table.from_arrays([pa.array(list(c), type=f.type) for c, f in zip(columns, QREL_SCHEMA)], schema=QREL_SCHEMA)
    qtable = pa.Table.from_pylist(
        [{**q, "source_dataset": config, "source_split": SOURCE_SPLIT[config]} for q in queries],
        schema=pa.schema([f for f in QUERY_SCHEMA if f.name not in ("relevant", "original")]),
    )
    order = list(dict.fromkeys(q["video_id"] for q in queries))
    extra = sorted({v for _, v in pairs} - set(order))
    videos = pa.Table.from_pylist([{"video_id": v, "source_dataset": config} for v in order + extra], schema=VIDEO_SCHEMA)
    # each query's relevant videos and its own video as row indices of the videos table, so a user's
    # `references` for the retrieval modules come straight from the queries config (one join, here)
    from hardneg.items import relevant_lists

    _, original, relevant = relevant_lists(qtable, videos, qrels)
    qtable = qtable.append_column(QUERY_SCHEMA.field("relevant"), pa.array(relevant, QUERY_SCHEMA.field("relevant").type))
    qtable = qtable.append_column(QUERY_SCHEMA.field("original"), pa.array(original.tolist(), pa.int64()))
    counts.update({"queries": len(queries), "videos": videos.num_rows, "qrel_rows": qrels.num_rows, "videos_only_in_fire": len(extra)})
    return qrels, qtable, videos, counts


def config_of_queries(path: Path, table: list[tuple[int, dict[str, str]]]) -> str:
    """msrvtt or msvd: from the file name, else from the video ids."""
    words = set(re.split(r"[^a-z0-9]+", path.stem.lower()))
    named = [c for c in ("msrvtt", "msvd") if c in words or (c == "msrvtt" and "msr" in words)]
    if len(named) == 1:
        return named[0]
    ids = [r["video_id"].strip() for _, r in table]
    by_ids = [c for c, pattern in _VIDEO_IDS.items() if ids and all(pattern.fullmatch(v) for v in ids)]
    if len(by_ids) == 1:
        return by_ids[0]
    raise RawFormatError(path, "cannot tell from the file name or the video ids whether these are MSR-VTT or MSVD queries", "rename it msrvtt_queries.csv or msvd_queries.csv")


def parse(raw: Path) -> BenchmarkBuild:
    """Validate and convert the FIRE release JSON and the queries files under `raw` (recognized by content)."""
    folder = RawFolder(raw, "fire", lambda p: p.suffix.lower() in (".json", ".csv", ".tsv") or "queries" in p.name.lower())
    release = find_release(raw, folder)
    query_files: dict[str, tuple[Path, str, list]] = {}
    for path in folder.files:
        if path == release or folder.status(path) is not None:
            continue
        head = read_head(path)
        delimiter = match_header(first_line(head), QUERY_COLUMNS)
        if delimiter is None and looks_binary(head):
            folder.malformed(path, "binary file, neither the release JSON nor a queries table")
            continue
        if delimiter is None:
            if re.fullmatch(r"(msrvtt|msvd)_queries\.(csv|tsv)", path.name):
                read_delimited(path, "\t" if path.suffix == ".tsv" else ",", QUERY_COLUMNS, optional=QUERY_OPTIONAL)  # names the wrong header
            folder.malformed(path, f"first line {first_line(head)[:80]!r} is not a queries header (video_id,sentence[,query_id])")
            continue
        table = read_delimited(path, delimiter, QUERY_COLUMNS, optional=QUERY_OPTIONAL)
        config = config_of_queries(path, table)
        if config in query_files:
            raise RawFormatError(path, f"a second {config} queries file (first: {folder.rel(query_files[config][0])})", "keep one queries file per dataset")
        query_files[config] = (path, delimiter, table)
    pooled, stats = read_release(release)
    folder.use(release, "FIRE release JSON (annotations, disagreements): " + ", ".join(
        f"{c}: {s['annotation_rows']:,} annotation + {s['disagreement_rows']:,} disagreement rows" for c, s in sorted(stats["rows"].items())))
    configs: list[ConfigData] = []
    raw_files = [folder.rel(release)]
    report: dict[str, Any] = {"release": stats, "paper_table2": PAPER_TABLE2, "counts_by_vote": {}}
    for config in ("msrvtt", "msvd"):
        if config not in pooled:
            if config in query_files:
                folder.ignore(query_files[config][0], f"{config} queries, but the release has no {config} judgments")
            continue
        if config not in query_files:
            raise FileNotFoundError(
                f"{raw}: FIRE has {config} judgments but no {config}_queries.csv (columns video_id,sentence[,query_id]) "
                f"listing the {SOURCE_SPLIT[config]} captions with their original video; for MSR-VTT the JSFusion "
                "test CSV (key,vid_key,video_id,sentence) can be copied as is"
            )
        qpath, delimiter, table = query_files[config]
        queries = read_queries(qpath, config, delimiter, table)
        qrels, qtable, videos, counts = build_config(config, queries, pooled[config], qpath, release)
        report["counts_by_vote"][config] = counts
        raw_files.append(folder.rel(qpath))
        folder.use(qpath, f"{config} queries: {len(queries):,} captions with their original video, {delimiter_note(qpath, delimiter)}")
        name = config.upper().replace("MSRVTT", "MSR-VTT")
        configs += [
            ConfigData(config, {"test": qrels}, f"{name} relevance rows (original + FIRE)"),
            ConfigData(f"{config}-queries", {"test": qtable}, f"{name} queries (captions) with their original video"),
            ConfigData(f"{config}-videos", {"test": videos}, f"{name} video collection"),
        ]
    if not configs:
        raise RawFormatError(release, "no annotations for MSRVTT or MSVD", "re-download the FIRE release")
    report["files"] = folder.report()
    return release_build("fire", configs, raw_files, report)
