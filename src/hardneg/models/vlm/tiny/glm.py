"""The tiny GLM vision types: GLM-4.1V, GLM-4.6V and GLM-5 Next (GLM-4.1V's frame layout)."""

from __future__ import annotations

from functools import partial

from hardneg.models.vlm.tiny.builders import INIT_RANGE, qwen_style_pixels
from hardneg.models.vlm.tiny.record import StandIn, TinyType
from hardneg.models.vlm.tiny.tokenizer import SPECIALS


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


#: the frame processors' settings of the types `_glm4v` builds (their records' `pixels`)
GLM4V_PIXELS = qwen_style_pixels()


def _glm4v(tok, vocab: int, pixels: dict, v46: bool = False):
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
    processor = Glm4vProcessor(image_processor=Glm4vImageProcessor(**pixels),
                               video_processor=Glm4vVideoProcessor(**pixels, do_sample_frames=False),
                               tokenizer=tok, chat_template=GLM_TEMPLATE)
    return Glm4vForConditionalGeneration(config), GLM_TEMPLATE, processor


#: the frame processors' settings of the types `_glm5_next` builds (their records' `pixels`)
GLM5_NEXT_PIXELS = qwen_style_pixels()


def _glm5_next(tok, vocab: int, pixels: dict):
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
    processor = Glm5NextProcessor(image_processor=Glm5NextImageProcessor(**pixels),
                                  video_processor=Glm5NextVideoProcessor(**pixels, do_sample_frames=False),
                                  tokenizer=tok, chat_template=GLM_TEMPLATE)
    return Glm5NextForConditionalGeneration(config), GLM_TEMPLATE, processor


#: the stand-in template of the GLM types
_GLM_STAND_IN = StandIn("GLM-4.1V's layout without tools or thinking")

RECORDS = (
    TinyType("glm4v", "glm4v", _glm4v, GLM4V_PIXELS, _GLM_STAND_IN, tokens=GLM_SPECIALS,
        hub_ids=("glm-4.1v", "glm-4.5v")),
    TinyType("glm46v", "glm46v", partial(_glm4v, v46=True), GLM4V_PIXELS, _GLM_STAND_IN, tokens=GLM_SPECIALS,
        hub_ids=("glm-4.6v",)),
    TinyType("glm5-next", "glm5_next", _glm5_next, GLM5_NEXT_PIXELS, _GLM_STAND_IN, tokens=GLM_SPECIALS),
)
