"""What the tiny model types share: the weight scale, the ChatML templates, the tiny text and vision towers'
configs and pixel settings. Each type's own config function is in its family's module (`tiny/<family>.py`)."""

from __future__ import annotations


def qwen_style_pixels() -> dict:
    """The frame-processor settings the tiny Qwen-style towers share (patch 4, 2 frames a patch, 2x2 merge, 16x16 to
    32x32 pixels): a fresh dict each call, since processors keep what they are given."""
    return {"size": {"shortest_edge": 16 * 16, "longest_edge": 32 * 32}, "patch_size": 4, "temporal_patch_size": 2,
            "merge_size": 2}


#: the mean and std most tiny towers use
HALF_MEAN_STD = {"image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}
#: the Qwen-style pixel settings with that mean and std (Qwen3-VL, Qwen3.5, Qwen4-Exp, the Qwen2.5-VL-tower types,
#: LFM3-VL, Cohere Compass: the same frame processors' settings)
QWEN_HALF_PIXELS = {**qwen_style_pixels(), **HALF_MEAN_STD}


#: weights larger than the usual 0.02 make attention sharp, so a wrong position or mask changes scores clearly
INIT_RANGE = 0.25

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


#: CLIP's image mean and std (the tiny models' towers are CLIP-style)
CLIP_MEAN_STD = {"image_mean": [0.48145466, 0.4578275, 0.40821073], "image_std": [0.26862954, 0.26130258, 0.27577711]}
#: The tiny Qwen models' pixel settings (CLIP's mean and std; at most 32x32 pixels a frame).
QWEN_PIXELS = {"min_pixels": 16 * 16, "max_pixels": 32 * 32, **CLIP_MEAN_STD}


def llama_text_config(vocab: int, eos: int, pad: int, max_positions: int = 1024) -> dict:
    """The tiny Llama text tower shared by the LLaVA-style families and SmolVLM."""
    return {"model_type": "llama", "vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64,
            "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
            "max_position_embeddings": max_positions, "eos_token_id": eos, "pad_token_id": pad,
            "tie_word_embeddings": False, "initializer_range": INIT_RANGE}


#: the tiny CLIP vision tower of the LLaVA-style families (16x16 frames, 4x4 patches)
CLIP_VISION_CONFIG = {"model_type": "clip_vision_model", "hidden_size": 32, "intermediate_size": 64,
                      "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": 16, "patch_size": 4,
                      "projection_dim": 32}


def qwen_text_config(ids: dict[str, int], vocab: int) -> dict:
    """The text tower of the tiny Qwen2-VL and Qwen2.5-VL (3-D rotary positions, mrope)."""
    return {"vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
            "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 1024,
            "rope_scaling": {"type": "mrope", "mrope_section": [2, 1, 1]}, "rope_theta": 10000.0,
            "bos_token_id": ids["<|im_start|>"], "eos_token_id": ids["<|im_end|>"],
            "pad_token_id": ids["<|endoftext|>"], "tie_word_embeddings": False, "initializer_range": INIT_RANGE}


def qwen_vision_token_ids(ids: dict[str, int]) -> dict[str, int]:
    """The special token ids of the Qwen configs' vision markers."""
    return {"image_token_id": ids["<|image_pad|>"], "video_token_id": ids["<|video_pad|>"],
            "vision_start_token_id": ids["<|vision_start|>"], "vision_end_token_id": ids["<|vision_end|>"]}


#: the text tower's experts of the tiny MoE variants (Qwen3-VL-MoE, Qwen3.5-MoE): 4 experts, 2 routed per token
TINY_MOE = {"num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32, "decoder_sparse_step": 1}
