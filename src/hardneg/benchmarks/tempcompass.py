"""TempCompass caption matching (Liu et al., ACL Findings 2024): which of two captions fits the video.

The declaration and the parser of the release (github.com/llyx97/TempCompass, CC BY-NC 4.0,
NON-COMMERCIAL): `questions/caption_matching.json` maps a video id to temporal aspects (action,
direction, speed, order, attribute_change), each a list of `{"question", "answer"}`. The question's
first line is an instruction and the next two lines the options, written "Option 1: ...",
"Sentence A: ..." or "Caption B: ..." (templates in `utils/eval_utils.py`, `parse_llm_output`);
the answer repeats one option line. 1,503 questions over 410 videos. `meta_info.json` (optional)
gives each video's fine-grained aspect (`eval_dim[aspect]["type"]`; "order" for order).

Each question is one item: captions = the two option sentences in the question's order (the text
after the first ": " of each option line, as `eval_caption_matching.py`, `eval_rule`, splits them),
label = the option the answer repeats (`check_ans`: the answer must be one of the option lines).
Configs: `all`, then one per aspect. `Accuracy` is the share of questions answered right over all
of them, per aspect within it: `utils/eval_utils.py`, `print_result` (its `avg` is over questions,
not over aspects).

How the authors judge a model: a generative model answers in words; `eval_rule` matches the answer
to an option (or ChatGPT judges it) and stores a 0/1 `rating` per question
(`auto_eval_results/<model>/caption_matching.json`). `hardneg import-scores tempcompass` turns those
ratings into scores (the right option 1 and the other 0 when rated 1, the reverse when rated 0), so
the authors' numbers come back exactly and with intervals. For a model that scores both captions,
`original` is `argmax` (the first option wins a tie): the authors' judging never ties.

Validation: an entry that is not `{"question", "answer"}`, a question without exactly two options
"<label>: <sentence>", two identical options, an answer that matches neither option, an unknown
aspect, a repeated video id, or a video missing from meta_info.json is an error naming the file,
the entry and the fix; nothing is written.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

from hardneg.benchmarks.base import (AnswerRules, Benchmark, Headline, Metric, ReleaseFile, ScoreImporter, Source,
                                    VideoArchive, VideoSource, VLMPrompt)
from hardneg.benchmarks.harnesses import (LMMS_EVAL_ANSWERS, LMMS_EVAL_FRAMES, LMMS_EVAL_MAX_NEW_TOKENS,
                                         LMMS_EVAL_MODEL_HARNESS, LMMS_EVAL_PIXELS, LMMS_EVAL_POSITIONS,
                                         LMMS_EVAL_SYSTEM, TEMPCOMPASS_JUDGE_PROMPT)
from hardneg.video import FrameSettings

ASPECTS = ("action", "direction", "speed", "order", "attribute_change")
ALL = "all"
QUESTIONS_FILE = "caption_matching.json"
META_FILE = "meta_info.json"
_VIDEO = re.compile(r"[A-Za-z0-9_-]+")

ASPECT_TEXT = {
    "action": "which action happens (fine- and coarse-grained actions)",
    "direction": "the direction of a movement (object or camera motion)",
    "speed": "how fast something moves (absolute or relative speed)",
    "order": "the order of events",
    "attribute_change": "how an attribute changes over time (colour, light, size, shape)",
}


#: the TempCompass authors' eval_caption_matching.py, main: `.replace('</s>', '').strip()` before eval_rule (done by
#: `authors_match`); an answer eval_rule cannot decide is rated by ChatGPT, or 0 with --disable_llm
AUTHORS_ANSWERS = AnswerRules(undecided="wrong", judge_prompt=TEMPCOMPASS_JUDGE_PROMPT, source=(
    "TempCompass eval_caption_matching.py main: eval_rule, else the ChatGPT judge, else (--disable_llm) rating 0"))


#: The authors' recipe per model family: the release has an inference script per family (github llyx97/TempCompass:
#: run_qwen2_vl.py, run_video_llava/inference_dataset.py, run_minicpm-v.py, run_reka.py, run_gpt_4o.py,
#: run_gemini.ipynb); the `authors` set takes that family's system prompt, decoding and frame settings where
#: hardneg serves the family, and says which recipe it borrowed where the release has none.
#: run_qwen2_vl.py, `inference_single_video` + `__main__`: no system message (the chat template's own), the video
#: element {"max_pixels": 720 * 720, "fps": 1.0} through qwen-vl-utils (min_pixels its default 128 x 28 x 28, no cap
#: on the count but its own 768), the processor at the checkpoint's settings, bfloat16, greedy (the checkpoint's
#: generation config: top_k 1), max_new_tokens=128, decoded without special tokens
TEMPCOMPASS_QWEN2_VL_FRAMES = FrameSettings(n_frames=768, fps=1.0, resize=None, recipe="qwen-vl-utils",
                                            pixels=(128 * 28 * 28, 720 * 720))
#: run_video_llava/inference_dataset.py, `inference_single_video` (conv_templates["llava_v1"], llava/conversation.py)
LLAVA_V1_SYSTEM = ("A chat between a curious human and an artificial intelligence assistant. The assistant gives "
                   "helpful, detailed, and polite answers to the human's questions.")


def _authors_recipes() -> tuple:
    qwen = (("frames", TEMPCOMPASS_QWEN2_VL_FRAMES), ("dtype", "bfloat16"), ("max_new_tokens", 128))
    return (
        ("qwen2_vl", (*qwen, ("source", (
            "TempCompass run_qwen2_vl.py inference_single_video (video {max_pixels: 720*720, fps: 1.0} then the "
            "question + answer_prompt['caption_matching']; bfloat16; greedy; 128 tokens), eval_caption_matching.py "
            "eval_rule (hardneg.benchmarks.tempcompass:authors_match)")))),
        ("qwen2_5_vl", (*qwen, ("source", (
            "borrowed: TempCompass run_qwen2_vl.py inference_single_video (the release has no Qwen2.5-VL script; the "
            "same processor API), eval_caption_matching.py eval_rule (hardneg.benchmarks.tempcompass:authors_match)"
            )))),
        # llava_v1: "{system} USER: <video>\n{question}{answer_prompt} ASSISTANT:", do_sample=True, temperature=0.1
        # (transformers' generate: top_k 50 by default), 128 tokens, the decoded answer stripped and "</s>" removed;
        # the script loads the model in 4 bits on a GPU and its processor takes 8 frames at linspace(0, n - 1, 8)
        # (hardneg: the checkpoint's dtype, the run's 8 frames at segment midpoints: departures)
        ("video_llava", (("system", LLAVA_V1_SYSTEM), ("temperature", 0.1), ("top_k", 50), ("seed", 0),
                         ("prompt", "{video}\n{question}\nPlease directly give the best option:"),
                         ("answers", (("strip", True),)), ("source", (
            "TempCompass run_video_llava/inference_dataset.py inference_single_video (conv llava_v1 system prompt; "
            "'<video>\\n' + question + answer_prompt['caption_matching']; do_sample=True, temperature=0.1, "
            "max_new_tokens=128; output .strip().replace('</s>', '')), eval_caption_matching.py eval_rule "
            "(hardneg.benchmarks.tempcompass:authors_match)")))),
    )


def _question_then_answer(source: str, matcher: str, answers: AnswerRules, **harness) -> VLMPrompt:
    """The release's own question after the video, then answer_prompt["caption_matching"]; a greedy answer matched
    by eval_rule. The authors' inference and lmms-eval's task build this same prompt (`harness`: the harness's
    system turn, pixel limits and token cap)."""
    return VLMPrompt("generate-match", "{video}{question}\nPlease directly give the best option:", source, "2",
                     item_text="hardneg.benchmarks.tempcompass:authors_question",
                     matcher=matcher, answers=answers, **{"max_new_tokens": 128, **harness})


_COMMIT = "e1b463166400633e6061962d890a9ae85db29f70"

#: the release at a pinned commit (hashes computed from the files at that commit) and the videos in lmms-lab's Hub
#: repo: one zip whose members `videos/<video_id>.mp4` lmms-eval unpacks under $HF_HOME/tempcompass
#: (lmms_eval/tasks/tempcompass/utils.py, tempcompass_doc_to_visual: <cache_dir>/videos/<video_id>.mp4)
SOURCE = Source(
    repo="github.com/llyx97/TempCompass", commit=_COMMIT, license="CC BY-NC 4.0",
    files=(ReleaseFile("questions/caption_matching.json", 524731,
                       "ef8038edfbcd713e14a361cb617bc4fe815e3cafffe003cc024bcac86c9d764d"),
           ReleaseFile("meta_info.json", 190924,
                       "72144a7cb5aba97d12c3148ec734f7c8f27a04f6b3a7396ef41003a0a7178419")),
    videos=VideoSource(
        "hub", repo_id="lmms-lab/TempCompass", revision="c8a67d88a3bc6fd4b2f9ae2f9e112668fbe05722",
        archives=(VideoArchive("tempcompass_videos.zip", 418421516,
                               "fb7c8a2b742a3d10ae1bd1a6183fb602edb346a4c7fd91c631dba46b753e0f0b"),),
        member_pattern="videos/{id}.mp4", cache_dir="tempcompass",
        id_to_file="video id 1034419625 -> videos/1034419625.mp4 in tempcompass_videos.zip",
        evidence=("TempCompass README (videos: huggingface.co/datasets/lmms-lab/TempCompass); the repo's tree at "
                  "c8a67d8 (tempcompass_videos.zip, added in 1164378 and never changed; its LFS pointer gives the "
                  "sha256 and size); lmms-eval tasks/tempcompass (_default_template_yaml cache_dir: tempcompass, "
                  "utils.py: <cache_dir>/videos/<id>.mp4; its YAML names lmms-eval/TempCompass, the authors' README "
                  "this repo)")),
    notes="HEAD of main (2025-04-04), the commit ../shared/realdata names (e1b4631)")

BENCHMARK = Benchmark(
    negative_types=("temporal",),
    source=SOURCE,
    name="tempcompass",
    title="TempCompass",
    order=70,
    #: one number: Accuracy on `all` (every question)
    overall=Headline("config", (ALL,)),
    task="multiple_choice",
    hub_id="video-hardneg/tempcompass",
    pretty_name="TempCompass caption matching: temporal aspects of short videos, two captions each",
    paper_title="TempCompass: Do Video LLMs Really Understand Videos?",
    paper_url="https://arxiv.org/abs/2403.00476",
    citation="""@inproceedings{liu2024tempcompass,
  title     = {{TempCompass}: Do Video {LLMs} Really Understand Videos?},
  author    = {Liu, Yuanxin and Li, Shicheng and Liu, Yi and Wang, Yuxiang and Ren, Shuhuai and Li, Lei and Chen, Sishuo and Sun, Xu and Hou, Lu},
  booktitle = {Findings of the Association for Computational Linguistics: ACL 2024},
  year      = {2024}
}""",
    licenses=("cc-by-nc-4.0",),
    license_note=(
        "CC BY-NC 4.0, NON-COMMERCIAL: the authors release TempCompass for academic research only "
        "(github.com/llyx97/TempCompass, LICENSE and README). You may share and adapt it with attribution, but not "
        "for commercial purposes; results computed on it carry the same restriction. The videos keep their own terms."
    ),
    description=(
        "TempCompass tests whether a video model perceives temporal aspects: the same or closely matched videos "
        "(some played in reverse, at another speed or concatenated) are described by two captions that differ in "
        "one aspect: action, direction, speed, order or attribute change. The model must pick the caption that "
        "fits. `Accuracy` is the share of the 1,503 questions answered right (chance 50%), and per aspect. "
        "License: CC BY-NC 4.0, non-commercial use only."
    ),
    negatives=(
        "The authors wrote a true caption and false (conflicting) captions per video and aspect with an LLM from "
        "their meta information and checked them by hand; each question pairs the true caption with one false one "
        "in a random order. The false caption has type `temporal`, its aspect as the item's `category`, and the "
        "question, answer and fine-grained aspect in its provenance."
    ),
    limitations=(
        "Two captions per question: chance is 50% and small differences are noise; read the intervals. Released "
        "results of generative models are judged answers (a rule match, else ChatGPT), imported as 0/1 ratings: "
        "they have no ties and no scores, so only accuracy can be compared. Non-commercial license (CC BY-NC 4.0)."
    ),
    source_datasets=("TempCompass (ShutterStock clips)",),
    parser="hardneg.benchmarks.tempcompass:parse",
    raw_files="caption_matching.json (the release's questions/: video -> aspect -> [{question, answer}]) and,\n"
              "optionally, meta_info.json (fine-grained aspect of each video)",
    metrics=(
        Metric("Accuracy", "R@1", "share of questions whose right caption scores above the other "
               "(utils/eval_utils.py print_result: over all questions)"),
    ),
    ks=(1,),
    original_ties="argmax",
    original_ties_note=(
        "TempCompass eval_caption_matching.py judges one generated answer per question (eval_rule, else ChatGPT): "
        "no ties; for scored captions the first option wins a tie, like np.argmax"
    ),
    breakdowns=("category",),
    sample="tempcompass",
    tags=("tempcompass", "temporal", "caption-matching", "non-commercial"),
    config_descriptions={ALL: "every question (1,503 in the release)",
                         **{a: f"{a.replace('_', ' ')}: {t}" for a, t in ASPECT_TEXT.items()}},
    score_importers=(
        ScoreImporter("tempcompass-judged-json", "hardneg.benchmarks.tempcompass:import_judged",
                      "TempCompass auto_eval_results/<model>/caption_matching.json (a 0/1 'rating' per question, "
                      "joined by video, aspect and question text)"),
        ScoreImporter("tempcompass-answers-judged", "hardneg.benchmarks.tempcompass:import_answers_judged",
                      "the same file, each 'video-llm-prediction' matched again by the authors' rule "
                      "(eval_caption_matching.py, main + eval_rule); an undecided answer takes the file's rating "
                      "(their ChatGPT judge)"),
        ScoreImporter("tempcompass-answers-disable-llm", "hardneg.benchmarks.tempcompass:import_answers_disable_llm",
                      "the same file, each 'video-llm-prediction' cleaned (stripped, '</s>' removed) and matched "
                      "again by the authors' rule; an undecided answer rated 0, as eval_caption_matching.py, main "
                      "--disable_llm"),
    ),
    # TempCompass asks a video LLM for "the best option" after the question and its options, and reads the letter
    # it answers (run_video_llava.py and the other run_*.py, `answer_prompt["caption_matching"]`); here each
    # option is scored by its letter's logit, the options written "A. <caption>"
    vlm=VLMPrompt("choice-letter",
                  "{video}\nWhich caption matches the video better?\n{options}\nPlease directly give the best option:",
                  "TempCompass run_video_llava.py, answer_prompt['caption_matching'] (the letter read from the logits)"),
    vlm_sets=(
        # the authors' own protocol: each question as released (questions/caption_matching.json) after the video,
        # then answer_prompt["caption_matching"] (run_qwen2_vl.py, inference_single_video: video, then the text);
        # a greedy answer, matched by eval_caption_matching.py, eval_rule (their ChatGPT fallback: the judge hook)
        # per model family, the family's own script (`_authors_recipes`); any other family borrows run_qwen2_vl.py's
        # prompt and greedy decoding with the run's frames, and says so
        ("authors", _question_then_answer(
            "borrowed (the release has no script for this model family): TempCompass run_qwen2_vl.py "
            "inference_single_video (question + answer_prompt['caption_matching'], greedy, 128 tokens; the run's "
            "frames), eval_caption_matching.py eval_rule (hardneg.benchmarks.tempcompass:authors_match)",
            "hardneg.benchmarks.tempcompass:authors_match", AUTHORS_ANSWERS, model_harness=_authors_recipes())),
        # lmms-eval: f"{pre_prompt}{question}{post_prompt}" with post_prompt["caption_matching"] the same sentence,
        # scored by the same eval_rule (tasks/tempcompass/utils.py, tempcompass_doc_to_text_caption_matching,
        # tempcompass_process_results_caption_matching)
        # (lmms-eval does not remove "</s>" as the authors' main does: `lmms_eval_match`)
        ("lmms-eval", _question_then_answer(
            "lmms-eval 0.7.3 tasks/tempcompass/utils.py tempcompass_doc_to_text_caption_matching + "
            "tempcompass_process_results_caption_matching (eval_rule; hardneg.benchmarks.tempcompass:lmms_eval_match)",
            "hardneg.benchmarks.tempcompass:lmms_eval_match",
            replace(LMMS_EVAL_ANSWERS, judge_prompt=TEMPCOMPASS_JUDGE_PROMPT), system=LMMS_EVAL_SYSTEM,
            pixels=LMMS_EVAL_PIXELS, max_new_tokens=LMMS_EVAL_MAX_NEW_TOKENS, frames=LMMS_EVAL_FRAMES,
            positions=LMMS_EVAL_POSITIONS, model_harness=LMMS_EVAL_MODEL_HARNESS)),
    ),
)


# ----------------------------------------------------------------------------- the authors' video-LLM protocol


def authors_question(item: dict) -> str:
    """The item's question exactly as the release writes it (instruction line, then the two option lines), from
    the provenance the parser stored; the template differs per question ("Caption A: ...", "Sentence A: ...",
    "Option 1: ...")."""
    prov = item["provenance"][0]
    details = prov["details"] if isinstance(prov["details"], dict) else json.loads(prov["details"])
    return details["question"]


def _rule(prediction: str, question: str) -> tuple[str, int] | None:
    """What TempCompass's `eval_rule` (eval_caption_matching.py, the release's current version) matches a generated
    answer to: ("line" | "sentence" | "label" | "short-label", option index), or None. Its rules, in its order, a
    later match replacing an earlier one: the answer is a whole option line; an option's sentence (the text between
    the line's first and second ": "), whole or after the answer's first ") "; an option's label ("Caption A"), then
    its label without "Sentence ", "Option ", "Caption " ("A"), whole or with every "." removed."""
    lines = question.split("\n")[1:]
    got = None
    for k, line in enumerate(lines):
        if line == prediction:
            got = ("line", k)
    after_paren = prediction.split(") ")[1] if ") " in prediction else None
    for k, line in enumerate(lines):
        sentence = line.split(": ")[1]
        if sentence == prediction or (after_paren is not None and sentence == after_paren):
            got = ("sentence", k)
    labels = [("label", k, line.split(": ")[0]) for k, line in enumerate(lines)]
    labels += [("short-label", k, full.replace("Sentence ", "").replace("Option ", "").replace("Caption ", ""))
               for _, k, full in labels]
    for kind, k, label in labels:
        if label == prediction or label == prediction.replace(".", ""):
            got = (kind, k)
    return got


def _matched_text(kind: str, line: str) -> str:
    full = line.split(": ")[0]
    return {"line": line, "sentence": line.split(": ")[1], "label": full,
            "short-label": full.replace("Sentence ", "").replace("Option ", "").replace("Caption ", "")}[kind]


def clean_answer(prediction: str) -> str:
    """The authors' clean-up of a generated answer before matching (eval_caption_matching.py, `main`)."""
    return prediction.replace("</s>", "").strip()


def eval_rule_rating(prediction: str | None, question: str, answer: str) -> int | None:
    """The authors' rating of one (cleaned) answer: 1 or 0 where their rule decides, None where it fails (they then
    ask ChatGPT, or rate 0 with --disable_llm) and for no answer at all (None: a refused request, rated 0 by
    them with match_success false)."""
    if not isinstance(prediction, str):
        return None
    got = _rule(prediction, question)
    if got is None:
        return None
    matched = _matched_text(got[0], question.split("\n")[1:][got[1]])
    right = (answer, answer.split(":")[0], answer.split(": ")[1], answer.split(": ")[0].split()[1])
    return 1 if matched in right else 0


def authors_match(answer: str, item: dict) -> int | None:
    """The option (index into the item's captions, the question's order) the authors' rule reads in a generated
    answer, or None (undecided)."""
    got = _rule(clean_answer(answer), authors_question(item))
    return None if got is None else got[1]


def lmms_eval_match(answer: str, item: dict) -> int | None:
    """The option lmms-eval 0.7.3 reads (tasks/tempcompass/utils.py, tempcompass_process_results_caption_matching:
    its copy of eval_rule on the answer as its wrapper hands it over, `AnswerRules` LMMS_EVAL_ANSWERS); unlike the
    authors' main it does not remove "</s>", so "A</s>" goes to its judge. None: undecided."""
    got = _rule(answer, authors_question(item))
    return None if got is None else got[1]


# ----------------------------------------------------------------------------- the parser


def options_of(question: str) -> list[tuple[str, str]] | None:
    """[(line, sentence)] of the option lines of a question ("Option 1: ..." -> sentence), or None."""
    lines = question.split("\n")[1:]
    out = []
    for line in lines:
        label, sep, sentence = line.partition(": ")
        if not sep or not label.strip() or not sentence.strip():
            return None
        out.append((line, sentence))
    return out


def _entry(obj, path: Path, where: str) -> tuple[str, str, list[tuple[str, str]], int]:
    """(question, answer, options, label) of one question entry, checked."""
    from hardneg.datasets.raw_common import RawFormatError, check_text

    if not isinstance(obj, dict) or set(obj) != {"question", "answer"}:
        shown = sorted(obj) if isinstance(obj, dict) else type(obj).__name__
        raise RawFormatError(path, f"entry is {shown}, not an object with exactly 'question' and 'answer'",
                             "each question is {\"question\": ..., \"answer\": ...}; re-download the file", where)
    question = check_text(obj["question"], path, where, "question", "write the question and its options as a string")
    answer = check_text(obj["answer"], path, where, "answer", "write the answer as one of the option lines")
    options = options_of(question)
    if options is None or len(options) != 2:
        raise RawFormatError(path, f"question {question[:80]!r} does not have two option lines '<label>: <sentence>'",
                             "write the instruction on the first line, then 'Option 1: ...' and 'Option 2: ...' (or "
                             "'Sentence A/B: ', 'Caption A/B: ') on the next two", where)
    if options[0][1] == options[1][1]:
        raise RawFormatError(path, f"both options are {options[0][1][:60]!r}", "the two captions must differ", where)
    label = [j for j, (line, _) in enumerate(options) if line == answer]
    if len(label) != 1:
        raise RawFormatError(path, f"answer {answer[:80]!r} matches neither option ({options[0][0][:40]!r}, "
                             f"{options[1][0][:40]!r})", "the answer repeats one option line exactly, label "
                             "included (check_ans in eval_caption_matching.py)", where)
    return question, answer, options, label[0]


def _fine_aspect(meta: dict | None, video: str, aspect: str, path: Path | None) -> str | None:
    """The fine-grained aspect as `print_result` finds it ("order" for order)."""
    from hardneg.datasets.raw_common import RawFormatError

    if meta is None:
        return None
    if aspect == "order":
        return "order"
    try:
        return str(meta[video]["eval_dim"][aspect]["type"])
    except (KeyError, TypeError):
        raise RawFormatError(path, f"video {video!r} has no eval_dim.{aspect}.type", f"give every video of "
                             f"{QUESTIONS_FILE} its entry in {META_FILE} (the release's own file)") from None


def read_questions(path: Path, meta: dict | None, meta_path: Path | None) -> tuple[list[dict], list[str]]:
    """One item per question, in file order (videos, then aspects, then questions)."""
    from hardneg.datasets.raw_common import RawFormatError, load_json_strict, provenance

    data = load_json_strict(path)  # a repeated video id or aspect is an error naming it
    if not isinstance(data, dict):
        raise RawFormatError(path, f"top level is {type(data).__name__}", "the file maps video ids to aspects")
    items, where = [], []
    for video, aspects in data.items():
        if not _VIDEO.fullmatch(video):
            raise RawFormatError(path, f"video id {video[:40]!r} has characters other than letters, digits, _ and -",
                                 "use the release's video ids (e.g. 1034419625, 1034419625_reverse)", video)
        if not isinstance(aspects, dict):
            raise RawFormatError(path, f"video {video}: {type(aspects).__name__}, not an object of aspects",
                                 f"map each video to {{aspect: [questions]}} with aspects {list(ASPECTS)}", video)
        for aspect, questions in aspects.items():
            if aspect not in ASPECTS:
                raise RawFormatError(path, f"video {video}: unknown aspect {aspect[:40]!r}", f"use one of "
                                     f"{list(ASPECTS)}", video)
            if not isinstance(questions, list):
                raise RawFormatError(path, f"video {video}, aspect {aspect}: {type(questions).__name__}, not a list",
                                     "each aspect holds a list of questions", video)
            fine = _fine_aspect(meta, video, aspect, meta_path)
            for i, obj in enumerate(questions):
                at = f"{video}.{aspect}[{i}]"
                question, answer, options, label = _entry(obj, path, at)
                details = {"question": question, "answer": answer, "options": [line for line, _ in options],
                           "aspect": aspect, "fine_grained_aspect": fine, "release_file": path.name, "entry": at}
                items.append({
                    "id": f"{video}:{aspect}:{i}", "video_id": video, "source_dataset": "tempcompass",
                    "source_split": "test", "category": aspect, "captions": [s for _, s in options], "label": label,
                    "manipulated_index": None,
                    "negative_types": ["positive" if j == label else "temporal" for j in range(2)],
                    "provenance": [provenance("positive", details=details) if j == label else
                                   provenance("generator", generator="tempcompass-llm-conflicting-caption",
                                              rule=aspect, details=details) for j in range(2)],
                })
                where.append(at)
    if not items:
        raise RawFormatError(path, "no question", "re-download questions/caption_matching.json")
    return items, where


def _kind(path: Path) -> tuple[str | None, str]:
    """('questions' | 'judged' (a model's auto_eval_results) | None, why not), from the first question entry."""
    from hardneg.datasets.raw_common import RawFormatError, load_json_strict

    try:
        data = load_json_strict(path, check_duplicate_keys=False)
    except RawFormatError as exc:
        return None, str(exc)
    first = next((q for a in (data.values() if isinstance(data, dict) else []) if isinstance(a, dict)
                  for qs in a.values() if isinstance(qs, list) for q in qs[:1]), None)
    if not isinstance(first, dict):
        return None, "no question entry (video -> aspect -> [{question, answer}]) in it"
    return ("judged" if "rating" in first or "gt-answer" in first else "questions"), ""


def parse(raw: Path):
    """`caption_matching.json` (+ `meta_info.json`) under `raw` -> configs `all` and one per aspect."""
    from hardneg.datasets.hub_layout import ConfigData, release_build
    from hardneg.datasets.raw_common import RawFolder, load_json_strict, mc_table

    folder = RawFolder(raw, BENCHMARK.name)
    questions, metas = [], []
    for p in folder.files:
        name = p.name.lower()
        if name == META_FILE:
            metas.append(p)
        elif name.endswith(QUESTIONS_FILE) and p.suffix == ".json":
            kind, why = _kind(p)
            if kind is None:
                folder.malformed(p, why)
            if kind == "questions":
                questions.append(p)
            elif kind == "judged":
                folder.ignore(p, "a model's judged answers, not part of the benchmark: import them with "
                              "`hardneg import-scores tempcompass`")
        elif name == "license":
            folder.ignore(p, "the release's license (CC BY-NC 4.0), recorded in the card")
    if len(questions) > 1 or len(metas) > 1:
        raise ValueError(f"{raw}: several {QUESTIONS_FILE if len(questions) > 1 else META_FILE} files "
                         f"{[folder.rel(p) for p in (questions if len(questions) > 1 else metas)]}; keep one release")
    if not questions:
        raise folder.nothing_found(BENCHMARK.raw_files.replace("\n", " "))
    path = questions[0]
    meta_path = metas[0] if metas else None
    meta = load_json_strict(meta_path) if meta_path else None
    items, where = read_questions(path, meta, meta_path)
    folder.use(path, f"caption matching questions: {len(items):,}")
    if meta_path:
        folder.use(meta_path, "meta information: the fine-grained aspect of each question")
    configs = [ConfigData(ALL, {"test": mc_table(items, path, where)})]
    per_aspect, fine = {}, {}
    for aspect in ASPECTS:
        keep = [k for k, it in enumerate(items) if it["category"] == aspect]
        if keep:
            configs.append(ConfigData(aspect, {"test": mc_table([items[k] for k in keep], path,
                                                                [where[k] for k in keep])}))
            per_aspect[aspect] = len(keep)
    for it in items:
        f = json.loads(it["provenance"][0]["details"])["fine_grained_aspect"]
        if f:
            fine[f] = fine.get(f, 0) + 1
    report = {"questions": len(items), "videos": len({it["video_id"] for it in items}), "per_aspect": per_aspect,
              "per_fine_grained_aspect": dict(sorted(fine.items())),
              "answer_position": {"first": sum(it["label"] == 0 for it in items),
                                  "second": sum(it["label"] == 1 for it in items)},
              "license": "CC BY-NC 4.0 (non-commercial)", "files": folder.report()}
    raw_files = [folder.rel(path)] + ([folder.rel(meta_path)] if meta_path else [])
    return release_build(BENCHMARK.name, configs, raw_files, report)


# ----------------------------------------------------------------------------- judged answers


def _rule_then(fallback: str):
    """A rating function for `import_judged`: the authors' eval_rule on the entry's `video-llm-prediction`; where it
    cannot decide, `fallback`: "judge" (the file's own rating, i.e. the authors' ChatGPT judge) or "disable_llm"
    (rating 0, their --disable_llm).

    "judge" matches the stored prediction as stored: the file's ratings are the authors' printed numbers, and the
    Gemini file was written by an earlier main that did not strip (136 of its answers end in whitespace), so its
    judge rated those. "disable_llm" follows eval_caption_matching.py, `main`, as it runs today with --disable_llm:
    a None prediction is rated 0, every other is cleaned (`.replace('</s>', '').strip()`, `clean_answer`) and then
    matched by `eval_rule`; "fail" is rated 0 (Gemini 77.31, Reka-Core 41.32, Video-LLaVA 63.27)."""
    def rate(entry: dict, rating: int) -> int:
        pred = entry.get("video-llm-prediction")
        pred = pred if isinstance(pred, str) else None
        if fallback == "disable_llm" and pred is not None:
            pred = clean_answer(pred)
        got = eval_rule_rating(pred, entry["question"], entry.get("gt-answer", ""))
        if got is not None:
            return got
        return rating if fallback == "judge" else 0
    return rate


def import_answers_judged(path: Path, data):
    """A model's auto_eval_results file, its answers matched again by the authors' rule; an answer the rule cannot
    decide takes the file's rating (the authors' ChatGPT judge). Equals the authors' printed accuracy when the
    rule agrees with their match_success on every answer."""
    return import_judged(path, data, rate=_rule_then("judge"))


def import_answers_disable_llm(path: Path, data):
    """A model's auto_eval_results file, its answers matched again by the authors' rule; an answer the rule cannot
    decide is rated 0, as `eval_caption_matching.py --disable_llm` does (no judge), each answer cleaned first as its
    `main` cleans it (stripped, "</s>" removed)."""
    return import_judged(path, data, rate=_rule_then("disable_llm"))


def import_judged(path: Path, data, rate=None):
    """A model's `auto_eval_results/<model>/caption_matching.json` -> one score per option.

    Each judged entry (`question`, `gt-answer`, `rating` 0/1, written by `eval_caption_matching.py`,
    `main`) is joined to its item by (video, aspect, question text); its `gt-answer` must be the
    item's answer. Rated 1: the right caption scores 1 and the other 0; rated 0: the reverse, so
    `argmax` accuracy equals the mean rating, as `print_result` computes it.
    """
    from hardneg.datasets.raw_common import RawFormatError, load_json_strict
    from hardneg.benchmarks.base import ImportedScores

    t = data.items
    ids = [str(i) for i in t.column("id").to_pylist()]
    labels = t.column("label").to_pylist()
    index: dict[tuple[str, str, str], int] = {}
    answers: list[str] = []
    for k, (video, prov) in enumerate(zip(t.column("video_id").to_pylist(), t.column("provenance").to_pylist())):
        d = json.loads(prov[labels[k]]["details"])
        index[(str(video), d["aspect"], d["question"])] = k
        answers.append(d["answer"])
    config_aspects = set(ASPECTS) if data.config == ALL else {data.config}
    judged = load_json_strict(path)
    if not isinstance(judged, dict):
        raise RawFormatError(path, f"top level is {type(judged).__name__}", "give the judged results file: video -> "
                             "aspect -> [{question, gt-answer, rating, ...}]")
    scores: dict[str, list[float | None]] = {i: [None, None] for i in ids}
    unmatched: list[str] = []
    rows = other = 0
    for video, aspects in judged.items():
        if not isinstance(aspects, dict):
            raise RawFormatError(path, f"video {video}: not an object of aspects", "re-download the file", video)
        for aspect, entries in aspects.items():
            if not isinstance(entries, list):
                raise RawFormatError(path, f"video {video}, aspect {aspect}: not a list", "re-download the file", video)
            for i, e in enumerate(entries):
                at = f"{video}.{aspect}[{i}]"
                rows += 1
                if not isinstance(e, dict) or "question" not in e or "rating" not in e:
                    raise RawFormatError(path, "entry without 'question' and 'rating'", "give the judged results "
                                         "as eval_caption_matching.py writes them", at)
                rating = e["rating"]
                if isinstance(rating, bool) or rating not in (0, 1):
                    raise RawFormatError(path, f"rating is {rating!r}, not 0 or 1", "a rating is 1 (right) or 0", at)
                if aspect not in config_aspects and aspect in ASPECTS:
                    other += 1
                    continue
                k = index.get((video, aspect, e["question"]))
                if k is None:
                    unmatched.append(f"{at}: question {str(e['question'])[:60]!r} is not in this config")
                    continue
                if e.get("gt-answer", answers[k]) != answers[k]:
                    unmatched.append(f"{at}: gt-answer {str(e.get('gt-answer'))[:50]!r} differs from the release's "
                                     f"answer {answers[k][:50]!r}")
                    continue
                if scores[ids[k]][0] is not None:
                    raise RawFormatError(path, f"question {ids[k]} is judged twice", "keep one entry per question", at)
                right = float(rating if rate is None else rate(e, rating))
                scores[ids[k]] = [right if j == labels[k] else 1.0 - right for j in range(2)]
    return ImportedScores(scores=scores, rows_read=rows, unmatched=unmatched, other_configs=other)
