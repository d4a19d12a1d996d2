"""The tiny LFM3-VL: Qwen3-VL's video processor over LFM3's short convolutions and attention."""

from __future__ import annotations

from hardneg.models.vlm.tiny.builders import INIT_RANGE, QWEN_HALF_PIXELS, QWEN_TEMPLATE
from hardneg.models.vlm.tiny.record import CHATML, StandIn, TinyType
from hardneg.models.vlm.tiny.tokenizer import SPECIALS


def _lfm3_vl(tok, vocab: int, pixels: dict):
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
    processor = Lfm3VlProcessor(image_processor=Qwen2VLImageProcessor(**pixels),
                                video_processor=Qwen3VLVideoProcessor(**pixels, do_sample_frames=False), tokenizer=tok,
                                chat_template=QWEN_TEMPLATE)
    return Lfm3VlForConditionalGeneration(config), QWEN_TEMPLATE, processor


RECORDS = (
    TinyType("lfm3-vl", "lfm3_vl", _lfm3_vl, QWEN_HALF_PIXELS, StandIn(CHATML)),
)
