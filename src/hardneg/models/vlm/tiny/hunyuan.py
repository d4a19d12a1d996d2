"""The tiny Hunyuan V4-VL: a native-resolution tower over a DeepSeek-style language model."""

from __future__ import annotations

from hardneg.models.vlm.tiny.builders import INIT_RANGE, QWEN_TEMPLATE
from hardneg.models.vlm.tiny.record import CHATML, StandIn, TinyType
from hardneg.models.vlm.tiny.tokenizer import SPECIALS


#: the frame processors' settings of the types `_hy_v4_vl` builds (their records' `pixels`)
HY_V4_VL_PIXELS = {"patch_size": 4, "merge_size": 2, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}


def _hy_v4_vl(tok, vocab: int, pixels: dict):
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
    processor = HYV4VLProcessor(image_processor=HYV4VLImageProcessor(**pixels),
                                video_processor=HYV4VLVideoProcessor(**pixels, do_sample_frames=False), tokenizer=tok,
                                chat_template=QWEN_TEMPLATE)
    return HYV4VLForConditionalGeneration(config), QWEN_TEMPLATE, processor


RECORDS = (
    TinyType("hy-v4-vl", "hy_v4_vl", _hy_v4_vl, HY_V4_VL_PIXELS, StandIn(CHATML)),
)
