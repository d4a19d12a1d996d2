"""The tiny Cosmos3 Edge: a SigLIP-style tower, squared-ReLU MLPs and 3-D rotary positions."""

from __future__ import annotations

from hardneg.models.vlm.tiny.builders import INIT_RANGE, LLAVA_TEMPLATE
from hardneg.models.vlm.tiny.record import CHATML, StandIn, TinyType
from hardneg.models.vlm.tiny.tokenizer import SPECIALS


#: the frame processors' settings of the types `_cosmos3_edge` builds (their records' `pixels`)
COSMOS3_EDGE_PIXELS = {"size": {"shortest_edge": 16 * 16, "longest_edge": 32 * 32}, "patch_size": 4, "merge_size": 2,
                       "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}


def _cosmos3_edge(tok, vocab: int, pixels: dict):
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
    processor = Cosmos3EdgeProcessor(image_processor=Cosmos3EdgeImageProcessor(**pixels),
                                     video_processor=Cosmos3EdgeVideoProcessor(**pixels, do_sample_frames=False,
                                                                               return_metadata=True),
                                     tokenizer=tok, chat_template=template)
    return Cosmos3EdgeForConditionalGeneration(config), template, processor


#: tiny models of types served by the generic family: the builder returns the model, the chat template and the


RECORDS = (
    TinyType("cosmos3-edge", "cosmos3_edge", _cosmos3_edge, COSMOS3_EDGE_PIXELS, StandIn(CHATML)),
)
