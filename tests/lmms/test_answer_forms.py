"""Our matchers decide every typical answer form exactly as lmms-eval 0.7.3's own functions (called directly) and the
TempCompass authors' current rule do (issue 40: the review's 29 forms and more).

References, never our code: lmms-eval's installed `tasks/vitatecs/utils.py` (`vitatecs_process_results`, its judge
call replaced by a marker) and `tasks/tempcompass/utils.py` (`eval_rule`, the same function as the authors'
`eval_caption_matching.py`, `eval_rule`; the authors' `main` first does `.replace('</s>', '').strip()`). An answer
the rule cannot decide goes to the judge there; our matcher must return None for it.
"""

from __future__ import annotations

import json

import pytest

from hardneg.benchmarks import tempcompass, vitatecs
from hardneg.benchmarks.harnesses import LMMS_EVAL_ANSWERS

from .helpers import task_utils

JUDGE = "judge"

#: VITATECS forms: {R} the right letter, {W} the wrong one, {C} / {F} the caption / counterfactual as lmms-eval
#: writes the options (capitalised, with "."), {c} / {f} as the model might write them in lower case
VITATECS_FORMS = [
    "{R}", "{W}", "{R}.", "{W}.", "{R})", "{W})", "({R})", "({W})", "({R}) {C}", "({W}) {F}", "({R}) {F}", " {R}",
    "{R}\n", "{R}</s>", "{R}.</s>", "{R}\n\nBecause the video shows it.", "\n\n{R}", "{r}", "{R}. {C}", "{R}: {C}",
    "The answer is {R}.", "Option {R}", "**{R}**", "{R}, because", "{C}", "{F}", "{c}", "{f}", "{C} {F}",
    "{c} rather than {f}", "", "A or B", "AB", "({R}", "I cannot tell.", "{R} {W}", "({R})\n\n({W})",
]

#: TempCompass forms for the question below ("Caption A/B: ..."); {R}/{W}: the right / wrong letter, {RS}/{WS}: the
#: right / wrong sentence
TEMPCOMPASS_QUESTION = ("Which caption matches the video better?\nCaption A: The man is walking to the left.\n"
                        "Caption B: The man is walking to the right.")
TEMPCOMPASS_FORMS = [
    "{R}", "{W}", "{R}.", "Caption {R}", "Caption {W}", "Caption {R}.", "Caption {R}: {RS}", "Caption {W}: {WS}",
    "{RS}", "{WS}", "({R}) {RS}", "({W}) {RS}", "{R}</s>", "Caption {R}</s>", " {R}", "{R} ", "{R}\n",
    "{R}\n\nExplanation: the man walks.", "\n\n{R}", "{r}", "Option {R}", "Sentence {R}", "The answer is {R}.",
    "{R}. {RS}", "", "{RS}</s>", "Caption {R}: {RS}\n\n", "{R}) {RS}", "{R}..", "I don't know",
]


def _vitatecs_doc(caption: str, counterfactual: str) -> dict:
    return {"caption": caption, "counterfactual": counterfactual, "src_dataset": "MSR-VTT",
            "video_name": "video7010.mp4", "aspect": "Direction"}


VITATECS_PAIRS = [("a man is walking to the left", "a man is walking to the right"),
                  ("the car drives away from the camera.", "the car drives towards the camera."),
                  ("a woman slowly opens the door", "a woman quickly opens the door")]


@pytest.fixture(scope="module")
def lmms(tmp_path_factory):
    home = tmp_path_factory.mktemp("hf_home")
    return {"vitatecs": task_utils("vitatecs", home), "tempcompass": task_utils("tempcompass", home)}


def _fill(form: str, **kw: str) -> str:
    for k, v in kw.items():
        form = form.replace("{" + k + "}", v)
    return form


def _their_vitatecs(utils, doc: dict, pred: str, monkeypatch) -> int | str:
    monkeypatch.setattr(utils, "get_eval_result", lambda *a, **k: (None, JUDGE))
    return utils.vitatecs_process_results(doc, [pred])["accuracy"]["rating"]


@pytest.mark.parametrize("pair", VITATECS_PAIRS)
def test_vitatecs_forms_are_decided_as_lmms_eval_0_7_3_decides_them(lmms, pair, monkeypatch):
    utils = lmms["vitatecs"]
    doc = _vitatecs_doc(*pair)
    question, answer, _ = utils.format_question_and_answer(doc)
    item = {"captions": list(pair)}
    assert vitatecs.lmms_eval_question(item) == question  # the same question, byte for byte
    right = answer[1]
    wrong = "B" if right == "A" else "A"
    opt = {right: answer[4:], wrong: question.split(f"({wrong}) ")[1].split(" \n")[0]}
    differ = []
    for form in VITATECS_FORMS:
        pred = _fill(form, R=right, W=wrong, r=right.lower(), C=opt[right], F=opt[wrong], c=pair[0].rstrip("."),
                     f=pair[1].rstrip("."))
        theirs = _their_vitatecs(utils, doc, pred, monkeypatch)
        choice = vitatecs.lmms_eval_match(pred, item)
        ours = JUDGE if choice is None else int(choice == 0)
        if ours != theirs:
            differ.append((pred, ours, theirs))
    assert not differ, differ
    assert len(VITATECS_FORMS) >= 29


@pytest.mark.parametrize("right", ["A", "B"])
def test_tempcompass_forms_are_decided_as_lmms_eval_and_the_authors_decide_them(lmms, right):
    rule = lmms["tempcompass"].eval_rule  # lmms-eval's copy, identical to the authors' eval_caption_matching.py
    options = TEMPCOMPASS_QUESTION.split("\n")[1:]
    answer = options[0 if right == "A" else 1]
    wrong = "B" if right == "A" else "A"
    sentence = {o.split(": ")[0][-1]: o.split(": ")[1] for o in options}
    item = {"captions": [sentence["A"], sentence["B"]], "label": 0 if right == "A" else 1,
            "provenance": [{"details": json.dumps({"question": TEMPCOMPASS_QUESTION})}] * 2}
    differ = []
    for form in TEMPCOMPASS_FORMS:
        pred = _fill(form, R=right, W=wrong, r=right.lower(), RS=sentence[right], WS=sentence[wrong])
        lmms_says = rule(pred, TEMPCOMPASS_QUESTION, answer)
        authors_say = rule(pred.replace("</s>", "").strip(), TEMPCOMPASS_QUESTION, answer)  # their main's clean-up
        for name, ours_fn, theirs in (("lmms-eval", tempcompass.lmms_eval_match, lmms_says),
                                      ("authors", tempcompass.authors_match, authors_say)):
            choice = ours_fn(pred, item)
            ours = "fail" if choice is None else int(choice == item["label"])
            if ours != theirs:
                differ.append((name, pred, ours, theirs))
    assert not differ, differ
    assert len(TEMPCOMPASS_FORMS) >= 29


def test_the_harness_cut_and_strip_reach_the_matcher():
    """lmms-eval's wrapper hands the task an answer cut at "\\n\\n" and stripped; ours does the same before matching
    (`AnswerRules.clean`); the slow parity test checks it against the wrapper itself."""
    assert LMMS_EVAL_ANSWERS.clean(" A\n\nBecause") == "A"
    assert LMMS_EVAL_ANSWERS.clean("\n\nA") == ""
    assert LMMS_EVAL_ANSWERS.clean("A</s> ") == "A</s>"
    assert LMMS_EVAL_ANSWERS.undecided == "wrong"
