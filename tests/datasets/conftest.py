"""Raw fixtures in the authors' exact formats, written by the tests (no real file is copied)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

VERBS = ["opening", "closing", "painting", "kicking", "carrying", "washing", "fixing", "holding"]


def feint6k_rows(n_videos: int, prefix: str = "video") -> list[tuple[str, str]]:
    rows = []
    for i in range(n_videos):
        vid = f"{prefix}{7000 + i}"
        rows.append((vid, f"a person is {VERBS[i % len(VERBS)]} box number {i}"))
        for j in range(5):
            rows.append((vid, f"a person is {VERBS[(i + j + 1) % len(VERBS)]} box number {i} variant {j}"))
    return rows


def write_csv(path: Path, header: list[str], rows: list, delimiter: str = ",") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, delimiter=delimiter, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)
    return path


def write_tsv(path: Path, header: list[str], rows: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\t".join(header) + "\n" + "".join("\t".join(map(str, r)) + "\n" for r in rows), encoding="utf-8")
    return path


def contrast_rows(n: int, with_c_label: bool) -> list[list]:
    """Clip, 5 endings, label (i % 5), c_label ((i + 2) % 5)."""
    rows = []
    for i in range(n):
        label, c_label = i % 5, (i + 2) % 5
        endings = [f"another video caption {i}-{j}" for j in range(5)]
        endings[label] = f"a man is {VERBS[i % len(VERBS)]} a car {i}"
        endings[c_label] = f"a man is {VERBS[(i + 3) % len(VERBS)]} a car {i}"
        rows.append([f"video{9000 + i}", *endings, label] + ([c_label] if with_c_label else []))
    return rows


CS_HEADER = ["clip", "ending0", "ending1", "ending2", "ending3", "ending4", "label"]


def posrank_files(raw: Path, n_captions: int = 4, k: int = 20, pos_word: str = "adverb", sep: str = "##*##") -> dict:
    raw.mkdir(parents=True, exist_ok=True)
    captions, negatives = {}, {}
    for i in range(n_captions):
        vid = f"Vid-{i:03d}_x"
        key = f"{vid}{sep}{i % 2}"
        pos = f"A person moves the cup slowly toward table {i}"
        captions[f"{vid}##*##{i % 2}"] = pos
        negatives[key] = {str(j): pos.replace("slowly", f"word{j}") for j in range(k)}
    lines = "".join(f"{key}**#**{cap}\n" for key, cap in captions.items())
    lines += "Other-vid##*##0**#**An unrelated caption that no negative file uses\n"
    (raw / "captions.txt").write_text(lines, encoding="utf-8")
    (raw / f"uvo_val_{pos_word}_RE{k}.json").write_text(json.dumps(negatives), encoding="utf-8")
    return {"captions": captions, "negatives": negatives}


def fire_release(raw: Path, annotations: list[dict], disagreements: list[dict], queries: dict[str, list[tuple[str, str]]]) -> Path:
    raw.mkdir(parents=True, exist_ok=True)
    for config, rows in queries.items():
        write_csv(raw / f"{config}_queries.csv", ["video_id", "sentence"], rows)
    path = raw / "fire.json"
    path.write_text(json.dumps({"annotations": annotations, "disagreements": disagreements, "license": "CC BY-NC-SA 4.0", "datasets": ["MSRVTT", "MSVD"]}), encoding="utf-8")
    return path


def fire_row(dataset: str, query: str, video: str, labels: list[str], with_label: bool = True) -> dict:
    row = {
        "annotator_ids": list(range(len(labels))),
        "video_id": video,
        "query": query,
        "annotator_labels": labels,
        "response_ids": list(range(len(labels))),
        "queue_ids": [0] * len(labels),
        "models": ["CLIP4CLIP"],
        "dataset": dataset,
    }
    if with_label:
        row["label"] = labels[0]
    return row


@pytest.fixture
def hf_cache(tmp_path) -> str:
    """A per-test datasets cache, so loads never see another test's files."""
    return str(tmp_path / "hf_cache")


@pytest.fixture
def rawfmt():
    """The raw-format writers above, for tests to build fixtures with."""
    from types import SimpleNamespace

    return SimpleNamespace(
        feint6k_rows=feint6k_rows,
        write_csv=write_csv,
        write_tsv=write_tsv,
        contrast_rows=contrast_rows,
        CS_HEADER=CS_HEADER,
        posrank_files=posrank_files,
        fire_release=fire_release,
        fire_row=fire_row,
    )
