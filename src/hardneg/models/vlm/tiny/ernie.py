"""The tiny ERNIE 4.5 VL (MoE): text and vision experts, frame timestamps drawn onto the frames."""

from __future__ import annotations

from pathlib import Path

from hardneg.models.vlm.tiny.builders import INIT_RANGE
from hardneg.models.vlm.tiny.record import PublishedTemplate, TinyType
from hardneg.models.vlm.tiny.tokenizer import SPECIALS


#: ERNIE 4.5 VL's vision tokens (its tokenizer names them image_token, image_start_token, ... video_end_token)
ERNIE_NAMED = {"image_token": "<|IMAGE_PLACEHOLDER|>", "image_start_token": "<|IMAGE_START|>",
               "image_end_token": "<|IMAGE_END|>", "video_token": "<|VIDEO_PLACEHOLDER|>",
               "video_start_token": "<|VIDEO_START|>", "video_end_token": "<|VIDEO_END|>"}
#: ERNIE 4.5 VL's "User: ... \nAssistant: " turns, the video between its start and end tokens: the builder's
#: fallback; the tiny folder carries the published template instead (`hardneg.models.vlm.published`)
ERNIE_TEMPLATE = (
    "<|begin_of_sentence|>{% for message in messages %}"
    "{{ 'User: ' if message['role'] == 'user' else ('Assistant: ' if message['role'] == 'assistant' else '') }}"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for c in message['content'] %}"
    "{% if c['type'] == 'video' %}<|VIDEO_START|><|VIDEO_PLACEHOLDER|><|VIDEO_END|>"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}"
    "{{ '<|end_of_sentence|>' if message['role'] == 'assistant' else '\\n' }}"
    "{% endfor %}{% if add_generation_prompt %}Assistant: {% endif %}"
)


def _font() -> str:
    """A TrueType font on this machine for ERNIE's frame timestamps (its own, Roboto, is a Hub file): matplotlib's
    DejaVu Sans (the `plots` extra), else the system's; the built folder carries a copy (its processor saves it)."""
    places = []
    try:
        import matplotlib

        places.append(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf")
    except ImportError:
        pass
    places.append(Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"))
    for p in places:
        if p.is_file():
            return str(p)
    raise RuntimeError("the tiny ERNIE 4.5 VL model draws frame timestamps with a TrueType font: install matplotlib "
                       "(pip install 'video-hardneg[plots]') or the DejaVu fonts")


#: the frame processors' settings of the types `_ernie4_5_vl_moe` builds (their records' `pixels`)
ERNIE4_5_VL_MOE_PIXELS = {"size": {"shortest_edge": 16 * 16, "longest_edge": 32 * 32}, "patch_size": 4, "merge_size": 2,
                          "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}


def _ernie4_5_vl_moe(tok, vocab: int, pixels: dict):
    """ERNIE 4.5 VL (MoE): a native-resolution vision tower (2x2 spatial and 2-frame temporal merge), separate text
    and vision experts per layer (the processor's `moe_mm_token_type_ids` route each token), 3-D rotary positions;
    its video processor draws each frame's timestamp onto the frame. Its folder carries the published chat template
    (`hardneg.models.vlm.published`; `ERNIE_TEMPLATE` is the builder's fallback). Departure: DejaVu Sans for the
    drawn timestamps (Roboto, its font, is a Hub file)."""
    from transformers import (Ernie4_5_VLMoeConfig, Ernie4_5_VLMoeForConditionalGeneration,
                              Ernie4_5_VLMoeImageProcessor, Ernie4_5_VLMoeProcessor, Ernie4_5_VLMoeVideoProcessor)

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS + list(ERNIE_NAMED.values())}
    config = Ernie4_5_VLMoeConfig(
        text_config={"vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                     "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 4096,
                     "moe_intermediate_size": [32, 16], "moe_k": 2, "moe_num_experts": 4, "moe_num_shared_experts": 1,
                     "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [1, 1, 2]},
                     "pad_token_id": ids["<|endoftext|>"], "bos_token_id": ids["<|im_start|>"],
                     "eos_token_id": ids["<|im_end|>"], "tie_word_embeddings": False, "initializer_range": INIT_RANGE},
        vision_config={"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "patch_size": 4,
                       "spatial_merge_size": 2, "temporal_merge_size": 2, "initializer_range": INIT_RANGE},
        image_token_id=ids[ERNIE_NAMED["image_token"]], image_start_token_id=ids[ERNIE_NAMED["image_start_token"]],
        image_end_token_id=ids[ERNIE_NAMED["image_end_token"]], video_token_id=ids[ERNIE_NAMED["video_token"]],
        video_start_token_id=ids[ERNIE_NAMED["video_start_token"]],
        video_end_token_id=ids[ERNIE_NAMED["video_end_token"]], tie_word_embeddings=False,
    )
    processor = Ernie4_5_VLMoeProcessor(
        image_processor=Ernie4_5_VLMoeImageProcessor(**pixels),
        video_processor=Ernie4_5_VLMoeVideoProcessor(**pixels, temporal_patch_size=2, do_sample_frames=False,
                                                     font=_font()),
        tokenizer=tok, chat_template=ERNIE_TEMPLATE)
    return Ernie4_5_VLMoeForConditionalGeneration(config), ERNIE_TEMPLATE, processor


RECORDS = (
    TinyType("ernie4.5-vl-moe", "ernie4_5_vl_moe", _ernie4_5_vl_moe, ERNIE4_5_VL_MOE_PIXELS, PublishedTemplate(
        "ernie4_5_vl_moe.jinja", "https://github.com/huggingface/transformers/blob/19c5b132e3d010f0537fd49a68219a9c0ef1ae2d/"
        "src/transformers/models/ernie4_5_vl_moe/convert_ernie4_5_vl_moe_to_hf.py",
        "19c5b132e3d010f0537fd49a68219a9c0ef1ae2d", "ae9362f8b848c8a26501149150db4370449604e2b9eb67d7e923acd6589d00bf",
        "`DEFAULT_CHAT_TEMPLATE` of transformers' ERNIE 4.5 VL conversion script, the template it writes into the "
        "checkpoints it converts (baidu/ERNIE-4.5-VL-28B-A3B-PT by default), kept as written there (its "
        "\"Video 1:\" label, the indented newlines inside its string literals, \"<|end_of_sentence |>\"); the "
        "generation prompt is \"\\nAssistant: <think>\\n\\n</think>\\n\\n\" unless thinking is asked for"),
        tokens=("<|begin_of_sentence|>", "<|end_of_sentence|>"), named_tokens=ERNIE_NAMED),
)
