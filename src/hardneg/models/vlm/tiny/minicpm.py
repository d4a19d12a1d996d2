"""The tiny MiniCPM-V types: MiniCPM-V 4.6, MiniCPM-V 4.7 and MiniCPM-OCR."""

from __future__ import annotations

from functools import partial

from hardneg.models.vlm.tiny.builders import INIT_RANGE, QWEN_TEMPLATE
from hardneg.models.vlm.tiny.record import CHATML, StandIn, TinyType
from hardneg.models.vlm.tiny.tokenizer import SPECIALS


#: MiniCPM-V 4.6's named tokens (its processor reads them from the tokenizer by name); the placeholders are
#: Qwen's pad tokens, the markers MiniCPM-V's ("<image>...</image>", "<slice>", "<image_id>N</image_id>")
MINICPM_NAMED = {"image_token": "<|image_pad|>", "video_token": "<|video_pad|>", "image_start_token": "<image>",
                 "image_end_token": "</image>", "slice_start_token": "<slice>", "slice_end_token": "</slice>",
                 "image_id_start_token": "<image_id>", "image_id_end_token": "</image_id>"}


#: the frame processors' settings of the types `_minicpmv4_6` builds (their records' `pixels`)
MINICPMV4_6_PIXELS = {"scale_resolution": 32, "patch_size": 4, "max_slice_nums": 1, "image_mean": [0.5, 0.5, 0.5],
                      "image_std": [0.5, 0.5, 0.5]}


def _minicpmv4_6(tok, vocab: int, pixels: dict, v47: bool = False, ocr: bool = False):
    """MiniCPM-V 4.6: a SigLIP-style NaViT tower with a window-attention merger after layer `insert_layer_id`, a
    2x2 merger (16x fewer tokens), each frame as "<image>" + its tokens + "</image>" after one
    "<image_id>0</image_id>" (its processor writes them), over Qwen3.5's hybrid language model (Gated DeltaNet
    linear-attention layers between full-attention ones; 1-D positions). Frames of about 32x32 pixels, 4-pixel
    patches: 4 tokens a frame (16 for MiniCPM-OCR, whose default merge keeps 4x more). The chat template is ChatML
    with the video as its placeholder token. `ocr`: MiniCPM-OCR, its own config and processor classes. `v47`: MiniCPM-V
    4.7, the same tower and processors with its canvas 3-D rotary positions, which pin the image and slice markers
    and the slice-row newlines (their ids in its config)."""
    import transformers

    prefix = "MiniCPMOcr" if ocr else "MiniCPMV4_7" if v47 else "MiniCPMV4_6"
    MiniCPMV4_6Config, MiniCPMV4_6ForConditionalGeneration, MiniCPMV4_6Processor = (
        getattr(transformers, prefix + n) for n in ("Config", "ForConditionalGeneration", "Processor"))
    MiniCPMV4_6ImageProcessor, MiniCPMV4_6VideoProcessor = (
        getattr(transformers, ("MiniCPMOcr" if ocr else "MiniCPMV4_6") + n) for n in ("ImageProcessor", "VideoProcessor"))
    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS + list(MINICPM_NAMED.values())}
    # MiniCPM-V 4.7's canvas 3-D positions pin its markers and slice-row newlines (its config names their ids)
    canvas = ({"image_start_id": ids["<image>"], "image_end_id": ids["</image>"], "slice_start_id": ids["<slice>"],
               "slice_end_id": ids["</slice>"], "newline_id": tok.convert_tokens_to_ids("\u010a")} if v47 else {})
    config = MiniCPMV4_6Config(
        text_config={"model_type": "qwen3_5_text", "vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64,
                     "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
                     "layer_types": ["linear_attention", "full_attention"], "linear_conv_kernel_dim": 4,
                     "linear_key_head_dim": 8, "linear_value_head_dim": 8, "linear_num_key_heads": 2,
                     "linear_num_value_heads": 4, "max_position_embeddings": 4096,
                     "bos_token_id": ids["<|im_start|>"], "eos_token_id": ids["<|im_end|>"],
                     "pad_token_id": ids["<|endoftext|>"], "tie_word_embeddings": False,
                     "initializer_range": INIT_RANGE},
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                       "image_size": 32, "patch_size": 4, "initializer_range": INIT_RANGE},
        insert_layer_id=1, image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        tie_word_embeddings=False, **canvas, **({} if ocr else {"image_size": 32}),
    )
    template = QWEN_TEMPLATE.replace("<|vision_start|><|video_pad|><|vision_end|>", "<|video_pad|>")
    processor = MiniCPMV4_6Processor(image_processor=MiniCPMV4_6ImageProcessor(**pixels),
                                     video_processor=MiniCPMV4_6VideoProcessor(**pixels, slice_mode=False,
                                                                               do_sample_frames=False),
                                     tokenizer=tok, chat_template=template)
    return MiniCPMV4_6ForConditionalGeneration(config), template, processor


RECORDS = (
    TinyType("minicpm-v-4.6", "minicpmv4_6", _minicpmv4_6, MINICPMV4_6_PIXELS, StandIn(CHATML), named_tokens=MINICPM_NAMED),
    TinyType("minicpm-v-4.7", "minicpmv4_7", partial(_minicpmv4_6, v47=True), MINICPMV4_6_PIXELS, StandIn(CHATML),
             named_tokens=MINICPM_NAMED),
    TinyType("minicpm-ocr", "minicpm_ocr", partial(_minicpmv4_6, ocr=True), MINICPMV4_6_PIXELS, StandIn(CHATML), named_tokens=MINICPM_NAMED),
)
