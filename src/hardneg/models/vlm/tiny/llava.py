"""The tiny LLaVA types, served by hardneg's own LLaVA families: LLaVA-OneVision, Video-LLaVA and LLaVA-NeXT-Video
(a CLIP or SigLIP tower, a projector, a Qwen2 or Llama language model)."""

from __future__ import annotations

from hardneg.models.vlm.tiny.builders import (CLIP_MEAN_STD, CLIP_VISION_CONFIG, INIT_RANGE, LLAVA_TEMPLATE,
                                              llama_text_config)
from hardneg.models.vlm.tiny.record import HubFiles, PublishedTemplate, StandIn, TinyType
from hardneg.models.vlm.tiny.tokenizer import SPECIALS


#: Video-LLaVA's prompt layout ("USER: <video>\n... ASSISTANT:", transformers `models/video_llava/
#: modeling_video_llava.py`, the `forward` example), the video first as in the Hub checkpoints' templates
VIDEO_LLAVA_TEMPLATE = (
    "{% for message in messages %}{{ message['role'].upper() + ': ' }}"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for c in message['content'] if c['type'] == 'video' %}<video>\n{% endfor %}"
    "{% for c in message['content'] if c['type'] == 'text' %}{{ c['text'] + ' ' }}{% endfor %}{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}ASSISTANT:{% endif %}"
)


#: the frame processors' settings of the types `_llava_onevision` builds (their records' `pixels`)
LLAVA_ONEVISION_PIXELS = {"image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}


def _llava_onevision(tok, vocab: int, pre: dict):
    from transformers import LlavaOnevisionConfig, LlavaOnevisionForConditionalGeneration

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    config = LlavaOnevisionConfig(
        text_config={"model_type": "qwen2", "vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64,
                     "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                     "max_position_embeddings": 1024, "eos_token_id": ids["<|im_end|>"],
                     "pad_token_id": ids["<|endoftext|>"], "tie_word_embeddings": False,
                     "initializer_range": INIT_RANGE},
        vision_config={"model_type": "siglip_vision_model", "hidden_size": 32, "intermediate_size": 64,
                       "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": 16, "patch_size": 4},
        image_token_index=ids["<image>"], video_token_index=ids["<video>"], vision_feature_layer=-1,
        vision_feature_select_strategy="full", tie_word_embeddings=False,
    )
    return LlavaOnevisionForConditionalGeneration(config), LLAVA_TEMPLATE, pre


#: the frame processors' settings of the types `_video_llava` builds (their records' `pixels`)
VIDEO_LLAVA_PIXELS = {"size": {"shortest_edge": 20}, "crop_size": {"height": 16, "width": 16},
                      **CLIP_MEAN_STD}


def _video_llava(tok, vocab: int, pre: dict):
    from transformers import VideoLlavaConfig, VideoLlavaForConditionalGeneration

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    config = VideoLlavaConfig(
        text_config=llama_text_config(vocab, ids["<|im_end|>"], ids["<|endoftext|>"]),
        vision_config=dict(CLIP_VISION_CONFIG),
        image_token_index=ids["<image>"], video_token_index=ids["<video>"], vision_feature_layer=-2,
        vision_feature_select_strategy="default", tie_word_embeddings=False,
    )
    # the Hub checkpoints' preprocessor layout: shorter side to `shortest_edge`, then the centre crop
    return VideoLlavaForConditionalGeneration(config), VIDEO_LLAVA_TEMPLATE, pre


#: the frame processors' settings of the types `_llava_next_video` builds (their records' `pixels`)
LLAVA_NEXT_VIDEO_PIXELS = {"size": {"height": 16, "width": 16}, "do_center_crop": False,
                           **CLIP_MEAN_STD}


def _llava_next_video(tok, vocab: int, pre: dict):
    from transformers import LlavaNextVideoConfig, LlavaNextVideoForConditionalGeneration

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    config = LlavaNextVideoConfig(
        text_config=llama_text_config(vocab, ids["<|im_end|>"], ids["<|endoftext|>"]),
        vision_config=dict(CLIP_VISION_CONFIG),
        image_token_index=ids["<image>"], video_token_index=ids["<video>"], vision_feature_layer=-2,
        vision_feature_select_strategy="default", image_grid_pinpoints=[[16, 16]], spatial_pool_stride=2,
        tie_word_embeddings=False,
    )
    # the family resizes every frame to the tower's square (hardneg.models.vlm.families.LlavaVideo)
    return LlavaNextVideoForConditionalGeneration(config), VIDEO_LLAVA_TEMPLATE, pre


def _onevision_pixels(pre: dict, vc) -> dict:
    """LLaVA-OneVision's square frames."""
    return {"size": {"height": vc.image_size, "width": vc.image_size}, "do_center_crop": False,
            "image_grid_pinpoints": [[vc.image_size, vc.image_size]], "do_pad": True}


def _next_video_pixels(pre: dict, vc) -> dict:
    """LLaVA-NeXT-Video's one grid pinpoint and crop, the tower's square."""
    return {"image_grid_pinpoints": [[vc.image_size, vc.image_size]],
            "crop_size": {"height": vc.image_size, "width": vc.image_size}}


_SEARCHED_LLAVA = ("transformers tests/models/video_llava (its processor test loads the Hub checkpoint), find_string "
                   "for the llava-hf Vicuna templates with a video item (only image-only copies found)")

RECORDS = (
    TinyType("llava-onevision", "llava_onevision", _llava_onevision, LLAVA_ONEVISION_PIXELS, PublishedTemplate(
        "llava_onevision.jinja", "https://github.com/huggingface/transformers/blob/"
        "1a6e6ad97a7c5f6e196300a77ff1f6618a73155c/tests/models/llava_onevision/test_processing_llava_onevision.py",
        "1a6e6ad97a7c5f6e196300a77ff1f6618a73155c", "fbf77862dcdda46840b6da02767d651eadad3582310e40fed04dc7594a0a80dd",
        "transformers' LLaVA-OneVision processor test (`prepare_processor_dict`), which embeds the llava-hf "
        "checkpoints' chat template"),
        hub=HubFiles("LlavaOnevisionProcessor", "LlavaOnevisionImageProcessor", "LlavaOnevisionVideoProcessor",
                     {"num_image_tokens": 16, "vision_feature_select_strategy": "full",
                      "vision_aspect_ratio": "anyres_max_9"}, pixels=_onevision_pixels),
        hub_ids=("{name}", "llava-video")),
    TinyType("video-llava", "video_llava", _video_llava, VIDEO_LLAVA_PIXELS, StandIn(
        "Video-LLaVA's \"USER: <video>\\n... ASSISTANT:\" layout (transformers' model docs)", searched=_SEARCHED_LLAVA),
        tokenizer="sentencepiece",
        hub=HubFiles("VideoLlavaProcessor", "VideoLlavaImageProcessor", "VideoLlavaVideoProcessor",
                     {"patch_size": 4, "vision_feature_select_strategy": "default", "num_additional_image_tokens": 1}),
        hub_ids=("{name}",)),
    TinyType("llava-next-video", "llava_next_video", _llava_next_video, LLAVA_NEXT_VIDEO_PIXELS, StandIn(
        "Video-LLaVA's Vicuna layout with the video", searched="transformers convert_llava_next_video_weights_to_hf.py "
        "(its chat_vicuna writes no video item), its processor test (embeds LLaVA-OneVision's template, not this "
        "checkpoint's)"),
        tokenizer="sentencepiece",
        hub=HubFiles("LlavaNextVideoProcessor", "LlavaNextImageProcessor", "LlavaNextVideoVideoProcessor",
                     {"patch_size": 4, "vision_feature_select_strategy": "default", "num_additional_image_tokens": 1},
                     pixels=_next_video_pixels), hub_ids=("{name}",)),
)
