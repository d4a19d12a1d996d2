"""The tiny Nemotron H Omni (Reasoning V3): a RADIO tower over Mamba-2, attention and experts."""

from __future__ import annotations

from hardneg.models.vlm.tiny.builders import INIT_RANGE, LLAVA_TEMPLATE
from hardneg.models.vlm.tiny.record import CHATML, StandIn, TinyType
from hardneg.models.vlm.tiny.tokenizer import SPECIALS


#: Nemotron H Omni's tokenizer names (its processor reads image_token, video_token, image_start_token and
#: image_end_token from the tokenizer) and its audio markers
NEMOTRON_NAMED = {"image_token": "<image>", "video_token": "<video>", "image_start_token": "<img>",
                  "image_end_token": "</img>"}


#: the frame processors' settings of the types `_nemotron_h_omni` builds (their records' `pixels`)
NEMOTRON_H_OMNI_PIXELS = {"norm_mean": [0.5, 0.5, 0.5], "norm_std": [0.5, 0.5, 0.5]}


def _nemotron_h_omni(tok, vocab: int, norm: dict):
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
    processor = NemotronH_Omni_Reasoning_V3Processor(
        image_processor=NemotronH_Omni_Reasoning_V3ImageProcessor(patch_size=4),
        video_processor=NemotronH_Omni_Reasoning_V3VideoProcessor(patch_size=4, video_target_num_patches=64,
                                                                  do_sample_frames=False, **norm),
        feature_extractor=ParakeetFeatureExtractor(), tokenizer=tok, chat_template=LLAVA_TEMPLATE)
    return NemotronH_Omni_Reasoning_V3(config), LLAVA_TEMPLATE, processor


RECORDS = (
    TinyType("nemotron-h-omni", "nemotron_h_omni", _nemotron_h_omni, NEMOTRON_H_OMNI_PIXELS, StandIn(CHATML),
             tokens=("<img>", "</img>", "<so_embedding>", "<so_start>", "<so_end>"), named_tokens=NEMOTRON_NAMED),
)
