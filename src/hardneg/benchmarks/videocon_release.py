"""What VideoCon's two evaluation sets share: the entailment prompt, its CSV files and the released scores.

VideoCon (Bansal et al., CVPR 2024; github.com/Hritikbansal/videocon, MIT) asks its model whether a
video entails a description, written into one chat prompt (`src/prepare_data_for_inference.py` and
`src/create_data_for_eval_nextqa.py`, `PROMPT`):

    The following is a conversation between a curious human and AI assistant. ...
    Human: <|video|>
    Human: Does this video entail the description: "<description>"?
    AI:

The evaluation CSVs (`eval_ssv2_temporal.csv`: `videopath,caption,match`) hold that prompt in
`caption`, so a field spans several lines. The model's output (`training/pipeline_video/
entailment_inference.py`) is a CSV without a header: videopath, caption (the prompt), entailment
score, and two columns the README says to ignore. The authors join it to the evaluation rows on
(videopath, caption) with `pd.merge(..., how="inner")` (`src/calc_ssv2.py`, `src/eval_atphard.py`).

This module holds no benchmark (`videocon_ssv2.py` and `videocon_atphard.py` do); both use the
readers here, and both declare `import_scores_csv` as their importer of released scores.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Any, Iterator

#: The authors' prompt (`PROMPT` in src/prepare_data_for_inference.py and src/create_data_for_eval_nextqa.py).
PROMPT = (
    "The following is a conversation between a curious human and AI assistant. The assistant gives helpful, "
    "detailed, and polite answers to the user's questions.\nHuman: <|video|>\nHuman: Does this video entail the "
    'description: "{caption}"?\nAI: '
)
_OPEN = 'Does this video entail the description: "'
_CLOSE = '"?'
SCORE_COLUMNS = ("videopath", "caption", "entailment", "pos", "neg")
#: why a raw folder's `*_scores.csv` is not read by the builders
SCORES_FILE = ("a model's released entailment scores, not part of the benchmark: import them with "
               "`hardneg import-scores videocon-ssv2` or `videocon-atphard`")

CITATION = """@inproceedings{bansal2024videocon,
  title     = {{VideoCon}: Robust Video-Language Alignment via Contrast Captions},
  author    = {Bansal, Hritik and Bitton, Yonatan and Szpektor, Idan and Chang, Kai-Wei and Grover, Aditya},
  booktitle = {Proceedings of the IEEE/CVF Conference on Computer Vision and Pattern Recognition (CVPR)},
  year      = {2024}
}"""
LICENSE_NOTE = (
    "MIT, as stated in the authors' repository (github.com/Hritikbansal/videocon, LICENSE). The videos belong to "
    "their source datasets (Something-Something v2, NExT-QA) and keep their own terms; they are referenced by id, "
    "never copied."
)


def prompt_for(description: str) -> str:
    """The authors' prompt around one description (what their score files hold in `caption`)."""
    return PROMPT.format(caption=description)


def description_in(prompt: str) -> str | None:
    """The quoted description of an entailment prompt, or None when it has none."""
    start = prompt.find(_OPEN)
    if start < 0:
        return None
    start += len(_OPEN)
    end = prompt.rfind(_CLOSE)
    if end < start:
        return None
    text = prompt[start:end]
    return text if text.strip() else None


def video_id_of(videopath: str) -> str:
    """The video id of a path: its file name without the extension (`videos/104599.avi` -> `104599`).

    The SSv2 rows name `videos/<id>.avi`; the ATP-Hard rows `<video_dir>/<folder>/<vid_id>.mp4`
    (`create_data_for_eval_nextqa.py`, with NExT-QA's map_vid_vidorID.json), whose file name is the
    question's `vid_id`, as `eval_atphard.py` reads it back (`videopath.split("/")[-1][:-4]`).
    """
    name = videopath.replace("\\", "/").rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0] if "." in name else name


def csv_records(path: Path) -> Iterator[tuple[str, list[str]]]:
    """(where, fields) of every record of a CSV whose quoted fields may span lines (the prompts do).

    `where` is "<record> (line <first line>)", counting the header (if any) as record 1, as a
    spreadsheet shows it. NUL bytes, bad UTF-8 and over-long fields are errors naming the place.
    """
    from hardneg.datasets.raw_common import MAX_FIELD_CHARS, RawFormatError, read_text, refuse_nul

    text = read_text(path)
    refuse_nul(path, text)
    reader = csv.reader(io.StringIO(text, newline=""))
    previous = csv.field_size_limit(MAX_FIELD_CHARS)
    record, line = 0, 1
    try:
        for fields in reader:
            record += 1
            where = f"{record} (line {line})"
            line = reader.line_num + 1
            if not fields or (len(fields) == 1 and not fields[0].strip()):
                continue
            yield where, fields
    except csv.Error as exc:
        raise RawFormatError(path, f"unreadable CSV ({exc})", "check the quoting of this record (a prompt is one "
                             "double-quoted field, inner quotes doubled) or re-download the file",
                             f"{record + 1} (line {line})") from None
    finally:
        csv.field_size_limit(previous)


def checked_description(prompt: str, path: Path, where: str, column: str = "caption") -> str:
    """The description quoted in a prompt, or an error naming the file, the record and the fix."""
    from hardneg.datasets.raw_common import RawFormatError

    description = description_in(prompt)
    if description is None:
        shown = prompt if len(prompt) <= 80 else prompt[:77] + "..."
        raise RawFormatError(path, f"column '{column}' holds no quoted description ({shown!r})",
                             f"write the prompt as the authors do, with '{_OPEN}<description>{_CLOSE}' "
                             "(src/prepare_data_for_inference.py, PROMPT)", where)
    return description


# ----------------------------------------------------------------------------- released scores


def read_scores(path: Path) -> Iterator[tuple[str, str, str, float]]:
    """(where, video id, prompt, entailment) of every row of a `*_scores.csv` (no header)."""
    from hardneg.datasets.raw_common import RawFormatError

    for where, fields in csv_records(path):
        if len(fields) < 3:
            raise RawFormatError(path, f"{len(fields)} columns; a score row has videopath, caption, entailment "
                                 "(and two ignored columns)", "give the model's output file as "
                                 "entailment_inference.py writes it", where)
        videopath, prompt, value = fields[0], fields[1], fields[2]
        try:
            score = float(value)
        except ValueError:
            hint = " (the file has a header line: remove it, the authors' files have none)" if where.startswith("1 ") else ""
            raise RawFormatError(path, f"column 3 (entailment) is {value[:40]!r}, not a number{hint}",
                                 "the third column is the entailment score, a number", where) from None
        if not math.isfinite(score):
            raise RawFormatError(path, f"column 3 (entailment) is {value!r}", "scores must be finite numbers", where)
        if not videopath.strip():
            raise RawFormatError(path, "column 1 (videopath) is empty", "every row names its video file", where)
        yield where, video_id_of(videopath.strip()), prompt, score


def import_scores_csv(path: Path, data) -> Any:
    """VideoCon's released `*_scores.csv` -> scores per item (or query) of the loaded config.

    A row is joined to a candidate by (video id, prompt): the prompt must be the authors' `PROMPT`
    around the candidate's statement (ATP-Hard) or the query's description (SSv2), as in their
    `pd.merge(df1, df2, on=['videopath', 'caption'])`; the video is matched by its file name, so
    the folder the videos were read from does not matter. Rows repeated with the same score count
    once (`eval_atphard.py` drops exact duplicates); a repeated row with another score is an error.
    """
    from hardneg.datasets.raw_common import RawFormatError
    from hardneg.benchmarks.base import ImportedScores

    slots: dict[tuple[str, str], list[tuple[int, int]]] = {}
    other = _keys_of_other_configs(data) if data.task != "retrieval" else set()
    if data.task == "retrieval":
        ids = [str(q) for q in data.queries.column("query_id").to_pylist()]
        texts = data.queries.column("text").to_pylist()
        video_ids = [str(v) for v in data.videos.column("video_id").to_pylist()]
        for i, text in enumerate(texts):
            prompt = prompt_for(text)
            for j, v in enumerate(video_ids):
                slots.setdefault((v, prompt), []).append((i, j))
        width = [len(video_ids)] * len(ids)
    else:
        ids = [str(i) for i in data.items.column("id").to_pylist()]
        videos = [str(v) for v in data.items.column("video_id").to_pylist()]
        captions = data.items.column("captions").to_pylist()
        for i, (v, caps) in enumerate(zip(videos, captions)):
            for j, c in enumerate(caps):
                slots.setdefault((v, prompt_for(c)), []).append((i, j))
        width = [len(c) for c in captions]
        video_ids = None
    scores: list[list[float | None]] = [[None] * w for w in width]
    seen: dict[tuple[str, str], tuple[str, float]] = {}
    unmatched: list[str] = []
    rows = repeated = elsewhere = 0
    for where, video, prompt, score in read_scores(path):
        rows += 1
        key = (video, prompt)
        if key in seen:
            first, value = seen[key]
            if value != score:
                raise RawFormatError(path, f"video {video!r} and this prompt were scored twice, {value} at row "
                                     f"{first} and {score} here", "keep one row per (video, prompt)", where)
            repeated += 1
            continue
        seen[key] = (where, score)
        if key not in slots and key in other:
            elsewhere += 1
            continue
        if key not in slots:
            described = description_in(prompt)
            unmatched.append(f"row {where}: video {video!r}, "
                             + (f"description {described!r}" if described else f"prompt {prompt[:60]!r}"))
            continue
        for i, j in slots[key]:
            scores[i][j] = score
    notes = [f"{repeated} rows repeated with the same score were counted once"] if repeated else []
    return ImportedScores(scores=dict(zip(ids, scores)), video_ids=video_ids, rows_read=rows, unmatched=unmatched,
                          other_configs=elsewhere, notes=notes)


def _keys_of_other_configs(data) -> set[tuple[str, str]]:
    """(video id, prompt) of every candidate in the other configs of a local build (ATP-Hard's `causal`
    rows are not mismatches when importing into `temporal`)."""
    from hardneg.items import card_configs, load_benchmark

    if not data.is_local:
        return set()
    keys: set[tuple[str, str]] = set()
    for config in data.declaration.scoreable(card_configs(data.dataset)):
        if config == data.config:
            continue
        t = load_benchmark(data.dataset, config, benchmark=data.benchmark).items
        for video, captions in zip(t.column("video_id").to_pylist(), t.column("captions").to_pylist()):
            keys.update((str(video), prompt_for(c)) for c in captions)
    return keys
