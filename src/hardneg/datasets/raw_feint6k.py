"""Feint6K (RCAD): `feint6k_<dataset>.csv`, columns `video_id, sentence`, blocks of 6 rows per video.

Each block is the positive caption first, then five human-written action
counterfactuals of it. A block that is not six rows of one video is rejected.
"""

from __future__ import annotations

from pathlib import Path

from hardneg.datasets.hub_layout import BenchmarkBuild, ConfigData, release_build
from hardneg.datasets.raw_common import RawFormatError, mc_table, provenance, read_delimited

BLOCK = 6
#: config -> (file name, source split of the videos in the paper)
FILES = {"msrvtt": ("feint6k_msrvtt.csv", "val"), "vatex": ("feint6k_vatex.csv", "test")}



def read_blocks(path: Path, config: str, source_split: str) -> tuple[list[dict], list[int]]:
    """Items of one Feint6K CSV in file order, and the file row where each block starts."""
    rows = list(read_delimited(path, ",", ["video_id", "sentence"]))
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


def parse(raw: Path) -> BenchmarkBuild:
    """Validate and convert every Feint6K CSV found in `raw`."""
    configs, raw_files, report = [], [], {"negatives_equal_to_positive": {}}
    for config, (name, source_split) in FILES.items():
        path = raw / name
        if not path.exists():
            continue
        items, where = read_blocks(path, config, source_split)
        table = mc_table(items, path, where)
        configs.append(ConfigData(config, {"test": table}, f"{ {'msrvtt': 'MSR-VTT', 'vatex': 'VATEX'}[config] } videos, 1 positive + 5 counterfactuals"))
        raw_files.append(name)
        report["negatives_equal_to_positive"][config] = sum(it["captions"][0] in it["captions"][1:] for it in items)
    if not configs:
        raise FileNotFoundError(f"{raw}: no Feint6K file found; expected {[f for f, _ in FILES.values()]} (columns video_id,sentence)")
    return release_build("feint6k", configs, raw_files, report)
