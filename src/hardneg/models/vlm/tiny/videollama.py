"""The tiny VideoLLaMA3: one-frame patches, token compression between similar frames."""

from __future__ import annotations

from hardneg.models.vlm.tiny.builders import INIT_RANGE, LLAVA_TEMPLATE
from hardneg.models.vlm.tiny.record import StandIn, TinyType
from hardneg.models.vlm.tiny.tokenizer import SPECIALS


#: the frame processors' settings of the types `_video_llama_3` builds (their records' `pixels`)
VIDEO_LLAMA_3_PIXELS = {"size": {"shortest_edge": 16 * 16, "longest_edge": 32 * 32}, "patch_size": 4, "merge_size": 2}


def _video_llama_3(tok, vocab: int, pixels: dict):
    """VideoLLaMA3: one-frame patches, 2x2 merge, token compression between similar frames, "Time {t:.1f}s:" before
    each frame's tokens (its processor writes them), a Qwen2 language model with 1-D positions."""
    from transformers import (VideoLlama3Config, VideoLlama3ForConditionalGeneration, VideoLlama3ImageProcessor,
                              VideoLlama3Processor, VideoLlama3VideoProcessor)

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    config = VideoLlama3Config(
        text_config={"model_type": "qwen2", "vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64,
                     "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                     "max_position_embeddings": 4096, "eos_token_id": ids["<|im_end|>"],
                     "pad_token_id": ids["<|endoftext|>"], "tie_word_embeddings": False,
                     "initializer_range": INIT_RANGE},
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                       "patch_size": 4, "initializer_range": INIT_RANGE},
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"], tie_word_embeddings=False,
    )
    processor = VideoLlama3Processor(image_processor=VideoLlama3ImageProcessor(**pixels),
                                     video_processor=VideoLlama3VideoProcessor(**pixels, do_sample_frames=False),
                                     tokenizer=tok, chat_template=LLAVA_TEMPLATE.replace("<video>", "<|video_pad|>"))
    return VideoLlama3ForConditionalGeneration(config), LLAVA_TEMPLATE.replace("<video>", "<|video_pad|>"), processor


RECORDS = (
    TinyType("video-llama-3", "video_llama_3", _video_llama_3, VIDEO_LLAMA_3_PIXELS, StandIn("ChatML with the video pad token"),
        hub_ids=("videollama3",)),
)
