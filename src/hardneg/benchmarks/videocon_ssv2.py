"""VideoCon SSv2-Temporal (Bansal et al., CVPR 2024): text-to-video retrieval over Something-Something v2.

The declaration and the parser of the release (github.com/Hritikbansal/videocon, `datasets/`):
`eval_ssv2_temporal.csv` with columns `videopath,caption,match`, one row per (query, video):
18 queries (SSv2 action templates such as "Covering [something] with [something]") x 216
videos, `match` 1 for the 12 videos of the query's action. `caption` wraps the query in the
authors' entailment prompt (`hardneg.benchmarks.videocon_release.PROMPT`); the query is the
description quoted in it. Any `eval_ssv2_<name>.csv` of the same format builds as config
`ssv2-<name>` (the README's SSv2-Events, 49 queries x 588 videos, is `eval_ssv2_events.csv`).

How the authors score it (`src/calc_ssv2.py`, `main`): the evaluation rows and the model's
scores are merged on (videopath, caption) and sorted by videopath, so a query's candidate
videos are in ascending videopath order (the order of the `-videos` config here); each query
keeps only if it has a score for every video (`--vid_per_caption`, 216 here). Per query
`ranks = np.argsort(-pred)` (NumPy's default, unstable sort: the `argsort` tie rule), AP is the
mean of hits/(i+1) over the matching videos, and "R@k" is 1 when any matching video is in the
first k. With several relevant videos per query that is what this project calls `C@k`
(Correct@k, as for FIRE); `R@k` here is reserved for the rank of one original positive, which
SSv2-Temporal does not have, so it is not reported (`original_positive=False`).

Validation: a row whose prompt has no quoted description, a prompt that is not the authors'
template around its description, a `match` other than 0/1, a repeated (videopath, prompt), a
video named by two paths, a query without a row for every video, or a query with no matching
video is an error naming the file, the record and the fix; nothing is written.
"""

from __future__ import annotations

import re
from pathlib import Path

from hardneg.benchmarks.base import (Benchmark, Headline, Metric, ReleaseFile, ScoreImporter, Source, VLMPrompt,
                                    VideoSource)
from hardneg.benchmarks.videocon_release import CITATION, LICENSE_NOTE, SCORES_FILE

HEADER = ["videopath", "caption", "match"]
_NAME = re.compile(r"eval_ssv2_([a-z0-9_]+)\.csv", re.IGNORECASE)

#: the pinned sources `hardneg fetch` reads (docs/fetching.md): Hritikbansal/videocon at 9a6952087464 (2024-04-24)
SOURCE = Source(
    repo="github.com/Hritikbansal/videocon", commit="9a69520874644325f499cdaefd4eb2858048e350",
    license="MIT (LICENSE)",
    files=(
        ReleaseFile("datasets/eval_ssv2_temporal.csv",
                    1160556, "262dcaedc69b04a95b055ffb3c78d3cbc57db4385f1b9d9e6eb709b37ea0e162"),
        ReleaseFile("datasets/eval_ssv2_temporal_scores.csv",
                    1274904, "cfa5c29a51f2fa0c3a40efdc7e4c8e06590c98604bc1b6a391467444eea7e3cd", optional=True),
        ReleaseFile("datasets/eval_ssv2_events.csv",
                    None, "", git_blob="555faf17b8ba5cb56daa5b51612bfb583959d5c7", optional=True),
        ReleaseFile("LICENSE",
                    1069, "ffa4e24494bd17583df880d7ea38fd6292c3291b209ef6fe6801d46ab27867ef"),
    ),
    videos=
    VideoSource(
        "manual", official="https://developer.qualcomm.com/software/ai-datasets/something-something",
        steps=(("Sign in at Qualcomm Developer Network and accept the Something-Something v2 licence (the page "
                "above)"), ("download the 20 parts 20bn-something-something-v2-00 ... -19 and the labels (total size not "
                "verified here)"), ("cat 20bn-something-something-v2-?? | tar -xz   -> 20bn-something-something-v2/<id>.webm (220,847 "
                "clips)"), ("keep the 216 ids of ssv2-temporal (videopath videos/<id>.avi in eval_ssv2_temporal.csv; the id "
                "is the file stem) -- VideoCon converted them to .avi; the .webm of the same id is the same clip"), ("put them under $HARDNEG_CACHE/.../videocon_ssv2/ or reuse lmms-eval's location: $SSV2_VIDEO_DIR "
                "or $HF_HOME/ssv2 (lmms-eval resolves <root>/<id>.{webm,mp4,...})"),),
        why=("licence-gated (Qualcomm research licence); lmms-lab-eval/ssv2 holds metadata only: its README says "
             "'Raw video location: official Something-Something-V2 .webm files (license-gated), not embedded "
             "here. Expected local media root: $SSV2_VIDEO_DIR or $HF_HOME/ssv2'"),
        evidence=("VideoCon README (Hritikbansal/videocon@9a69520, 'Text to Video Retrieval (SSv2)': 'We download "
                  "the videos from developer.qualcomm.com/software/ai-datasets/something-something'); lmms-eval "
                  "0.7.3 tasks/ssv2/ssv2.yaml (dataset_path lmms-lab-eval/ssv2, no video: True, so no archive "
                  "download) and tasks/ssv2/utils.py (resolve_media_reference(..., cache_dir='ssv2', "
                  "env_vars=('SSV2_VIDEO_DIR',))), tasks/_task_utils/media_resolver.py; Hub README "
                  "huggingface.co/datasets/lmms-lab-eval/ssv2/blob/main/README.md (search, docs corpus)")),
    notes=("HEAD of main (2024-04-24), the commit realdata/README names (9a69520). The CSVs are unchanged since "
           "884c041 (2023-11-20)."),
)


BENCHMARK = Benchmark(
    source=SOURCE,
    name="videocon-ssv2",
    title="VideoCon SSv2",
    order=60,
    #: one number: mAP on the one config (the paper's headline for SSv2-Temporal)
    overall=Headline("config", ("ssv2-temporal",)),
    task="retrieval",
    hub_id="video-hardneg/videocon-ssv2",
    pretty_name="VideoCon SSv2-Temporal: text-to-video retrieval of temporal actions in Something-Something v2",
    paper_title="VideoCon: Robust Video-Language Alignment via Contrast Captions",
    paper_url="https://arxiv.org/abs/2311.10111",
    citation=CITATION,
    licenses=("mit",),
    license_note=LICENSE_NOTE,
    description=(
        "SSv2-Temporal asks a model to find the videos of a temporal action among videos of other actions with the "
        "same objects: 18 Something-Something v2 action templates (queries) each rank the same 216 videos, 12 of "
        "which show the query's action. `mAP` is the mean average precision over queries; `C@k` the share of "
        "queries with a matching video in the top k (the paper's \"R@k\", computed by the authors' "
        "`src/calc_ssv2.py` exactly this way)."
    ),
    negatives=(
        "Not generated negatives: the other 204 videos of the collection show other SSv2 actions, chosen by the "
        "authors so that telling them apart needs the temporal order of the action. Relevance is the release's "
        "`match` column (every row of the grid is labelled, `source` = `original`)."
    ),
    limitations=(
        "18 queries only: one query moves mAP and C@k by up to 5.6 points, so read the intervals. Every matching "
        "video counts alike (there is no single original video), so `R@k`, `MeanR` and `MRR` of an original "
        "positive are not reported; each query's `video_id` is only its first matching video, used as its "
        "bootstrap cluster. The released entailment scores are bfloat16 values with 9-15 distinct values per "
        "query, so ties decide much of the ranking: the authors' unstable `np.argsort` order (`--ties original`) "
        "and the tie-aware `expected` rule differ; report both."
    ),
    source_datasets=("Something-Something v2",),
    parser="hardneg.benchmarks.videocon_ssv2:parse",
    raw_files="eval_ssv2_temporal.csv (videopath,caption,match; caption = the entailment prompt), or any\n"
              "eval_ssv2_<name>.csv of the same format",
    metrics=(
        Metric("mAP", "AP", "mean over queries of the average precision of the matching videos (calc_ssv2.py)"),
        Metric("C@1", "C@1", "share of queries whose top video matches (the paper's R@1)"),
        Metric("C@5", "C@5", "share of queries with a matching video in the top 5 (the paper's R@5)"),
        Metric("C@10", "C@10", "share of queries with a matching video in the top 10 (the paper's R@10)"),
    ),
    ks=(1, 5, 10),
    original_ties="argsort",
    original_ties_note=(
        "VideoCon src/calc_ssv2.py, main: ranks = np.argsort(-pred) (NumPy's default, unstable sort) over the "
        "videos in videopath order; AP over every matching video; 'R@k' = any matching video in the top k"
    ),
    sample="videocon_ssv2",
    tags=("videocon", "something-something-v2", "text-to-video-retrieval", "temporal"),
    companion_suffixes=("-queries", "-videos"),
    original_positive=False,
    usage_note=(
        "`<name>` holds every (query, video) row with its `label` (the release's `match`); `<name>-queries` the "
        "queries (`text` = the description quoted in the authors' prompt, `relevant` = row indices of the matching "
        "videos in `<name>-videos`); `<name>-videos` the 216 videos in ascending videopath order, the candidate "
        "order of `src/calc_ssv2.py`. A video id is the file name without extension (`videos/104599.avi` -> "
        "`104599`)."
    ),
    config_descriptions={"ssv2-temporal": "SSv2-Temporal relevance rows (18 queries x 216 videos)",
                         "ssv2-temporal-queries": "SSv2-Temporal queries (action templates)",
                         "ssv2-temporal-videos": "SSv2-Temporal video collection (videopath order)"},
    score_importers=(
        ScoreImporter("videocon-scores-csv", "hardneg.benchmarks.videocon_release:import_scores_csv",
                      "VideoCon entailment_inference.py output (*_scores.csv, no header: videopath, caption prompt, "
                      "entailment score, two ignored columns), joined by video file name and prompt"),
    ),
    # VideoCon's entailment score: its PROMPT's question as the user turn (the mPLUG-Owl preamble is the chat
    # template's job), score P(Yes) / (P(Yes) + P(No)) at the answer's first token
    # (src/prepare_data_for_inference.py, PROMPT; training/pipeline_video/entailment_inference.py, get_entail)
    vlm=VLMPrompt("yes-probability", '{video}\nDoes this video entail the description: "{caption}"?',
                  "VideoCon src/prepare_data_for_inference.py, PROMPT; entailment_inference.py, get_entail"),
)


# ----------------------------------------------------------------------------- the parser


def read_grid(path: Path) -> tuple[list[dict], dict]:
    """Rows (videopath, video id, description, match, where) of one evaluation file, checked."""
    from hardneg.benchmarks.videocon_release import checked_description, csv_records, prompt_for, video_id_of
    from hardneg.datasets.raw_common import MAX_FIELD_CHARS, RawFormatError

    records = csv_records(path)
    first = next(records, None)
    if first is None:
        raise RawFormatError(path, "the file is empty", "re-download it; it starts with the header videopath,caption,match")
    where, header = first
    if [h.strip() for h in header] != HEADER:
        raise RawFormatError(path, f"header is {header[:5]}", f"the header must be {','.join(HEADER)}", where)
    rows: list[dict] = []
    seen: dict[tuple[str, str], str] = {}
    path_of: dict[str, str] = {}
    for where, fields in records:
        if len(fields) != 3:
            raise RawFormatError(path, f"{len(fields)} fields where the header has 3",
                                 "check for a stray comma or an unclosed quote in the prompt", where)
        videopath, prompt, match = fields[0].strip(), fields[1], fields[2].strip()
        if not videopath:
            raise RawFormatError(path, "column 'videopath' is empty", "every row names its video file", where)
        if len(prompt) > MAX_FIELD_CHARS:
            raise RawFormatError(path, f"column 'caption' is {len(prompt):,} characters long",
                                 "the file is damaged; re-download it", where)
        description = checked_description(prompt, path, where)
        if prompt != prompt_for(description) and "\r" in prompt and prompt.replace("\r\n", "\n") == prompt_for(description):
            raise RawFormatError(path, "column 'caption' has Windows line endings (CRLF, \\r\\n) inside the prompt; "
                                 "the authors' file has Unix line endings (LF), and the released scores are joined "
                                 "to the prompt byte for byte", "convert the file back to LF line endings (e.g. "
                                 "`dos2unix eval_ssv2_temporal.csv`) or download it again from the authors' "
                                 "datasets/ folder", where)
        if prompt != prompt_for(description):
            raise RawFormatError(path, "column 'caption' is not the authors' prompt around its description",
                                 "write it exactly as src/prepare_data_for_inference.py does (PROMPT), so released "
                                 "scores can be joined to it", where)
        if match not in ("0", "1"):
            raise RawFormatError(path, f"column 'match' is {match[:20]!r}", "match is 1 (the video shows the "
                                 "query's action) or 0", where)
        key = (videopath, prompt)
        if key in seen:
            raise RawFormatError(path, f"duplicate row: video {videopath!r} and description {description!r} again "
                                 f"(first at record {seen[key]})", "keep one row per (videopath, caption)", where)
        seen[key] = where
        video = video_id_of(videopath)
        if path_of.setdefault(video, videopath) != videopath:
            raise RawFormatError(path, f"video id {video!r} is named by two paths, {path_of[video]!r} and "
                                 f"{videopath!r}", "each video has one path (its file name is its id)", where)
        rows.append({"videopath": videopath, "video": video, "text": description, "match": int(match),
                     "where": where})
    if not rows:
        raise RawFormatError(path, "no rows after the header", "re-download the file")
    return rows, path_of


def build_config(path: Path, config: str):
    """The relevance rows, queries and videos tables of one evaluation file, and its counts."""
    import pyarrow as pa

    from hardneg.datasets.raw_common import RawFormatError
    from hardneg.items import relevant_lists
    from hardneg.schema import QREL_SCHEMA, QUERY_SCHEMA, VIDEO_SCHEMA

    rows, path_of = read_grid(path)
    videos = sorted(path_of, key=lambda v: path_of[v])  # calc_ssv2.py: sort_values(by=['videopath', ...])
    texts = sorted({r["text"] for r in rows})  # groupby(['caption']): prompts in sorted order
    by_query: dict[str, dict[str, int]] = {t: {} for t in texts}
    for r in rows:
        by_query[r["text"]][r["video"]] = r["match"]
    for t in texts:
        got = by_query[t]
        if len(got) != len(videos):
            lacking = [v for v in videos if v not in got]
            raise RawFormatError(path, f"query {t!r} has rows for {len(got)} of the {len(videos)} videos (none for "
                                 f"{', '.join(path_of[v] for v in lacking[:3])}{' ...' if len(lacking) > 3 else ''})",
                                 "give every query a row for every video: src/calc_ssv2.py drops a query that lacks "
                                 "one (--vid_per_caption)")
        if not any(got.values()):
            raise RawFormatError(path, f"query {t!r} has no video with match = 1",
                                 "a query needs at least one matching video; fix its match column")
    qid = {t: f"{config}-q{i:03d}" for i, t in enumerate(texts)}
    first_match = {t: next(v for v in videos if by_query[t][v]) for t in texts}
    qrels = pa.Table.from_pylist(
        [{"query_id": qid[t], "video_id": v, "label": by_query[t][v], "source": "original", "n_judgments": None,
          "agreement": None, "unresolved": False} for t in texts for v in videos], schema=QREL_SCHEMA)
    queries = pa.Table.from_pylist(
        [{"query_id": qid[t], "text": t, "video_id": first_match[t], "source_dataset": "ssv2",
          "source_split": "validation"} for t in texts],
        schema=pa.schema([f for f in QUERY_SCHEMA if f.name not in ("relevant", "original")]))
    vtable = pa.Table.from_pylist([{"video_id": v, "source_dataset": "ssv2"} for v in videos], schema=VIDEO_SCHEMA)
    _, original, relevant = relevant_lists(queries, vtable, qrels)
    queries = queries.append_column(QUERY_SCHEMA.field("relevant"), pa.array(relevant, QUERY_SCHEMA.field("relevant").type))
    queries = queries.append_column(QUERY_SCHEMA.field("original"), pa.array(original.tolist(), pa.int64()))
    n_rel = [len(r) for r in relevant]
    counts = {"queries": len(texts), "videos": len(videos), "rows": len(rows), "matching_rows": sum(n_rel),
              "matches_per_query": {"min": min(n_rel), "max": max(n_rel)}}
    return qrels, queries, vtable, counts


def parse(raw: Path):
    """Every `eval_ssv2_<name>.csv` under `raw` -> configs `ssv2-<name>` (+ `-queries`, `-videos`)."""
    from hardneg.datasets.hub_layout import ConfigData, release_build
    from hardneg.datasets.raw_common import RawFolder

    folder = RawFolder(raw, BENCHMARK.name)
    configs, raw_files, report = [], [], {"per_config": {}}
    for path in folder.files:
        m = _NAME.fullmatch(path.name)
        if m is None or path.name.lower().endswith("_scores.csv"):
            why = (SCORES_FILE
                   if path.name.lower().endswith("_scores.csv") else
                   "not an SSv2 evaluation file (eval_ssv2_<name>.csv); ATP-Hard files build as videocon-atphard")
            folder.ignore(path, why)
            continue
        config = "ssv2-" + m.group(1).lower().replace("_", "-")
        qrels, queries, videos, counts = build_config(path, config)
        folder.use(path, f"{config}: {counts['queries']} queries x {counts['videos']} videos")
        configs += [ConfigData(config, {"test": qrels}), ConfigData(f"{config}-queries", {"test": queries}),
                    ConfigData(f"{config}-videos", {"test": videos})]
        raw_files.append(folder.rel(path))
        report["per_config"][config] = counts
    if not configs:
        raise folder.nothing_found(BENCHMARK.raw_files.replace("\n", " "))
    report["files"] = folder.report()
    return release_build(BENCHMARK.name, configs, raw_files, report)
