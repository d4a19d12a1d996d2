"""The tiny Cohere Compass: Qwen3-VL-style patches over a Cohere language model."""

from __future__ import annotations

from hardneg.models.vlm.tiny.builders import INIT_RANGE, QWEN_HALF_PIXELS
from hardneg.models.vlm.tiny.record import StandIn, TinyType
from hardneg.models.vlm.tiny.tokenizer import SPECIALS


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


def _cohere_compass(tok, vocab: int, pixels: dict):
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
    processor = CohereCompassProcessor(image_processor=CohereCompassImageProcessor(**pixels),
                                       video_processor=CohereCompassVideoProcessor(**pixels, do_sample_frames=False),
                                       tokenizer=tok, chat_template=COHERE_TEMPLATE)
    return CohereCompassForConditionalGeneration(config), COHERE_TEMPLATE, processor


RECORDS = (
    TinyType("cohere-compass", "cohere_compass", _cohere_compass, QWEN_HALF_PIXELS, StandIn(
        "Cohere's turn layout without preamble or response markers",
        also_searched="llama.cpp models/templates (Command R7B, text only)"), tokens=COHERE_SPECIALS),
)
