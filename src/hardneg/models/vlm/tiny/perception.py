"""The tiny PerceptionLM: a Perception Encoder tower (timm) and a Llama 3 language model."""

from __future__ import annotations

from hardneg.models.vlm.tiny.builders import llama_text_config
from hardneg.models.vlm.tiny.record import PublishedTemplate, TinyType
from hardneg.models.vlm.tiny.tokenizer import SPECIALS


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


#: the frame processors' settings of the types `_perception_lm` builds (their records' `pixels`)
PERCEPTION_LM_PIXELS = {"size": {"height": 16, "width": 16}, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}


def _perception_lm(tok, vocab: int, pixels: dict):
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
        text_config=llama_text_config(vocab, ids["<|eot_id|>"], ids["<|endoftext|>"], max_positions=4096),
        projector_pooling_ratio=2, vision_use_cls_token=True, image_token_id=ids["<|image|>"],
        video_token_id=ids["<|video|>"], tie_word_embeddings=False,
    )
    # 16x16 frames, 4-pixel patches, pooled 2x2: 4 tokens a frame
    processor = PerceptionLMProcessor(
        video_processor=PerceptionLMVideoProcessor(**pixels, do_sample_frames=False),
        image_processor=PerceptionLMImageProcessor(**pixels, tile_size=16, max_num_tiles=1, vision_input_type="vanilla"),
        tokenizer=tok, patch_size=4, pooling_ratio=2, chat_template=PLM_TEMPLATE)
    return PerceptionLMForConditionalGeneration(config), PLM_TEMPLATE, processor


RECORDS = (
    TinyType("perception-lm", "perception_lm", _perception_lm, PERCEPTION_LM_PIXELS, PublishedTemplate(
        "perception_lm.jinja", "https://github.com/huggingface/transformers/blob/0db25542f2190e3dd1e402c477fa713ed516d655/"
        "src/transformers/models/perception_lm/convert_perception_lm_weights_to_hf.py",
        "0db25542f2190e3dd1e402c477fa713ed516d655", "b42c65bfe62cf33550bb4c22f90c9118229925c42052f0dfc64b6d99b52952da",
        "`CHAT_TEMPLATE` of transformers' PerceptionLM conversion script, the template it writes into the "
        "facebook/Perception-LM checkpoints it converts"),
        tokens=PLM_SPECIALS, named_tokens={"image_token": "<|image|>", "video_token": "<|video|>"},
        hub_ids=("{name}",)),
)
