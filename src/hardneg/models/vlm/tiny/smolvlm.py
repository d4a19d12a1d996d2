"""The tiny SmolVLM (SmolVLM2 video checkpoints): every frame an image after pixel shuffle."""

from __future__ import annotations

from hardneg.models.vlm.tiny.builders import INIT_RANGE, llama_text_config
from hardneg.models.vlm.tiny.record import PublishedTemplate, TinyType
from hardneg.models.vlm.tiny.tokenizer import SPECIALS


#: SmolVLM's image markers (its tokenizer names them fake_image_token, global_image_token, end_of_utterance_token)
SMOLVLM_SPECIALS = ("<fake_token_around_image>", "<global-img>", "<end_of_utterance>")


#: the frame processors' settings of the types `_smolvlm` builds (their records' `pixels`)
SMOLVLM_PIXELS = {"size": {"longest_edge": 16}, "max_image_size": {"longest_edge": 16}, "image_mean": [0.5, 0.5, 0.5],
                  "image_std": [0.5, 0.5, 0.5]}


def _smolvlm(tok, vocab: int, pixels: dict):
    """SmolVLM (SmolVLM2 video checkpoints): every frame an image of `image_seq_len` tokens after pixel shuffle
    ("<fake_token_around_image><global-img><image>...<fake_token_around_image>"), preceded by its processor's
    "You are provided the following series of {N} frames ..." intro and "Frame from MM:SS:" lines; a Llama
    (SmolLM2, byte-level BPE) language model with 1-D positions. The chat template is the processor's own
    default (`processing_smolvlm.DEFAULT_CHAT_TEMPLATE`: the Hub template plus its video item)."""
    from transformers import (SmolVLMConfig, SmolVLMForConditionalGeneration, SmolVLMImageProcessor, SmolVLMProcessor,
                              SmolVLMVideoProcessor)
    from transformers.models.smolvlm.processing_smolvlm import DEFAULT_CHAT_TEMPLATE

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS + list(SMOLVLM_SPECIALS)}
    config = SmolVLMConfig(
        text_config=llama_text_config(vocab, ids["<end_of_utterance>"], ids["<|endoftext|>"], max_positions=4096),
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                       "image_size": 16, "patch_size": 4, "initializer_range": INIT_RANGE},
        scale_factor=2, image_token_id=ids["<image>"], tie_word_embeddings=False,
    )
    # 16x16 frames, 4x4 patches -> 16 patches, pixel shuffle by 2 -> 4 tokens a frame (image_seq_len)
    processor = SmolVLMProcessor(image_processor=SmolVLMImageProcessor(**pixels, do_image_splitting=False),
                                 video_processor=SmolVLMVideoProcessor(**pixels, do_sample_frames=False),
                                 tokenizer=tok, image_seq_len=4, chat_template=DEFAULT_CHAT_TEMPLATE)
    return SmolVLMForConditionalGeneration(config), DEFAULT_CHAT_TEMPLATE, processor


RECORDS = (
    TinyType("smolvlm", "smolvlm", _smolvlm, SMOLVLM_PIXELS, PublishedTemplate(
        "smolvlm.jinja", "https://github.com/huggingface/transformers/blob/v5.24.0/src/transformers/models/smolvlm/"
        "processing_smolvlm.py", "v5.24.0", "f6db8ceb8995c47d3aabada6314e3173a75ecf8273453a2e2004bb2ba3ab598d",
        "`DEFAULT_CHAT_TEMPLATE` of transformers 5.24.0 (the pinned release): `SmolVLMProcessor.apply_chat_template` "
        "renders every conversation with a video by it, whatever template the checkpoint ships (\"the correct chat "
        "template to be used for videos after #38105\"); commit 00964605f206d1f8b86e63d0e9afade4762c58c0 holds "
        "the same text without its string-content branch"),
        tokens=SMOLVLM_SPECIALS,
        named_tokens={"fake_image_token": "<fake_token_around_image>", "image_token": "<image>",
                      "end_of_utterance_token": "<end_of_utterance>", "global_image_token": "<global-img>",
                      "video_token": "<video>"}, hub_ids=("{name}",)),
)
