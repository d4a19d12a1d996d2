"""The tiny Qwen-VL types: Qwen2-VL (the bare `tiny-vlm`), Qwen2.5-VL, Qwen3-VL, Qwen3.5 (dense and MoE), Qwen4-Exp,
and the types that pair Qwen2.5-VL's vision tower with another language model (HyperCLOVAX-Vision v2, EXAONE 4.5)."""

from __future__ import annotations

from functools import partial

from hardneg.models.vlm.tiny.builders import (INIT_RANGE, QWEN_HALF_PIXELS, QWEN_PIXELS, QWEN_TEMPLATE, TINY_MOE,
                                              qwen_text_config, qwen_vision_token_ids)
from hardneg.models.vlm.tiny.record import CHATML, HubFiles, PublishedTemplate, StandIn, TinyType
from hardneg.models.vlm.tiny.tokenizer import SPECIALS


def _qwen2_vl(tok, vocab: int, pre: dict):
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    config = Qwen2VLConfig(
        text_config=qwen_text_config(ids, vocab),
        vision_config={"depth": 2, "embed_dim": 32, "hidden_size": 32, "num_heads": 2, "mlp_ratio": 2,
                       "patch_size": 4, "temporal_patch_size": 2, "spatial_merge_size": 2, "in_channels": 3},
        **qwen_vision_token_ids(ids),
    )
    # frames of at most 32x32 pixels: 8 frames -> 4 x 8 x 8 patches -> 64 video tokens
    return Qwen2VLForConditionalGeneration(config), QWEN_TEMPLATE, pre


def _qwen2_5_vl(tok, vocab: int, pre: dict):
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    config = Qwen2_5_VLConfig(
        text_config=qwen_text_config(ids, vocab),
        # window attention over 2x2 merged patches, one full-attention block, as the real model alternates them;
        # 4 tokens per second so that the frames' spacing moves the temporal positions (Qwen2.5-VL's rule)
        vision_config={"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "out_hidden_size": 32,
                       "patch_size": 4, "temporal_patch_size": 2, "spatial_merge_size": 2, "in_channels": 3,
                       "window_size": 16, "fullatt_block_indexes": [1], "tokens_per_second": 4},
        **qwen_vision_token_ids(ids),
    )
    return Qwen2_5_VLForConditionalGeneration(config), QWEN_TEMPLATE, pre


#: the Qwen3-VL vision tower of the tiny Qwen3-VL, Qwen3.5 and Qwen4-Exp (2-frame temporal patches, 2x2 merge)
QWEN3_VISION = {"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "out_hidden_size": 32,
                "patch_size": 4, "temporal_patch_size": 2, "spatial_merge_size": 2, "in_channels": 3,
                "num_position_embeddings": 64, "initializer_range": INIT_RANGE}


def _qwen3_processor(tok, pixels: dict):
    """Qwen3-VL's processor over Qwen2-VL's image processor and Qwen3-VL's video processor (its `<t seconds>`
    timestamps), as the tiny Qwen3-VL, Qwen3.5 and Qwen4-Exp save it."""
    from transformers import Qwen2VLImageProcessor, Qwen3VLProcessor, Qwen3VLVideoProcessor

    return Qwen3VLProcessor(image_processor=Qwen2VLImageProcessor(**pixels),
                            video_processor=Qwen3VLVideoProcessor(**pixels, do_sample_frames=False),
                            tokenizer=tok, chat_template=QWEN_TEMPLATE)


def _qwen3_vl(tok, vocab: int, pixels: dict, moe: bool = False):
    """Qwen3-VL: patch 16 (here 4), 2-frame temporal patches, 2x2 merge, deepstack features, interleaved 3-D
    rotary positions, and `<t seconds>` timestamps before each frame's tokens (its processor writes them).
    `moe`: Qwen3-VL-MoE, the same with a mixture-of-experts text tower (`TINY_MOE`)."""
    import transformers

    prefix = "Qwen3VLMoe" if moe else "Qwen3VL"
    Qwen3VLConfig = getattr(transformers, prefix + "Config")
    Qwen3VLForConditionalGeneration = getattr(transformers, prefix + "ForConditionalGeneration")
    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    config = Qwen3VLConfig(
        text_config={"vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                     "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
                     "max_position_embeddings": 4096,
                     "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 1, 1],
                                         "mrope_interleaved": True},
                     "bos_token_id": ids["<|im_start|>"], "eos_token_id": ids["<|im_end|>"],
                     "pad_token_id": ids["<|endoftext|>"], "tie_word_embeddings": False,
                     "initializer_range": INIT_RANGE, **(TINY_MOE if moe else {})},
        vision_config={**QWEN3_VISION, "deepstack_visual_indexes": [0]},
        **qwen_vision_token_ids(ids), tie_word_embeddings=False,
    )
    processor = _qwen3_processor(tok, pixels)
    return Qwen3VLForConditionalGeneration(config), QWEN_TEMPLATE, processor


def _qwen3_5(tok, vocab: int, pixels: dict, moe: bool = False):
    """Qwen3.5: Qwen3-VL's vision tower, processor and timestamps over a hybrid language model (Gated DeltaNet
    linear-attention layers between full-attention ones, whose cache holds recurrent states). `moe`: Qwen3.5-MoE,
    the same with a mixture-of-experts text tower (`TINY_MOE` and a shared expert)."""
    import transformers

    prefix = "Qwen3_5Moe" if moe else "Qwen3_5"
    Qwen3_5Config = getattr(transformers, prefix + "Config")
    Qwen3_5ForConditionalGeneration = getattr(transformers, prefix + "ForConditionalGeneration")
    experts = {**TINY_MOE, "shared_expert_intermediate_size": 32} if moe else {}
    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    config = Qwen3_5Config(
        text_config={"vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                     "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
                     "layer_types": ["linear_attention", "full_attention"], "linear_conv_kernel_dim": 4,
                     "linear_key_head_dim": 8, "linear_value_head_dim": 8, "linear_num_key_heads": 2,
                     "linear_num_value_heads": 4, "max_position_embeddings": 4096,
                     "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 1, 1],
                                         "mrope_interleaved": True, "partial_rotary_factor": 1.0},
                     "bos_token_id": ids["<|im_start|>"], "eos_token_id": ids["<|im_end|>"],
                     "pad_token_id": ids["<|endoftext|>"], "tie_word_embeddings": False,
                     "initializer_range": INIT_RANGE, **experts},
        vision_config=dict(QWEN3_VISION),
        **qwen_vision_token_ids(ids), tie_word_embeddings=False,
    )
    processor = _qwen3_processor(tok, pixels)
    return Qwen3_5ForConditionalGeneration(config), QWEN_TEMPLATE, processor


def _qwen4_exp(tok, vocab: int, pixels: dict):
    """Qwen4-Exp: Qwen3-VL's vision tower, processor and timestamps over a language model of Gated DeltaNet layers
    and indexed attention (a sparse QSA indexer over compressed keys), routed and shared experts, hyper-connections
    and hashed n-gram per-layer embeddings (PLE) on its linear-attention layers; the cache holds recurrent,
    convolution and n-gram states. Departure: Qwen3-VL's chat template layout (QWEN_TEMPLATE, the region Qwen's
    processor expands) as a stand-in: Qwen4-Exp's published template is not available offline here."""
    from transformers import Qwen4ExpConfig, Qwen4ExpForConditionalGeneration

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    config = Qwen4ExpConfig(
        text_config={"vocab_size": vocab, "hidden_size": 32, "num_hidden_layers": 2,
                     "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
                     "layer_types": ["linear_attention", "indexed_attention"], "linear_conv_kernel_dim": 4,
                     "linear_key_head_dim": 8, "linear_value_head_dim": 8, "linear_num_key_heads": 2,
                     "linear_num_value_heads": 4, "max_position_embeddings": 4096,
                     "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
                     "shared_expert_intermediate_size": 32, "hc_count": 2, "hc_lowrank": 8,
                     "ple_layer_ids": [1], "ple_embed_dim": 32, "heads_per_ngram": 2, "ngram_vocab_size_base": 1000,
                     "split_ngram_parts": 4, "make_ngram_vocab_size_divisible_by": 8,
                     "indexer_n_heads": 2, "indexer_kv_heads": 1, "indexer_head_dim": 8, "indexer_budget": 8,
                     "indexer_compress_ratio": 2,
                     "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 1, 1],
                                         "mrope_interleaved": True, "partial_rotary_factor": 1.0},
                     "bos_token_id": ids["<|im_start|>"], "eos_token_id": ids["<|im_end|>"],
                     "pad_token_id": ids["<|endoftext|>"], "tie_word_embeddings": False,
                     "initializer_range": INIT_RANGE},
        vision_config=dict(QWEN3_VISION),
        **qwen_vision_token_ids(ids), tie_word_embeddings=False,
    )
    processor = _qwen3_processor(tok, pixels)
    return Qwen4ExpForConditionalGeneration(config), QWEN_TEMPLATE, processor


def _qwen25_vision_family(tok, vocab: int, pixels: dict, kind: str):
    """Types that pair Qwen2.5-VL's vision tower (window attention, 2-frame temporal patches, 2x2 merge) and Qwen2-VL's
    image and video processors with another language model: HyperCLOVAX-Vision v2 ("hyperclovax": a Llama-style
    model with its own multipliers) and EXAONE 4.5 ("exaone4_5": EXAONE 4's sliding and full attention layers).
    Departure: their published chat templates are not available offline here, so both use ChatML with Qwen's video
    region `<|vision_start|><|video_pad|><|vision_end|>` (the processors replace `<|video_pad|>` alone)."""
    import transformers
    from transformers import Qwen2VLImageProcessor, Qwen2VLVideoProcessor

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    vision = {"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "out_hidden_size": 32,
              "patch_size": 4, "temporal_patch_size": 2, "spatial_merge_size": 2, "in_channels": 3, "window_size": 16,
              "fullatt_block_indexes": [1], "initializer_range": INIT_RANGE}
    text = {"vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
            "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8, "max_position_embeddings": 4096,
            "bos_token_id": ids["<|im_start|>"], "eos_token_id": ids["<|im_end|>"], "pad_token_id": ids["<|endoftext|>"],
            "tie_word_embeddings": False, "initializer_range": INIT_RANGE}
    if kind == "hyperclovax":
        prefix = "HyperCLOVAXVisionV2"
        sub = {"vision_config": {**vision, "model_type": "qwen2_5_vl_vision"},
               "text_config": {**text, "model_type": "hyperclovax"}}
    else:
        prefix = "Exaone4_5_"
        sub = {"vision_config": {**vision, "num_key_value_heads": 2},
               "text_config": {**text, "model_type": "exaone4", "sliding_window": 4096,
                               "layer_types": ["sliding_attention", "full_attention"]}}
    config = getattr(transformers, prefix + "Config")(**sub, image_token_id=ids["<|image_pad|>"],
                                                        video_token_id=ids["<|video_pad|>"], tie_word_embeddings=False)
    processor = getattr(transformers, prefix + "Processor")(
        image_processor=Qwen2VLImageProcessor(**pixels),
        video_processor=Qwen2VLVideoProcessor(**pixels, do_sample_frames=False), tokenizer=tok,
        chat_template=QWEN_TEMPLATE)
    return getattr(transformers, prefix + "ForConditionalGeneration")(config), QWEN_TEMPLATE, processor


def _hub_pixels(pre: dict, vc) -> dict:
    """Qwen's patch, merge and temporal patch sizes and its pixel bounds as `size`."""
    return {"patch_size": vc.patch_size, "temporal_patch_size": vc.temporal_patch_size,
            "merge_size": vc.spatial_merge_size, "size": {"shortest_edge": pre["min_pixels"],
                                                          "longest_edge": pre["max_pixels"]}}


_TF = "https://github.com/huggingface/transformers/blob"
_HF = "https://huggingface.co"
#: the Qwen3-VL Instruct and Qwen3.5 templates (one text per family, dense and MoE alike)
QWEN3_VL_PUBLISHED = PublishedTemplate(
    "qwen3_vl.jinja", f"{_HF}/mlx-community/Qwen3-VL-4B-Instruct-4bit/blob/"
    "2fd8dacbdb8f1e54b8c005f081ec5bf79c56376b/chat_template.jinja", "2fd8dacbdb8f1e54b8c005f081ec5bf79c56376b",
    "3636d0f0bd6bef02654cdffdc447b79cb2cef8ab02cc75267345946291a489e4",
    "the Qwen3-VL Instruct template (mlx-community's copy of Qwen/Qwen3-VL-4B-Instruct, at that commit). Read "
    "from a public Swift test fixture that embeds the file and records its sha256; the text here hashes to that "
    "recorded sha256. The MoE type (Qwen3-VL-30B-A3B / 235B-A22B Instruct) is given the same family template")
QWEN3_5_PUBLISHED = PublishedTemplate(
    "qwen3_5.jinja", f"{_HF}/mlx-community/Qwen3.5-35B-A3B-4bit/blob/main/chat_template.jinja", "main",
    "a4aee8afcf2e0711942cf848899be66016f8d14a889ff9ede07bca099c28f715",
    "the Qwen3.5 template (mlx-community's copy of Qwen/Qwen3.5-35B-A3B; no commit recorded by the source). Read "
    "from a public Swift test fixture that embeds the file and records its sha256; the text here hashes to that "
    "recorded sha256. A second public copy names Qwen/Qwen3.5-27B's tokenizer_config.json as its source for the "
    "dense type. Its generation prompt opens a thinking block (\"<|im_start|>assistant\\n<think>\\n\"), as the "
    "checkpoints do by default")

RECORDS = (
    TinyType("qwen2-vl", "qwen2_vl", _qwen2_vl, QWEN_PIXELS, default=True, template=PublishedTemplate(
        "qwen2_vl.jinja", f"{_TF}/00368c17bfb3f240a56108c796cb80a04cb0448c/tests/models/qwen2_vl/"
        "test_processor_qwen2_vl.py", "00368c17bfb3f240a56108c796cb80a04cb0448c",
        "a0bc6f6fc7a29a80017a433e8f03a1cc1236e838a944a2d034295a60c4f2fddb",
        "transformers' Qwen2-VL processor test (`prepare_processor_dict`), which embeds Qwen/Qwen2-VL-7B-Instruct's "
        "chat template"),
        hub=HubFiles("Qwen2VLProcessor", "Qwen2VLImageProcessor", "Qwen2VLVideoProcessor", pixels=_hub_pixels),
        hub_ids=("{name}",)),
    TinyType("qwen2.5-vl", "qwen2_5_vl", _qwen2_5_vl, QWEN_PIXELS, template=PublishedTemplate(
        "qwen2_vl.jinja", f"{_TF}/06b001ceb9c73adbcf8c9ca8ee7eee12d52c44d3/tests/models/qwen2_5_vl/"
        "test_processor_qwen2_5_vl.py", "06b001ceb9c73adbcf8c9ca8ee7eee12d52c44d3",
        "a0bc6f6fc7a29a80017a433e8f03a1cc1236e838a944a2d034295a60c4f2fddb",
        "transformers' Qwen2.5-VL processor test (`prepare_processor_dict`): the same text as Qwen2-VL's"),
        hub=HubFiles("Qwen2_5_VLProcessor", "Qwen2VLImageProcessor", "Qwen2VLVideoProcessor", pixels=_hub_pixels),
        hub_ids=("{name}",)),
    TinyType("qwen3-vl", "qwen3_vl", _qwen3_vl, QWEN_HALF_PIXELS, QWEN3_VL_PUBLISHED, hub_ids=("{name}",)),
    TinyType("qwen3-vl-moe", "qwen3_vl_moe", partial(_qwen3_vl, moe=True), QWEN_HALF_PIXELS, QWEN3_VL_PUBLISHED),
    TinyType("qwen3.5", "qwen3_5", _qwen3_5, QWEN_HALF_PIXELS, QWEN3_5_PUBLISHED),
    TinyType("qwen3.5-moe", "qwen3_5_moe", partial(_qwen3_5, moe=True), QWEN_HALF_PIXELS, QWEN3_5_PUBLISHED),
    TinyType("qwen4-exp", "qwen4_exp", _qwen4_exp, QWEN_HALF_PIXELS, StandIn("Qwen3-VL's ChatML layout")),
    TinyType("hyperclovax-vision-v2", "hyperclovax_vision_v2", partial(_qwen25_vision_family, kind="hyperclovax"),
             QWEN_HALF_PIXELS, StandIn(CHATML)),
    TinyType("exaone4.5", "exaone4_5", partial(_qwen25_vision_family, kind="exaone4_5"), QWEN_HALF_PIXELS,
             StandIn(CHATML)),
)
