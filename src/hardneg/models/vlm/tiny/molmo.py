"""The tiny Molmo2: pooled patches per frame, frame tokens attending to each other both ways."""

from __future__ import annotations

from hardneg.models.vlm.tiny.builders import INIT_RANGE
from hardneg.models.vlm.tiny.record import StandIn, TinyType
from hardneg.models.vlm.tiny.tokenizer import SPECIALS


#: Molmo2's control tokens (its tokenizer's extra special tokens: image and frame markers, placeholders)
MOLMO2_SPECIALS = ("<im_start>", "<im_end>", "<im_patch>", "<im_col>", "<low_res_im_start>", "<|image|>", "<im_low>",
                   "<frame_start>", "<frame_end>", "<|video|>")
#: Molmo2's published chat template (allenai/Molmo2-4B `chat_template.jinja`) without its demo styles and subtitle
#: turn: every image / video placeholder first, then the turns; a turn's text items joined by one space; an
#: assistant turn written " <|im_start|>assistant\n..." (the space is the published template's, before its
#: `{# assistant #}` comment) and closed by the next user turn's "<|im_end|>\n". Its tokenizer's `bos_token` is
#: "<|im_end|>", which the processor puts before every text (the template does not write it).
MOLMO2_TEMPLATE = (
    "{% set n = namespace(img=0, vid=0) %}{% for message in messages %}{% if message['content'] is not string %}"
    "{% for c in message['content'] %}{% if c['type'] == 'image' %}{% set n.img = n.img + 1 %}"
    "{% elif c['type'] == 'video' %}{% set n.vid = n.vid + 1 %}{% endif %}{% endfor %}{% endif %}{% endfor %}"
    "{% if n.img == 1 %}<|image|>{% elif n.img > 1 %}{% for i in range(n.img) %}{{ 'Image ' ~ (i + 1) ~ '<|image|>' }}"
    "{% endfor %}{% endif %}{% for _ in range(n.vid) %}<|video|>{% endfor %}"
    "{% for message in messages %}{% if message['content'] is string %}{% set text = message['content'] %}"
    "{% else %}{% set m = namespace(text='') %}{% for c in message['content'] %}{% if c['type'] == 'text' %}"
    "{% set m.text = m.text ~ ('' if not m.text else ' ') ~ c['text'] %}{% endif %}{% endfor %}"
    "{% set text = m.text %}{% endif %}"
    "{% if message['role'] == 'user' %}{% if not loop.first %}<|im_end|>\n{% endif %}<|im_start|>user\n{{ text }}"
    "<|im_end|>\n{% else %} <|im_start|>assistant\n{{ text }}{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


#: the frame processors' settings of the types `_molmo2` builds (their records' `pixels`)
MOLMO2_PIXELS = {"size": {"height": 16, "width": 16}, "patch_size": 4, "pooling_size": [2, 2],
                 "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}


def _molmo2(tok, vocab: int, pixels: dict):
    """Molmo2: each frame "{t:.1f} <frame_start>" + its pooled patches as "<im_patch>" + "<frame_end>", frames
    joined by spaces (its processor writes them), the patch features added onto those tokens' embeddings, the
    frame tokens attending to each other both ways (its `mm_token_type_ids`), a Qwen3-style language model with
    1-D positions. Its processor prepends the tokenizer's `bos_token` ("<|im_end|>") to every text."""
    from transformers import (Molmo2Config, Molmo2ForConditionalGeneration, Molmo2ImageProcessor, Molmo2Processor,
                              Molmo2VideoProcessor)

    tok.bos_token = "<|im_end|>"  # Molmo2's tokenizer (special_tokens_map.json): bos and eos are "<|im_end|>"
    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS + list(MOLMO2_SPECIALS)}
    vit = {"num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 16, "initializer_range": INIT_RANGE}
    config = Molmo2Config(
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "image_size": [16, 16],
                       "patch_size": 4, **vit},
        adapter_config={"vision_feature_layer": [-1, -2], "hidden_size": 32, "intermediate_size": 64,
                        "text_hidden_size": 32, **vit},
        text_config={"hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
                     "vocab_size": vocab, "additional_vocab_size": 0, "num_hidden_layers": 2, "intermediate_size": 64,
                     "max_position_embeddings": 4096, "initializer_range": INIT_RANGE, "tie_word_embeddings": False},
        image_start_token_id=ids["<im_start>"], low_res_image_start_token_id=ids["<low_res_im_start>"],
        image_end_token_id=ids["<im_end>"], image_patch_id=ids["<im_patch>"],
        frame_start_token_id=ids["<frame_start>"], frame_end_token_id=ids["<frame_end>"],
        initializer_range=INIT_RANGE, tie_word_embeddings=False,
    )
    # 16x16 frames, 4-pixel patches pooled 2x2: 4 tokens a frame
    processor = Molmo2Processor(image_processor=Molmo2ImageProcessor(**pixels),
                                video_processor=Molmo2VideoProcessor(**pixels, do_sample_frames=False),
                                tokenizer=tok, chat_template=MOLMO2_TEMPLATE)
    return Molmo2ForConditionalGeneration(config), MOLMO2_TEMPLATE, processor


RECORDS = (
    TinyType("molmo2", "molmo2", _molmo2, MOLMO2_PIXELS, StandIn(
        "allenai/Molmo2-4B's template without its demo styles and subtitle turn (hand-written from it)"),
        tokens=MOLMO2_SPECIALS, named_tokens={"image_token": "<|image|>", "video_token": "<|video|>"},
        hub_ids=("{name}",)),
)
