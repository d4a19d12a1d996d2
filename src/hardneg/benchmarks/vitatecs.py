"""VITATECS (Li et al., ECCV 2024): a caption and one counterfactual that changes a temporal aspect.

The declaration and the parser of the release (github.com/lscpku/VITATECS, `data/`): one
JSONL per aspect, each line `{"src_dataset", "video_name", "caption", "counterfactual",
"aspect"}`. Every line becomes a 2-way item (caption first, label 0).

Validation: a line that is not a JSON object with exactly those five string fields, an
unknown aspect (or one that differs from the file's), an unknown source dataset or a video
name not in that dataset's naming form is an error naming the file, line, field and fix;
nothing is written. A pair whose caption or counterfactual is empty, or whose two texts
are identical (ignoring case and spacing), cannot test anything: it is dropped and listed.
Exact duplicate pairs are kept, because the authors' evaluation scores every line
(`X-CLIP/eval_vitatecs_xclip.py`, `eval_epoch`), and listed. Counts go into
build_report.json and the card.
"""

from __future__ import annotations

import random
import re
from dataclasses import replace
from pathlib import Path

from hardneg.benchmarks.base import Benchmark, Headline, Metric, ReleaseFile, Source, VLMPrompt
from hardneg.benchmarks.video_sources import MSRVTT_ZIP, VATEX_ZIP
from hardneg.benchmarks.harnesses import (LMMS_EVAL_ANSWERS, LMMS_EVAL_FRAMES, LMMS_EVAL_MAX_NEW_TOKENS,
                                         LMMS_EVAL_MODEL_HARNESS, LMMS_EVAL_PIXELS, LMMS_EVAL_POSITIONS,
                                         LMMS_EVAL_SYSTEM, VITATECS_JUDGE_PROMPT)

#: the aspects in the order of the authors' README; file `<Aspect>.jsonl`, config `<aspect>`
ASPECTS = ("Direction", "Intensity", "Sequence", "Localization", "Compositionality", "Type")
FIELDS = ("src_dataset", "video_name", "caption", "counterfactual", "aspect")
#: src_dataset -> (our source_dataset, the form of its video names, how to write one)
SOURCES = {
    "MSRVTT": ("msrvtt", re.compile(r"video[0-9]+\.mp4"), "video<number>.mp4"),
    "VATEX": ("vatex", re.compile(r"[A-Za-z0-9_-]{11}_[0-9]{6}_[0-9]{6}\.mp4"),
              "<11-character YouTube id>_<start, 6 digits>_<end, 6 digits>.mp4"),
}
ALL = "all"

ASPECT_TEXT = {
    "direction": "the direction of a movement or change is reversed (opening / closing, into / out of)",
    "intensity": "the speed, force or degree of an action changes (fast / slow)",
    "sequence": "the order of two events is swapped",
    "localization": "where the action happens or where it is applied changes",
    "compositionality": "who does what to whom is rearranged (the same words, other roles)",
    "type": "the kind of action changes (runs / walks)",
}

#: the pinned sources `hardneg fetch` reads (docs/fetching.md): lscpku/VITATECS at 58bff59bb1d3 (2024-07-11)
SOURCE = Source(
    repo="github.com/lscpku/VITATECS", commit="58bff59bb1d3ed287983fca8ca7589498f4db6b2",
    license="CC BY 4.0 (README 'License' section; no LICENSE file for the data)",
    files=(
        ReleaseFile("data/Direction.jsonl",
                    999128, "0af0d9eb5692b31a5751d0fe9c32930e5076711ea67f9fec12be9cb77b6ef7f0"),
        ReleaseFile("data/Intensity.jsonl",
                    208922, "084499313b80e4760f1a27c95a69cc7b94850004101945946b06396b0bf9c2f3"),
        ReleaseFile("data/Sequence.jsonl",
                    41951, "b839b664486724ddf90343af5fa674ce6ab81ffd219d8fd520b377c7ad39e8dd"),
        ReleaseFile("data/Localization.jsonl",
                    288722, "e92c6da4bbfe46fee5fd5e0d2eac12a1d41f18d76470de905248bc1727fa176c"),
        ReleaseFile("data/Compositionality.jsonl",
                    390293, "1e891eb36261993ec5c385a61fd8e5cdb1a4ee4cbc01f10bbfb1bcd10e41221e"),
        ReleaseFile("data/Type.jsonl",
                    1562442, "82eae3cd93907e8f867f9749472a9a168e1b6121b9cfb9a11a71b919d33cc0fb"),
    ),
    videos=(
        replace(MSRVTT_ZIP, part="MSRVTT"),
        replace(VATEX_ZIP, part="VATEX"),
    ),
    notes=("HEAD of main (2024-07-11). data/*.jsonl unchanged since 286c5d5 (2023-11-27). The repo also has "
           "data_opt/ (a different, option-style copy used by the lmms-eval/Hub version); the parser reads data/."),
)


BENCHMARK = Benchmark(
    source=SOURCE,
    negative_types=("temporal",),
    name="vitatecs",
    title="VITATECS",
    order=50,
    #: one number: Accuracy on `all` (every aspect; the metric is already the mean over aspects)
    overall=Headline("config", (ALL,)),
    task="multiple_choice",
    hub_id="video-hardneg/vitatecs",
    pretty_name="VITATECS: temporal concept counterfactuals for MSR-VTT and VATEX videos",
    paper_title="VITATECS: A Diagnostic Dataset for Temporal Concept Understanding of Video-Language Models",
    paper_url="https://arxiv.org/abs/2311.17404",
    citation="""@inproceedings{li2024vitatecs,
  title     = {{VITATECS}: A Diagnostic Dataset for Temporal Concept Understanding of Video-Language Models},
  author    = {Li, Shicheng and Li, Lei and Ren, Shuhuai and Liu, Yuanxin and Liu, Yi and Gao, Rundong and Sun, Xu and Hou, Lu},
  booktitle = {European Conference on Computer Vision (ECCV)},
  year      = {2024}
}""",
    licenses=("cc-by-4.0",),
    license_note=(
        "CC BY 4.0, as stated in the authors' repository (github.com/lscpku/VITATECS); the pairs may be "
        "republished with attribution. The videos belong to MSR-VTT and VATEX and keep their own terms."
    ),
    description=(
        "VITATECS tests whether a video-text model understands temporal concepts rather than what one frame "
        "shows: each MSR-VTT or VATEX test video comes with its caption and a counterfactual that changes one "
        "temporal aspect (direction, intensity, sequence, localization, compositionality or type of action) and "
        "keeps everything static. The model must score the caption above the counterfactual. `Accuracy` is the "
        "unweighted mean over the aspects of the per-aspect accuracy (`Accuracy_<aspect>`); chance is 50%."
    ),
    negatives=(
        "The authors generated the counterfactuals with a large language model (ChatGPT in the current release; "
        "an older OPT-175B version is in their `data_opt/`) and filtered them with human-in-the-loop annotation. "
        "Every counterfactual has type `temporal`, its aspect as the item's `category`, and a provenance record "
        "(origin `generator`, rule = the aspect) with the changed region of the caption."
    ),
    limitations=(
        "Two candidates per item, so chance is 50% and small differences between models are noise; look at the "
        "intervals. The aspects differ a lot in size (Sequence has about 150 pairs, Type about 6,600), so "
        "`Accuracy` weighs a Sequence pair about 44 times more than a Type pair (the `all` config lists every pair; "
        "its `Accuracy_<aspect>` values are the per-aspect shares). "
        "Captions are the source datasets' own, typos and double spaces included, and kept exactly as published. "
        "The authors count a tie against the caption (`caption_score > counterfactual_score` in "
        "`X-CLIP/eval_vitatecs_xclip.py`, `eval_epoch`); use `ties=\"pessimistic\"` to match their numbers."
    ),
    source_datasets=("MSR-VTT", "VATEX"),
    parser="hardneg.benchmarks.vitatecs:parse",
    raw_files=("Direction.jsonl, Intensity.jsonl, Sequence.jsonl, Localization.jsonl, Compositionality.jsonl,\n"
               "Type.jsonl (the release's data/; lines: src_dataset, video_name, caption, counterfactual, aspect)"),
    metrics=(
        Metric("Accuracy", "R@1", "unweighted mean over the temporal aspects of the share of pairs whose caption "
               "scores above its counterfactual", over="category"),
    ),
    ks=(1,),
    original_ties="pessimistic",
    original_ties_note=(
        "VITATECS `X-CLIP/eval_vitatecs_xclip.py`, `eval_epoch` (and `eval_vitatecs_clip4clip.py`, "
        "`alpro/eval_alpro.py`): correct when caption_score > counterfactual_score, so a tie counts against the caption"
    ),
    breakdowns=("category", "source_dataset"),
    sample="vitatecs",
    tags=("vitatecs", "temporal", "counterfactual", "msr-vtt", "vatex"),
    config_descriptions={ALL: "every aspect together (one row per pair)",
                         **{a: f"{a.capitalize()}: {t}" for a, t in ASPECT_TEXT.items()}},
    # lmms-eval's task (tasks/vitatecs/utils.py): its own two-option question (vitatecs_doc_to_text,
    # format_question_and_answer) + post_prompt (_default_template_yaml), a generated answer, its rules
    # (vitatecs_process_results; their ChatGPT fallback is the judge hook)
    # (the task sets no max_new_tokens: the wrapper's 128; the system turn, the cut, the strip and the undecided
    # rule are lmms-eval's harness: hardneg.benchmarks.harnesses)
    vlm_sets=(("lmms-eval", VLMPrompt(
        "generate-match", "{video}{question}\nPlease response with a single letter (A or B):",
        "lmms-eval 0.7.3 tasks/vitatecs/utils.py format_question_and_answer + vitatecs_process_results, post_prompt "
        "of _default_template_yaml (hardneg.benchmarks.vitatecs:lmms_eval_question, lmms_eval_match)",
        "2", item_text="hardneg.benchmarks.vitatecs:lmms_eval_question",
        matcher="hardneg.benchmarks.vitatecs:lmms_eval_match", max_new_tokens=LMMS_EVAL_MAX_NEW_TOKENS,
        answers=replace(LMMS_EVAL_ANSWERS, judge_prompt=VITATECS_JUDGE_PROMPT),
        system=LMMS_EVAL_SYSTEM, pixels=LMMS_EVAL_PIXELS, frames=LMMS_EVAL_FRAMES,
        positions=LMMS_EVAL_POSITIONS, model_harness=LMMS_EVAL_MODEL_HARNESS)),),
)


# ----------------------------------------------------------------------------- the parser


def _pair(obj, path: Path, line: int, aspect: str):
    """The checked fields of one line, or a RawFormatError naming the field and the fix."""
    from hardneg.datasets.raw_common import MAX_FIELD_CHARS, RawFormatError

    if not isinstance(obj, dict):
        raise RawFormatError(path, f"the line is {type(obj).__name__}, not a JSON object",
                             f"each line is one object with the fields {list(FIELDS)}", line)
    missing = [f for f in FIELDS if f not in obj]
    extra = sorted(f for f in obj if f not in FIELDS)
    if missing or extra:
        raise RawFormatError(path, f"fields missing {missing}, unexpected {extra}",
                             f"each line has exactly the fields {list(FIELDS)}; re-download the file", line)
    for f in FIELDS:
        value = obj[f]
        if not isinstance(value, str):
            raise RawFormatError(path, f"field '{f}' is {type(value).__name__} {str(value)[:40]!r}, not a string",
                                 f"write '{f}' as a JSON string", line)
        if len(value) > MAX_FIELD_CHARS:
            raise RawFormatError(path, f"field '{f}' is {len(value):,} characters long",
                                 "the line is damaged; re-download the file", line)
    if obj["aspect"] not in ASPECTS:
        raise RawFormatError(path, f"field 'aspect' is {obj['aspect'][:40]!r}, an unknown aspect",
                             f"use one of {list(ASPECTS)} (exact spelling)", line)
    if obj["aspect"] != aspect:
        raise RawFormatError(path, f"field 'aspect' is {obj['aspect']!r} in the {aspect} file",
                             f"move the line to {obj['aspect']}.jsonl, or correct its aspect", line)
    if obj["src_dataset"] not in SOURCES:
        raise RawFormatError(path, f"field 'src_dataset' is {obj['src_dataset'][:40]!r}, an unknown source dataset",
                             f"use one of {list(SOURCES)}", line)
    _, form, hint = SOURCES[obj["src_dataset"]]
    if not form.fullmatch(obj["video_name"]):
        raise RawFormatError(path, f"field 'video_name' is {obj['video_name'][:60]!r}, not a {obj['src_dataset']} "
                             "video name", f"{obj['src_dataset']} videos are named {hint}; correct the name or "
                             "its src_dataset", line)
    return obj


def _dubious(caption: str, counterfactual: str) -> str | None:
    """Why a pair cannot test anything, or None."""
    if not caption.strip() or not counterfactual.strip():
        return "empty caption or counterfactual"
    if " ".join(caption.lower().split()) == " ".join(counterfactual.lower().split()):
        return "counterfactual identical to the caption (ignoring case and spacing)"
    return None


def read_aspect(path: Path, aspect: str) -> tuple[list[dict], list[int], dict]:
    """Items of one aspect file in file order, the line of each, and what validation found."""
    from hardneg.datasets.raw_common import loads_json, provenance, read_text, replaced_span

    config = aspect.lower()
    items, where, dropped, duplicates, blank = [], [], [], [], 0
    seen: dict[tuple, int] = {}
    lines = read_text(path).split("\n")
    if lines and not lines[-1].strip():
        lines.pop()  # the newline that ends the last line
    for line, text in enumerate(lines, start=1):
        if not text.strip():
            blank += 1
            continue
        obj = _pair(loads_json(text, path, row=line, what="the line"), path, line, aspect)
        caption, counterfactual = obj["caption"], obj["counterfactual"]
        why = _dubious(caption, counterfactual)
        if why:
            dropped.append({"file": path.name, "line": line, "video_name": obj["video_name"], "reason": why})
            continue
        key = (obj["src_dataset"], obj["video_name"], caption, counterfactual)
        if key in seen:
            duplicates.append({"file": path.name, "line": line, "same_as_line": seen[key]})
        seen.setdefault(key, line)
        source = SOURCES[obj["src_dataset"]][0]
        start, end, neg_end = replaced_span(caption, counterfactual)
        details = {"aspect": aspect, "release_file": path.name, "line": line,
                   "made_by": "LLM-generated counterfactual, filtered by human-in-the-loop annotation (VITATECS authors)"}
        items.append({
            "id": f"{config}:{line}",
            "video_id": obj["video_name"][: -len(".mp4")],
            "source_dataset": source,
            "source_split": "test",
            "category": config,
            "captions": [caption, counterfactual],
            "label": 0,
            "manipulated_index": None,
            "negative_types": ["positive", "temporal"],
            "provenance": [
                provenance("positive", details={"source": f"{obj['src_dataset']} caption", "line": line}),
                provenance("generator", generator="vitatecs-llm", rule=config, span=caption[start:end],
                           replacement=counterfactual[start:neg_end], span_start=start, span_end=end, details=details),
            ],
        })
        where.append(line)
    found = {"dropped": dropped, "duplicates": duplicates, "blank_lines": blank}
    return items, where, found


def _validation_text(report: dict) -> str:
    """The measured validation result, in a sentence for the card."""
    n_read = sum(report["lines_read"].values())
    n_drop, n_dup = report["dropped"]["count"], report["duplicate_pairs"]["count"]
    text = (f"Validation of this build: {n_read:,} pairs read from {len(report['lines_read'])} aspect files; "
            f"{n_drop:,} dropped (empty, or counterfactual identical to the caption); {n_dup:,} exact duplicate "
            "pairs kept, because the authors' evaluation scores every line. Both lists, with file and line, are in "
            "`build_report.json`.")
    if report["missing_aspects"]:
        text += f" Aspect files missing from the raw folder: {', '.join(report['missing_aspects'])}."
    return text


def parse(raw: Path):
    """Validate every aspect file in `raw` and make one config per aspect plus `all`."""
    from hardneg.datasets.hub_layout import ConfigData, release_build
    from hardneg.datasets.raw_common import RawFolder, mc_table

    folder = RawFolder(raw, BENCHMARK.name)
    by_name = {p.name.lower(): p for p in folder.files if p.parent == Path(raw)}
    configs, raw_files, every, every_where = [], [], [], []
    report: dict = {"lines_read": {}, "per_aspect": {}, "missing_aspects": [], "blank_lines": 0,
                    "dropped": {"count": 0, "pairs": []}, "duplicate_pairs": {"count": 0, "kept": True, "pairs": []}}
    for aspect in ASPECTS:
        path = by_name.get(f"{aspect.lower()}.jsonl")
        if path is None:
            report["missing_aspects"].append(aspect)
            continue
        items, where, found = read_aspect(path, aspect)
        folder.use(path, f"{aspect} pairs")
        if not items:
            raise ValueError(f"{path}: no usable pair; re-download the file from the authors' release")
        configs.append(ConfigData(aspect.lower(), {"test": mc_table(items, path, where)}))
        raw_files.append(path.name)
        every += items
        every_where += [f"{w} of {path.name}" for w in where]
        report["lines_read"][aspect] = len(items) + len(found["dropped"])
        report["blank_lines"] += found["blank_lines"]
        for key, name in (("dropped", "dropped"), ("duplicate_pairs", "duplicates")):
            report[key]["pairs"] += found[name]
            report[key]["count"] += len(found[name])
        sources = [it["source_dataset"] for it in items]
        report["per_aspect"][aspect.lower()] = {
            "pairs": len(items), "dropped": len(found["dropped"]), "duplicates": len(found["duplicates"]),
            "videos": len({it["video_id"] for it in items}), **{s: sources.count(s) for s, _, _ in SOURCES.values()}}
    if not configs:
        raise folder.nothing_found(BENCHMARK.raw_files.replace("\n", " "))
    configs.insert(0, ConfigData(ALL, {"test": mc_table(every, raw, every_where)}))
    report["per_aspect"][ALL] = {"pairs": len(every), "videos": len({it["video_id"] for it in every})}
    report["dropped"]["by_reason"] = {r: sum(d["reason"] == r for d in report["dropped"]["pairs"])
                                      for r in sorted({d["reason"] for d in report["dropped"]["pairs"]})}
    report["files"] = folder.report()
    report["validation"] = _validation_text(report)
    build = release_build(BENCHMARK.name, configs, raw_files, report)
    build.limitations = f"{build.limitations}\n\n{report['validation']}"
    return build


# ----------------------------------------------------------------------------- lmms-eval's video-LLM protocol


def _lmms_eval_layout(item: dict) -> tuple[str, str]:
    """(question, the right option's letter) as lmms-eval writes them (tasks/vitatecs/utils.py,
    `format_question_and_answer`): the caption goes first when `random.random() > 0.5` after seeding with the sum of
    the code points of caption + counterfactual, mod 100; each option ends with "." and is `str.capitalize`d.
    Items hold [caption, counterfactual] (this module's parser), so captions[0] is the right one."""
    caption, counterfactual = item["captions"][0], item["captions"][1]
    first = random.Random(sum(ord(c) for c in caption + counterfactual) % 100).random() > 0.5

    def as_option(sent: str) -> str:
        return (sent if sent.endswith(".") else sent + ".").capitalize()

    a, b = (caption, counterfactual) if first else (counterfactual, caption)
    question = (f"Which of the following best describes the content of the video: \n(A) {as_option(a)} "
                f"\n(B) {as_option(b)}")
    return question, "A" if first else "B"


def lmms_eval_question(item: dict) -> str:
    """The item's question as lmms-eval asks it."""
    return _lmms_eval_layout(item)[0]


def lmms_eval_match(answer: str, item: dict) -> int | None:
    """The option (0: the caption, 1: the counterfactual) lmms-eval 0.7.3's rules read in `answer`
    (tasks/vitatecs/utils.py, `vitatecs_process_results`, in its order): exactly one option's text (lower case, no
    final ".") inside the lower-cased answer; the letter alone; the letter then "." or ")"; "(A)" / "(B)" first (the
    letter inside the parentheses; versions before 0.7 compared the text after the ")" instead, so a bare "(A)" was
    wrong there). None: undecided (lmms-eval then asks its GPT judge). The answer is the one its wrapper hands over:
    cut at "\n\n" and stripped (`LMMS_EVAL_ANSWERS`)."""
    _, right = _lmms_eval_layout(item)

    def plain(sent: str) -> str:
        return (sent[:-1] if sent.endswith(".") else sent).lower()

    cap, cf = plain(item["captions"][0]), plain(item["captions"][1])
    low = answer.lower()
    if cap in low and cf not in low:
        return 0
    if cf in low and cap not in low:
        return 1
    letter = None
    if answer in ("A", "B"):
        letter = answer
    elif answer[:2] in ("A.", "B.", "A)", "B)"):
        letter = answer[0]
    elif answer[:3] in ("(A)", "(B)"):
        letter = answer[1]
    if letter is None:
        return None
    return 0 if letter == right else 1
