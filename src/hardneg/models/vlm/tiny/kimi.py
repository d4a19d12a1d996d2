"""The tiny Kimi K2.5: MoonViT-3D over a DeepSeek-V3 language model."""

from __future__ import annotations

from hardneg.models.vlm.tiny.builders import INIT_RANGE
from hardneg.models.vlm.tiny.record import StandIn, TinyType
from hardneg.models.vlm.tiny.tokenizer import SPECIALS


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


#: the frame processors' settings of the types `_kimi_k25` builds (their records' `pixels`)
KIMI_K25_PIXELS = {"size": {"max_height": 32, "max_width": 32}, "patch_size": 4, "merge_size": 2, "max_patches": 64,
                   "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}


def _kimi_k25(tok, vocab: int, pixels: dict):
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
    processor = Kimi_K25Processor(image_processor=Kimi_K25ImageProcessor(**pixels),
                                  video_processor=Kimi_K25VideoProcessor(**pixels, temporal_patch_size=4,
                                                                         do_sample_frames=False),
                                  tokenizer=tok, chat_template=KIMI_TEMPLATE)
    return Kimi_K25ForConditionalGeneration(config), KIMI_TEMPLATE, processor


RECORDS = (
    TinyType("kimi-k2.5", "kimi_k25", _kimi_k25, KIMI_K25_PIXELS, StandIn(
        "Kimi's turn layout without system turn or thinking block (from a third-party port)",
        also_searched="llama.cpp models/templates (Kimi K2 / K2-Thinking / K3, text only)"),
        tokens=KIMI_SPECIALS, named_tokens={"image_token": "<|media_pad|>", "video_token": "<|kimi_k25_video_placeholder|>"}),
)
