"""The tiny dots3 note: a vision tower with experts, latent attention, an unused audio encoder."""

from __future__ import annotations

from hardneg.models.vlm.tiny.builders import INIT_RANGE, LLAVA_TEMPLATE
from hardneg.models.vlm.tiny.record import CHATML, StandIn, TinyType
from hardneg.models.vlm.tiny.tokenizer import SPECIALS


#: the frame processors' settings of the types `_dots3_note` builds (their records' `pixels`)
DOTS3_NOTE_PIXELS = {"size": {"shortest_edge": 16 * 16, "longest_edge": 32 * 32}, "patch_size": 4, "temporal_patch_size": 1,
                     "merge_size": 2, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}


def _dots3_note(tok, vocab: int, pixels: dict):
    """dots3 note: a native-resolution vision tower with mixture-of-experts blocks (a pyramid of routed experts, here
    a dense block then a 4-expert one) and a merging adapter, Qwen2-VL's image and Qwen3-VL's video processor, a
    language model of indexed (sparse-indexer) and sliding-window latent attention with routed and shared experts,
    1-D positions, and an audio encoder (a tiny one of its class: unused for video). Departures: ChatML with its video
    token as the chat template (its published one is not available offline here); the indexer keeps more keys
    (`index_topk` 4096) than the tests' sequences hold, as the real 2048 does for short ones, so its sparse selection
    is not exercised: with `index_topk` 8 the cached path and one forward differed by 0.021 in a score (not
    investigated further here)."""
    from transformers import (Dots3NoteConfig, Dots3NoteFeatureExtractor, Dots3NoteForConditionalGeneration,
                              Dots3NoteProcessor, Qwen2VLImageProcessor, Qwen3VLVideoProcessor)

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS + ["<|imgpad|>", "<|audio_comp_pad|>"]}
    latent = {"kv_lora_rank": 16, "q_lora_rank": 16, "head_dim": 12, "qk_nope_head_dim": 8, "v_head_dim": 8}
    config = Dots3NoteConfig(
        text_config={"vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64, "moe_intermediate_size": 16,
                     "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 4, "n_shared_experts": 1,
                     "n_routed_experts": 4, "num_experts_per_tok": 2, "qk_rope_head_dim": 4, **latent,
                     "index_topk": 4096, "index_head_dim": 8, "index_n_heads": 2, "shared_experts_intermediate_size": 16,
                     "max_position_embeddings": 4096, "sliding_window": 8,
                     **{"swa_" + k: v for k, v in latent.items()}, "swa_num_attention_heads": 4,
                     "swa_num_key_value_heads": 4, "pad_token_id": ids["<|endoftext|>"],
                     "bos_token_id": ids["<|im_start|>"], "eos_token_id": ids["<|im_end|>"],
                     "initializer_range": INIT_RANGE},
        vision_config={"hidden_size": 32, "intermediate_size": 64, "moe_intermediate_size": 16, "num_hidden_layers": 2,
                       "num_attention_heads": 2, "patch_size": 4, "spatial_merge_size": 2, "adapter_in_dim": 32,
                       "adapter_out_dim": 32, "adapter_merge_size": 2, "pyramid_num_routed": [-1, 4],
                       "num_experts_per_tok": 2, "initializer_range": INIT_RANGE},
        audio_config={"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2,
                      "adapter_input_size": 16, "adapter_out_dim": 32, "downsample_hidden_size": 8, "feature_size": 16},
        image_token_id=ids["<|imgpad|>"], video_token_id=ids["<|video_pad|>"],
        audio_token_id=ids["<|audio_comp_pad|>"], tie_word_embeddings=False,
    )
    template = LLAVA_TEMPLATE.replace("<video>", "<|video_pad|>")
    processor = Dots3NoteProcessor(image_processor=Qwen2VLImageProcessor(**pixels),
                                   video_processor=Qwen3VLVideoProcessor(**pixels, do_sample_frames=False),
                                   feature_extractor=Dots3NoteFeatureExtractor(), tokenizer=tok,
                                   chat_template=template)
    return Dots3NoteForConditionalGeneration(config), template, processor


RECORDS = (
    TinyType("dots3-note", "dots3_note", _dots3_note, DOTS3_NOTE_PIXELS, StandIn(CHATML), tokens=("<|imgpad|>", "<|audio_comp_pad|>")),
)
