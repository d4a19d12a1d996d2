"""The harnesses around benchmarks' tasks whose behaviour a protocol set reproduces: what they send besides the
task's own prompt, and what they do with a generated answer (`AnswerRules`).

Kept here, once, because several benchmarks' `lmms-eval` sets share lmms-eval's harness; no benchmark is named.
"""

from __future__ import annotations

from hardneg.benchmarks.base import AnswerRules
from hardneg.video import FrameSettings

#: lmms-eval 0.7.3's Qwen2-VL wrapper always sends this system turn (lmms_eval/models/simple/qwen2_vl.py,
#: `Qwen2_VL.__init__`, system_prompt)
LMMS_EVAL_SYSTEM = "You are a helpful assistant."
#: lmms-eval 0.7.3's harness: the wrapper cuts the decoded answer at the task's `until` ("\n\n": lmms_eval/api/task.py,
#: the default generation_kwargs, fewshot_delimiter) and strips it (`Qwen2_VL.generate_until`); an answer the task's
#: rule cannot decide goes to its GPT judge, which rates 0 when the request fails (tasks/*/utils.py, get_eval_result):
#: without a judge, an undecided answer is wrong
#: TempCompass's judge prompt (prompt_templates.py, caption_matching_evaluation_prompt, as eval_caption_matching.py,
#: main, and lmms-eval's tempcompass_process_results_caption_matching send it)
TEMPCOMPASS_JUDGE_PROMPT = (
    "\nYou will receive a caption matching question, the ground-truth answer and the prediction from a question "
    "answering (QA) model. Your task is to determine whether QA model prediction is correct, based on the question and "
    "ground-truth answer. If the prediction is correct, respond \"Correct\". If the prediction is incorrect, respond "
    "\"Incorrect\".\n\nCaption Matching Question:\n{question}\nGround-Truth Answer: {answer}\nModel Prediction: "
    "{prediction}")
#: lmms-eval 0.7.3's VITATECS judge prompt (tasks/vitatecs/utils.py, vitatecs_process_results, base_prompt)
VITATECS_JUDGE_PROMPT = (
    "You will receive a caption matching question, the ground-truth answer and the prediction from a question "
    "answering (QA) model. Your task is to determine whether QA model prediction is correct, based on the question and "
    "ground-truth answer. If the prediction is correct, respond \"Correct\". If the prediction is incorrect, respond "
    "\"Incorrect\". \n\nCaption Matching Question: {question}\n\nGround-Truth Answer: {answer}\n\nModel "
    "Prediction: {prediction}")
LMMS_EVAL_ANSWERS = AnswerRules(stop=("\n\n",), strip=True, undecided="wrong", source=(
    "lmms-eval 0.7.3 models/simple/qwen2_vl.py Qwen2_VL.generate_until (cut at until, strip); api/task.py (until "
    "['\\n\\n']); tasks/*/utils.py get_eval_result (the GPT judge; rating 0 when it cannot answer)"))
#: lmms-eval's Qwen2-VL wrapper's default max_new_tokens (`generate_until`, default_gen_kwargs), used by tasks that
#: set none (TempCompass, VITATECS)
LMMS_EVAL_MAX_NEW_TOKENS = 128
#: lmms-eval's Qwen2-VL wrapper's pixel limits per frame (`Qwen2_VL.__init__`: min_pixels=3136, max_pixels=602112,
#: given to qwen-vl-utils and to `AutoProcessor.from_pretrained`)
LMMS_EVAL_PIXELS = (3136, 602112)
#: the frames lmms-eval's Qwen2-VL wrapper takes: qwen-vl-utils' `fetch_video` (2 frames per second, at least 4, an
#: even count, resized to multiples of 28 within the pixel limits), then at most max_num_frames=32
#: (`hardneg.frame_recipes`)
LMMS_EVAL_FRAMES = FrameSettings(n_frames=32, fps=None, resize=None, recipe="qwen-vl-utils")

#: lmms-eval's wrappers call the installed transformers' `generate`, whose `get_rope_index` gives the 3-D positions:
#: in 5.24 the text after a video starts at start + max(h, w) for Qwen2-VL and Qwen2.5-VL alike, where Qwen's
#: published rule (hardneg's default) starts it after the video's largest position (time included)
LMMS_EVAL_POSITIONS = "transformers"
#: lmms-eval 0.7.3's Qwen2.5-VL wrapper, where it differs from its Qwen2-VL one. `--model qwen2_5_vl` resolves to the
#: chat class (models/__init__.py registers both; registry_v2.py `resolve` prefers chat): models/chat/qwen2_5_vl.py
#: `Qwen2_5_VL.generate_until`, its `__init__` from models/simple/qwen2_5_vl.py. It
#: * sends no system turn of its own (the task's messages hold the user turn only; the model's chat template may add
#:   its default, which hardneg's engine renders the same way);
#: * takes nframes = min(max_num_frames=32, the clip's frames), floored to even, at least 2, through qwen-vl-utils,
#:   with min_pixels=256*28*28 and max_pixels=1605632 per frame (given to qwen-vl-utils, which caps the latter at
#:   its own 602,112 here, and to `AutoProcessor.from_pretrained`);
#: * does not cut at `until` (it returns the decoded text as is; the task strips it, api/task.py
#:   `ConfigurableTask.process_results`, as for every wrapper); 128 new tokens by default;
#: * loads the model in bfloat16, hard-coded (`model_kwargs["torch_dtype"]`);
#: * (as the Qwen2-VL one) runs the installed transformers' positions (`LMMS_EVAL_POSITIONS`); with Qwen2.5-VL's
#:   time-spaced positions (`second_per_grid_ts` x tokens_per_second) they depart from Qwen's rule far more often.
LMMS_EVAL_QWEN2_5_VL_PIXELS = (256 * 28 * 28, 1605632)
LMMS_EVAL_QWEN2_5_VL = ("qwen2_5_vl", (
    ("system", None), ("pixels", LMMS_EVAL_QWEN2_5_VL_PIXELS), ("max_new_tokens", 128), ("dtype", "bfloat16"),
    ("frames", FrameSettings(n_frames=32, fps=None, resize=None, recipe="qwen-vl-utils-nframes",
                             pixels=LMMS_EVAL_QWEN2_5_VL_PIXELS)),
    ("answers", (("stop", ()), ("strip", True), ("source", (
        "lmms-eval 0.7.3 models/chat/qwen2_5_vl.py Qwen2_5_VL.generate_until (the decoded text, no cut at until); "
        "api/task.py ConfigurableTask.process_results (strips every generate_until result before the task's rule); "
        "tasks/*/utils.py get_eval_result (the GPT judge; rating 0 when it cannot answer)")))),
))
#: every model family whose lmms-eval wrapper differs from the Qwen2-VL one the set's fields follow
LMMS_EVAL_MODEL_HARNESS = (LMMS_EVAL_QWEN2_5_VL,)

__all__ = ["LMMS_EVAL_MODEL_HARNESS", "LMMS_EVAL_POSITIONS", "LMMS_EVAL_QWEN2_5_VL", "LMMS_EVAL_QWEN2_5_VL_PIXELS", "TEMPCOMPASS_JUDGE_PROMPT", "VITATECS_JUDGE_PROMPT", "LMMS_EVAL_ANSWERS", "LMMS_EVAL_FRAMES", "LMMS_EVAL_MAX_NEW_TOKENS", "LMMS_EVAL_PIXELS",
           "LMMS_EVAL_SYSTEM"]
