"""ViLMA (Kesen et al., ICLR 2024): five foil tests, each item with its own proficiency test.

The declaration and the parser of the release (github.com/ilkerkesen/ViLMA, `data/`, MIT): one
JSON file per test, mapping an item key to `caption`, `foils`, `proficiency` (`caption`, `foils`,
`human` votes), `mturk` votes and where the clip comes from (`dataset`, `video_file`,
`dataset_idx`, `youtube_id`, `start_time`, `end_time`, `time_unit`). Ten files make the benchmark
(`FILES`); a folder may hold any of them, each becomes a config, plus `all`.

The authors' filter (`bin/eval.py`, `main`; the same lines in `bin/multi_eval.py`, `main`): an item
is kept when `mturk.caption >= 2` and `proficiency.human.caption == 1`. Items it drops are counted
per file and listed by key in build_report.json, never dropped silently.

Each kept item becomes two multiple-choice rows sharing `item_key` (`<config>:<key>`):
- `<config>:<key>` with `part` "main": [caption, *foils], label 0;
- `<config>:<key>:proficiency` with `part` "proficiency": [proficiency caption, *its foils], label 0.
The caption stays at index 0, as in the authors' score files, and the authors' argmax gives a
tie to index 0 (`torch.argmax` in `multi_eval.py`; `multiclass_accuracy` in `eval.py`), so the
original tie rule is `argmax` (here the same as "the caption wins ties").

Metrics (one results engine, `hardneg.results`): `Accuracy` (the main test, `where` part = main),
`Proficiency` (`where` part = proficiency) and `Combined` (`all_of` item_key: an item counts when
both of its rows are right, `multi_eval.py`'s `acc_r`). In `all` each is the unweighted mean over
the five tests (`category`), each test pooling its files; a per-file config is the plain share.

Video ids name the clip a model must see, following how the authors find a video
(`vl_bench/data.py`, `Dataset_v1._read_video`): the source video (QUVA `video_file` without its
extension, Something-Something v2 `dataset_idx`, STAR `video_file`, YouTube sets `youtube_id`),
then `_<start>_<end>` when the item has times (`start_time` null = 0, `end_time` null = the end).
A clip that is a whole video is the source id alone. Users cut their clips under these names and
pass the folder with `--videos`; each row's provenance keeps the source fields and times.

Validation: a file that is not an object of items, an item without `caption`, `foils` (a
non-empty list of strings), `mturk` or `proficiency` (with `caption`, `foils`, `human.caption`),
vote counts that are not integers, an unknown `dataset` or a clip without its source field, and
a duplicate key are errors naming the file, the item and the fix; nothing is written.
"""

from __future__ import annotations

import re
from pathlib import Path

from hardneg.benchmarks.base import Benchmark, Headline, Metric, ReleaseFile, Source, VLMPrompt, VideoSource
from hardneg.video import FrameSettings

ALL = "all"
#: release file stem -> (config, test); the order of the authors' README and paper
FILES = {
    "counting-easy-spelled-sec": ("counting-easy", "action-counting"),
    "counting-hard-spelled-sec": ("counting-hard", "action-counting"),
    "Semantic_Role_Labelling_Data_annotated": ("situation-awareness", "situation-awareness"),
    "change-state-action": ("change-state-action", "change-of-state"),
    "change-state-prestate": ("change-state-prestate", "change-of-state"),
    "change-state-poststate": ("change-state-poststate", "change-of-state"),
    "change-state-inverse": ("change-state-inverse", "change-of-state"),
    "rare-actions-noun-foils": ("rare-actions-noun", "rare-actions"),
    "rare-actions-verb-foils": ("rare-actions-verb", "rare-actions"),
    "relations": ("spatial-relations", "spatial-relations"),
}
TESTS = ("action-counting", "situation-awareness", "change-of-state", "rare-actions", "spatial-relations")
#: the negative type of a test's main foils; proficiency foils are "proficiency"
NEGATIVE_TYPE = {"action-counting": "counting", "situation-awareness": "situation", "change-of-state":
                 "change_of_state", "rare-actions": "rare_action", "spatial-relations": "spatial_relation"}
#: release `dataset` -> (our source_dataset, the field naming its video, as `_read_video` finds it)
SOURCES = {
    "QUVA": ("quva", "video_file"),
    "something-something-v2": ("ssv2", "dataset_idx"),
    "star": ("star", "video_file"),
    "RareAct": ("rareact", "youtube_id"),
    "VidSitu": ("vidsitu", "youtube_id"),
    "youcook2": ("youcook2", "youtube_id"),
    "coin": ("coin", "youtube_id"),
}
TIME_UNITS = ("sec", "pts")
_VIDEO = re.compile(r"[A-Za-z0-9_.-]+")
#: the item columns beyond the shared schema (read by the metrics' `where` / `all_of`)
PART, ITEM_KEY = "part", "item_key"

CONFIG_TEXT = {
    "counting-easy": "action counting, easy: how many times an action is repeated (small numbers)",
    "counting-hard": "action counting, hard: how many times an action is repeated (larger numbers, closer foils)",
    "situation-awareness": "situation awareness: who does what (swapped actors, replaced actions)",
    "change-state-action": "change of state: the action that changes an object's state",
    "change-state-prestate": "change of state: the state before the action",
    "change-state-poststate": "change of state: the state after the action",
    "change-state-inverse": "change of state: the whole change told in reverse",
    "rare-actions-noun": "rare actions: unusual object of an action (noun foils)",
    "rare-actions-verb": "rare actions: unusual action on an object (verb foils)",
    "spatial-relations": "spatial relations: how objects move relative to each other",
}

#: the pinned sources `hardneg fetch` reads (docs/fetching.md): ilkerkesen/ViLMA at 746912b7c8e8 (2024-01-18)
SOURCE = Source(
    repo="github.com/ilkerkesen/ViLMA", commit="746912b7c8e81d53eb946abe26456ad8b7db826f",
    license="MIT (LICENSE)",
    files=(
        ReleaseFile("data/counting-easy-spelled-sec.json",
                    1143934, "fa4facd811a5c82e8d05d92ca303ebfd2d978942dd63a36b4c0864bbf28b19ad"),
        ReleaseFile("data/counting-hard-spelled-sec.json",
                    1067219, "3ff20cfa7cafa1b3917133c020679bb794fd650497954f42f105b777f9e0729e"),
        ReleaseFile("data/Semantic_Role_Labelling_Data_annotated.json",
                    2491036, "2ba2450845efc4436ec50db5bf76db3919d3665d399a772377606bb71512f61b"),
        ReleaseFile("data/change-state-action.json",
                    969203, "351fcdc7f71e7f6e14c86983597887bbf8a7a52110bfdaccc3a5408ea9edecb2"),
        ReleaseFile("data/change-state-prestate.json",
                    981825, "eb21ee0b4f89875fc44126ff6ed1c60f7eaab76bc18b8c7f10e0f20ceecbc912"),
        ReleaseFile("data/change-state-poststate.json",
                    983697, "6a173bd5426b1bbd260c0aadc53066fa664a9dcd6d2af7f520d4657d3593a8e9"),
        ReleaseFile("data/change-state-inverse.json",
                    1070359, "bc2d2fc74fb8d5f1821c663e189a30358b6e04717751cfb48247a2bc063c4b05"),
        ReleaseFile("data/rare-actions-noun-foils.json",
                    1200819, "b22faf96f75e25c3eaa087a56af477c6796a529e168f9fdd2ff871190b13a39a"),
        ReleaseFile("data/rare-actions-verb-foils.json",
                    1128558, "64bec0f9d64d8b3bde954e5e4e9d4e6dd5239dab42bfafcba613f3e5019faabf"),
        ReleaseFile("data/relations.json",
                    941300, "4aeed66fdef76f34ddb04a2da701a06dea894b050a6172b0a563343f5a321701"),
        ReleaseFile("LICENSE",
                    1069, "1bdecf93e7133c43c75cd42beb8ea5868e6272cbe755a56d00c9aa70c2449c15"),
    ),
    videos=
    VideoSource(
        "manual", official="https://github.com/ilkerkesen/ViLMA#data-setup",
        steps=(("QUVA Repetition (action counting): wget -c "
                "http://isis-data.science.uva.nl/tomrunia/QUVARepetitionDataset.tar.gz; tar -xf; the ViLMA README "
                "then runs bin/normalize_fps (FPS normalisation) and tasks/counting/normalize_annotations.py. "
                "Clip id = video_file stem (e.g. 000_rope_beach) + _<start>_<end>"), ("Something-Something v2 (spatial relations, relations.json): licence-gated, "
                "developer.qualcomm.com/software/ai-datasets/something-something (see videocon_ssv2). Clip id = "
                "dataset_idx"), ("RareAct (rare actions): one zip from the RareAct authors, "
                "https://www.rocq.inria.fr/cluster-willow/amiech/rareact.zip, files named by YouTube id. Clip id "
                "= youtube_id_<start>_<end>"), ("YouCook2, COIN, STAR, VidSitu (change of state, situation awareness): annotations only; videos "
                "from YouTube with the ViLMA script bin/youtube_downloader (the authors kept items whose videos "
                "were available on 06.04.2023 / 16.05.2023). Clip id = youtube_id (STAR: video_file) + "
                "_<start>_<end>"), ("cut each clip [start_time, end_time] (seconds; time_unit 'pts' marks frame units) to <clip "
                "id>.mp4 as hardneg's vilma declaration names it, and pass the folder with --videos"),),
        why="seven source datasets, none redistributed by ViLMA; four are YouTube-only, SSv2 is licence-gated",
        evidence=("ViLMA README (ilkerkesen/ViLMA@746912b, 'Data Setup' sections); hardneg vilma.py clip_id() "
                  "(how a clip id is formed)")),
    notes=("HEAD of main (2024-01-18), the commit realdata/README names (746912b). relations.json and "
           "change-state-inverse.json are the two release files not in realdata (hashes from the snapshot). data/ "
           "also holds other variants (counting-*-digits*, *-pts, SRL_*, quva-*) that the parser does not read."),
)


BENCHMARK = Benchmark(
    source=SOURCE,
    name="vilma",
    title="ViLMA",
    order=60,
    #: one number: Accuracy on `all` (every test file together)
    overall=Headline("config", (ALL,)),
    task="multiple_choice",
    hub_id="video-hardneg/vilma",
    pretty_name="ViLMA: foil tests with proficiency tests for video-language models",
    paper_title="ViLMA: A Zero-Shot Benchmark for Linguistic and Temporal Grounding in Video-Language Models",
    paper_url="https://arxiv.org/abs/2311.07022",
    citation="""@inproceedings{kesen2024vilma,
  title     = {{ViLMA}: A Zero-Shot Benchmark for Linguistic and Temporal Grounding in Video-Language Models},
  author    = {Kesen, Ilker and Pedrotti, Andrea and Dogan, Mustafa and Cafagna, Michele and Acikgoz, Emre Can and Parcalabescu, Letitia and Calixto, Iacer and Frank, Anette and Gatt, Albert and Erdem, Aykut and Erdem, Erkut},
  booktitle = {International Conference on Learning Representations (ICLR)},
  year      = {2024}
}""",
    licenses=("mit",),
    license_note=(
        "MIT, as in the authors' repository (github.com/ilkerkesen/ViLMA, LICENSE): the annotations may be "
        "republished with the copyright notice. The videos belong to QUVA, Something-Something v2, STAR, RareAct, "
        "VidSitu, YouCook2 and COIN and keep their own terms."
    ),
    description=(
        "ViLMA tests whether a video-language model grounds what happens over time: action counting, situation "
        "awareness, change of state, rare actions and spatial relations. Each item pairs a clip with its caption and "
        "one or two foils (the main test), and with a proficiency test (a simpler caption and foil the model should "
        "get right before the main test means anything). `Accuracy` is the share of items whose caption beats its "
        "foils, `Proficiency` the same on the proficiency test, `Combined` the share where both are right (the "
        "paper's P+T); in `all` each is the unweighted mean over the five tests. Chance: 50%, 50% and 25% for "
        "two-way items."
    ),
    negatives=(
        "The authors made the foils per test (number sampling for counting, RoBERTa masked filling and manual actor "
        "swaps for situation awareness, inverted states for change of state, MLM ensembles and T5 for rare actions, "
        "T5 with GRUEN and NLI filters for relations) and kept items that crowd workers validated "
        "(`mturk.caption >= 2`) and whose proficiency test a human validated (`proficiency.human.caption == 1`). "
        "Each foil's provenance record names the release file, the item key, the test and the foiling method where "
        "the release gives one; main foils have the test's negative type, proficiency foils `proficiency`."
    ),
    limitations=(
        "Most items have one foil, so chance is 50% per test and 25% for `Combined`; look at the intervals. An item is "
        "two rows (main and proficiency, `part`), joined by `item_key`; `R@1`, `MeanR` and `MRR` pool both parts. "
        "The clips are cut from seven source datasets that are not redistributed: the video id names the clip "
        "(source video and times), and the provenance of the caption keeps the source fields. In `all`, the mean "
        "over the five tests pools the files of a test (counting easy and hard, the four change-of-state files, rare "
        "actions' noun and verb foils). The authors' argmax gives a tie to the caption (`ties=\"original\"` = "
        "`argmax`); the board uses the tie-aware rule, under which a constant scorer sits exactly at chance."
    ),
    source_datasets=("QUVA", "Something-Something v2", "STAR", "RareAct", "VidSitu", "YouCook2", "COIN"),
    parser="hardneg.benchmarks.vilma:parse",
    raw_files=("counting-{easy,hard}-spelled-sec.json, Semantic_Role_Labelling_Data_annotated.json,\n"
               "change-state-{action,prestate,poststate,inverse}.json, rare-actions-{noun,verb}-foils.json,\n"
               "relations.json (the release's data/; any of them: item key -> caption, foils, proficiency, mturk)"),
    metrics=(
        Metric("Accuracy", "R@1", "main test (T): share of items whose caption scores above every foil (mean over the "
               "tests)", over="category", where=(PART, "main")),
        Metric("Proficiency", "R@1", "proficiency test (P): share of items whose proficiency caption scores above its "
               "foils (mean over the tests)", over="category", where=(PART, "proficiency")),
        Metric("Combined", "R@1", "P+T: share of items whose main and proficiency tests are both right (mean over "
               "the tests; bin/multi_eval.py)", over="category", all_of=ITEM_KEY),
    ),
    ks=(1,),
    original_ties="argmax",
    original_ties_note=(
        "ViLMA `bin/eval.py`, `main` (torchmetrics multiclass_accuracy, an argmax) and `bin/multi_eval.py`, `main` "
        "(`scores.argmax() == 0` for both tests): the first index, the caption, wins a tie"
    ),
    breakdowns=("source_dataset",),
    item_columns=(PART, ITEM_KEY),
    sample="vilma",
    tags=("vilma", "temporal", "foils", "proficiency", "counting", "change-of-state"),
    usage_note=(
        "Every item is two rows: `part` \"main\" (the caption and its foils) and `part` \"proficiency\" (the "
        "proficiency caption and its foils), with the same `item_key`. Score both; `Combined` needs both rows of an "
        "item. Clips: cut `<video_id>.mp4` from the source video named in the caption's provenance (`start_time` to "
        "`end_time`, seconds; QUVA times refer to the authors' FPS-normalized videos, `bin/normalize_fps`) and pass "
        "the folder with `--videos`."
    ),
    config_descriptions={ALL: "every test file together (two rows per item)", **CONFIG_TEXT},
    negative_types=(*NEGATIVE_TYPE.values(), "proficiency"),
    # ViLMA scores its generative baseline by the caption's mean token log-likelihood right after the visual
    # input, with no instruction (models/image/run_blip2.py, main: cross-entropy of the caption's tokens)
    vlm=VLMPrompt("caption-likelihood", "{video}\n{caption}",
                  "ViLMA models/image/run_blip2.py, main (caption likelihood after the visual input, no instruction)"),
    # the authors' normalisation: per-frame perplexity, the summed loss over (tokens + 1), averaged over frames
    # (run_blip2.py, main: CrossEntropyLoss(reduction='none') summed / attention-mask length, mean over frames, exp)
    vlm_sets=(("authors", VLMPrompt(
        "caption-likelihood", "{video}\n{caption}",
        "ViLMA models/image/run_blip2.py, main (per-frame caption perplexity: summed loss / (tokens + 1), mean over "
        "frames, exp; negated); its frames: 8 consecutive at a random offset (run_blip2.py, sample_frame_indices)",
        "1", normalize="vilma-perplexity",
        frames=FrameSettings(n_frames=8, recipe="vilma-consecutive"))),),
)


# ----------------------------------------------------------------------------- the parser


def _error(path: Path, key: str, problem: str, fix: str):
    from hardneg.datasets.raw_common import RawFormatError

    return RawFormatError(path, f"item {key[:80]!r}: {problem}", fix)


def _texts(value, path: Path, key: str, field: str) -> list[str]:
    """A non-empty list of non-empty strings (foils), or the error naming the field."""
    from hardneg.datasets.raw_common import MAX_FIELD_CHARS

    if not isinstance(value, list) or not value:
        shown = "missing" if value is None else f"{type(value).__name__} {str(value)[:40]!r}"
        raise _error(path, key, f"field '{field}' is {shown}, not a non-empty list of strings",
                     f"write '{field}' as a JSON list of foil sentences, e.g. [\"a man walks.\"]")
    for j, text in enumerate(value):
        if not isinstance(text, str) or not text.strip() or len(text) > MAX_FIELD_CHARS:
            raise _error(path, key, f"{field}[{j}] is {str(text)[:40]!r}, not a non-empty sentence",
                         f"each entry of '{field}' is a sentence (a string); fill it in or re-download the file")
    return value


def _text(value, path: Path, key: str, field: str) -> str:
    from hardneg.datasets.raw_common import MAX_FIELD_CHARS

    if not isinstance(value, str) or not value.strip() or len(value) > MAX_FIELD_CHARS:
        shown = "missing" if value is None else f"{type(value).__name__} {str(value)[:40]!r}"
        raise _error(path, key, f"field '{field}' is {shown}, not a non-empty string",
                     f"write '{field}' as the sentence (a JSON string)")
    return value


def _votes(obj, path: Path, key: str, field: str) -> int:
    """`<field>.caption` of a vote object (`mturk` or `proficiency.human`): an integer count."""
    if not isinstance(obj, dict):
        shown = "missing" if obj is None else type(obj).__name__
        raise _error(path, key, f"field '{field}' is {shown}, not an object of votes",
                     f"give '{field}' as {{\"caption\": n, \"foil\": n, \"other\": n}} (the authors' filter reads "
                     f"{field}.caption); re-download the file")
    count = obj.get("caption")
    if not isinstance(count, int) or isinstance(count, bool):
        raise _error(path, key, f"field '{field}.caption' is {str(count)[:40]!r}, not an integer vote count",
                     f"write {field}.caption as the number of votes for the caption")
    return count


def _time(value, path: Path, key: str, field: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise _error(path, key, f"field '{field}' is {str(value)[:40]!r}, not a number or null",
                     f"write '{field}' as a number (in the item's time_unit) or null")
    return float(value)


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def clip_id(item: dict, path: Path, key: str) -> tuple[str, str, dict]:
    """(video id of the clip, source_dataset, the source fields) as the authors locate the video."""
    dataset = item.get("dataset")
    if dataset not in SOURCES:
        raise _error(path, key, f"field 'dataset' is {str(dataset)[:40]!r}, not a known source dataset",
                     f"use one of {list(SOURCES)} (vl_bench/data.py, Dataset_v1._read_video, reads only these)")
    source_dataset, field = SOURCES[dataset]
    source = item.get(field)
    if isinstance(source, int) and not isinstance(source, bool):
        source = str(source)
    if not isinstance(source, str) or not source.strip():
        raise _error(path, key, f"field '{field}' is {str(source)[:40]!r}, but {dataset} videos are found by it",
                     f"give the {dataset} item its '{field}' (a string)")
    if dataset == "QUVA":
        source = Path(source).stem
    if not _VIDEO.fullmatch(source):
        raise _error(path, key, f"field '{field}' is {source[:60]!r}, which has characters other than letters, "
                     "digits, '.', '_' and '-'", "use the source dataset's own video name")
    unit = item.get("time_unit", "sec")
    if unit not in TIME_UNITS:
        raise _error(path, key, f"field 'time_unit' is {str(unit)[:40]!r}", f"use one of {list(TIME_UNITS)}")
    start, end = _time(item.get("start_time"), path, key, "start_time"), _time(item.get("end_time"), path, key, "end_time")
    start = start or 0.0
    end = None if end is None or end == -1 else end
    if end is not None and end <= start:
        raise _error(path, key, f"end_time {end} is not after start_time {start}",
                     "correct the clip's times (end after start)")
    video = source if start == 0 and end is None else (
        f"{source}_{_number(start)}_{'end' if end is None else _number(end)}" + ("" if unit == "sec" else f"_{unit}"))
    fields = {"dataset": dataset, "source_video": source, "start_time": item.get("start_time"),
              "end_time": item.get("end_time"), "time_unit": unit, "original_split": item.get("original_split")}
    return video, source_dataset, fields


def _method(item: dict, path: Path, key: str) -> str | None:
    """The foiling method the release gives (`foiling_methods` or `foiling_method`), joined by '+'."""
    for field in ("foiling_methods", "foiling_method"):
        value = item.get(field)
        if value is None:
            continue
        values = [value] if isinstance(value, str) else value
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise _error(path, key, f"field '{field}' is {str(value)[:40]!r}, not a string or a list of strings",
                         f"write '{field}' as the method's name(s)")
        return "+".join(values) or None
    return None


def _rows(item, path: Path, key: str, config: str, test: str) -> list[dict]:
    """The main and the proficiency row of one kept item."""
    from hardneg.datasets.raw_common import provenance

    caption = _text(item.get("caption"), path, key, "caption")
    foils = _texts(item.get("foils"), path, key, "foils")
    prof = item["proficiency"]
    prof_caption = _text(prof.get("caption"), path, key, "proficiency.caption")
    prof_foils = _texts(prof.get("foils"), path, key, "proficiency.foils")
    video, source_dataset, fields = clip_id(item, path, key)
    method = _method(item, path, key)
    item_key = f"{config}:{key}"
    where = {"release_file": path.name, "key": key, "test": test}
    human = "manual" in (method or "").lower()
    rows = []
    for part, positive, negatives, kind in (("main", caption, foils, NEGATIVE_TYPE[test]),
                                            ("proficiency", prof_caption, prof_foils, "proficiency")):
        rule = method if part == "main" else prof.get("proficiency_test")
        details = {**where, "part": part}
        if part == "main":
            details.update(mturk=item["mturk"], **{k: item[k] for k in ("class", "classes_foil") if k in item})
        else:
            details.update(human=prof["human"])
        rows.append({
            "id": item_key if part == "main" else f"{item_key}:proficiency",
            "video_id": video,
            "source_dataset": source_dataset,
            "source_split": fields["original_split"] if isinstance(fields["original_split"], str) else None,
            "category": test,
            "captions": [positive, *negatives],
            "label": 0,
            "manipulated_index": None,
            "negative_types": ["positive"] + [kind] * len(negatives),
            "provenance": [provenance("positive", details={**where, "part": part, **fields})] + [
                provenance("human" if human and part == "main" else "generator",
                           generator=None if human and part == "main" else f"vilma-{test}" if part == "main"
                           else "vilma-proficiency", rule=str(rule) if rule else None, details=details)
                for _ in negatives],
            PART: part,
            ITEM_KEY: item_key,
        })
    return rows


def _same(a: str, b: str) -> bool:
    return " ".join(a.lower().split()) == " ".join(b.lower().split())


def read_test(path: Path, config: str, test: str) -> tuple[list[dict], dict]:
    """The rows of one test file (two per kept item, in file order) and what the filter did."""
    from hardneg.datasets.raw_common import RawFormatError, load_json_strict

    data = load_json_strict(path)  # a repeated key is an error naming it (no silent last-one-wins)
    if not isinstance(data, dict):
        raise RawFormatError(path, f"the top level is {type(data).__name__}, not an object",
                             "the file maps each item key to its item, as the authors' data/*.json")
    rows, dropped, same = [], {"main_test_not_validated": [], "proficiency_not_validated": []}, []
    for key, item in data.items():
        if not isinstance(item, dict):
            raise _error(path, key, f"the item is {type(item).__name__}, not an object",
                         "each key maps to an object with caption, foils, proficiency and mturk")
        for field in ("mturk", "proficiency"):
            if field not in item:
                raise _error(path, key, f"field '{field}' is missing",
                             f"every item needs '{field}' (the authors' filter reads it, bin/eval.py); "
                             "re-download the file or remove the item")
        if not isinstance(item["proficiency"], dict):
            raise _error(path, key, f"field 'proficiency' is {type(item['proficiency']).__name__}, not an object",
                         "give 'proficiency' as {\"caption\", \"foils\", \"human\"}")
        main_ok = _votes(item["mturk"], path, key, "mturk") >= 2
        prof_ok = _votes(item["proficiency"].get("human"), path, key, "proficiency.human") == 1
        rows_of_item = _rows(item, path, key, config, test)  # every item is validated, kept or not
        if not main_ok:
            dropped["main_test_not_validated"].append(key)
        elif not prof_ok:
            dropped["proficiency_not_validated"].append(key)
        else:
            rows += rows_of_item
            if any(_same(r["captions"][0], f) for r in rows_of_item for f in r["captions"][1:]):
                same.append(key)  # kept: the authors score every kept item; the tie rule decides it
    found = {"items_read": len(data), "items_kept": len(rows) // 2, "foil_identical_to_caption": same,
             "filtered_out": {"count": sum(len(v) for v in dropped.values()),
                              **{reason: {"count": len(keys), "keys": keys} for reason, keys in dropped.items()}}}
    return rows, found


def _table(rows: list[dict], path, where):
    """The shared item table plus the declared item columns (`part`, `item_key`)."""
    import pyarrow as pa

    from hardneg.datasets.raw_common import mc_table

    table = mc_table(rows, path, where)
    for column in BENCHMARK.item_columns:
        table = table.append_column(pa.field(column, pa.string(), nullable=False),
                                    pa.array([r[column] for r in rows], pa.string()))
    return table


def parse(raw: Path):
    """Validate every ViLMA test file in `raw` and make one config per file plus `all`."""
    from hardneg.datasets.hub_layout import ConfigData, release_build
    from hardneg.datasets.raw_common import RawFolder

    folder = RawFolder(raw, BENCHMARK.name)
    found: dict[str, Path] = {}
    for p in folder.files:
        if p.suffix == ".json" and p.stem in FILES:
            if p.stem in found:
                raise ValueError(f"{raw}: two copies of {p.name} ({folder.rel(found[p.stem])}, {folder.rel(p)}); "
                                 "keep one release")
            found[p.stem] = p
        elif p.name == "LICENSE":
            folder.ignore(p, "the release's license (MIT), recorded in the card")
        elif p.name != "videos.txt":
            folder.ignore(p, "not one of ViLMA's ten test files")
    if not found:
        raise folder.nothing_found(BENCHMARK.raw_files.replace("\n", " "))
    configs, raw_files, every, every_where = [], [], [], []
    report: dict = {"filter": "mturk.caption >= 2 and proficiency.human.caption == 1 (bin/eval.py, main)",
                    "per_file": {}, "missing_files": [f"{s}.json" for s in FILES if s not in found]}
    for stem, (config, test) in FILES.items():
        path = found.get(stem)
        if path is None:
            continue
        rows, info = read_test(path, config, test)
        folder.use(path, f"{test} items: {info['items_kept']:,} kept of {info['items_read']:,}")
        if not rows:
            raise ValueError(f"{path}: no item passes the authors' filter ({report['filter']}); re-download the file")
        where = [r["id"] for r in rows]
        configs.append(ConfigData(config, {"test": _table(rows, path, where)}))
        raw_files.append(folder.rel(path))
        every += rows
        every_where += [f"{w} of {path.name}" for w in where]
        report["per_file"][path.name] = {"config": config, "test": test, **info,
                                         "videos": len({r["video_id"] for r in rows})}
    configs.insert(0, ConfigData(ALL, {"test": _table(every, raw, every_where)}))
    kept = sum(f["items_kept"] for f in report["per_file"].values())
    read = sum(f["items_read"] for f in report["per_file"].values())
    report["items_kept"], report["items_read"] = kept, read
    same = [f"{f}: {k}" for f, info in report["per_file"].items() for k in info["foil_identical_to_caption"]]
    report["files"] = folder.report()
    report["validation"] = (
        f"Validation of this build: {read:,} items read from {len(report['per_file'])} test files; {kept:,} kept by "
        f"the authors' filter ({report['filter']}), {read - kept:,} filtered out (listed by key in "
        "`build_report.json`); each kept item is two rows (main and proficiency)."
        + (f" {len(same)} kept item(s) have a foil identical to its caption (ignoring case and spacing), so any "
           f"model ties on them and the tie rule decides: {'; '.join(same[:5])}." if same else "")
        + (f" Test files missing from the raw folder: {', '.join(report['missing_files'])}."
           if report["missing_files"] else ""))
    build = release_build(BENCHMARK.name, configs, raw_files, report)
    build.limitations = f"{build.limitations}\n\n{report['validation']}"
    return build
