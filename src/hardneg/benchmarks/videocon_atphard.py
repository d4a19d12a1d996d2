"""VideoCon ATP-Hard (Bansal et al., CVPR 2024): NExT-QA's hardest questions as five statements each.

The declaration and the parser of the release (github.com/Hritikbansal/videocon, `datasets/`):
`nextqa-atphard-statements.csv` (`vid_id,question,answer,s0,...,s4`: each question's five answers
rewritten as statements by an LLM, `src/atp_hard_prompt.py`; `answer` is the index of the right one)
and `nextqa-atphard.csv` (the original NExT-QA validation QA of the ATP-Hard subset, with `qid`
and `type`: C* causal, T* temporal). 1,846 questions over 553 videos.

How the authors score it (`src/create_data_for_eval_nextqa.py` writes one prompt per statement,
options 0..4 in order; `src/eval_atphard.py`, `main`): per (video, question) the five entailment
scores in option order, `np.argmax` picks the statement (the first index wins a tie: the
`argmax` tie rule), and accuracy is split by the first letter of the question's `type` (C / T).
Each item here is one question: captions = the statements s0..s4 in order, label = `answer`,
`category` = causal / temporal, id = `<vid_id>-<qid>` (NExT-QA's own question key).

One departure, on purpose: video 3562017845 asks "what did the bird do after stepping into the
water" twice (qid 0, TN, and qid 1, CW, different answers). `eval_atphard.py` groups rows by
(videopath, question), finds 10 rows instead of 5 and skips both, so its accuracy is over 1,844
questions; here both are kept (1,846, as the release has them), told apart by their answer in
`nextqa-atphard.csv`, and listed in the build report.

Validation: a row without its question in `nextqa-atphard.csv`, an ambiguous match, a type that is
neither C* nor T*, an answer outside 0..4, an empty statement or a duplicate id is an error naming
the file, the row and the fix. Questions whose statements repeat (the same text twice: a tie the
first copy always wins under `argmax`) are kept and listed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from hardneg.benchmarks.base import (Benchmark, Headline, ItemChoice, Metric, ReleaseFile, ScoreImporter, Source,
                                    VLMPrompt, VideoArchive, VideoSource)
from hardneg.benchmarks.videocon_release import CITATION, LICENSE_NOTE, SCORES_FILE

STATEMENT_COLUMNS = ["vid_id", "question", "answer", "s0", "s1", "s2", "s3", "s4"]
QA_COLUMNS = ["video", "question", "answer", "qid", "type"]
QA_OPTIONAL = ["frame_count", "width", "height", "a0", "a1", "a2", "a3", "a4"]
TYPES = {"C": "causal", "T": "temporal"}
ALL = "atp-hard"
_VID = re.compile(r"[0-9]+")

#: the pinned sources `hardneg fetch` reads (docs/fetching.md): Hritikbansal/videocon at 9a6952087464 (2024-04-24)
SOURCE = Source(
    repo="github.com/Hritikbansal/videocon", commit="9a69520874644325f499cdaefd4eb2858048e350",
    license="MIT (LICENSE)",
    files=(
        ReleaseFile("datasets/nextqa-atphard-statements.csv",
                    759924, "4be8268a0eb3bafbecdd3e180320e4a92931a2519b64b482a0509f372b63f5da"),
        ReleaseFile("datasets/nextqa-atphard.csv",
                    395847, "82aa5a5dc453fce28151002dc5d1a9179dee3cbfee14aa860949071fc49e4db2"),
        ReleaseFile("datasets/atphard_scores.csv",
                    3558311, "6887ed22d15c34734e05e886fef07fff8c991041cc2c3147d7050695e2ed3256", optional=True),
        ReleaseFile("LICENSE",
                    1069, "ffa4e24494bd17583df880d7ea38fd6292c3291b209ef6fe6801d46ab27867ef"),
    ),
    videos=
    VideoSource(
        "hub", repo_id="lmms-lab/NExTQA", revision="0d019debcbf84a3d91ee608ab9ef9ab2a9e7dec5",
        archives=(VideoArchive("videos.zip", None,
                                  approx="6.49 GB"),),
        member_pattern="NExTVideo/{id}.mp4", cache_dir="nextqa",
        id_to_file=("$HF_HOME/nextqa/NExTVideo/{vid_id}.mp4 (lmms-eval tasks/nextqa/utils.py: cache_dir = "
                    "get_cache_dir(config, 'NExTVideo'); nextqa_doc_to_visual -> get_video(cache_dir, "
                    "doc['video']) tries .mp4/.MP4). vid_id = NExT-QA video id as in "
                    "nextqa-atphard-statements.csv (e.g. 4010069381); ATP-Hard uses 553 NExT-QA *validation* "
                    "videos, which lmms-eval's nextqa_oe_val also reads from this archive"),
        evidence=("Hub tree page "
                  "huggingface.co/datasets/lmms-lab/NExTQA/tree/0d019debcbf84a3d91ee608ab9ef9ab2a9e7dec5 and "
                  "commits/main (search, docs corpus); lmms-eval 0.7.3 (installed in /work/venv): "
                  "lmms_eval/api/task.py ConfigurableTask.download (video datasets: "
                  "snapshot_download(repo_id=dataset_path, revision=dataset_kwargs.get('revision','main'), "
                  "repo_type='dataset'), then every **/*.zip extracted into $HF_HOME/<cache_dir> and **/*.tar* "
                  "parts (grouped by name with _<n> stripped, concatenated) untarred there, ONLY when "
                  "$HF_HOME/<cache_dir> does not exist yet, or force_unzip)")),
    notes="Same repo and commit as videocon_ssv2.",
)


BENCHMARK = Benchmark(
    source=SOURCE,
    negative_types=("qa_distractor",),
    name="videocon-atphard",
    title="VideoCon ATP-Hard",
    order=61,
    #: one number: Accuracy on `atp-hard` (every question; `causal` and `temporal` are its subsets)
    overall=Headline("config", (ALL,)),
    #: the two subsets hold `atp-hard` items under the same ids: a file for `atp-hard` gives them too
    subset_of={"causal": ALL, "temporal": ALL},
    #: the authors' `eval_atphard.py` item set (`hardneg evaluate --items authors`)
    item_choices=(ItemChoice("authors", "hardneg.benchmarks.videocon_atphard:authors_items",
                             "the authors' item set: VideoCon src/eval_atphard.py, main, groups rows by (video, "
                             "question) and skips a question asked twice about one video (both copies)"),),
    task="multiple_choice",
    hub_id="video-hardneg/videocon-atphard",
    pretty_name="VideoCon ATP-Hard: NExT-QA's hardest causal and temporal questions as entailment statements",
    paper_title="VideoCon: Robust Video-Language Alignment via Contrast Captions",
    paper_url="https://arxiv.org/abs/2311.10111",
    citation=CITATION,
    licenses=("mit",),
    license_note=LICENSE_NOTE,
    description=(
        "ATP-Hard is the subset of NExT-QA validation questions that a single well-chosen frame cannot answer "
        "(Buch et al., CVPR 2022). VideoCon rewrites each question's five answers as statements; a video-text model "
        "must score the right statement above the four wrong ones. `Accuracy` is the share of questions answered "
        "right (chance 20%), also split into causal and temporal questions as the authors report it."
    ),
    negatives=(
        "The four wrong answers of the original NExT-QA question, each rewritten with its question into a statement "
        "by an LLM (`src/atp_hard_prompt.py`); negative type `qa_distractor`, with the original answer text, the "
        "question, its NExT-QA `qid` and `type` in each candidate's provenance."
    ),
    limitations=(
        "The statements are LLM rewrites and a few repeat (the same text for two options of one question): under "
        "the authors' `np.argmax` the first copy always wins that tie. The authors' `eval_atphard.py` skips the one "
        "question asked twice about the same video (both copies), so its accuracy is over 1,844 questions; here "
        "all 1,846 count. Statements often repeat the question, so a text-only model can exploit wording."
    ),
    source_datasets=("NExT-QA",),
    parser="hardneg.benchmarks.videocon_atphard:parse",
    raw_files="nextqa-atphard-statements.csv (vid_id,question,answer,s0..s4) and nextqa-atphard.csv\n"
              "(NExT-QA QA rows with qid and type; C* causal, T* temporal)",
    metrics=(
        Metric("Accuracy", "R@1", "share of questions whose right statement scores above the four others"),
    ),
    ks=(1,),
    original_ties="argmax",
    original_ties_note=(
        "VideoCon src/eval_atphard.py, main: prediction = np.argmax(entailment scores of options 0..4), so the "
        "first index wins a tie"
    ),
    breakdowns=("category",),
    sample="videocon_atphard",
    tags=("videocon", "next-qa", "atp-hard", "video-qa", "causal", "temporal"),
    config_descriptions={ALL: "every question (1,846 in the release)",
                         "causal": "causal questions (NExT-QA type C*: why, how)",
                         "temporal": "temporal questions (NExT-QA type T*: before, after, when)"},
    score_importers=(
        ScoreImporter("videocon-scores-csv", "hardneg.benchmarks.videocon_release:import_scores_csv",
                      "VideoCon entailment_inference.py output on eval-nextqa-atphard.csv (no header: videopath, "
                      "caption prompt, entailment score, two ignored columns), joined by video file name and prompt"),
    ),
    # VideoCon's entailment score: its PROMPT's question as the user turn (the mPLUG-Owl preamble is the chat
    # template's job), score P(Yes) / (P(Yes) + P(No)) at the answer's first token
    # (src/prepare_data_for_inference.py, PROMPT; training/pipeline_video/entailment_inference.py, get_entail)
    vlm=VLMPrompt("yes-probability", '{video}\nDoes this video entail the description: "{caption}"?',
                  "VideoCon src/prepare_data_for_inference.py, PROMPT; entailment_inference.py, get_entail"),
)


# ----------------------------------------------------------------------------- the parser


def _qa_rows(path: Path) -> dict[tuple[str, str], list[tuple[int, dict]]]:
    """The original QA rows, by (video, question)."""
    from hardneg.datasets.raw_common import RawFormatError, read_delimited, read_text

    text = read_text(path)
    _refuse_truncated(path, text)  # a cut last row loses its a4 or type silently (issue 36 M10)
    out: dict[tuple[str, str], list[tuple[int, dict]]] = {}
    for row_no, row in read_delimited(path, ",", QA_COLUMNS, optional=QA_OPTIONAL, text=text):
        video, qtype = row["video"].strip(), row["type"].strip()
        if not _VID.fullmatch(video):
            raise RawFormatError(path, f"column 'video' is {video[:30]!r}, not a NExT-QA video id", "video ids are "
                                 "digits", row_no)
        if qtype[:1] not in TYPES:
            raise RawFormatError(path, f"column 'type' is {qtype[:10]!r}, neither causal (C*) nor temporal (T*)",
                                 "ATP-Hard holds causal and temporal questions only; fix the type or drop the row",
                                 row_no)
        out.setdefault((video, row["question"].strip()), []).append((row_no, row))
    if not out:  # said here, not as "question ... is not in nextqa-atphard.csv" for the first statement (M10)
        raise RawFormatError(path, "the file has its header but no question (0 rows): no question can be given its "
                             "qid and type", "download nextqa-atphard.csv again from the authors' datasets/ folder "
                             "(1,846 rows)", 2)
    return out


def _refuse_truncated(path: Path, text: str) -> None:
    """A release file that ends in the middle of a row (no final line break) was cut by an interrupted copy."""
    from hardneg.datasets.raw_common import RawFormatError

    if text and not text.endswith(("\n", "\r")):
        raise RawFormatError(path, "the file ends in the middle of a row, without a line break: it looks truncated "
                             f"(an interrupted download or copy)", f"download {path.name} again from the authors' "
                             "datasets/ folder", text.count("\n") + 1)


def _match_qa(qa, video: str, question: str, answer: int, path: Path, row_no: int, qa_path: Path) -> tuple[int, dict]:
    from hardneg.datasets.raw_common import RawFormatError

    found = qa.get((video, question.strip()), [])
    if len(found) > 1:  # the same question asked twice about one video: told apart by the answer
        found = [(n, r) for n, r in found if r["answer"].strip() == str(answer)]
    if not found:
        raise RawFormatError(path, f"question {question[:60]!r} of video {video} is not in {qa_path.name}",
                             f"give {qa_path.name} the question's NExT-QA row (video, question, qid, type)", row_no)
    if len(found) > 1:
        raise RawFormatError(path, f"question {question[:60]!r} of video {video} matches rows "
                             f"{[n for n, _ in found]} of {qa_path.name}", "keep one QA row per question and answer",
                             row_no)
    return found[0]


def read_items(path: Path, qa_path: Path) -> tuple[list[dict], list[int], dict]:
    """One item per statements row, in file order, with its QA row's qid and type."""
    from hardneg.datasets.raw_common import (RawFormatError, check_text, parse_int, provenance, read_delimited,
                                             read_text)

    qa = _qa_rows(qa_path)
    text = read_text(path)
    _refuse_truncated(path, text)
    items, where, repeated = [], [], []
    used_qa: dict[int, int] = {}
    asked: dict[tuple[str, str], list[str]] = {}
    for row_no, row in read_delimited(path, ",", STATEMENT_COLUMNS, text=text):
        video = row["vid_id"].strip()
        if not _VID.fullmatch(video):
            raise RawFormatError(path, f"column 'vid_id' is {video[:30]!r}, not a NExT-QA video id",
                                 "video ids are digits", row_no)
        question = check_text(row["question"], path, row_no, "question", "every row needs its question")
        answer = parse_int(row["answer"], path, row_no, "answer", 0, 4)
        statements = [check_text(row[f"s{j}"], path, row_no, f"s{j}", "every option needs its statement; "
                                 "regenerate it (src/atp_hard_prompt.py)") for j in range(5)]
        qa_no, qa_row = _match_qa(qa, video, question, answer, path, row_no, qa_path)
        if qa_no in used_qa:
            raise RawFormatError(path, f"duplicate question: row {qa_no} of {qa_path.name} is already matched by row "
                                 f"{used_qa[qa_no]} (the same id {video}-{qa_row['qid'].strip()})",
                                 "remove the repeated row", row_no)
        used_qa[qa_no] = row_no
        qtype = qa_row["type"].strip()
        category = TYPES[qtype[0]]
        qid = qa_row["qid"].strip()
        item_id = f"{video}-{qid}"
        asked.setdefault((video, question.strip()), []).append(item_id)
        twins = [j for j in range(5) if statements.count(statements[j]) > 1]
        if twins:
            repeated.append({"id": item_id, "row": row_no, "options": twins, "answer": answer})
        base = {"release_file": path.name, "row": row_no, "question": question, "qid": qid, "type": qtype,
                "qa_row": qa_no}
        prov = [provenance("positive" if j == answer else "generator",
                           generator=None if j == answer else "videocon-llm-statement",
                           rule=None if j == answer else "qa-to-statement",
                           details={**base, "option": j, "qa_answer": qa_row.get(f"a{j}", "").strip() or None})
                for j in range(5)]
        items.append({
            "id": item_id, "video_id": video, "source_dataset": "nextqa", "source_split": "val",
            "category": category, "captions": statements, "label": answer, "manipulated_index": None,
            "negative_types": ["positive" if j == answer else "qa_distractor" for j in range(5)],
            "provenance": prov,
        })
        where.append(row_no)
    if not items:
        raise RawFormatError(path, "the file has its header but no question (0 rows): a benchmark of 0 items",
                             "download nextqa-atphard-statements.csv again from the authors' datasets/ folder "
                             "(1,846 rows)", 2)
    twice = {f"{v}: {q}": ids for (v, q), ids in asked.items() if len(ids) > 1}
    found = {"repeated_statements": repeated, "question_asked_twice": twice,
             "qa_rows_without_statements": sum(len(rows) for rows in qa.values()) - len(used_qa)}
    return items, where, found


def _find(folder, header: list[str], name: str) -> Path | None:
    """The file whose header has `header` (by content), preferring the authors' file name."""
    from hardneg.datasets.raw_common import first_line, match_header, read_head

    hits = [p for p in folder.files if p.suffix.lower() == ".csv" and match_header(first_line(read_head(p)), header)]
    named = [p for p in hits if p.name.lower() == name]
    if not hits:  # the authors' file is there but its header is not theirs: say that, not "not found" (M10)
        from hardneg.datasets.raw_common import RawFormatError

        for p in folder.files:
            if p.name.lower() == name:
                head = first_line(read_head(p))
                raise RawFormatError(p, f"its header is {head[:120]!r}; the release's header has the columns "
                                     f"{','.join(header)}",
                                     f"download {name} again from the authors' datasets/ folder", 1)
    if len(hits) > 1 and len(named) != 1:
        raise ValueError(f"{folder.root}: several files have the header {','.join(header)}: "
                         f"{[folder.rel(p) for p in hits]}; keep one")
    return (named or hits or [None])[0]


def parse(raw: Path):
    """The statements and the original QA under `raw` -> configs `atp-hard`, `causal`, `temporal`."""
    from hardneg.datasets.hub_layout import ConfigData, release_build
    from hardneg.datasets.raw_common import RawFolder, mc_table

    folder = RawFolder(raw, BENCHMARK.name)
    statements = _find(folder, STATEMENT_COLUMNS, "nextqa-atphard-statements.csv")
    qa = _find(folder, QA_COLUMNS, "nextqa-atphard.csv")
    if statements is None or qa is None:
        for p in folder.files:
            if p not in (statements, qa):
                folder.malformed(p, "not an ATP-Hard file (statements or NExT-QA QA table)")
        if statements is not None or qa is not None:
            have = statements or qa
            lack = "nextqa-atphard.csv (video,question,answer,qid,type,...)" if qa is None else \
                "nextqa-atphard-statements.csv (vid_id,question,answer,s0..s4)"
            raise FileNotFoundError(f"{raw}: found {folder.rel(have)} but not {lack}; both come from the authors' "
                                    "datasets/ folder")
        raise folder.nothing_found(BENCHMARK.raw_files.replace("\n", " "))
    items, where, found = read_items(statements, qa)
    folder.use(statements, f"ATP-Hard statements: {len(items):,} questions")
    folder.use(qa, "NExT-QA QA rows: qid and type (causal / temporal) of each question")
    for p in folder.files:
        if p not in (statements, qa):
            folder.ignore(p, SCORES_FILE
                          if p.name.lower().endswith("_scores.csv") else
                          "not an ATP-Hard file (SSv2 files build as videocon-ssv2)")
    configs = [ConfigData(ALL, {"test": mc_table(items, statements, where)})]
    for category in TYPES.values():
        keep = [k for k, it in enumerate(items) if it["category"] == category]
        if keep:
            configs.append(ConfigData(category, {"test": mc_table([items[k] for k in keep], statements,
                                                                  [where[k] for k in keep])}))
    types: dict[str, int] = {}
    for it in items:
        t = json.loads(it["provenance"][0]["details"])["type"]
        types[t] = types.get(t, 0) + 1
    report = {
        "questions": len(items), "videos": len({it["video_id"] for it in items}),
        "per_category": {c.name: c.splits["test"].num_rows for c in configs[1:]},
        "per_type": dict(sorted(types.items())),
        "repeated_statements": {"count": len(found["repeated_statements"]), "questions": found["repeated_statements"]},
        "question_asked_twice": found["question_asked_twice"],
        "qa_rows_without_statements": found["qa_rows_without_statements"],
        "authors_eval_questions": len(items) - sum(len(v) for v in found["question_asked_twice"].values()),
        "files": folder.report(),
    }
    return release_build(BENCHMARK.name, configs, [folder.rel(statements), folder.rel(qa)], report)


def authors_items(data) -> list[str]:
    """The ids of the questions the authors' script scores (`hardneg evaluate --items authors`).

    VideoCon `src/eval_atphard.py`, `main`, groups the entailment rows by (videopath, question) and keeps a group
    only when it holds the five options of one question; the question asked twice about one video makes a group of
    ten, so both copies are skipped (1,844 of the release's 1,846 questions). Here: every item whose (video,
    question text) is shared by another item is left out; the rest are kept in their order.
    """
    rows = data.items.select(["id", "video_id", "provenance"]).to_pylist()
    key = [(r["video_id"], json.loads(r["provenance"][0]["details"])["question"].strip()) for r in rows]
    seen: dict[tuple[str, str], int] = {}
    for k in key:
        seen[k] = seen.get(k, 0) + 1
    return [r["id"] for r, k in zip(rows, key) if seen[k] == 1]
