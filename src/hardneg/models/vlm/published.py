"""The chat templates the verified video-LLM types' published checkpoints ship, with where each was read.

A tiny model (`hardneg.models.vlm.tiny`) tests the scoring path under its type's chat template; a number computed
under a hand-written stand-in is not the number of the real checkpoint. So each verified type whose published
template could be read in public sources carries that exact text (`published_templates/<model type>.jinja`, as
data: a template is part of the checkpoint, not code) and one record here: the address it was read at, the commit,
the sha256 of the text, and what the source is. The tiny builder writes the text as the folder's
`chat_template.jinja` and the record as `template_source.json`; `hardneg models --json` shows it as
`template_source`. A verified type without a record keeps its stand-in (`tiny.STAND_IN_TEMPLATES`, which names
where the published one was looked for). tests/vlm/test_published_templates.py renders the same conversations
with the text and with every tiny folder's template and requires them identical.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from pathlib import Path

FOLDER = Path(__file__).with_name("published_templates")


@dataclass(frozen=True)
class PublishedTemplate:
    """One model type's published chat template: its text file and where the text was read."""

    file: str  # in `published_templates/`
    url: str  # the source file, at `commit`
    commit: str  # 40 hex digits, or the release tag / branch the file was read at
    sha256: str  # of the text (UTF-8), checked on every read
    source: str  # what the source is, in words (the checkpoint's own file, a test that embeds it, a port)

    def text(self) -> str:
        text = (FOLDER / self.file).read_text(encoding="utf-8")
        got = hashlib.sha256(text.encode("utf-8")).hexdigest()
        if got != self.sha256:
            raise RuntimeError(f"published_templates/{self.file}: sha256 {got}, recorded {self.sha256}; the file was "
                               "changed: restore it from its source")
        return text

    def record(self) -> dict:
        """What the tiny folder's `template_source.json` and `hardneg models --json` hold."""
        return {k: v for k, v in asdict(self).items() if k != "file"}


_TF = "https://github.com/huggingface/transformers/blob"
_HF = "https://huggingface.co"

#: model type -> its published chat template (one record per type)
PUBLISHED: dict[str, PublishedTemplate] = {
    "qwen2_vl": PublishedTemplate(
        "qwen2_vl.jinja", f"{_TF}/00368c17bfb3f240a56108c796cb80a04cb0448c/tests/models/qwen2_vl/"
        "test_processor_qwen2_vl.py", "00368c17bfb3f240a56108c796cb80a04cb0448c",
        "a0bc6f6fc7a29a80017a433e8f03a1cc1236e838a944a2d034295a60c4f2fddb",
        "transformers' Qwen2-VL processor test (`prepare_processor_dict`), which embeds Qwen/Qwen2-VL-7B-Instruct's "
        "chat template"),
    "qwen2_5_vl": PublishedTemplate(
        "qwen2_vl.jinja", f"{_TF}/06b001ceb9c73adbcf8c9ca8ee7eee12d52c44d3/tests/models/qwen2_5_vl/"
        "test_processor_qwen2_5_vl.py", "06b001ceb9c73adbcf8c9ca8ee7eee12d52c44d3",
        "a0bc6f6fc7a29a80017a433e8f03a1cc1236e838a944a2d034295a60c4f2fddb",
        "transformers' Qwen2.5-VL processor test (`prepare_processor_dict`): the same text as Qwen2-VL's"),
    "gemma4": PublishedTemplate(
        "gemma4.jinja", "https://github.com/ggml-org/llama.cpp/blob/75f1ba7389067a9f90082515e124c377a1e104b2/"
        "models/templates/gemma4.jinja", "75f1ba7389067a9f90082515e124c377a1e104b2",
        "87294f1fa94c3733b7f325252567c990edfd0269ff7df285f995ca5226c8989b",
        "llama.cpp's copy of the Gemma 4 checkpoints' chat template (models/templates/, 12,133 characters): the "
        "video as \"\\n\\n<|video|>\\n\\n\", user text trimmed, the generation prompt \"<|turn>model\\n"
        "<|channel>thought\\n<channel|>\" without thinking"),
    "smolvlm": PublishedTemplate(
        "smolvlm.jinja", f"{_TF}/v5.24.0/src/transformers/models/smolvlm/processing_smolvlm.py", "v5.24.0",
        "f6db8ceb8995c47d3aabada6314e3173a75ecf8273453a2e2004bb2ba3ab598d",
        "`DEFAULT_CHAT_TEMPLATE` of transformers 5.24.0 (the pinned release): `SmolVLMProcessor.apply_chat_template` "
        "renders every conversation with a video by it, whatever template the checkpoint ships (\"the correct chat "
        "template to be used for videos after #38105\"); commit 00964605f206d1f8b86e63d0e9afade4762c58c0 holds "
        "the same text without its string-content branch"),
    "perception_lm": PublishedTemplate(
        "perception_lm.jinja", f"{_TF}/0db25542f2190e3dd1e402c477fa713ed516d655/src/transformers/models/"
        "perception_lm/convert_perception_lm_weights_to_hf.py", "0db25542f2190e3dd1e402c477fa713ed516d655",
        "b42c65bfe62cf33550bb4c22f90c9118229925c42052f0dfc64b6d99b52952da",
        "`CHAT_TEMPLATE` of transformers' PerceptionLM conversion script, the template it writes into the "
        "facebook/Perception-LM checkpoints it converts"),
    **dict.fromkeys(("qwen3_vl", "qwen3_vl_moe"), PublishedTemplate(
        "qwen3_vl.jinja", f"{_HF}/mlx-community/Qwen3-VL-4B-Instruct-4bit/blob/"
        "2fd8dacbdb8f1e54b8c005f081ec5bf79c56376b/chat_template.jinja", "2fd8dacbdb8f1e54b8c005f081ec5bf79c56376b",
        "3636d0f0bd6bef02654cdffdc447b79cb2cef8ab02cc75267345946291a489e4",
        "the Qwen3-VL Instruct template (mlx-community's copy of Qwen/Qwen3-VL-4B-Instruct, at that commit). Read "
        "from a public Swift test fixture that embeds the file and records its sha256; the text here hashes to that "
        "recorded sha256. The MoE type (Qwen3-VL-30B-A3B / 235B-A22B Instruct) is given the same family template")),
    **dict.fromkeys(("qwen3_5", "qwen3_5_moe"), PublishedTemplate(
        "qwen3_5.jinja", f"{_HF}/mlx-community/Qwen3.5-35B-A3B-4bit/blob/main/chat_template.jinja", "main",
        "a4aee8afcf2e0711942cf848899be66016f8d14a889ff9ede07bca099c28f715",
        "the Qwen3.5 template (mlx-community's copy of Qwen/Qwen3.5-35B-A3B; no commit recorded by the source). Read "
        "from a public Swift test fixture that embeds the file and records its sha256; the text here hashes to that "
        "recorded sha256. A second public copy names Qwen/Qwen3.5-27B's tokenizer_config.json as its source for the "
        "dense type. Its generation prompt opens a thinking block (\"<|im_start|>assistant\\n<think>\\n\"), as the "
        "checkpoints do by default")),
    "internvl": PublishedTemplate(
        "internvl.jinja", f"{_TF}/015d3b273cbc4a72f2feb1da386896655a23b3da/src/transformers/models/internvl/"
        "convert_internvl_weights_to_hf.py", "015d3b273cbc4a72f2feb1da386896655a23b3da",
        "cabb34545cf3d04f4d256439f6b8e9f6fcf61edaaee3b8cb5c0937a7ea6206d7",
        "`chat_template` of transformers' InternVL conversion script, the template it writes into the "
        "OpenGVLab/InternVL3-*-hf checkpoints (its processor and its tokenizer)"),
    "ernie4_5_vl_moe": PublishedTemplate(
        "ernie4_5_vl_moe.jinja", f"{_TF}/19c5b132e3d010f0537fd49a68219a9c0ef1ae2d/src/transformers/models/"
        "ernie4_5_vl_moe/convert_ernie4_5_vl_moe_to_hf.py", "19c5b132e3d010f0537fd49a68219a9c0ef1ae2d",
        "ae9362f8b848c8a26501149150db4370449604e2b9eb67d7e923acd6589d00bf",
        "`DEFAULT_CHAT_TEMPLATE` of transformers' ERNIE 4.5 VL conversion script, the template it writes into the "
        "checkpoints it converts (baidu/ERNIE-4.5-VL-28B-A3B-PT by default), kept as written there (its "
        "\"Video 1:\" label, the indented newlines inside its string literals, \"<|end_of_sentence |>\"); the "
        "generation prompt is \"\\nAssistant: <think>\\n\\n</think>\\n\\n\" unless thinking is asked for"),
    "llava_onevision": PublishedTemplate(
        "llava_onevision.jinja", f"{_TF}/1a6e6ad97a7c5f6e196300a77ff1f6618a73155c/tests/models/llava_onevision/"
        "test_processing_llava_onevision.py", "1a6e6ad97a7c5f6e196300a77ff1f6618a73155c",
        "fbf77862dcdda46840b6da02767d651eadad3582310e40fed04dc7594a0a80dd",
        "transformers' LLaVA-OneVision processor test (`prepare_processor_dict`), which embeds the llava-hf "
        "checkpoints' chat template"),
}


def published_template(model_type: str) -> str | None:
    """The published template's text of `model_type`, or None (no record: the type keeps its stand-in)."""
    rec = PUBLISHED.get(model_type)
    return None if rec is None else rec.text()


def template_source(model_type: str) -> dict | None:
    """Where `model_type`'s tiny template was read (`PublishedTemplate.record`), or None for a stand-in."""
    rec = PUBLISHED.get(model_type)
    return None if rec is None else rec.record()


__all__ = ["PUBLISHED", "PublishedTemplate", "published_template", "template_source"]
