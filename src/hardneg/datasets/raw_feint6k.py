"""Feint6K (RCAD): `feint6k_<dataset>.csv`, columns `video_id, sentence`, blocks of 6 rows per video.

Each block is the positive caption first, then five human-written action
counterfactuals of it. A block that is not six rows of one video is rejected.

Files are recognized by their header (`video_id,sentence`, comma- or tab-separated,
whatever the extension) or by the release names. The dataset comes from the name
(`msrvtt` / `vatex`) or, failing that, from the video ids (`video123` is MSR-VTT,
`<YouTube id>_<start>_<end>` is VATEX).
"""

from __future__ import annotations

import re
from pathlib import Path

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
                folder.ignore(path, "binary file, not a video_id,sentence table")
            else:
                folder.ignore(path, f"first line {first_line(head)[:80]!r} is not the header video_id,sentence")
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
