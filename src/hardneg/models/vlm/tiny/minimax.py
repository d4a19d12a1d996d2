"""The tiny MiniMax-M3 VL: a Qwen-style tower over full and block-sparse attention with experts."""

from __future__ import annotations

from hardneg.models.vlm.tiny.builders import INIT_RANGE, LLAVA_TEMPLATE
from hardneg.models.vlm.tiny.record import CHATML, StandIn, TinyType
from hardneg.models.vlm.tiny.tokenizer import SPECIALS


#: MiniMax-M3's vision tokens (its processor's IMAGE_TOKEN, VIDEO_TOKEN, VISION_START_TOKEN, VISION_END_TOKEN)

MINIMAX_SPECIALS = ("]<]image[>[", "]<]video[>[", "]<]start of image[>[", "]<]end of image[>[")


#: the frame processors' settings of the types `_minimax_m3_vl` builds (their records' `pixels`)
MINIMAX_M3_VL_PIXELS = {"patch_size": 4, "temporal_patch_size": 2, "merge_size": 2, "image_mean": [0.5, 0.5, 0.5],
                        "image_std": [0.5, 0.5, 0.5]}


def _minimax_m3_vl(tok, vocab: int, pixels: dict):
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
    processor = MiniMaxM3VLProcessor(
        image_processor=MiniMaxM3VLImageProcessor(**pixels, size={"shortest_edge": 16 * 16, "longest_edge": 32 * 32}),
        video_processor=MiniMaxM3VLVideoProcessor(**pixels, min_pixels=16 * 16, max_pixels=32 * 32,
                                                  do_sample_frames=False),
        tokenizer=tok, chat_template=template)
    return MiniMaxM3SparseForConditionalGeneration(config), template, processor


RECORDS = (
    TinyType("minimax-m3-vl", "minimax_m3_vl", _minimax_m3_vl, MINIMAX_M3_VL_PIXELS, StandIn(CHATML), tokens=MINIMAX_SPECIALS),
)
