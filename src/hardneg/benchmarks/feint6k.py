"""Feint6K / RCAD (Ma et al., ECCV 2024): one video, its caption and five human action counterfactuals.

The raw-release parser (`parse`) lives here with the declaration:

Feint6K (RCAD): `feint6k_<dataset>.csv`, columns `video_id, sentence`, blocks of 6 rows per video.

Each block is the positive caption first, then five human-written action
counterfactuals of it. A block that is not six rows of one video is rejected.

Files are recognized by their header (`video_id,sentence`, comma- or tab-separated,
whatever the extension) or by the release names. The dataset comes from the name
(`msrvtt` / `vatex`) or, failing that, from the video ids (`video123` is MSR-VTT,
`<YouTube id>_<start>_<end>` is VATEX).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from hardneg.benchmarks.base import Benchmark, Headline, Metric, ReportedRow, Source
from hardneg.benchmarks.video_sources import MSRVTT_ZIP, VATEX_ZIP
from hardneg.datasets.hub_layout import BenchmarkBuild, ConfigData, release_build
from hardneg.datasets.raw_common import (
    RawFolder,
    RawFormatError,
    delimiter_note,
    first_line,
    looks_binary,
    match_header,
    mc_table,
    provenance,
    read_delimited,
    read_head,
)

_T1 = "Ma et al., Rethinking Video-Text Understanding (Feint6K), Table 1"


def _row(model: str, msrvtt=None, vatex=None) -> ReportedRow:
    values = {}
    for config, triple in (("msrvtt", msrvtt), ("vatex", vatex)):
        for key, v in zip(("R@1", "R@2", "MeanR"), triple or ()):
            if v is not None:
                values[(config, key)] = v / 100 if key != "MeanR" else v
    return ReportedRow(model, _T1, values)


#: the pinned sources `hardneg fetch` reads (docs/fetching.md): facebookresearch/feint6k at e9ba73505bc3 (2024-07-24)
SOURCE = Source(
    repo="github.com/facebookresearch/feint6k", commit="e9ba73505bc33e7867914a2cbbec7cb49c383feb",
    license="CC BY-NC 4.0 (LICENSE in the repo)",
    files=(
    ),
    videos=(
        replace(MSRVTT_ZIP, part="msrvtt"),
        replace(VATEX_ZIP, part="vatex"),
    ),
    notes=("The git repo (HEAD e9ba735 of main, 2024-07-24, 'Initial commit' squash) holds only README, LICENSE, "
           "compute_sim_mat_languagebind.py and eval_rcad.py (git ls-tree). The release CSVs are only on Google "
           "Drive (a folder, not a file id: a download needs the Drive API or gdown --folder). A Hub repo "
           "facebook/feint6k exists (CC BY-NC 4.0, one commit 843a631 'initial commit', Oct 2024) but holds only "
           ".gitattributes and a 33-byte README: no data. So no hash-pinned source exists today: `hardneg fetch "
           "feint6k` must print the Drive URL and ask the user to place the two CSVs (then verify by row "
           "structure, and record their sha256). Where the files are (no hash to pin them by): "
           "feint6k_msrvtt.csv: https://drive.google.com/drive/folders/1saIVSNPsmQZ_lmlVWzw2rkDfW67ZGAal; "
           "feint6k_vatex.csv: https://drive.google.com/drive/folders/1saIVSNPsmQZ_lmlVWzw2rkDfW67ZGAal."),
)


BENCHMARK = Benchmark(
    source=SOURCE,
    name="feint6k",
    title="Feint6K (RCAD)",
    order=10,
    #: one number: the unweighted mean of R@1 over the two source datasets (the paper's Table 1 columns)
    overall=Headline("mean", ("msrvtt", "vatex")),
    task="multiple_choice",
    hub_id="video-hardneg/feint6k",
    pretty_name="Feint6K (retrieval from counterfactually augmented data)",
    paper_title="Rethinking Video-Text Understanding: Retrieval from Counterfactually Augmented Data",
    paper_url="https://arxiv.org/abs/2407.13094",
    citation="""@inproceedings{ma2024rethinking,
  title     = {Rethinking Video-Text Understanding: Retrieval from Counterfactually Augmented Data},
  author    = {Ma, Wufei and Li, Kai and Jiang, Zhongshi and Meshry, Moustafa and Liu, Qihao and Wang, Huiyu and H{\\"a}ne, Christian and Yuille, Alan},
  booktitle = {European Conference on Computer Vision (ECCV)},
  year      = {2024}
}""",
    licenses=("cc-by-nc-4.0",),
    license_note="CC BY-NC 4.0, as released by the Feint6K authors. The videos belong to MSR-VTT and VATEX and keep their own terms.",
    description=(
        "Feint6K tests whether a video-text model understands the actions in a video rather than the objects "
        "visible in one frame: each video comes with its caption and five captions where a person changed the "
        "action to something plausible that does not happen. The model must rank the true caption first (RCAD: "
        "R@1, R@2, mean rank; random guessing gives R@1 = 1/6)."
    ),
    negatives=(
        "Human annotators rewrote the action of each positive caption (human-in-the-loop with review). "
        "Every negative has type `counterfactual` and provenance origin `human`; the positive is the original "
        "MSR-VTT or VATEX caption."
    ),
    limitations=(
        "Only 6 candidates per video, so R@2 is easy (chance 33%). Counterfactuals were written by annotators who "
        "saw the video, but not every counterfactual is impossible in every frame. The authors' `eval_rcad.py` "
        "lets the positive win ties and prints R@1, R@3, meanR and medianR, while the paper reports R@1 and R@2: "
        "use `ties=\"feint6k\"` and `ks=(1, 3)` to match the script, `ks=(1, 2)` to match the paper."
    ),
    source_datasets=("MSR-VTT", "VATEX"),
    parser="hardneg.benchmarks.feint6k:parse",
    raw_files="feint6k_msrvtt.csv, feint6k_vatex.csv (video_id,sentence; 6 rows per video)",
    metrics=(
        Metric("R@1", "R@1", "share of videos whose positive caption ranks first among its 6 captions"),
        Metric("R@2", "R@2", "share of videos whose positive caption ranks in the top 2"),
        Metric("MeanR", "rank", "mean rank of the positive caption (1 = best)"),
    ),
    ks=(1, 2),
    original_ties="feint6k",
    original_ties_note="Feint6K `eval_rcad.py`: the positive wins every tie",
    breakdowns=("source_dataset",),
    example_views=("delta_s",),
    sample="feint6k",
    tags=("feint6k", "rcad", "counterfactual"),
    reported=(
        _row("Human", (95.2, None, None), (96.8, None, None)),
        _row("CLIP (zero-shot)", (37.3, 55.3, 2.6), (34.8, 54.3, 2.7)),
        _row("VideoCLIP (zero-shot)", (35.1, 71.3, 2.6), (33.0, 70.7, 2.7)),
        _row("InternVideo (zero-shot)", (45.8, 63.6, 2.3), (44.1, 63.9, 2.3)),
        _row("LanguageBind (zero-shot)", (41.3, 77.0, 2.4), (42.3, 77.0, 2.4)),
        _row("CLIP4Clip (finetuned)", (50.8, 72.4, 2.0)),
        _row("VindLU (finetuned)", (53.4, 70.9, 2.0)),
        _row("SimVTP (finetuned)", (35.7, 70.8, 2.6), (33.6, 68.4, 2.6)),
        _row("SimVTP w/ LLM-teacher-lbl", (40.0, 73.1, 2.3), (37.3, 72.2, 2.4)),
        _row("SimVTP w/ LLM-teacher-lgt", (43.5, 75.0, 2.2), (40.1, 73.5, 2.3)),
        _row("InternVideo (finetuned)", (58.6, 80.2, 1.8), (58.2, 76.9, 1.9)),
        _row("InternVideo w/ LLM-teacher-lbl", (64.2, 82.5, 1.7), (63.8, 80.5, 1.7)),
        _row("InternVideo w/ LLM-teacher-lgt", (65.8, 83.8, 1.7), (65.6, 81.7, 1.7)),
    ),
)


# --- the raw-release parser ---------------------------------------------------------------

BLOCK = 6
#: config -> (file name, source split of the videos in the paper)
FILES = {"msrvtt": ("feint6k_msrvtt.csv", "val"), "vatex": ("feint6k_vatex.csv", "test")}



COLUMNS = ["video_id", "sentence"]
_VIDEO_IDS = {"msrvtt": re.compile(r"video[0-9]+"), "vatex": re.compile(r"[A-Za-z0-9_-]{11}_[0-9]{6}_[0-9]{6}")}


def read_blocks(path: Path, config: str, source_split: str, delimiter: str = ",", rows: list | None = None) -> tuple[list[dict], list[int]]:
    """Items of one Feint6K CSV in file order, and the file row where each block starts."""
    rows = read_delimited(path, delimiter, COLUMNS) if rows is None else rows
    if not rows:
        raise RawFormatError(path, "no rows after the header", "re-download the file")
    if len(rows) % BLOCK:
        raise RawFormatError(
            path,
            f"{len(rows)} rows is not a multiple of {BLOCK} (last block starts at row {rows[len(rows) // BLOCK * BLOCK][0]})",
            "each video needs exactly 6 rows: the positive, then 5 counterfactuals",
            rows[-1][0],
        )
    items, where = [], []
    for start in range(0, len(rows), BLOCK):
        block = rows[start : start + BLOCK]
        first_row, first = block[0]
        video = first["video_id"].strip()
        for row_no, row in block:
            if row["video_id"].strip() != video:
                raise RawFormatError(
                    path,
                    f"block starting at row {first_row} mixes videos {video!r} and {row['video_id'].strip()!r}",
                    "each block must be 6 consecutive rows of one video, positive first",
                    row_no,
                )
            if not row["sentence"].strip():
                raise RawFormatError(path, f"missing caption for video {video!r}", "fill in the sentence", row_no)
        captions = [r["sentence"].strip() for _, r in block]
        prov = [provenance("positive", details={"source": f"{config} caption"})] + [
            provenance("human", details={"annotation": "feint6k human-in-the-loop counterfactual"}) for _ in range(BLOCK - 1)
        ]
        items.append(
            {
                "id": f"{config}:{video}",
                "video_id": video,
                "source_dataset": config,
                "source_split": source_split,
                "category": "counterfactual",
                "captions": captions,
                "label": 0,
                "manipulated_index": None,
                "negative_types": ["positive"] + ["counterfactual"] * (BLOCK - 1),
                "provenance": prov,
            }
        )
        where.append(first_row)
    return items, where


def config_of(path: Path, rows: list[tuple[int, dict[str, str]]]) -> str:
    """msrvtt or vatex: from the file name, else from the video ids."""
    words = set(re.split(r"[^a-z0-9]+", path.stem.lower()))
    named = [c for c in FILES if c in words or (c == "msrvtt" and "msr" in words)]
    if len(named) == 1:
        return named[0]
    ids = [r["video_id"].strip() for _, r in rows]
    by_ids = [c for c, pattern in _VIDEO_IDS.items() if ids and all(pattern.fullmatch(v) for v in ids)]
    if len(by_ids) == 1:
        return by_ids[0]
    raise RawFormatError(
        path,
        "cannot tell from the file name or the video ids whether this is the MSR-VTT or the VATEX file",
        f"rename it {FILES['msrvtt'][0]} or {FILES['vatex'][0]}",
    )


def parse(raw: Path) -> BenchmarkBuild:
    """Validate and convert every Feint6K CSV found under `raw` (recognized by header or name)."""
    folder = RawFolder(raw, "feint6k", lambda p: "feint6k" in p.name.lower() or p.suffix.lower() in (".csv", ".tsv"))
    release_names = {name for name, _ in FILES.values()}
    found: dict[str, tuple[Path, str, list]] = {}
    for path in folder.files:
        head = read_head(path)
        delimiter = match_header(first_line(head), COLUMNS)
        if delimiter is None and path.name not in release_names:
            if looks_binary(head):
                folder.malformed(path, "binary file, not a video_id,sentence table")
            else:
                folder.malformed(path, f"first line {first_line(head)[:80]!r} is not the header video_id,sentence")
            continue
        rows = read_delimited(path, delimiter or ",", COLUMNS)  # a release name with a wrong header: error naming it
        config = config_of(path, rows)
        if config in found:
            raise RawFormatError(path, f"a second Feint6K {config} file (first: {folder.rel(found[config][0])})", "keep one file per dataset in the raw folder")
        found[config] = (path, delimiter or ",", rows)
    configs, raw_files, report = [], [], {"negatives_equal_to_positive": {}}
    for config, (name, source_split) in FILES.items():
        if config not in found:
            continue
        path, delimiter, rows = found[config]
        items, where = read_blocks(path, config, source_split, delimiter, rows)
        table = mc_table(items, path, where)
        configs.append(ConfigData(config, {"test": table}, f"{ {'msrvtt': 'MSR-VTT', 'vatex': 'VATEX'}[config] } videos, 1 positive + 5 counterfactuals"))
        raw_files.append(folder.rel(path))
        folder.use(path, f"Feint6K {config}: {len(items)} videos x 6 captions, {delimiter_note(path, delimiter)} video_id,sentence")
        report["negatives_equal_to_positive"][config] = sum(it["captions"][0] in it["captions"][1:] for it in items)
    if not configs:
        raise folder.nothing_found(f"{[f for f, _ in FILES.values()]} (columns video_id,sentence)")
    report["files"] = folder.report()
    return release_build("feint6k", configs, raw_files, report)
