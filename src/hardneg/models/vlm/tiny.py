"""The built-in tiny video LLMs: random weights from a fixed seed, a tokenizer and chat template built here.

`tiny-vlm` (a Qwen2-VL), `tiny-vlm:llava-onevision`, `tiny-vlm:qwen2.5-vl`, `tiny-vlm:video-llava` and
`tiny-vlm:llava-next-video` run the
whole video-LLM path offline in seconds: chat template, tokenizer, frames -> pixels, the vision tower, 3-D
rotary positions (Qwen2-VL; spaced by time in Qwen2.5-VL), the
cached prefix and all three protocols. Their scores carry no meaning. Each is built once into the
user cache (`build_tiny_vlm`); the folder is a complete Hub checkpoint (config and weights, tokenizer files, chat
template, `processor_config.json`, `preprocessor_config.json` and `video_preprocessor_config.json` naming the
family's own processor classes, with its patch size and pixel settings), so the Hub-id path loads it like any
other (`hardneg run --model <folder>`) and so do `AutoProcessor.from_pretrained` and the family's model class
(what lmms-eval's wrappers call; tests/vlm/test_tiny_hub.py). `tiny-vlm:qwen3-vl` is a type the generic family
serves (`hardneg.models.vlm.generic`): its folder is written by its own processor's `save_pretrained`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from hardneg.models.vlm.published import published_template, template_source

SEED = 1234
#: bump when the built folders change: they are rebuilt under a new cache name. 5: the folders of the types in
#: `hardneg.models.vlm.published.PUBLISHED` carry their published chat template and `template_source.json`.
VERSION = "5"
ARCHITECTURES = ("qwen2-vl", "llava-onevision", "qwen2.5-vl", "video-llava", "llava-next-video", "qwen3-vl",
                 "internvl", "qwen3.5", "glm4v", "glm46v", "video-llama-3", "smolvlm", "gemma4", "minicpm-v-4.6",
                 "molmo2", "perception-lm", "qwen3-vl-moe", "qwen3.5-moe",
                 "minicpm-v-4.7", "hyperclovax-vision-v2", "exaone4.5", "minicpm-ocr",
                 "gemma4-unified", "lfm3-vl", "kimi-k2.5", "cohere-compass", "hy-v4-vl",
                 "muse-glimmer", "muse-spark", "qwen4-exp", "ernie4.5-vl-moe", "dots3-note", "minimax-m3-vl", "nemotron-h-omni", "glm5-next", "cosmos3-edge")
#: the `transformers` model type of each tiny architecture
MODEL_TYPES = {"qwen2-vl": "qwen2_vl", "llava-onevision": "llava_onevision", "qwen2.5-vl": "qwen2_5_vl",
               "video-llava": "video_llava", "llava-next-video": "llava_next_video", "qwen3-vl": "qwen3_vl",
               "internvl": "internvl", "qwen3.5": "qwen3_5", "glm4v": "glm4v",
               "glm46v": "glm46v", "video-llama-3": "video_llama_3", "smolvlm": "smolvlm", "gemma4": "gemma4",
               "minicpm-v-4.6": "minicpmv4_6", "molmo2": "molmo2",
               "perception-lm": "perception_lm", "qwen3-vl-moe": "qwen3_vl_moe", "qwen3.5-moe": "qwen3_5_moe",
               "minicpm-v-4.7": "minicpmv4_7", "hyperclovax-vision-v2": "hyperclovax_vision_v2",
               "exaone4.5": "exaone4_5", "minicpm-ocr": "minicpm_ocr",
               "gemma4-unified": "gemma4_unified", "lfm3-vl": "lfm3_vl",
               "kimi-k2.5": "kimi_k25", "cohere-compass": "cohere_compass",
               "hy-v4-vl": "hy_v4_vl", "muse-glimmer": "muse_glimmer",
               "muse-spark": "muse_spark", "qwen4-exp": "qwen4_exp",
               "ernie4.5-vl-moe": "ernie4_5_vl_moe", "dots3-note": "dots3_note",
               "minimax-m3-vl": "minimax_m3_vl", "nemotron-h-omni": "nemotron_h_omni",
               "glm5-next": "glm5_next", "cosmos3-edge": "cosmos3_edge"}
#: model types whose tiny model carries a stand-in chat template, not the published one: each says what the
#: stand-in is and where the published one was looked for (the `search` tool's code, docs, pages and issues corpora,
#: `find_string` over public GitHub files, and the named files). A type whose published template was found is in
#: `hardneg.models.vlm.published.PUBLISHED` instead (never both: tests/vlm/test_published_templates.py). Their
#: tests verify the generic path on the type's own model, processor and token layout under the stand-in; a real
#: checkpoint's own template was not run. `hardneg models` and `hardneg run` say so.
_CHATML = "ChatML with the type's video token"
_NO_TEST = "transformers' tests/models/{} (no chat template embedded), public code by its model type and token names"
STAND_IN_TEMPLATES: dict[str, str] = {
    **{t: f"{_CHATML}; searched: {_NO_TEST.format(t)}" for t in (
        "minicpmv4_6", "minicpmv4_7", "minicpm_ocr", "hyperclovax_vision_v2", "exaone4_5", "lfm3_vl", "hy_v4_vl",
        "muse_glimmer", "muse_spark", "dots3_note", "minimax_m3_vl", "nemotron_h_omni", "cosmos3_edge")},
    "glm5_next": f"GLM-4.1V's layout without tools or thinking; searched: {_NO_TEST.format('glm5_next')}",
    "qwen4_exp": f"Qwen3-VL's ChatML layout; searched: {_NO_TEST.format('qwen4_exp')}",
    "kimi_k25": "Kimi's turn layout without system turn or thinking block (from a third-party port); searched: "
                f"{_NO_TEST.format('kimi_k25')}, llama.cpp models/templates (Kimi K2 / K2-Thinking / K3, text only)",
    "cohere_compass": "Cohere's turn layout without preamble or response markers; searched: "
                      f"{_NO_TEST.format('cohere_compass')}, llama.cpp models/templates (Command R7B, text only)",
    "video_llava": "Video-LLaVA's \"USER: <video>\\n... ASSISTANT:\" layout (transformers' model docs); searched: "
                   "transformers tests/models/video_llava (its processor test loads the Hub checkpoint), find_string "
                   "for the llava-hf Vicuna templates with a video item (only image-only copies found)",
    "llava_next_video": "Video-LLaVA's Vicuna layout with the video; searched: transformers "
                        "convert_llava_next_video_weights_to_hf.py (its chat_vicuna writes no video item), its "
                        "processor test (embeds LLaVA-OneVision's template, not this checkpoint's)",
    **{t: f"GLM-4.1V's layout without tools or thinking; searched: {_NO_TEST.format(t)}" for t in ("glm4v", "glm46v")},
    "video_llama_3": f"ChatML with the video pad token; searched: {_NO_TEST.format('video_llama_3')}",
    "molmo2": "allenai/Molmo2-4B's template without its demo styles and subtitle turn (hand-written from it); "
              f"searched: {_NO_TEST.format('molmo2')}",
    "gemma4_unified": "Gemma 4's template (`tiny.GEMMA4_TEMPLATE`, hand-written); Gemma 4 Unified's own was not "
                      f"found; searched: {_NO_TEST.format('gemma4_unified')}, llama.cpp models/templates",
}


def _pixels() -> dict:
    """The frame-processor settings the tiny Qwen-style towers share (patch 4, 2 frames a patch, 2x2 merge, 16x16 to
    32x32 pixels): a fresh dict each call, since processors keep what they are given."""
    return {"size": {"shortest_edge": 16 * 16, "longest_edge": 32 * 32}, "patch_size": 4, "temporal_patch_size": 2,
            "merge_size": 2}


#: weights larger than the usual 0.02 make attention sharp, so a wrong position or mask changes scores clearly
INIT_RANGE = 0.25

#: words the tokenizer knows whole (the rest is spelt in characters): captions, prompts, answers
_WORDS = """
a an the man woman person people child children boy girl dog cat horse car ball door guitar kitchen
is are was be it he she they his her their this that of in on at to into from with and or then before after
while up down left right over under across toward away slowly quickly fast carefully
plays playing play walks walking walk runs running run opens opening open closes closing close
throws throwing throw catches catching catch jumps jumping jump pours pouring pour picks picking pick
puts putting put takes taking take moves moving move pushes pushing push pulls pulling pull
turns turning turn rides riding ride cuts cutting cut holds holding hold sits sitting sit stands standing
video show shows describe description sentence one does this entail which caption matches better best
option options answer directly give please question yes no Yes No
""".split()

QWEN_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for c in message['content'] %}"
    "{% if c['type'] == 'video' %}<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
LLAVA_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for c in message['content'] %}"
    "{% if c['type'] == 'video' %}<video>"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
#: Video-LLaVA's prompt layout ("USER: <video>\n... ASSISTANT:", transformers `models/video_llava/
#: modeling_video_llava.py`, the `forward` example), the video first as in the Hub checkpoints' templates
VIDEO_LLAVA_TEMPLATE = (
    "{% for message in messages %}{{ message['role'].upper() + ': ' }}"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for c in message['content'] if c['type'] == 'video' %}<video>\n{% endfor %}"
    "{% for c in message['content'] if c['type'] == 'text' %}{{ c['text'] + ' ' }}{% endfor %}{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}ASSISTANT:{% endif %}"
)
#: InternVL's image markers (its tokenizer names them start_image_token, end_image_token, context_image_token)
INTERNVL_SPECIALS = ["<img>", "</img>", "<IMG_CONTEXT>"]
#: GLM-4.1V / GLM-4.5V's control tokens (its chat template and its processor's frame layout)
GLM_SPECIALS = ("[gMASK]", "<sop>", "<|system|>", "<|user|>", "<|assistant|>", "<|begin_of_image|>", "<|end_of_image|>",
                "<|image|>", "<|begin_of_video|>", "<|end_of_video|>", "<|video|>")
#: GLM-4.1V's layout (its Hub chat template without tools or thinking): "[gMASK]<sop><|user|>\n" then the video as
#: "<|begin_of_video|><|video|><|end_of_video|>", the text, "<|assistant|>\n"
GLM_TEMPLATE = (
    "[gMASK]<sop>{% for message in messages %}<|{{ message['role'] }}|>\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for c in message['content'] %}"
    "{% if c['type'] == 'video' %}<|begin_of_video|><|video|><|end_of_video|>"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
#: more special tokens per tiny architecture (added to the tokenizer as control tokens)
#: SmolVLM's image markers (its tokenizer names them fake_image_token, global_image_token, end_of_utterance_token)
SMOLVLM_SPECIALS = ("<fake_token_around_image>", "<global-img>", "<end_of_utterance>")
#: Gemma 4's control tokens (its prompt-formatting guide: turns, image / audio markers and placeholders; the
#: processor adds "<|video|>")
GEMMA4_SPECIALS = ("<bos>", "<|turn>", "<turn|>", "<|image>", "<image|>", "<|image|>", "<|video|>", "<|audio>", "<audio|>",
                   "<|audio|>", "<|channel>", "<channel|>", "<|think|>")
#: Gemma 4's turn layout ("<bos><|turn>user\n...<turn|>\n<|turn>model\n", ai.google.dev prompt-formatting-gemma4),
#: the video as its processor's "<|video|>" placeholder; simplified: no system turn, tools or thinking channel. The
#: gemma4 folder carries the published template (`hardneg.models.vlm.published`); this one stays Gemma 4 Unified's
#: stand-in
GEMMA4_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "<|turn>{{ 'model' if message['role'] == 'assistant' else message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for c in message['content'] %}"
    "{% if c['type'] == 'video' %}<|video|>{% elif c['type'] == 'image' %}<|image|>"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<turn|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|turn>model\n{% endif %}"
)
#: Molmo2's control tokens (its tokenizer's extra special tokens: image and frame markers, placeholders)
MOLMO2_SPECIALS = ("<im_start>", "<im_end>", "<im_patch>", "<im_col>", "<low_res_im_start>", "<|image|>", "<im_low>",
                   "<frame_start>", "<frame_end>", "<|video|>")
#: Molmo2's published chat template (allenai/Molmo2-4B `chat_template.jinja`) without its demo styles and subtitle
#: turn: every image / video placeholder first, then the turns; a turn's text items joined by one space; an
#: assistant turn written " <|im_start|>assistant\n..." (the space is the published template's, before its
#: `{# assistant #}` comment) and closed by the next user turn's "<|im_end|>\n". Its tokenizer's `bos_token` is
#: "<|im_end|>", which the processor puts before every text (the template does not write it).
MOLMO2_TEMPLATE = (
    "{% set n = namespace(img=0, vid=0) %}{% for message in messages %}{% if message['content'] is not string %}"
    "{% for c in message['content'] %}{% if c['type'] == 'image' %}{% set n.img = n.img + 1 %}"
    "{% elif c['type'] == 'video' %}{% set n.vid = n.vid + 1 %}{% endif %}{% endfor %}{% endif %}{% endfor %}"
    "{% if n.img == 1 %}<|image|>{% elif n.img > 1 %}{% for i in range(n.img) %}{{ 'Image ' ~ (i + 1) ~ '<|image|>' }}"
    "{% endfor %}{% endif %}{% for _ in range(n.vid) %}<|video|>{% endfor %}"
    "{% for message in messages %}{% if message['content'] is string %}{% set text = message['content'] %}"
    "{% else %}{% set m = namespace(text='') %}{% for c in message['content'] %}{% if c['type'] == 'text' %}"
    "{% set m.text = m.text ~ ('' if not m.text else ' ') ~ c['text'] %}{% endif %}{% endfor %}"
    "{% set text = m.text %}{% endif %}"
    "{% if message['role'] == 'user' %}{% if not loop.first %}<|im_end|>\n{% endif %}<|im_start|>user\n{{ text }}"
    "<|im_end|>\n{% else %} <|im_start|>assistant\n{{ text }}{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
#: PerceptionLM's control tokens (its Llama-3 tokenizer's: transformers `convert_perception_lm_weights_to_hf.py`,
#: DEFAULT_SPECIAL_TOKENS)
PLM_SPECIALS = ("<|begin_of_text|>", "<|end_of_text|>", "<|image|>", "<|video|>", "<|start_header_id|>",
                "<|end_header_id|>", "<|eot_id|>")
#: PerceptionLM's published chat template (transformers `convert_perception_lm_weights_to_hf.py`, CHAT_TEMPLATE):
#: the bos, a system turn (its default text unless the conversation has one), each turn's images and videos first,
#: then its text items trimmed and joined with nothing, "<|eot_id|>"
PLM_TEMPLATE = (
    "{{- bos_token }}"
    "{%- if messages[0]['role'] == 'system' -%}"
    "    {%- set system_message = messages[0]['content']|trim %}\n"
    "    {%- set messages = messages[1:] %}\n"
    "{%- else %}"
    "    {%- set system_message = 'You are a helpful language and vision assistant. You are able to understand the "
    "visual content that the user provides, and assist the user with a variety of tasks using natural language.' %}"
    "{%- endif %}"
    "{{- '<|start_header_id|>system<|end_header_id|>\\n\\n' }}"
    "{{- system_message }}"
    "{{- '<|eot_id|>' }}"
    "{%- for message in messages %}"
    "{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' }}"
    "{%- for content in message['content'] | selectattr('type', 'equalto', 'image') %}"
    "{{ '<|image|>' }}"
    "{%- endfor %}"
    "{%- for content in message['content'] | selectattr('type', 'equalto', 'video') %}"
    "{{ '<|video|>' }}"
    "{%- endfor %}"
    "{%- for content in message['content'] | selectattr('type', 'equalto', 'text') %}"
    "{{- content['text'] | trim }}"
    "{%- endfor %}"
    "{{'<|eot_id|>' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}"
    "{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}"
    "{%- endif %}"
)
#: Kimi K2.5's control tokens (turns, media markers, the image pad and the video placeholder)
KIMI_SPECIALS = ("<|im_user|>", "<|im_assistant|>", "<|im_system|>", "<|im_middle|>", "<|media_begin|>",
                 "<|media_content|>", "<|media_end|>", "<|media_pad|>", "<|kimi_k25_video_placeholder|>")
#: Kimi K2.5's turn layout ("<|im_user|>user<|im_middle|>...<|im_end|><|im_assistant|>assistant<|im_middle|>", its
#: video as "<|kimi_k25_video_placeholder|>", which the processor expands per 4-frame chunk); simplified: no system
#: turn and no thinking block (the published template is not available offline here)
KIMI_TEMPLATE = (
    "{% for message in messages %}<|im_{{ message['role'] }}|>{{ message['role'] }}<|im_middle|>"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for c in message['content'] %}"
    "{% if c['type'] == 'video' %}<|kimi_k25_video_placeholder|>"
    "{% elif c['type'] == 'image' %}<|media_begin|>image<|media_content|><|media_pad|><|media_end|>"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>"
    "{% endfor %}{% if add_generation_prompt %}<|im_assistant|>assistant<|im_middle|>{% endif %}"
)
#: Cohere's control tokens (Command / Aya turns) and Cohere Compass's vision tokens
COHERE_SPECIALS = ("<BOS_TOKEN>", "<|START_OF_TURN_TOKEN|>", "<|END_OF_TURN_TOKEN|>", "<|USER_TOKEN|>", "<|CHATBOT_TOKEN|>",
                   "<|SYSTEM_TOKEN|>", "<|IMAGE_PAD|>", "<|VIDEO_PAD|>", "<|VISION_START|>", "<|VISION_END|>")
#: Cohere's turn layout ("<BOS_TOKEN><|START_OF_TURN_TOKEN|><|USER_TOKEN|>...<|END_OF_TURN_TOKEN|>", the reply after
#: "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"), the video as "<|VIDEO_PAD|>" (its processor writes each frame's
#: "<t seconds><|VISION_START|>...<|VISION_END|>"); simplified: no default preamble, no response markers
COHERE_TEMPLATE = (
    "<BOS_TOKEN>{% for message in messages %}<|START_OF_TURN_TOKEN|>"
    "{{ {'user': '<|USER_TOKEN|>', 'assistant': '<|CHATBOT_TOKEN|>', 'system': '<|SYSTEM_TOKEN|>'}[message['role']] }}"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for c in message['content'] %}"
    "{% if c['type'] == 'video' %}<|VIDEO_PAD|>{% elif c['type'] == 'image' %}<|IMAGE_PAD|>"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|END_OF_TURN_TOKEN|>"
    "{% endfor %}{% if add_generation_prompt %}<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>{% endif %}"
)
#: Muse Glimmer's vision tokens (its processor's names: patches, image and video markers, frame separators)
MUSE_SPECIALS = ("<|patch|>", "<|image_start|>", "<|image_end|>", "<|video|>", "<|vid_frame_separator|>", "<|vid_start|>",
                 "<|vid_end|>")
MORE_TOKENS = {"glm4v": GLM_SPECIALS, "glm46v": GLM_SPECIALS, "smolvlm": SMOLVLM_SPECIALS, "gemma4": GEMMA4_SPECIALS,
               "gemma4-unified": GEMMA4_SPECIALS, "molmo2": MOLMO2_SPECIALS, "perception-lm": PLM_SPECIALS,
               "kimi-k2.5": KIMI_SPECIALS, "cohere-compass": COHERE_SPECIALS,
               "muse-glimmer": MUSE_SPECIALS,
               "muse-spark": MUSE_SPECIALS + ("<|audio|>", "<|soft_audio_start|>", "<|soft_audio_end|>")}
#: MiniCPM-V 4.6's named tokens (its processor reads them from the tokenizer by name); the placeholders are
#: Qwen's pad tokens, the markers MiniCPM-V's ("<image>...</image>", "<slice>", "<image_id>N</image_id>")
MINICPM_NAMED = {"image_token": "<|image_pad|>", "video_token": "<|video_pad|>", "image_start_token": "<image>",
                 "image_end_token": "</image>", "slice_start_token": "<slice>", "slice_end_token": "</slice>",
                 "image_id_start_token": "<image_id>", "image_id_end_token": "</image_id>"}
#: special tokens a family's processor reads from its tokenizer by name (`tokenizer.start_image_token`, ...)
NAMED_TOKENS = {"internvl": {"start_image_token": "<img>", "end_image_token": "</img>",
                             "context_image_token": "<IMG_CONTEXT>", "video_token": "<video>"},
               "smolvlm": {"fake_image_token": "<fake_token_around_image>", "image_token": "<image>",
                           "end_of_utterance_token": "<end_of_utterance>", "global_image_token": "<global-img>",
                           "video_token": "<video>"},
               "gemma4": {"boi_token": "<|image>", "eoi_token": "<image|>", "image_token": "<|image|>",
                          "video_token": "<|video|>", "audio_token": "<|audio|>", "boa_token": "<|audio>",
                          "eoa_token": "<audio|>"},
               "minicpm-v-4.6": MINICPM_NAMED, "minicpm-v-4.7": MINICPM_NAMED,
               "minicpm-ocr": MINICPM_NAMED,
               "molmo2": {"image_token": "<|image|>", "video_token": "<|video|>"},
               "perception-lm": {"image_token": "<|image|>", "video_token": "<|video|>"},
               "kimi-k2.5": {"image_token": "<|media_pad|>", "video_token": "<|kimi_k25_video_placeholder|>"}}
NAMED_TOKENS["gemma4-unified"] = NAMED_TOKENS["gemma4"]  # the same tokenizer names
#: InternVL-hf's layout of a video in the user turn: the video, a newline, the text (the frames' "FrameN: ..." lines
#: are its processor's)
INTERNVL_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for c in message['content'] %}"
    "{% if c['type'] == 'video' %}<video>\n"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIALS = ["<|endoftext|>", "<|unk|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
            "<|video_pad|>", "<|image_pad|>", "<video>", "<image>"]


#: Qwen2's pre-tokenizer split (the `pre_tokenizer` of Qwen/Qwen2-VL-7B-Instruct's tokenizer.json: a `Split` with
#: this pattern, behaviour "isolated", then byte-level without its own regex); written out, not read from the Hub
QWEN_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
              r"\s*[\r\n]+|\s+(?!\S)|\s+")
#: how many tokens each tiny tokenizer learns beyond its alphabet (small: the models are tiny)
VOCAB_SIZE = 700


def _corpus() -> list[str]:
    """The text the tiny tokenizers are trained on: the vocabulary in sentences, the prompts, option lines,
    answers and a little non-ASCII text, each many times so that whole words and "Yes"/"No" merge."""
    words = _WORDS
    lines = [" ".join(words[i:i + 8]) for i in range(0, len(words), 8)]
    lines += ["Which caption matches the video better?", "Please directly give the best option:",
              "Does this video entail the description:", "Describe this video in one sentence.",
              "Caption A: a man opens the door.", "Sentence B: the dog runs across the park.",
              "Option 1: a woman is pouring water.", "(A) A man opens the door. \n(B) A man closes the door.",
              "Yes", "No", "Yes.", "No.", "A.", "B.", "A", "B", "C", "D",
              "café naïve jalapeño – “quoted” 猫が走る 😀", "Ünïcödé straße ÅÄÖ ñ"]
    lines += list("ABCDEFGHIJKLMNOPQRSTUVWXYZ") + [" ".join("ABCDEFGHIJKLMNOPQRSTUVWXYZ")]
    return lines * 20


def _qwen_tokenizer(specials=SPECIALS):
    """Byte-level BPE with Qwen2's pre-tokenizer and decoder, trained here: every byte is a token, so no text is
    ever unknown; a space is part of the next word's token (Ġ), a newline its own."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN_SPLIT), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB_SIZE, special_tokens=list(specials), show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(_corpus(), trainer)
    return tok


def _sentencepiece_tokenizer():
    """A SentencePiece-style (Llama / Vicuna) BPE trained here: spaces become "▁" and a word's first piece carries
    it (Metaspace, prepended to the first word only), characters outside the vocabulary fall back to their UTF-8
    bytes (<0x..> tokens), as the LLaVA families' Llama and Vicuna tokenizers do."""
    import json

    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token="<|unk|>", byte_fallback=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=True)
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(" ", 1, 0)])
    bytes_ = [f"<0x{i:02X}>" for i in range(256)]
    trainer = trainers.BpeTrainer(vocab_size=VOCAB_SIZE, special_tokens=SPECIALS + bytes_, show_progress=False)
    tok.train_from_iterator(_corpus(), trainer)
    spec = json.loads(tok.to_str())
    # the byte tokens are vocabulary entries (as in Llama's tokenizer.model), not added tokens parsed out of text
    spec["added_tokens"] = [t for t in spec["added_tokens"] if t["content"] in SPECIALS]
    return Tokenizer.from_str(json.dumps(spec))


def build_tokenizer(kind: str = "byte-bpe", named: dict[str, str] | None = None, more: tuple[str, ...] = ()):
    """The tiny models' tokenizer, built the way the real families' are: "byte-bpe" (Qwen2-VL, Qwen2.5-VL and
    LLaVA-OneVision, whose language model is Qwen2) or "sentencepiece" (Video-LLaVA: Vicuna / Llama). Case is kept,
    and the option letters and the first tokens of "Yes" and "No" are single tokens (checked)."""
    from transformers import PreTrainedTokenizerFast

    named = dict(named or {})
    extra = list(dict.fromkeys(t for t in [*named.values(), *more] if t not in SPECIALS))
    if kind == "byte-bpe":
        tok = _qwen_tokenizer(SPECIALS + extra)
    else:
        if extra:
            raise ValueError("named special tokens beyond SPECIALS: byte-bpe tokenizers only")
        tok = _sentencepiece_tokenizer()
    kw = {"model_specific_special_tokens": named} if named else {}
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   unk_token="<|unk|>", model_max_length=4096,
                                   additional_special_tokens=SPECIALS[2:] + extra, **kw)
    for word in ("Yes", "No", *"ABCDEFGHIJKLMNOPQRSTUVWXYZ"):
        if len(fast.encode(word, add_special_tokens=False)) != 1:
            raise RuntimeError(f"the tiny {kind} tokenizer spells {word!r} in several tokens; extend its corpus")
    return fast


#: CLIP's image mean and std (the tiny models' towers are CLIP-style)
CLIP_MEAN_STD = {"image_mean": [0.48145466, 0.4578275, 0.40821073], "image_std": [0.26862954, 0.26130258, 0.27577711]}
#: The tiny Qwen models' pixel settings (CLIP's mean and std; at most 32x32 pixels a frame).
QWEN_PIXELS = {"min_pixels": 16 * 16, "max_pixels": 32 * 32, **CLIP_MEAN_STD}


def _llama_text_config(vocab: int, eos: int, pad: int, max_positions: int = 1024) -> dict:
    """The tiny Llama text tower shared by the LLaVA-style families and SmolVLM."""
    return {"model_type": "llama", "vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64,
            "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
            "max_position_embeddings": max_positions, "eos_token_id": eos, "pad_token_id": pad,
            "tie_word_embeddings": False, "initializer_range": INIT_RANGE}


#: the tiny CLIP vision tower of the LLaVA-style families (16x16 frames, 4x4 patches)
CLIP_VISION_CONFIG = {"model_type": "clip_vision_model", "hidden_size": 32, "intermediate_size": 64,
                      "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": 16, "patch_size": 4,
                      "projection_dim": 32}


def _qwen_text_config(ids: dict[str, int], vocab: int) -> dict:
    """The text tower of the tiny Qwen2-VL and Qwen2.5-VL (3-D rotary positions, mrope)."""
    return {"vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
            "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 1024,
            "rope_scaling": {"type": "mrope", "mrope_section": [2, 1, 1]}, "rope_theta": 10000.0,
            "bos_token_id": ids["<|im_start|>"], "eos_token_id": ids["<|im_end|>"],
            "pad_token_id": ids["<|endoftext|>"], "tie_word_embeddings": False, "initializer_range": INIT_RANGE}


def _qwen_vision_token_ids(ids: dict[str, int]) -> dict[str, int]:
    """The special token ids of the Qwen configs' vision markers."""
    return {"image_token_id": ids["<|image_pad|>"], "video_token_id": ids["<|video_pad|>"],
            "vision_start_token_id": ids["<|vision_start|>"], "vision_end_token_id": ids["<|vision_end|>"]}


def _qwen2_vl(tok, vocab: int):
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    config = Qwen2VLConfig(
        text_config=_qwen_text_config(ids, vocab),
        vision_config={"depth": 2, "embed_dim": 32, "hidden_size": 32, "num_heads": 2, "mlp_ratio": 2,
                       "patch_size": 4, "temporal_patch_size": 2, "spatial_merge_size": 2, "in_channels": 3},
        **_qwen_vision_token_ids(ids),
    )
    # frames of at most 32x32 pixels: 8 frames -> 4 x 8 x 8 patches -> 64 video tokens
    pre = dict(QWEN_PIXELS)
    return Qwen2VLForConditionalGeneration(config), QWEN_TEMPLATE, pre


def _llava_onevision(tok, vocab: int):
    from transformers import LlavaOnevisionConfig, LlavaOnevisionForConditionalGeneration

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    config = LlavaOnevisionConfig(
        text_config={"model_type": "qwen2", "vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64,
                     "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                     "max_position_embeddings": 1024, "eos_token_id": ids["<|im_end|>"],
                     "pad_token_id": ids["<|endoftext|>"], "tie_word_embeddings": False,
                     "initializer_range": INIT_RANGE},
        vision_config={"model_type": "siglip_vision_model", "hidden_size": 32, "intermediate_size": 64,
                       "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": 16, "patch_size": 4},
        image_token_index=ids["<image>"], video_token_index=ids["<video>"], vision_feature_layer=-1,
        vision_feature_select_strategy="full", tie_word_embeddings=False,
    )
    pre = {"image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}
    return LlavaOnevisionForConditionalGeneration(config), LLAVA_TEMPLATE, pre


def _qwen2_5_vl(tok, vocab: int):
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    config = Qwen2_5_VLConfig(
        text_config=_qwen_text_config(ids, vocab),
        # window attention over 2x2 merged patches, one full-attention block, as the real model alternates them;
        # 4 tokens per second so that the frames' spacing moves the temporal positions (Qwen2.5-VL's rule)
        vision_config={"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "out_hidden_size": 32,
                       "patch_size": 4, "temporal_patch_size": 2, "spatial_merge_size": 2, "in_channels": 3,
                       "window_size": 16, "fullatt_block_indexes": [1], "tokens_per_second": 4},
        **_qwen_vision_token_ids(ids),
    )
    pre = dict(QWEN_PIXELS)
    return Qwen2_5_VLForConditionalGeneration(config), QWEN_TEMPLATE, pre


def _video_llava(tok, vocab: int):
    from transformers import VideoLlavaConfig, VideoLlavaForConditionalGeneration

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    config = VideoLlavaConfig(
        text_config=_llama_text_config(vocab, ids["<|im_end|>"], ids["<|endoftext|>"]),
        vision_config=dict(CLIP_VISION_CONFIG),
        image_token_index=ids["<image>"], video_token_index=ids["<video>"], vision_feature_layer=-2,
        vision_feature_select_strategy="default", tie_word_embeddings=False,
    )
    # the Hub checkpoints' preprocessor layout: shorter side to `shortest_edge`, then the centre crop
    pre = {"size": {"shortest_edge": 20}, "crop_size": {"height": 16, "width": 16},
           **CLIP_MEAN_STD}
    return VideoLlavaForConditionalGeneration(config), VIDEO_LLAVA_TEMPLATE, pre


def _llava_next_video(tok, vocab: int):
    from transformers import LlavaNextVideoConfig, LlavaNextVideoForConditionalGeneration

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    config = LlavaNextVideoConfig(
        text_config=_llama_text_config(vocab, ids["<|im_end|>"], ids["<|endoftext|>"]),
        vision_config=dict(CLIP_VISION_CONFIG),
        image_token_index=ids["<image>"], video_token_index=ids["<video>"], vision_feature_layer=-2,
        vision_feature_select_strategy="default", image_grid_pinpoints=[[16, 16]], spatial_pool_stride=2,
        tie_word_embeddings=False,
    )
    # the family resizes every frame to the tower's square (hardneg.models.vlm.families.LlavaVideo)
    pre = {"size": {"height": 16, "width": 16}, "do_center_crop": False,
           **CLIP_MEAN_STD}
    return LlavaNextVideoForConditionalGeneration(config), VIDEO_LLAVA_TEMPLATE, pre


#: the text tower's experts of the tiny MoE variants (Qwen3-VL-MoE, Qwen3.5-MoE): 4 experts, 2 routed per token
TINY_MOE = {"num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32, "decoder_sparse_step": 1}


def _qwen3_vl(tok, vocab: int, moe: bool = False):
    """Qwen3-VL: patch 16 (here 4), 2-frame temporal patches, 2x2 merge, deepstack features, interleaved 3-D
    rotary positions, and `<t seconds>` timestamps before each frame's tokens (its processor writes them).
    `moe`: Qwen3-VL-MoE, the same with a mixture-of-experts text tower (`TINY_MOE`)."""
    import transformers
    from transformers import Qwen2VLImageProcessor, Qwen3VLProcessor, Qwen3VLVideoProcessor

    prefix = "Qwen3VLMoe" if moe else "Qwen3VL"
    Qwen3VLConfig = getattr(transformers, prefix + "Config")
    Qwen3VLForConditionalGeneration = getattr(transformers, prefix + "ForConditionalGeneration")
    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    config = Qwen3VLConfig(
        text_config={"vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                     "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
                     "max_position_embeddings": 4096,
                     "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 1, 1],
                                         "mrope_interleaved": True},
                     "bos_token_id": ids["<|im_start|>"], "eos_token_id": ids["<|im_end|>"],
                     "pad_token_id": ids["<|endoftext|>"], "tie_word_embeddings": False,
                     "initializer_range": INIT_RANGE, **(TINY_MOE if moe else {})},
        vision_config={"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "out_hidden_size": 32,
                       "patch_size": 4, "temporal_patch_size": 2, "spatial_merge_size": 2, "in_channels": 3,
                       "num_position_embeddings": 64, "deepstack_visual_indexes": [0],
                       "initializer_range": INIT_RANGE},
        **_qwen_vision_token_ids(ids), tie_word_embeddings=False,
    )
    pixels = {"size": {"shortest_edge": 16 * 16, "longest_edge": 32 * 32}, "patch_size": 4, "temporal_patch_size": 2,
              "merge_size": 2, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}
    processor = Qwen3VLProcessor(image_processor=Qwen2VLImageProcessor(**pixels),
                                 video_processor=Qwen3VLVideoProcessor(**pixels, do_sample_frames=False),
                                 tokenizer=tok, chat_template=QWEN_TEMPLATE)
    return Qwen3VLForConditionalGeneration(config), QWEN_TEMPLATE, processor


def _internvl(tok, vocab: int):
    """InternVL (3 / 3.5, `-hf` checkpoints): every frame is an image of `image_seq_length` context tokens,
    "FrameN: <img>...</img>" per frame (its processor writes them), a Qwen2 language model, 1-D positions."""
    from transformers import (GotOcr2ImageProcessor, InternVLConfig, InternVLForConditionalGeneration,
                              InternVLProcessor, InternVLVideoProcessor)

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS + INTERNVL_SPECIALS}
    config = InternVLConfig(
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                       "image_size": [16, 16], "patch_size": [4, 4], "initializer_range": INIT_RANGE},
        text_config={"model_type": "qwen2", "vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64,
                     "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                     "max_position_embeddings": 4096, "eos_token_id": ids["<|im_end|>"],
                     "pad_token_id": ids["<|endoftext|>"], "tie_word_embeddings": False,
                     "initializer_range": INIT_RANGE},
        image_token_id=ids["<IMG_CONTEXT>"], downsample_ratio=0.5, vision_feature_layer=-1,
        vision_feature_select_strategy="default", tie_word_embeddings=False,
    )
    pixels = {"size": {"height": 16, "width": 16}, "image_mean": [0.485, 0.456, 0.406],
              "image_std": [0.229, 0.224, 0.225]}
    processor = InternVLProcessor(image_processor=GotOcr2ImageProcessor(**pixels, crop_to_patches=False),
                                  video_processor=InternVLVideoProcessor(**pixels, do_sample_frames=False),
                                  tokenizer=tok, image_seq_length=4, chat_template=INTERNVL_TEMPLATE)
    return InternVLForConditionalGeneration(config), INTERNVL_TEMPLATE, processor


def _qwen3_5(tok, vocab: int, moe: bool = False):
    """Qwen3.5: Qwen3-VL's vision tower, processor and timestamps over a hybrid language model (Gated DeltaNet
    linear-attention layers between full-attention ones, whose cache holds recurrent states). `moe`: Qwen3.5-MoE,
    the same with a mixture-of-experts text tower (`TINY_MOE` and a shared expert)."""
    import transformers
    from transformers import Qwen2VLImageProcessor, Qwen3VLProcessor, Qwen3VLVideoProcessor

    prefix = "Qwen3_5Moe" if moe else "Qwen3_5"
    Qwen3_5Config = getattr(transformers, prefix + "Config")
    Qwen3_5ForConditionalGeneration = getattr(transformers, prefix + "ForConditionalGeneration")
    experts = {**TINY_MOE, "shared_expert_intermediate_size": 32} if moe else {}
    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    config = Qwen3_5Config(
        text_config={"vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                     "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
                     "layer_types": ["linear_attention", "full_attention"], "linear_conv_kernel_dim": 4,
                     "linear_key_head_dim": 8, "linear_value_head_dim": 8, "linear_num_key_heads": 2,
                     "linear_num_value_heads": 4, "max_position_embeddings": 4096,
                     "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 1, 1],
                                         "mrope_interleaved": True, "partial_rotary_factor": 1.0},
                     "bos_token_id": ids["<|im_start|>"], "eos_token_id": ids["<|im_end|>"],
                     "pad_token_id": ids["<|endoftext|>"], "tie_word_embeddings": False,
                     "initializer_range": INIT_RANGE, **experts},
        vision_config={"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "out_hidden_size": 32,
                       "patch_size": 4, "temporal_patch_size": 2, "spatial_merge_size": 2, "in_channels": 3,
                       "num_position_embeddings": 64, "initializer_range": INIT_RANGE},
        **_qwen_vision_token_ids(ids), tie_word_embeddings=False,
    )
    pixels = {"size": {"shortest_edge": 16 * 16, "longest_edge": 32 * 32}, "patch_size": 4, "temporal_patch_size": 2,
              "merge_size": 2, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}
    processor = Qwen3VLProcessor(image_processor=Qwen2VLImageProcessor(**pixels),
                                 video_processor=Qwen3VLVideoProcessor(**pixels, do_sample_frames=False),
                                 tokenizer=tok, chat_template=QWEN_TEMPLATE)
    return Qwen3_5ForConditionalGeneration(config), QWEN_TEMPLATE, processor


def _glm4v(tok, vocab: int, v46: bool = False):
    """GLM-4.1V: Qwen-style patches (14 here 4, 2-frame temporal patches, 2x2 merge), 3-D rotary positions, and
    each frame as "<|begin_of_image|><|image|>...<|end_of_image|>{seconds}" (its processor writes them; GLM-4.6V's
    writes "{seconds:.1f} seconds")."""
    import transformers

    prefix = "Glm46V" if v46 else "Glm4v"
    Glm4vConfig, Glm4vForConditionalGeneration, Glm4vImageProcessor, Glm4vProcessor, Glm4vVideoProcessor = (
        getattr(transformers, prefix + n) for n in ("Config", "ForConditionalGeneration", "ImageProcessor",
                                                    "Processor", "VideoProcessor"))

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS + list(GLM_SPECIALS)}
    config = Glm4vConfig(
        text_config={"vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                     "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
                     "max_position_embeddings": 4096,
                     "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 1, 1],
                                         "partial_rotary_factor": 1.0},
                     "eos_token_id": ids["<|user|>"], "pad_token_id": ids["<|endoftext|>"],
                     "tie_word_embeddings": False, "initializer_range": INIT_RANGE},
        vision_config={"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "out_hidden_size": 32,
                       "patch_size": 4, "temporal_patch_size": 2, "spatial_merge_size": 2, "in_channels": 3,
                       "image_size": 16, "initializer_range": INIT_RANGE},
        image_token_id=ids["<|image|>"], video_token_id=ids["<|video|>"],
        image_start_token_id=ids["<|begin_of_image|>"], image_end_token_id=ids["<|end_of_image|>"],
        video_start_token_id=ids["<|begin_of_video|>"], video_end_token_id=ids["<|end_of_video|>"],
        tie_word_embeddings=False,
    )
    pixels = _pixels()
    processor = Glm4vProcessor(image_processor=Glm4vImageProcessor(**pixels),
                               video_processor=Glm4vVideoProcessor(**pixels, do_sample_frames=False),
                               tokenizer=tok, chat_template=GLM_TEMPLATE)
    return Glm4vForConditionalGeneration(config), GLM_TEMPLATE, processor


def _video_llama_3(tok, vocab: int):
    """VideoLLaMA3: one-frame patches, 2x2 merge, token compression between similar frames, "Time {t:.1f}s:" before
    each frame's tokens (its processor writes them), a Qwen2 language model with 1-D positions."""
    from transformers import (VideoLlama3Config, VideoLlama3ForConditionalGeneration, VideoLlama3ImageProcessor,
                              VideoLlama3Processor, VideoLlama3VideoProcessor)

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    config = VideoLlama3Config(
        text_config={"model_type": "qwen2", "vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64,
                     "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                     "max_position_embeddings": 4096, "eos_token_id": ids["<|im_end|>"],
                     "pad_token_id": ids["<|endoftext|>"], "tie_word_embeddings": False,
                     "initializer_range": INIT_RANGE},
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                       "patch_size": 4, "initializer_range": INIT_RANGE},
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"], tie_word_embeddings=False,
    )
    pixels = {"size": {"shortest_edge": 16 * 16, "longest_edge": 32 * 32}, "patch_size": 4, "merge_size": 2}
    processor = VideoLlama3Processor(image_processor=VideoLlama3ImageProcessor(**pixels),
                                     video_processor=VideoLlama3VideoProcessor(**pixels, do_sample_frames=False),
                                     tokenizer=tok, chat_template=LLAVA_TEMPLATE.replace("<video>", "<|video_pad|>"))
    return VideoLlama3ForConditionalGeneration(config), LLAVA_TEMPLATE.replace("<video>", "<|video_pad|>"), processor


def _smolvlm(tok, vocab: int):
    """SmolVLM (SmolVLM2 video checkpoints): every frame an image of `image_seq_len` tokens after pixel shuffle
    ("<fake_token_around_image><global-img><image>...<fake_token_around_image>"), preceded by its processor's
    "You are provided the following series of {N} frames ..." intro and "Frame from MM:SS:" lines; a Llama
    (SmolLM2, byte-level BPE) language model with 1-D positions. The chat template is the processor's own
    default (`processing_smolvlm.DEFAULT_CHAT_TEMPLATE`: the Hub template plus its video item)."""
    from transformers import (SmolVLMConfig, SmolVLMForConditionalGeneration, SmolVLMImageProcessor, SmolVLMProcessor,
                              SmolVLMVideoProcessor)
    from transformers.models.smolvlm.processing_smolvlm import DEFAULT_CHAT_TEMPLATE

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS + list(SMOLVLM_SPECIALS)}
    config = SmolVLMConfig(
        text_config=_llama_text_config(vocab, ids["<end_of_utterance>"], ids["<|endoftext|>"], max_positions=4096),
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                       "image_size": 16, "patch_size": 4, "initializer_range": INIT_RANGE},
        scale_factor=2, image_token_id=ids["<image>"], tie_word_embeddings=False,
    )
    # 16x16 frames, 4x4 patches -> 16 patches, pixel shuffle by 2 -> 4 tokens a frame (image_seq_len)
    pixels = {"size": {"longest_edge": 16}, "max_image_size": {"longest_edge": 16}, "image_mean": [0.5, 0.5, 0.5],
              "image_std": [0.5, 0.5, 0.5]}
    processor = SmolVLMProcessor(image_processor=SmolVLMImageProcessor(**pixels, do_image_splitting=False),
                                 video_processor=SmolVLMVideoProcessor(**pixels, do_sample_frames=False),
                                 tokenizer=tok, image_seq_len=4, chat_template=DEFAULT_CHAT_TEMPLATE)
    return SmolVLMForConditionalGeneration(config), DEFAULT_CHAT_TEMPLATE, processor


def _gemma4(tok, vocab: int):
    """Gemma 4: each frame "MM:SS <|image><|video|>...<image|>" joined by spaces (its processor writes them), a
    vision tower of 2-D patch positions with 2x2 pooling, a language model with sliding and full attention layers
    and per-layer input embeddings. Its processor takes an audio feature extractor too (a default one of its own
    class: unused for video). Departure: the tokenizer is the tiny byte-level BPE (Gemma's own is a SentencePiece
    BPE with byte fallback and no dummy prefix; both keep every byte and split no control token)."""
    from transformers import (Gemma4AudioFeatureExtractor, Gemma4Config, Gemma4ForConditionalGeneration,
                              Gemma4ImageProcessor, Gemma4Processor, Gemma4VideoProcessor)

    tok.bos_token = "<bos>"
    tok.model_max_length = 8192  # 64 frames of at least 63 tokens each fit (tests/vlm/test_vlm_generic.py)
    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS + list(GEMMA4_SPECIALS)}
    config = Gemma4Config(
        text_config={"vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                     "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
                     "layer_types": ["sliding_attention", "full_attention"], "sliding_window": 8192,
                     "max_position_embeddings": 8192, "vocab_size_per_layer_input": vocab,
                     "hidden_size_per_layer_input": 8, "pad_token_id": ids["<|endoftext|>"],
                     "eos_token_id": ids["<turn|>"], "bos_token_id": ids["<bos>"], "tie_word_embeddings": False,
                     "initializer_range": INIT_RANGE},
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                       "num_key_value_heads": 2, "head_dim": 16, "patch_size": 4, "pooling_kernel_size": 2,
                       "position_embedding_size": 64, "initializer_range": INIT_RANGE},
        audio_config=None, boi_token_id=ids["<|image>"], eoi_token_id=ids["<image|>"],
        image_token_id=ids["<|image|>"], video_token_id=ids["<|video|>"], boa_token_id=ids["<|audio>"],
        eoa_token_index=ids["<audio|>"], audio_token_id=ids["<|audio|>"], tie_word_embeddings=False,
    )
    # 4-pixel patches pooled 2x2; 70 soft tokens a frame at most (the smallest budget the processors accept)
    pixels = {"patch_size": 4, "max_soft_tokens": 70, "pooling_kernel_size": 2}
    processor = Gemma4Processor(feature_extractor=Gemma4AudioFeatureExtractor(),
                                image_processor=Gemma4ImageProcessor(**pixels),
                                video_processor=Gemma4VideoProcessor(**pixels, do_sample_frames=False),
                                tokenizer=tok, chat_template=GEMMA4_TEMPLATE, image_seq_length=70)
    return Gemma4ForConditionalGeneration(config), GEMMA4_TEMPLATE, processor



def _minicpmv4_6(tok, vocab: int, v47: bool = False, ocr: bool = False):
    """MiniCPM-V 4.6: a SigLIP-style NaViT tower with a window-attention merger after layer `insert_layer_id`, a
    2x2 merger (16x fewer tokens), each frame as "<image>" + its tokens + "</image>" after one
    "<image_id>0</image_id>" (its processor writes them), over Qwen3.5's hybrid language model (Gated DeltaNet
    linear-attention layers between full-attention ones; 1-D positions). Frames of about 32x32 pixels, 4-pixel
    patches: 4 tokens a frame (16 for MiniCPM-OCR, whose default merge keeps 4x more). The chat template is ChatML
    with the video as its placeholder token. `ocr`: MiniCPM-OCR, its own config and processor classes. `v47`: MiniCPM-V
    4.7, the same tower and processors with its canvas 3-D rotary positions, which pin the image and slice markers
    and the slice-row newlines (their ids in its config)."""
    import transformers

    prefix = "MiniCPMOcr" if ocr else "MiniCPMV4_7" if v47 else "MiniCPMV4_6"
    MiniCPMV4_6Config, MiniCPMV4_6ForConditionalGeneration, MiniCPMV4_6Processor = (
        getattr(transformers, prefix + n) for n in ("Config", "ForConditionalGeneration", "Processor"))
    MiniCPMV4_6ImageProcessor, MiniCPMV4_6VideoProcessor = (
        getattr(transformers, ("MiniCPMOcr" if ocr else "MiniCPMV4_6") + n) for n in ("ImageProcessor", "VideoProcessor"))
    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS + list(MINICPM_NAMED.values())}
    # MiniCPM-V 4.7's canvas 3-D positions pin its markers and slice-row newlines (its config names their ids)
    canvas = ({"image_start_id": ids["<image>"], "image_end_id": ids["</image>"], "slice_start_id": ids["<slice>"],
               "slice_end_id": ids["</slice>"], "newline_id": tok.convert_tokens_to_ids("\u010a")} if v47 else {})
    config = MiniCPMV4_6Config(
        text_config={"model_type": "qwen3_5_text", "vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64,
                     "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
                     "layer_types": ["linear_attention", "full_attention"], "linear_conv_kernel_dim": 4,
                     "linear_key_head_dim": 8, "linear_value_head_dim": 8, "linear_num_key_heads": 2,
                     "linear_num_value_heads": 4, "max_position_embeddings": 4096,
                     "bos_token_id": ids["<|im_start|>"], "eos_token_id": ids["<|im_end|>"],
                     "pad_token_id": ids["<|endoftext|>"], "tie_word_embeddings": False,
                     "initializer_range": INIT_RANGE},
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                       "image_size": 32, "patch_size": 4, "initializer_range": INIT_RANGE},
        insert_layer_id=1, image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        tie_word_embeddings=False, **canvas, **({} if ocr else {"image_size": 32}),
    )
    pixels = {"scale_resolution": 32, "patch_size": 4, "max_slice_nums": 1, "image_mean": [0.5, 0.5, 0.5],
              "image_std": [0.5, 0.5, 0.5]}
    template = QWEN_TEMPLATE.replace("<|vision_start|><|video_pad|><|vision_end|>", "<|video_pad|>")
    processor = MiniCPMV4_6Processor(image_processor=MiniCPMV4_6ImageProcessor(**pixels),
                                     video_processor=MiniCPMV4_6VideoProcessor(**pixels, slice_mode=False,
                                                                               do_sample_frames=False),
                                     tokenizer=tok, chat_template=template)
    return MiniCPMV4_6ForConditionalGeneration(config), template, processor


def _molmo2(tok, vocab: int):
    """Molmo2: each frame "{t:.1f} <frame_start>" + its pooled patches as "<im_patch>" + "<frame_end>", frames
    joined by spaces (its processor writes them), the patch features added onto those tokens' embeddings, the
    frame tokens attending to each other both ways (its `mm_token_type_ids`), a Qwen3-style language model with
    1-D positions. Its processor prepends the tokenizer's `bos_token` ("<|im_end|>") to every text."""
    from transformers import (Molmo2Config, Molmo2ForConditionalGeneration, Molmo2ImageProcessor, Molmo2Processor,
                              Molmo2VideoProcessor)

    tok.bos_token = "<|im_end|>"  # Molmo2's tokenizer (special_tokens_map.json): bos and eos are "<|im_end|>"
    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS + list(MOLMO2_SPECIALS)}
    vit = {"num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 16, "initializer_range": INIT_RANGE}
    config = Molmo2Config(
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "image_size": [16, 16],
                       "patch_size": 4, **vit},
        adapter_config={"vision_feature_layer": [-1, -2], "hidden_size": 32, "intermediate_size": 64,
                        "text_hidden_size": 32, **vit},
        text_config={"hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
                     "vocab_size": vocab, "additional_vocab_size": 0, "num_hidden_layers": 2, "intermediate_size": 64,
                     "max_position_embeddings": 4096, "initializer_range": INIT_RANGE, "tie_word_embeddings": False},
        image_start_token_id=ids["<im_start>"], low_res_image_start_token_id=ids["<low_res_im_start>"],
        image_end_token_id=ids["<im_end>"], image_patch_id=ids["<im_patch>"],
        frame_start_token_id=ids["<frame_start>"], frame_end_token_id=ids["<frame_end>"],
        initializer_range=INIT_RANGE, tie_word_embeddings=False,
    )
    # 16x16 frames, 4-pixel patches pooled 2x2: 4 tokens a frame
    pixels = {"size": {"height": 16, "width": 16}, "patch_size": 4, "pooling_size": [2, 2],
              "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}
    processor = Molmo2Processor(image_processor=Molmo2ImageProcessor(**pixels),
                                video_processor=Molmo2VideoProcessor(**pixels, do_sample_frames=False),
                                tokenizer=tok, chat_template=MOLMO2_TEMPLATE)
    return Molmo2ForConditionalGeneration(config), MOLMO2_TEMPLATE, processor


def _perception_lm(tok, vocab: int):
    """PerceptionLM: a Perception Encoder vision tower (timm's `vit_pe_core` Eva with 2-D rotary attention, built
    by `timm.create_model(..., pretrained=False)` through `TimmWrapperConfig`: random weights, nothing downloaded),
    its CLS token dropped, 2x2 average pooling after the projector, every frame one tile of
    (side / patch / 2)^2 "<|video|>" tokens (its processor writes them), a Llama 3 language model with 1-D
    positions. Departure: the tokenizer is the tiny byte-level BPE with Qwen2's split (Llama 3's tiktoken-style
    BPE differs in grouping up to three digits)."""
    from transformers import (PerceptionLMConfig, PerceptionLMForConditionalGeneration, PerceptionLMImageProcessor,
                              PerceptionLMProcessor, PerceptionLMVideoProcessor)

    tok.bos_token = "<|begin_of_text|>"
    tok.eos_token = "<|eot_id|>"
    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS + list(PLM_SPECIALS)}
    config = PerceptionLMConfig(
        vision_config={"model_type": "timm_wrapper", "architecture": "vit_pe_core_tiny_patch16_384",
                       "num_classes": 0,
                       "model_args": {"embed_dim": 32, "depth": 2, "num_heads": 2, "patch_size": 4, "img_size": [16, 16],
                                      "global_pool": "", "ref_feat_shape": [4, 4], "use_post_transformer_norm": True}},
        text_config=_llama_text_config(vocab, ids["<|eot_id|>"], ids["<|endoftext|>"], max_positions=4096),
        projector_pooling_ratio=2, vision_use_cls_token=True, image_token_id=ids["<|image|>"],
        video_token_id=ids["<|video|>"], tie_word_embeddings=False,
    )
    # 16x16 frames, 4-pixel patches, pooled 2x2: 4 tokens a frame
    pixels = {"size": {"height": 16, "width": 16}, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}
    processor = PerceptionLMProcessor(
        video_processor=PerceptionLMVideoProcessor(**pixels, do_sample_frames=False),
        image_processor=PerceptionLMImageProcessor(**pixels, tile_size=16, max_num_tiles=1, vision_input_type="vanilla"),
        tokenizer=tok, patch_size=4, pooling_ratio=2, chat_template=PLM_TEMPLATE)
    return PerceptionLMForConditionalGeneration(config), PLM_TEMPLATE, processor


def _qwen25_vision_family(tok, vocab: int, kind: str):
    """Types that pair Qwen2.5-VL's vision tower (window attention, 2-frame temporal patches, 2x2 merge) and Qwen2-VL's
    image and video processors with another language model: HyperCLOVAX-Vision v2 ("hyperclovax": a Llama-style
    model with its own multipliers) and EXAONE 4.5 ("exaone4_5": EXAONE 4's sliding and full attention layers).
    Departure: their published chat templates are not available offline here, so both use ChatML with Qwen's video
    region `<|vision_start|><|video_pad|><|vision_end|>` (the processors replace `<|video_pad|>` alone)."""
    import transformers
    from transformers import Qwen2VLImageProcessor, Qwen2VLVideoProcessor

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    vision = {"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "out_hidden_size": 32,
              "patch_size": 4, "temporal_patch_size": 2, "spatial_merge_size": 2, "in_channels": 3, "window_size": 16,
              "fullatt_block_indexes": [1], "initializer_range": INIT_RANGE}
    text = {"vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
            "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8, "max_position_embeddings": 4096,
            "bos_token_id": ids["<|im_start|>"], "eos_token_id": ids["<|im_end|>"], "pad_token_id": ids["<|endoftext|>"],
            "tie_word_embeddings": False, "initializer_range": INIT_RANGE}
    if kind == "hyperclovax":
        prefix = "HyperCLOVAXVisionV2"
        sub = {"vision_config": {**vision, "model_type": "qwen2_5_vl_vision"},
               "text_config": {**text, "model_type": "hyperclovax"}}
    else:
        prefix = "Exaone4_5_"
        sub = {"vision_config": {**vision, "num_key_value_heads": 2},
               "text_config": {**text, "model_type": "exaone4", "sliding_window": 4096,
                               "layer_types": ["sliding_attention", "full_attention"]}}
    config = getattr(transformers, prefix + "Config")(**sub, image_token_id=ids["<|image_pad|>"],
                                                        video_token_id=ids["<|video_pad|>"], tie_word_embeddings=False)
    pixels = {"size": {"shortest_edge": 16 * 16, "longest_edge": 32 * 32}, "patch_size": 4, "temporal_patch_size": 2,
              "merge_size": 2, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}
    processor = getattr(transformers, prefix + "Processor")(
        image_processor=Qwen2VLImageProcessor(**pixels),
        video_processor=Qwen2VLVideoProcessor(**pixels, do_sample_frames=False), tokenizer=tok,
        chat_template=QWEN_TEMPLATE)
    return getattr(transformers, prefix + "ForConditionalGeneration")(config), QWEN_TEMPLATE, processor


def _gemma4_unified(tok, vocab: int):
    """Gemma 4 Unified: Gemma 4's turn layout, tokens and per-frame "MM:SS <|image><|video|>...<image|>" (its
    processor writes them), its own vision encoder (patches pooled 2x2, 2-D patch positions) and a language model
    whose vision tokens attend to each other both ways (`use_bidirectional_attention="vision"`, from the processor's
    `mm_token_type_ids`). Same tokenizer departure as the tiny Gemma 4."""
    from transformers import (Gemma4UnifiedAudioFeatureExtractor, Gemma4UnifiedConfig,
                              Gemma4UnifiedForConditionalGeneration, Gemma4UnifiedImageProcessor, Gemma4UnifiedProcessor,
                              Gemma4UnifiedVideoProcessor)

    tok.bos_token = "<bos>"
    tok.model_max_length = 8192
    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS + list(GEMMA4_SPECIALS)}
    config = Gemma4UnifiedConfig(
        text_config={"vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                     "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
                     "layer_types": ["sliding_attention", "full_attention"], "sliding_window": 8192,
                     "max_position_embeddings": 8192, "pad_token_id": ids["<|endoftext|>"],
                     "eos_token_id": ids["<turn|>"], "bos_token_id": ids["<bos>"], "tie_word_embeddings": False,
                     "initializer_range": INIT_RANGE},
        vision_config={"patch_size": 4, "pooling_kernel_size": 2, "mm_embed_dim": 32, "mm_posemb_size": 64,
                       "output_proj_dims": 32, "initializer_range": INIT_RANGE},
        audio_config=None, boi_token_id=ids["<|image>"], eoi_token_id=ids["<image|>"],
        image_token_id=ids["<|image|>"], video_token_id=ids["<|video|>"], boa_token_id=ids["<|audio>"],
        eoa_token_index=ids["<audio|>"], audio_token_id=ids["<|audio|>"], tie_word_embeddings=False,
    )
    pixels = {"patch_size": 4, "max_soft_tokens": 70, "pooling_kernel_size": 2}
    processor = Gemma4UnifiedProcessor(feature_extractor=Gemma4UnifiedAudioFeatureExtractor(),
                                       image_processor=Gemma4UnifiedImageProcessor(**pixels),
                                       video_processor=Gemma4UnifiedVideoProcessor(**pixels, do_sample_frames=False),
                                       tokenizer=tok, chat_template=GEMMA4_TEMPLATE, image_seq_length=70)
    return Gemma4UnifiedForConditionalGeneration(config), GEMMA4_TEMPLATE, processor


def _lfm3_vl(tok, vocab: int):
    """LFM3-VL: Qwen3-VL's video processor (its per-step `<t seconds>` blocks) and its own vision tower and projector
    over LFM3, a hybrid language model of short gated convolutions (whose cache holds conv states) and attention
    layers. Departure: ChatML with Qwen's video region as the chat template (LFM's published one is not available
    offline here); the installed processor keeps the template's outer vision markers around the per-step blocks,
    and the generic path follows it."""
    from transformers import Lfm3VlConfig, Lfm3VlForConditionalGeneration, Lfm3VlProcessor, Qwen2VLImageProcessor
    from transformers import Qwen3VLVideoProcessor

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    config = Lfm3VlConfig(
        text_config={"vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                     "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8, "max_position_embeddings": 4096,
                     "layer_types": ["conv", "full_attention"], "pad_token_id": ids["<|endoftext|>"],
                     "bos_token_id": ids["<|im_start|>"], "eos_token_id": ids["<|im_end|>"], "tie_word_embeddings": False,
                     "initializer_range": INIT_RANGE},
        vision_config={"hidden_size": 32, "intermediate_size": 64, "patch_size": 4, "num_hidden_layers": 2,
                       "num_attention_heads": 2, "num_key_value_heads": 2, "initializer_range": INIT_RANGE},
        projector_hidden_size=64, image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"],
        tie_word_embeddings=False,
    )
    pixels = {"size": {"shortest_edge": 16 * 16, "longest_edge": 32 * 32}, "patch_size": 4, "temporal_patch_size": 2,
              "merge_size": 2, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}
    processor = Lfm3VlProcessor(image_processor=Qwen2VLImageProcessor(**pixels),
                                video_processor=Qwen3VLVideoProcessor(**pixels, do_sample_frames=False), tokenizer=tok,
                                chat_template=QWEN_TEMPLATE)
    return Lfm3VlForConditionalGeneration(config), QWEN_TEMPLATE, processor


def _kimi_k25(tok, vocab: int):
    """Kimi K2.5: MoonViT-3D (native-resolution patches, 4-frame temporal chunks, 2x2 merge), each chunk written
    "HH:MM:SS.mmm<|media_begin|>video<|media_content|>" + its tokens + "<|media_end|>" (its processor writes them),
    over a DeepSeek-V3 language model (multi-head latent attention, routed and shared experts; here 4 experts, the
    first layer dense)."""
    from transformers import (Kimi_K25Config, Kimi_K25ForConditionalGeneration, Kimi_K25ImageProcessor,
                              Kimi_K25Processor, Kimi_K25VideoProcessor)

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS + list(KIMI_SPECIALS)}
    config = Kimi_K25Config(
        text_config={"model_type": "deepseek_v3", "vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64,
                     "moe_intermediate_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
                     "num_key_value_heads": 4, "n_shared_experts": 1, "n_routed_experts": 4, "num_experts_per_tok": 2,
                     "first_k_dense_replace": 1, "kv_lora_rank": 16, "q_lora_rank": 16, "qk_rope_head_dim": 4,
                     "v_head_dim": 8, "qk_nope_head_dim": 8, "n_group": 1, "topk_group": 1,
                     "max_position_embeddings": 4096, "pad_token_id": ids["<|endoftext|>"],
                     "eos_token_id": ids["<|im_end|>"], "bos_token_id": ids["<|im_start|>"], "tie_word_embeddings": False,
                     "initializer_range": INIT_RANGE},
        vision_config={"patch_size": 4, "pos_emb_height": 8, "pos_emb_width": 8, "pos_emb_time": 4,
                       "num_attention_heads": 2, "num_hidden_layers": 2, "hidden_size": 32, "intermediate_size": 64,
                       "initializer_range": INIT_RANGE},
        projection_hidden_size=32, image_token_id=ids["<|media_pad|>"],
        video_token_id=ids["<|kimi_k25_video_placeholder|>"], vision_start_token_id=ids["<|media_begin|>"],
        vision_end_token_id=ids["<|media_end|>"], tie_word_embeddings=False,
    )
    # frames of at most 32x32 pixels, 4-pixel patches merged 2x2: 16 tokens per 4-frame chunk
    pixels = {"size": {"max_height": 32, "max_width": 32}, "patch_size": 4, "merge_size": 2, "max_patches": 64,
              "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}
    processor = Kimi_K25Processor(image_processor=Kimi_K25ImageProcessor(**pixels),
                                  video_processor=Kimi_K25VideoProcessor(**pixels, temporal_patch_size=4,
                                                                         do_sample_frames=False),
                                  tokenizer=tok, chat_template=KIMI_TEMPLATE)
    return Kimi_K25ForConditionalGeneration(config), KIMI_TEMPLATE, processor


def _cohere_compass(tok, vocab: int):
    """Cohere Compass: Qwen3-VL-style patches (2-frame temporal patches, 2x2 merge, deepstack features), each frame
    "<t seconds><|VISION_START|>" + its tokens + "<|VISION_END|>" (its processor writes them), over a Cohere
    language model of sliding-window and full attention layers with 3-D rotary positions per layer type."""
    from transformers import (CohereCompassConfig, CohereCompassForConditionalGeneration, CohereCompassImageProcessor,
                              CohereCompassProcessor, CohereCompassVideoProcessor)

    tok.bos_token = "<BOS_TOKEN>"
    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS + list(COHERE_SPECIALS)}
    rope = {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 1, 1]}
    config = CohereCompassConfig(
        text_config={"vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                     "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8, "max_position_embeddings": 4096,
                     "layer_types": ["sliding_attention", "full_attention"], "sliding_window": 4096,
                     "rope_parameters": {"sliding_attention": dict(rope), "full_attention": dict(rope)},
                     "pad_token_id": ids["<|endoftext|>"], "bos_token_id": ids["<BOS_TOKEN>"],
                     "eos_token_id": ids["<|END_OF_TURN_TOKEN|>"], "tie_word_embeddings": False,
                     "initializer_range": INIT_RANGE},
        vision_config={"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "out_hidden_size": 32,
                       "patch_size": 4, "temporal_patch_size": 2, "spatial_merge_size": 2, "in_channels": 3,
                       "num_position_embeddings": 64, "deepstack_visual_indexes": [0], "initializer_range": INIT_RANGE},
        image_token_id=ids["<|IMAGE_PAD|>"], video_token_id=ids["<|VIDEO_PAD|>"],
        vision_start_token_id=ids["<|VISION_START|>"], vision_end_token_id=ids["<|VISION_END|>"],
        tie_word_embeddings=False,
    )
    pixels = {"size": {"shortest_edge": 16 * 16, "longest_edge": 32 * 32}, "patch_size": 4, "temporal_patch_size": 2,
              "merge_size": 2, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}
    processor = CohereCompassProcessor(image_processor=CohereCompassImageProcessor(**pixels),
                                       video_processor=CohereCompassVideoProcessor(**pixels, do_sample_frames=False),
                                       tokenizer=tok, chat_template=COHERE_TEMPLATE)
    return CohereCompassForConditionalGeneration(config), COHERE_TEMPLATE, processor


def _hy_v4_vl(tok, vocab: int):
    """Hunyuan V4-VL: a native-resolution vision tower (2x2 merge) and a DeepSeek-style language model (latent
    attention with a sparse indexer, routed and shared experts, hyper-connections) with 3-D rotary positions on its
    rope dims. Departure: ChatML with Qwen's video region as the chat template (Hunyuan's published one is not
    available offline here)."""
    from transformers import (HYV4VLConfig, HYV4VLForConditionalGeneration, HYV4VLImageProcessor, HYV4VLProcessor,
                              HYV4VLVideoProcessor)

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    config = HYV4VLConfig(
        text_config={"vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64, "moe_intermediate_size": 32,
                     "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
                     "n_routed_experts": 4, "n_shared_experts": 1, "num_experts_per_tok": 2, "q_lora_rank": 16,
                     "kv_lora_rank": 16, "qk_nope_head_dim": 8, "qk_rope_head_dim": 6, "v_head_dim": 8,
                     "index_head_dim": 8, "index_n_heads": 2,
                     "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [1, 1, 1]},
                     "max_position_embeddings": 4096, "pad_token_id": ids["<|endoftext|>"],
                     "bos_token_id": ids["<|im_start|>"], "eos_token_id": ids["<|im_end|>"], "tie_word_embeddings": False,
                     "initializer_range": INIT_RANGE},
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_attention_heads": 2, "num_hidden_layers": 2,
                       "out_hidden_size": 32, "patch_size": 4, "max_image_size": 64},
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"], tie_word_embeddings=False,
    )
    pixels = {"patch_size": 4, "merge_size": 2, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}
    processor = HYV4VLProcessor(image_processor=HYV4VLImageProcessor(**pixels),
                                video_processor=HYV4VLVideoProcessor(**pixels, do_sample_frames=False), tokenizer=tok,
                                chat_template=QWEN_TEMPLATE)
    return HYV4VLForConditionalGeneration(config), QWEN_TEMPLATE, processor


def _muse_glimmer(tok, vocab: int, spark: bool = False):
    """Muse Glimmer: a vision tower with 2-frame temporal groups, window attention and a 2x2 pixel shuffle, each group
    "Time: {t}s" + its "<|video|>" tokens between "<|vid_start|>", "<|vid_frame_separator|>" and "<|vid_end|>" (its
    processor writes them), a language model of sliding and full attention layers with soft-capped logits. Its
    processor needs the video's metadata back from its video processor (`return_metadata`, set in the saved video
    processor config). Departure: ChatML with its video token as the chat template (its published one is not
    available offline here). `spark`: Muse Spark, the same vision path and processors over a mixture-of-experts
    language model (4 experts, 2 routed) with an audio encoder (a tiny default one of its class: unused for video)."""
    import transformers
    from transformers import MuseGlimmerImageProcessor, MuseGlimmerVideoProcessor

    prefix = "MuseSpark" if spark else "MuseGlimmer"
    MuseGlimmerConfig, MuseGlimmerForConditionalGeneration, MuseGlimmerProcessor = (
        getattr(transformers, prefix + n) for n in ("Config", "ForConditionalGeneration", "Processor"))
    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS + list(MUSE_SPECIALS)}
    experts = {"num_local_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
               "moe_hidden_size": 32} if spark else {}
    audio = ({"audio_config": {"hidden_sizes": [8, 8, 8, 16], "depths": [1, 1, 1, 1], "out_hidden_size": 32},
              "audio_token_id": tok.convert_tokens_to_ids("<|audio|>")} if spark else {})
    config = MuseGlimmerConfig(
        text_config={"vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                     "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8, "max_position_embeddings": 4096,
                     "sliding_window": 4096, "layer_types": ["sliding_attention", "full_attention"],
                     "pad_token_id": ids["<|endoftext|>"], "bos_token_id": ids["<|im_start|>"],
                     "eos_token_id": ids["<|im_end|>"], "tie_word_embeddings": False, "initializer_range": INIT_RANGE,
                     **experts},
        vision_config={"patch_size": 4, "pos_emb_height": 8, "pos_emb_width": 8, "num_attention_heads": 2,
                       "num_hidden_layers": 2, "hidden_size": 32, "intermediate_size": 64, "max_position_embeddings": 64},
        out_hidden_size=128, projector_hidden_size=32, image_token_id=ids["<|patch|>"], video_token_id=ids["<|video|>"],
        tie_word_embeddings=False, **audio,
    )
    template = LLAVA_TEMPLATE.replace("<video>", "<|video|>")
    pixels = {"patch_size": 4, "merge_size": 2, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}
    more = {"feature_extractor": transformers.MuseSparkFeatureExtractor()} if spark else {}
    processor = MuseGlimmerProcessor(
        **more, image_processor=MuseGlimmerImageProcessor(**pixels),
        video_processor=MuseGlimmerVideoProcessor(**pixels, max_video_frame_tokens=4, do_sample_frames=False,
                                                  return_metadata=True),
        tokenizer=tok, chat_template=template)
    return MuseGlimmerForConditionalGeneration(config), template, processor


def _qwen4_exp(tok, vocab: int):
    """Qwen4-Exp: Qwen3-VL's vision tower, processor and timestamps over a language model of Gated DeltaNet layers
    and indexed attention (a sparse QSA indexer over compressed keys), routed and shared experts, hyper-connections
    and hashed n-gram per-layer embeddings (PLE) on its linear-attention layers; the cache holds recurrent,
    convolution and n-gram states. Departure: Qwen3-VL's chat template layout (QWEN_TEMPLATE, the region Qwen's
    processor expands) as a stand-in: Qwen4-Exp's published template is not available offline here."""
    from transformers import (Qwen2VLImageProcessor, Qwen3VLProcessor, Qwen3VLVideoProcessor, Qwen4ExpConfig,
                              Qwen4ExpForConditionalGeneration)

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    config = Qwen4ExpConfig(
        text_config={"vocab_size": vocab, "hidden_size": 32, "num_hidden_layers": 2,
                     "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
                     "layer_types": ["linear_attention", "indexed_attention"], "linear_conv_kernel_dim": 4,
                     "linear_key_head_dim": 8, "linear_value_head_dim": 8, "linear_num_key_heads": 2,
                     "linear_num_value_heads": 4, "max_position_embeddings": 4096,
                     "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
                     "shared_expert_intermediate_size": 32, "hc_count": 2, "hc_lowrank": 8,
                     "ple_layer_ids": [1], "ple_embed_dim": 32, "heads_per_ngram": 2, "ngram_vocab_size_base": 1000,
                     "split_ngram_parts": 4, "make_ngram_vocab_size_divisible_by": 8,
                     "indexer_n_heads": 2, "indexer_kv_heads": 1, "indexer_head_dim": 8, "indexer_budget": 8,
                     "indexer_compress_ratio": 2,
                     "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 1, 1],
                                         "mrope_interleaved": True, "partial_rotary_factor": 1.0},
                     "bos_token_id": ids["<|im_start|>"], "eos_token_id": ids["<|im_end|>"],
                     "pad_token_id": ids["<|endoftext|>"], "tie_word_embeddings": False,
                     "initializer_range": INIT_RANGE},
        vision_config={"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "out_hidden_size": 32,
                       "patch_size": 4, "temporal_patch_size": 2, "spatial_merge_size": 2, "in_channels": 3,
                       "num_position_embeddings": 64, "initializer_range": INIT_RANGE},
        **_qwen_vision_token_ids(ids), tie_word_embeddings=False,
    )
    pixels = {"size": {"shortest_edge": 16 * 16, "longest_edge": 32 * 32}, "patch_size": 4, "temporal_patch_size": 2,
              "merge_size": 2, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}
    processor = Qwen3VLProcessor(image_processor=Qwen2VLImageProcessor(**pixels),
                                 video_processor=Qwen3VLVideoProcessor(**pixels, do_sample_frames=False),
                                 tokenizer=tok, chat_template=QWEN_TEMPLATE)
    return Qwen4ExpForConditionalGeneration(config), QWEN_TEMPLATE, processor


#: ERNIE 4.5 VL's vision tokens (its tokenizer names them image_token, image_start_token, ... video_end_token)
ERNIE_NAMED = {"image_token": "<|IMAGE_PLACEHOLDER|>", "image_start_token": "<|IMAGE_START|>",
               "image_end_token": "<|IMAGE_END|>", "video_token": "<|VIDEO_PLACEHOLDER|>",
               "video_start_token": "<|VIDEO_START|>", "video_end_token": "<|VIDEO_END|>"}
#: ERNIE 4.5 VL's "User: ... \nAssistant: " turns, the video between its start and end tokens: the builder's
#: fallback; the tiny folder carries the published template instead (`hardneg.models.vlm.published`)
ERNIE_TEMPLATE = (
    "<|begin_of_sentence|>{% for message in messages %}"
    "{{ 'User: ' if message['role'] == 'user' else ('Assistant: ' if message['role'] == 'assistant' else '') }}"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for c in message['content'] %}"
    "{% if c['type'] == 'video' %}<|VIDEO_START|><|VIDEO_PLACEHOLDER|><|VIDEO_END|>"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}"
    "{{ '<|end_of_sentence|>' if message['role'] == 'assistant' else '\\n' }}"
    "{% endfor %}{% if add_generation_prompt %}Assistant: {% endif %}"
)
NAMED_TOKENS["ernie4.5-vl-moe"] = ERNIE_NAMED
MORE_TOKENS["ernie4.5-vl-moe"] = ("<|begin_of_sentence|>", "<|end_of_sentence|>")


def _font() -> str:
    """A TrueType font on this machine for ERNIE's frame timestamps (its own, Roboto, is a Hub file): matplotlib's
    DejaVu Sans (the `plots` extra), else the system's; the built folder carries a copy (its processor saves it)."""
    places = []
    try:
        import matplotlib

        places.append(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf")
    except ImportError:
        pass
    places.append(Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"))
    for p in places:
        if p.is_file():
            return str(p)
    raise RuntimeError("the tiny ERNIE 4.5 VL model draws frame timestamps with a TrueType font: install matplotlib "
                       "(pip install 'video-hardneg[plots]') or the DejaVu fonts")


def _ernie4_5_vl_moe(tok, vocab: int):
    """ERNIE 4.5 VL (MoE): a native-resolution vision tower (2x2 spatial and 2-frame temporal merge), separate text
    and vision experts per layer (the processor's `moe_mm_token_type_ids` route each token), 3-D rotary positions;
    its video processor draws each frame's timestamp onto the frame. Its folder carries the published chat template
    (`hardneg.models.vlm.published`; `ERNIE_TEMPLATE` is the builder's fallback). Departure: DejaVu Sans for the
    drawn timestamps (Roboto, its font, is a Hub file)."""
    from transformers import (Ernie4_5_VLMoeConfig, Ernie4_5_VLMoeForConditionalGeneration,
                              Ernie4_5_VLMoeImageProcessor, Ernie4_5_VLMoeProcessor, Ernie4_5_VLMoeVideoProcessor)

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS + list(ERNIE_NAMED.values())}
    config = Ernie4_5_VLMoeConfig(
        text_config={"vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                     "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 4096,
                     "moe_intermediate_size": [32, 16], "moe_k": 2, "moe_num_experts": 4, "moe_num_shared_experts": 1,
                     "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [1, 1, 2]},
                     "pad_token_id": ids["<|endoftext|>"], "bos_token_id": ids["<|im_start|>"],
                     "eos_token_id": ids["<|im_end|>"], "tie_word_embeddings": False, "initializer_range": INIT_RANGE},
        vision_config={"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "patch_size": 4,
                       "spatial_merge_size": 2, "temporal_merge_size": 2, "initializer_range": INIT_RANGE},
        image_token_id=ids[ERNIE_NAMED["image_token"]], image_start_token_id=ids[ERNIE_NAMED["image_start_token"]],
        image_end_token_id=ids[ERNIE_NAMED["image_end_token"]], video_token_id=ids[ERNIE_NAMED["video_token"]],
        video_start_token_id=ids[ERNIE_NAMED["video_start_token"]],
        video_end_token_id=ids[ERNIE_NAMED["video_end_token"]], tie_word_embeddings=False,
    )
    pixels = {"size": {"shortest_edge": 16 * 16, "longest_edge": 32 * 32}, "patch_size": 4, "merge_size": 2,
              "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}
    processor = Ernie4_5_VLMoeProcessor(
        image_processor=Ernie4_5_VLMoeImageProcessor(**pixels),
        video_processor=Ernie4_5_VLMoeVideoProcessor(**pixels, temporal_patch_size=2, do_sample_frames=False,
                                                     font=_font()),
        tokenizer=tok, chat_template=ERNIE_TEMPLATE)
    return Ernie4_5_VLMoeForConditionalGeneration(config), ERNIE_TEMPLATE, processor


MORE_TOKENS["dots3-note"] = ("<|imgpad|>", "<|audio_comp_pad|>")


def _dots3_note(tok, vocab: int):
    """dots3 note: a native-resolution vision tower with mixture-of-experts blocks (a pyramid of routed experts, here
    a dense block then a 4-expert one) and a merging adapter, Qwen2-VL's image and Qwen3-VL's video processor, a
    language model of indexed (sparse-indexer) and sliding-window latent attention with routed and shared experts,
    1-D positions, and an audio encoder (a tiny one of its class: unused for video). Departures: ChatML with its video
    token as the chat template (its published one is not available offline here); the indexer keeps more keys
    (`index_topk` 4096) than the tests' sequences hold, as the real 2048 does for short ones, so its sparse selection
    is not exercised: with `index_topk` 8 the cached path and one forward differed by 0.021 in a score (not
    investigated further here)."""
    from transformers import (Dots3NoteConfig, Dots3NoteFeatureExtractor, Dots3NoteForConditionalGeneration,
                              Dots3NoteProcessor, Qwen2VLImageProcessor, Qwen3VLVideoProcessor)

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS + ["<|imgpad|>", "<|audio_comp_pad|>"]}
    latent = {"kv_lora_rank": 16, "q_lora_rank": 16, "head_dim": 12, "qk_nope_head_dim": 8, "v_head_dim": 8}
    config = Dots3NoteConfig(
        text_config={"vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64, "moe_intermediate_size": 16,
                     "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 4, "n_shared_experts": 1,
                     "n_routed_experts": 4, "num_experts_per_tok": 2, "qk_rope_head_dim": 4, **latent,
                     "index_topk": 4096, "index_head_dim": 8, "index_n_heads": 2, "shared_experts_intermediate_size": 16,
                     "max_position_embeddings": 4096, "sliding_window": 8,
                     **{"swa_" + k: v for k, v in latent.items()}, "swa_num_attention_heads": 4,
                     "swa_num_key_value_heads": 4, "pad_token_id": ids["<|endoftext|>"],
                     "bos_token_id": ids["<|im_start|>"], "eos_token_id": ids["<|im_end|>"],
                     "initializer_range": INIT_RANGE},
        vision_config={"hidden_size": 32, "intermediate_size": 64, "moe_intermediate_size": 16, "num_hidden_layers": 2,
                       "num_attention_heads": 2, "patch_size": 4, "spatial_merge_size": 2, "adapter_in_dim": 32,
                       "adapter_out_dim": 32, "adapter_merge_size": 2, "pyramid_num_routed": [-1, 4],
                       "num_experts_per_tok": 2, "initializer_range": INIT_RANGE},
        audio_config={"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2,
                      "adapter_input_size": 16, "adapter_out_dim": 32, "downsample_hidden_size": 8, "feature_size": 16},
        image_token_id=ids["<|imgpad|>"], video_token_id=ids["<|video_pad|>"],
        audio_token_id=ids["<|audio_comp_pad|>"], tie_word_embeddings=False,
    )
    template = LLAVA_TEMPLATE.replace("<video>", "<|video_pad|>")
    pixels = {"size": {"shortest_edge": 16 * 16, "longest_edge": 32 * 32}, "patch_size": 4, "temporal_patch_size": 1,
              "merge_size": 2, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}
    processor = Dots3NoteProcessor(image_processor=Qwen2VLImageProcessor(**pixels),
                                   video_processor=Qwen3VLVideoProcessor(**pixels, do_sample_frames=False),
                                   feature_extractor=Dots3NoteFeatureExtractor(), tokenizer=tok,
                                   chat_template=template)
    return Dots3NoteForConditionalGeneration(config), template, processor


#: MiniMax-M3's vision tokens (its processor's IMAGE_TOKEN, VIDEO_TOKEN, VISION_START_TOKEN, VISION_END_TOKEN)
MINIMAX_SPECIALS = ("]<]image[>[", "]<]video[>[", "]<]start of image[>[", "]<]end of image[>[")
MORE_TOKENS["minimax-m3-vl"] = MINIMAX_SPECIALS


def _minimax_m3_vl(tok, vocab: int):
    """MiniMax-M3 VL: a Qwen-style vision tower (2-frame temporal patches, 2x2 merge) whose video is cut into
    segments of at most 4 frames, each frame "]<]{t} seconds[>[" + its tokens between the start and end of image
    tokens (its processor writes them), a language model of full and block-sparse attention (a lightning indexer)
    with routed and shared experts and clamped SwiGLU. Departures: ChatML with its video token as the chat template
    (its published one is not available offline here); the indexer keeps more blocks (`index_topk_blocks` 64 of 4
    tokens) than the tests' sequences hold, so its sparse selection is not exercised."""
    from transformers import (MiniMaxM3SparseForConditionalGeneration, MiniMaxM3VLConfig, MiniMaxM3VLImageProcessor,
                              MiniMaxM3VLProcessor, MiniMaxM3VLVideoProcessor)

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS + list(MINIMAX_SPECIALS)}
    config = MiniMaxM3VLConfig(
        text_config={"vocab_size": vocab, "hidden_size": 32, "intermediate_size": 32, "num_hidden_layers": 2,
                     "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8, "rotary_dim": 4,
                     "num_experts_per_tok": 2, "num_local_experts": 4, "dense_intermediate_size": 64,
                     "shared_intermediate_size": 32, "index_n_heads": 2, "index_head_dim": 8, "index_block_size": 4,
                     "index_topk_blocks": 64, "index_local_blocks": 1,
                     "layer_types": ["full_attention", "minimax_m3_sparse"], "mlp_layer_types": ["dense", "sparse"],
                     "max_position_embeddings": 4096, "pad_token_id": ids["<|endoftext|>"],
                     "bos_token_id": ids["<|im_start|>"], "eos_token_id": ids["<|im_end|>"],
                     "tie_word_embeddings": False, "initializer_range": INIT_RANGE},
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                       "image_size": 64, "patch_size": 4, "temporal_patch_size": 2, "spatial_merge_size": 2,
                       "initializer_range": INIT_RANGE},
        image_token_index=ids["]<]image[>["], video_token_index=ids["]<]video[>["], projector_hidden_size=32,
        tie_word_embeddings=False,
    )
    template = LLAVA_TEMPLATE.replace("<video>", "]<]video[>[")
    pixels = {"patch_size": 4, "temporal_patch_size": 2, "merge_size": 2, "image_mean": [0.5, 0.5, 0.5],
              "image_std": [0.5, 0.5, 0.5]}
    processor = MiniMaxM3VLProcessor(
        image_processor=MiniMaxM3VLImageProcessor(**pixels, size={"shortest_edge": 16 * 16, "longest_edge": 32 * 32}),
        video_processor=MiniMaxM3VLVideoProcessor(**pixels, min_pixels=16 * 16, max_pixels=32 * 32,
                                                  do_sample_frames=False),
        tokenizer=tok, chat_template=template)
    return MiniMaxM3SparseForConditionalGeneration(config), template, processor


#: Nemotron H Omni's tokenizer names (its processor reads image_token, video_token, image_start_token and
#: image_end_token from the tokenizer) and its audio markers
NEMOTRON_NAMED = {"image_token": "<image>", "video_token": "<video>", "image_start_token": "<img>",
                  "image_end_token": "</img>"}
NAMED_TOKENS["nemotron-h-omni"] = NEMOTRON_NAMED
MORE_TOKENS["nemotron-h-omni"] = ("<img>", "</img>", "<so_embedding>", "<so_start>", "<so_end>")


def _nemotron_h_omni(tok, vocab: int):
    """Nemotron H Omni (Reasoning V3): a RADIO vision tower (CLS and register tokens, a summary of two CLS) with
    2-frame tubelets and a 2x2 pixel shuffle, each tubelet "Frame i sampled at t seconds and frame j ...: " +
    `<img>` + its image tokens + `</img>` (its processor writes them, the video as image tokens), a NemotronH
    language model of Mamba-2, attention and mixture-of-experts layers (the cache holds conv and SSM states),
    1-D positions; no audio encoder (its config's audio branch is optional). Departures: ChatML with `<video>` as
    the chat template (its published one is not available offline here)."""
    from transformers import (NemotronH_Omni_Reasoning_V3, NemotronH_Omni_Reasoning_V3_Config,
                              NemotronH_Omni_Reasoning_V3ImageProcessor, NemotronH_Omni_Reasoning_V3Processor,
                              NemotronH_Omni_Reasoning_V3VideoProcessor, ParakeetFeatureExtractor)

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS + ["<img>", "</img>"]}
    config = NemotronH_Omni_Reasoning_V3_Config(
        vision_config={"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "mlp_ratio": 2.0,
                       "patch_size": 4, "image_size": 16, "max_img_size": 64, "num_cls_tokens": 3, "num_registers": 1,
                       "summary_idxs": [0, 1], "video_temporal_patch_size": 2, "initializer_range": INIT_RANGE},
        text_config={"vocab_size": vocab, "hidden_size": 32, "layers_block_type": ["mamba", "attention", "moe"],
                     "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8, "intermediate_size": 64,
                     "ssm_state_size": 8, "mamba_num_heads": 4, "mamba_head_dim": 8, "n_groups": 2, "chunk_size": 16,
                     "n_routed_experts": 4, "moe_intermediate_size": 16, "moe_shared_expert_intermediate_size": 16,
                     "num_experts_per_tok": 2, "max_position_embeddings": 4096, "pad_token_id": ids["<|endoftext|>"],
                     "bos_token_id": ids["<|im_start|>"], "eos_token_id": ids["<|im_end|>"],
                     "tie_word_embeddings": False, "initializer_range": INIT_RANGE},
        projector_hidden_size=32, vision_hidden_size=32, video_temporal_patch_size=2, image_token_id=ids["<image>"],
        video_token_id=ids["<video>"], tie_word_embeddings=False,
    )
    norm = {"norm_mean": [0.5, 0.5, 0.5], "norm_std": [0.5, 0.5, 0.5]}
    processor = NemotronH_Omni_Reasoning_V3Processor(
        image_processor=NemotronH_Omni_Reasoning_V3ImageProcessor(patch_size=4),
        video_processor=NemotronH_Omni_Reasoning_V3VideoProcessor(patch_size=4, video_target_num_patches=64,
                                                                  do_sample_frames=False, **norm),
        feature_extractor=ParakeetFeatureExtractor(), tokenizer=tok, chat_template=LLAVA_TEMPLATE)
    return NemotronH_Omni_Reasoning_V3(config), LLAVA_TEMPLATE, processor


MORE_TOKENS["glm5-next"] = GLM_SPECIALS


def _glm5_next(tok, vocab: int):
    """GLM-5 Next: GLM-4.1V's frame layout (its processor writes each frame's image block and seconds), a vision tower
    with clamped SwiGLU, a language model of linear-attention (KDA) layers and indexed latent attention without
    rotary dims (a shared or full indexer), hyper-connections and experts. Departures: GLM-4.1V's chat template
    layout (`GLM_TEMPLATE`) as a stand-in; the indexer keeps more keys (`index_topk` 4096) than the tests' sequences
    hold."""
    from transformers import (Glm5NextConfig, Glm5NextForConditionalGeneration, Glm5NextImageProcessor,
                              Glm5NextProcessor, Glm5NextVideoProcessor)

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS + list(GLM_SPECIALS)}
    config = Glm5NextConfig(
        text_config={"vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64, "moe_intermediate_size": 16,
                     "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 4,
                     "n_shared_experts": 1, "n_routed_experts": 4, "num_experts_per_tok": 2, "kv_lora_rank": 16,
                     "q_lora_rank": 16, "qk_rope_head_dim": 0, "v_head_dim": 8, "qk_nope_head_dim": 8,
                     "index_topk": 4096, "index_head_dim": 8, "index_n_heads": 2, "index_kpool": 16,
                     "linear_head_dim": 8, "linear_num_heads": 4, "hc_mult": 2, "hc_sinkhorn_iters": 3,
                     "max_position_embeddings": 4096, "eos_token_id": ids["<|user|>"],
                     "pad_token_id": ids["<|endoftext|>"], "tie_word_embeddings": False,
                     "initializer_range": INIT_RANGE},
        vision_config={"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "out_hidden_size": 32,
                       "patch_size": 4, "temporal_patch_size": 2, "spatial_merge_size": 2, "in_channels": 3,
                       "image_size": 16, "projection_intermediate_size": 64, "initializer_range": INIT_RANGE},
        image_token_id=ids["<|image|>"], video_token_id=ids["<|video|>"],
        image_start_token_id=ids["<|begin_of_image|>"], image_end_token_id=ids["<|end_of_image|>"],
        video_start_token_id=ids["<|begin_of_video|>"], video_end_token_id=ids["<|end_of_video|>"],
        tie_word_embeddings=False,
    )
    pixels = _pixels()
    processor = Glm5NextProcessor(image_processor=Glm5NextImageProcessor(**pixels),
                                  video_processor=Glm5NextVideoProcessor(**pixels, do_sample_frames=False),
                                  tokenizer=tok, chat_template=GLM_TEMPLATE)
    return Glm5NextForConditionalGeneration(config), GLM_TEMPLATE, processor


def _cosmos3_edge(tok, vocab: int):
    """Cosmos3 Edge: a SigLIP-style vision tower (one-frame patches, 2x2 merge), each frame "<t seconds>" +
    `<|vision_start|>` + its tokens + `<|vision_end|>` (its processor writes them), a language model with squared-ReLU
    MLPs and 3-D rotary positions that it computes from `mm_token_type_ids` (its processor returns them when asked,
    `return_mm_token_type_ids`). Departure: ChatML with Qwen's video token as the chat template (its published one is
    not available offline here)."""
    from transformers import (Cosmos3EdgeConfig, Cosmos3EdgeForConditionalGeneration, Cosmos3EdgeImageProcessor,
                              Cosmos3EdgeProcessor, Cosmos3EdgeVideoProcessor)

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    config = Cosmos3EdgeConfig(
        text_config={"vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                     "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
                     "max_position_embeddings": 4096,
                     "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 1, 1]},
                     "pad_token_id": ids["<|endoftext|>"], "bos_token_id": ids["<|im_start|>"],
                     "eos_token_id": ids["<|im_end|>"], "tie_word_embeddings": False, "initializer_range": INIT_RANGE},
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                       "patch_size": 4, "num_patches": 64, "spatial_merge_size": 2},
        projector_hidden_size=32, image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        tie_word_embeddings=False,
    )
    template = LLAVA_TEMPLATE.replace("<video>", "<|video_pad|>")
    pixels = {"size": {"shortest_edge": 16 * 16, "longest_edge": 32 * 32}, "patch_size": 4, "merge_size": 2,
              "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}
    processor = Cosmos3EdgeProcessor(image_processor=Cosmos3EdgeImageProcessor(**pixels),
                                     video_processor=Cosmos3EdgeVideoProcessor(**pixels, do_sample_frames=False,
                                                                               return_metadata=True),
                                     tokenizer=tok, chat_template=template)
    return Cosmos3EdgeForConditionalGeneration(config), template, processor


#: tiny models of types served by the generic family: the builder returns the model, the chat template and the
#: model's own processor object (saved with `save_pretrained`, so the folder's processor files are its own)
_GENERIC_BUILDERS = {"qwen3-vl": _qwen3_vl, "internvl": _internvl, "qwen3.5": _qwen3_5, "glm4v": _glm4v,
                     "glm46v": lambda tok, vocab: _glm4v(tok, vocab, v46=True), "video-llama-3": _video_llama_3,
                     "smolvlm": _smolvlm, "gemma4": _gemma4, "minicpm-v-4.6": _minicpmv4_6,
                     "molmo2": _molmo2, "perception-lm": _perception_lm,
                     "qwen3-vl-moe": lambda tok, vocab: _qwen3_vl(tok, vocab, moe=True),
                     "qwen3.5-moe": lambda tok, vocab: _qwen3_5(tok, vocab, moe=True),
                     "minicpm-v-4.7": lambda tok, vocab: _minicpmv4_6(tok, vocab, v47=True),
                     "minicpm-ocr": lambda tok, vocab: _minicpmv4_6(tok, vocab, ocr=True),
                     "gemma4-unified": _gemma4_unified, "lfm3-vl": _lfm3_vl, "kimi-k2.5": _kimi_k25,
                     "cohere-compass": _cohere_compass, "hy-v4-vl": _hy_v4_vl, "muse-glimmer": _muse_glimmer,
                     "muse-spark": lambda tok, vocab: _muse_glimmer(tok, vocab, spark=True), "qwen4-exp": _qwen4_exp,
                     "ernie4.5-vl-moe": _ernie4_5_vl_moe, "dots3-note": _dots3_note,
                     "minimax-m3-vl": _minimax_m3_vl, "nemotron-h-omni": _nemotron_h_omni,
                     "glm5-next": _glm5_next, "cosmos3-edge": _cosmos3_edge,
                     "hyperclovax-vision-v2": lambda tok, vocab: _qwen25_vision_family(tok, vocab, "hyperclovax"),
                     "exaone4.5": lambda tok, vocab: _qwen25_vision_family(tok, vocab, "exaone4_5")}


#: each tiny model's Hub processor classes (the names `transformers`' auto classes resolve: processor, image
#: processor, video processor) and the processor's own arguments (how many tokens a video's placeholder becomes)
HUB = {
    "qwen2-vl": ("Qwen2VLProcessor", "Qwen2VLImageProcessor", "Qwen2VLVideoProcessor", {}),
    "qwen2.5-vl": ("Qwen2_5_VLProcessor", "Qwen2VLImageProcessor", "Qwen2VLVideoProcessor", {}),
    "llava-onevision": ("LlavaOnevisionProcessor", "LlavaOnevisionImageProcessor", "LlavaOnevisionVideoProcessor",
                        {"num_image_tokens": 16, "vision_feature_select_strategy": "full",
                         "vision_aspect_ratio": "anyres_max_9"}),
    "video-llava": ("VideoLlavaProcessor", "VideoLlavaImageProcessor", "VideoLlavaVideoProcessor",
                    {"patch_size": 4, "vision_feature_select_strategy": "default", "num_additional_image_tokens": 1}),
    "llava-next-video": ("LlavaNextVideoProcessor", "LlavaNextImageProcessor", "LlavaNextVideoVideoProcessor",
                         {"patch_size": 4, "vision_feature_select_strategy": "default",
                          "num_additional_image_tokens": 1}),
}


def _hub_pixel_config(architecture: str, pre: dict, model) -> dict:
    """The pixel settings in the keys the family's image and video processors read: Qwen's patch, merge and
    temporal patch sizes and its pixel bounds as `size`; LLaVA-OneVision's square frames."""
    out = {**pre, "do_resize": True, "do_rescale": True, "rescale_factor": 1 / 255, "do_normalize": True,
           "do_convert_rgb": True}
    vc = model.config.vision_config
    if architecture.startswith("qwen"):
        out.update(patch_size=vc.patch_size, temporal_patch_size=vc.temporal_patch_size,
                   merge_size=vc.spatial_merge_size,
                   size={"shortest_edge": pre["min_pixels"], "longest_edge": pre["max_pixels"]})
    elif architecture == "llava-onevision":
        out.update(size={"height": vc.image_size, "width": vc.image_size}, do_center_crop=False,
                   image_grid_pinpoints=[[vc.image_size, vc.image_size]], do_pad=True)
    elif architecture == "llava-next-video":
        out.update(image_grid_pinpoints=[[vc.image_size, vc.image_size]], crop_size={"height": vc.image_size,
                                                                                   "width": vc.image_size})
    else:
        out.update(do_center_crop=True)
    return out


def _write_hub_files(out: Path, architecture: str, pre: dict, model, template: str) -> None:
    """processor_config.json, preprocessor_config.json (image) and video_preprocessor_config.json, as a Hub
    checkpoint of the family holds them (written as JSON: `transformers` cannot build a video processor object
    without torchvision)."""
    import json

    processor, image_cls, video_cls, extra = HUB[architecture]
    pixels = _hub_pixel_config(architecture, pre, model)
    files = {"processor_config.json": {"processor_class": processor, **extra},
             "preprocessor_config.json": {"image_processor_type": image_cls, "processor_class": processor, **pixels},
             "video_preprocessor_config.json": {"video_processor_type": video_cls, "processor_class": processor,
                                                **pixels}}
    for name, body in files.items():
        (out / name).write_text(json.dumps(body, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    cfg = json.loads((out / "tokenizer_config.json").read_text(encoding="utf-8"))
    cfg["processor_class"] = processor
    (out / "tokenizer_config.json").write_text(json.dumps(cfg, indent=2) + "\n", encoding="utf-8")


#: each tiny model's tokenizer kind, as its real family's: Qwen2 (byte-level BPE) or Llama/Vicuna (SentencePiece)
TOKENIZERS = {"qwen2-vl": "byte-bpe", "qwen2.5-vl": "byte-bpe", "llava-onevision": "byte-bpe",
              "video-llava": "sentencepiece", "llava-next-video": "sentencepiece", "qwen3-vl": "byte-bpe",
              "internvl": "byte-bpe", "qwen3.5": "byte-bpe", "glm4v": "byte-bpe",
              "glm46v": "byte-bpe", "video-llama-3": "byte-bpe", "smolvlm": "byte-bpe", "gemma4": "byte-bpe",
              "minicpm-v-4.6": "byte-bpe", "molmo2": "byte-bpe",
              "perception-lm": "byte-bpe", "qwen3-vl-moe": "byte-bpe", "qwen3.5-moe": "byte-bpe",
              "minicpm-v-4.7": "byte-bpe", "hyperclovax-vision-v2": "byte-bpe", "exaone4.5": "byte-bpe",
              "minicpm-ocr": "byte-bpe", "gemma4-unified": "byte-bpe",
              "lfm3-vl": "byte-bpe", "kimi-k2.5": "byte-bpe",
              "cohere-compass": "byte-bpe", "hy-v4-vl": "byte-bpe",
              "muse-glimmer": "byte-bpe", "muse-spark": "byte-bpe", "qwen4-exp": "byte-bpe",
              "ernie4.5-vl-moe": "byte-bpe", "dots3-note": "byte-bpe",
              "minimax-m3-vl": "byte-bpe", "nemotron-h-omni": "byte-bpe",
              "glm5-next": "byte-bpe", "cosmos3-edge": "byte-bpe"}
_BUILDERS = {"qwen2-vl": _qwen2_vl, "llava-onevision": _llava_onevision, "qwen2.5-vl": _qwen2_5_vl,
             "video-llava": _video_llava, "llava-next-video": _llava_next_video}


def build_tiny_vlm(out: str | os.PathLike, architecture: str = "qwen2-vl") -> Path:
    """Write a tiny random-weight video LLM of `architecture` as a complete Hub folder (config, weights,
    tokenizer, chat template, processor / image / video processor configs)."""
    import torch

    if architecture not in ARCHITECTURES:
        raise ValueError(f"tiny-vlm architecture {architecture!r}: use one of {', '.join(ARCHITECTURES)}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tok = build_tokenizer(TOKENIZERS[architecture], NAMED_TOKENS.get(architecture), MORE_TOKENS.get(architecture, ()))
    torch.manual_seed(SEED)
    published = published_template(MODEL_TYPES[architecture])
    if architecture in _GENERIC_BUILDERS:
        model, template, processor = _GENERIC_BUILDERS[architecture](tok, len(tok))
        template = published or template
        tok.chat_template = processor.chat_template = template
        processor.save_pretrained(out)
        model.eval().save_pretrained(out)
        _write_template(out, architecture, template)
        return out
    make = _BUILDERS[architecture]
    model, template, pre = make(tok, len(tok))
    template = published or template
    model = model.eval()
    tok.chat_template = template
    tok.save_pretrained(out)
    model.save_pretrained(out)
    _write_template(out, architecture, template)
    _write_hub_files(out, architecture, pre, model, template)
    return out


def _write_template(out: Path, architecture: str, template: str) -> None:
    """`chat_template.jinja`, and `template_source.json` (where the published text was read) for a type that
    carries its published template."""
    import json

    (out / "chat_template.jinja").write_text(template, encoding="utf-8")
    source = template_source(MODEL_TYPES[architecture])
    if source is not None:
        (out / "template_source.json").write_text(json.dumps(source, indent=2) + "\n", encoding="utf-8")


def tiny_vlm_path(architecture: str = "qwen2-vl") -> Path:
    """The tiny video LLM of `architecture`, built into the user cache on first use."""
    from hardneg.resources import cache_dir, cached_folder

    return cached_folder(cache_dir() / f"tiny_vlm_v{VERSION}" / architecture,
                         lambda tmp: build_tiny_vlm(tmp, architecture))


if __name__ == "__main__":
    print(build_tiny_vlm(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "qwen2-vl"))
