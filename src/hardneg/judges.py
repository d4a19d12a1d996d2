"""A local text LLM as the judge of generated answers that a protocol set's rule cannot decide (`--judge ID`).

The benchmarks' sources send such answers to ChatGPT with their own judge prompt (TempCompass
`prompt_templates.py`, `caption_matching_evaluation_prompt`, in `eval_caption_matching.py`, `main`; lmms-eval 0.7.3
`tasks/*/utils.py`, the `base_prompt` of `*_process_results`), under the system message "You are an AI assistant
for question answering." (`get_llm_output`), and read the reply with `llm_output_to_rating` ("Correct" / "Incorrect").
Here the judge is any causal LM on the Hub or in a folder, greedy; the prompt is the protocol set's
(`AnswerRules.judge_prompt`). Departure: the scorer never shows the model the label, so the judge is asked with each
option as the "Ground-Truth Answer" in turn, and the first it calls "Correct" is the choice (with two options, an
"Incorrect" for the first is the second); a reply with neither word leaves the answer undecided. The judge's model,
revision, prompt and decoding are in every result's provenance (`run.model.judge`).
"""

from __future__ import annotations

from typing import Any, Sequence

JUDGE_SYSTEM = "You are an AI assistant for question answering."


def rating(reply: str) -> int | None:
    """1 / 0 from a judge's reply as the sources read it (`llm_output_to_rating`); None when it has neither word."""
    if "Correct" not in reply and "Incorrect" not in reply:
        return None
    if reply.startswith("Correct"):
        return 1
    if reply.startswith("Incorrect"):
        return 0
    if "Correct" in reply and "Incorrect" not in reply:
        return 1
    return 0


class LLMJudge:
    """judge(question, answer, captions, spec) -> option index or None; see the module docstring."""

    def __init__(self, model_id: str, device: str | None = None, max_new_tokens: int = 16):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from hardneg.models.base import pick_device

        self.model_id = str(model_id)
        self.device = pick_device(device)
        self.tok = AutoTokenizer.from_pretrained(self.model_id)
        self.model = AutoModelForCausalLM.from_pretrained(self.model_id).to(self.device).eval()
        self.max_new_tokens = int(max_new_tokens)
        self.revision = getattr(self.model.config, "_commit_hash", None)
        self.prompts: set[str] = set()

    def identity(self) -> dict[str, Any]:
        return {"model": self.model_id, "revision": self.revision, "system": JUDGE_SYSTEM,
                "prompts": sorted(self.prompts), "decoding": f"greedy, at most {self.max_new_tokens} new tokens",
                "rule": "each option as the ground truth in turn; the first rated Correct (llm_output_to_rating)"}

    def reply(self, prompt: str) -> str:
        """The model's greedy reply to `prompt` under the judge's system message."""
        import torch

        messages = [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": prompt}]
        if getattr(self.tok, "chat_template", None):
            ids = self.tok.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt",
                                               return_dict=True)["input_ids"]
        else:
            ids = self.tok(f"{JUDGE_SYSTEM}\n\n{prompt}\n", return_tensors="pt")["input_ids"]
        with torch.inference_mode():
            out = self.model.generate(ids.to(self.device), max_new_tokens=self.max_new_tokens, do_sample=False,
                                      pad_token_id=self.tok.pad_token_id or self.tok.eos_token_id)
        return self.tok.decode(out[0, ids.shape[1]:], skip_special_tokens=True).strip()

    def __call__(self, question: str, answer: str, captions: Sequence[str], spec=None) -> int | None:
        template = getattr(getattr(spec, "answers", None), "judge_prompt", None)
        if not template:
            return None  # the protocol set names no judge prompt: the answer stays undecided
        self.prompts.add(template)
        for k, caption in enumerate(captions):
            got = rating(self.reply(template.format(question=question, answer=caption, prediction=answer)))
            if got == 1:
                return k
            if got == 0 and len(captions) == 2 and k == 0:
                return 1
            if got is None:
                return None
        return None


__all__ = ["JUDGE_SYSTEM", "LLMJudge", "rating"]
