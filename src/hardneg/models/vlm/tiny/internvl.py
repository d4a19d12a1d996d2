"""The tiny InternVL (3 / 3.5, `-hf` checkpoints): every frame an image of context tokens."""

from __future__ import annotations

from hardneg.models.vlm.tiny.builders import INIT_RANGE
from hardneg.models.vlm.tiny.record import PublishedTemplate, TinyType
from hardneg.models.vlm.tiny.tokenizer import SPECIALS


#: InternVL's image markers (its tokenizer names them start_image_token, end_image_token, context_image_token)
INTERNVL_SPECIALS = ["<img>", "</img>", "<IMG_CONTEXT>"]

#: InternVL-hf's layout of a video in the user turn: the video, a newline, the text (the frames' "FrameN: ..." lines
#: are its processor's)
INTERNVL_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for c in message['content'] %}"
    "{% if c['type'] == 'video' %}<video>\n"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


#: the frame processors' settings of the types `_internvl` builds (their records' `pixels`)
INTERNVL_PIXELS = {"size": {"height": 16, "width": 16}, "image_mean": [0.485, 0.456, 0.406],
                   "image_std": [0.229, 0.224, 0.225]}


def _internvl(tok, vocab: int, pixels: dict):
    """InternVL (3 / 3.5, `-hf` checkpoints): every frame is an image of `image_seq_length` context tokens,
    "FrameN: <img>...</img>" per frame (its processor writes them), a Qwen2 language model, 1-D positions."""
    from transformers import (GotOcr2ImageProcessor, InternVLConfig, InternVLForConditionalGeneration,
                              InternVLProcessor, InternVLVideoProcessor)

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS + INTERNVL_SPECIALS}
    config = InternVLConfig(
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                       "image_size": [16, 16], "patch_size": [4, 4], "initializer_range": INIT_RANGE},
        text_config={"model_type": "qwen2", "vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64,
                     "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                     "max_position_embeddings": 4096, "eos_token_id": ids["<|im_end|>"],
                     "pad_token_id": ids["<|endoftext|>"], "tie_word_embeddings": False,
                     "initializer_range": INIT_RANGE},
        image_token_id=ids["<IMG_CONTEXT>"], downsample_ratio=0.5, vision_feature_layer=-1,
        vision_feature_select_strategy="default", tie_word_embeddings=False,
    )
    processor = InternVLProcessor(image_processor=GotOcr2ImageProcessor(**pixels, crop_to_patches=False),
                                  video_processor=InternVLVideoProcessor(**pixels, do_sample_frames=False),
                                  tokenizer=tok, image_seq_length=4, chat_template=INTERNVL_TEMPLATE)
    return InternVLForConditionalGeneration(config), INTERNVL_TEMPLATE, processor


RECORDS = (
    TinyType("internvl", "internvl", _internvl, INTERNVL_PIXELS, PublishedTemplate(
        "internvl.jinja", "https://github.com/huggingface/transformers/blob/015d3b273cbc4a72f2feb1da386896655a23b3da/"
        "src/transformers/models/internvl/convert_internvl_weights_to_hf.py", "015d3b273cbc4a72f2feb1da386896655a23b3da",
        "cabb34545cf3d04f4d256439f6b8e9f6fcf61edaaee3b8cb5c0937a7ea6206d7",
        "`chat_template` of transformers' InternVL conversion script, the template it writes into the "
        "OpenGVLab/InternVL3-*-hf checkpoints (its processor and its tokenizer)"),
        named_tokens={"start_image_token": "<img>", "end_image_token": "</img>", "context_image_token": "<IMG_CONTEXT>",
                      "video_token": "<video>"}, hub_ids=("internvl3",)),
)
