"""The built-in tiny video LLMs: random weights from a fixed seed, a tokenizer and chat template built here.

`tiny-vlm` (a Qwen2-VL), `tiny-vlm:llava-onevision`, `tiny-vlm:qwen2.5-vl` and `tiny-vlm:video-llava` run the
whole video-LLM path offline in seconds: chat template, tokenizer, frames -> pixels, the vision tower, 3-D
rotary positions (Qwen2-VL; spaced by time in Qwen2.5-VL), the
cached prefix and all three protocols. Their scores carry no meaning. Each is built once into the
user cache (`build_tiny_vlm`); the folder is a normal `save_pretrained` checkpoint, so the Hub-id path
loads it like any other (`hardneg run --model <folder>`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

SEED = 1234
VERSION = "2"  # bump when the built folders change: they are rebuilt under a new cache name
ARCHITECTURES = ("qwen2-vl", "llava-onevision", "qwen2.5-vl", "video-llava")
#: weights larger than the usual 0.02 make attention sharp, so a wrong position or mask changes scores clearly
INIT_RANGE = 0.25

#: words the tokenizer knows whole (the rest is spelt in characters): captions, prompts, answers
_WORDS = """
a an the man woman person people child children boy girl dog cat horse car ball door guitar kitchen
is are was be it he she they his her their this that of in on at to into from with and or then before after
while up down left right over under across toward away slowly quickly fast carefully
plays playing play walks walking walk runs running run opens opening open closes closing close
throws throwing throw catches catching catch jumps jumping jump pours pouring pour picks picking pick
puts putting put takes taking take moves moving move pushes pushing push pulls pulling pull
turns turning turn rides riding ride cuts cutting cut holds holding hold sits sitting sit stands standing
video show shows describe description sentence one does this entail which caption matches better best
option options answer directly give please question yes no Yes No
""".split()

QWEN_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for c in message['content'] %}"
    "{% if c['type'] == 'video' %}<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
LLAVA_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for c in message['content'] %}"
    "{% if c['type'] == 'video' %}<video>"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
#: Video-LLaVA's prompt layout ("USER: <video>\n... ASSISTANT:", transformers `models/video_llava/
#: modeling_video_llava.py`, the `forward` example), the video first as in the Hub checkpoints' templates
VIDEO_LLAVA_TEMPLATE = (
    "{% for message in messages %}{{ message['role'].upper() + ': ' }}"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for c in message['content'] if c['type'] == 'video' %}<video>\n{% endfor %}"
    "{% for c in message['content'] if c['type'] == 'text' %}{{ c['text'] + ' ' }}{% endfor %}{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}ASSISTANT:{% endif %}"
)
SPECIALS = ["<|endoftext|>", "<|unk|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
            "<|video_pad|>", "<|image_pad|>", "<video>", "<image>"]


def build_tokenizer():
    """A WordPiece tokenizer (case kept: option letters A, B, ... and Yes/No are single tokens)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,!?'\"-:;()<>|_/")
    words = sorted(set(_WORDS) - set(alphabet))
    vocab = SPECIALS + alphabet + ["##" + c for c in alphabet] + words
    tok = Tokenizer(models.WordPiece({w: i for i, w in enumerate(vocab)}, unk_token="<|unk|>"))
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()])
    tok.decoder = decoders.WordPiece()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   unk_token="<|unk|>", model_max_length=4096,
                                   additional_special_tokens=SPECIALS[2:])
    return fast


#: The tiny Qwen models' pixel settings (CLIP's mean and std; at most 32x32 pixels a frame).
QWEN_PIXELS = {"min_pixels": 16 * 16, "max_pixels": 32 * 32, "image_mean": [0.48145466, 0.4578275, 0.40821073],
               "image_std": [0.26862954, 0.26130258, 0.27577711]}


def _qwen_text_config(ids: dict[str, int], vocab: int) -> dict:
    """The text tower of the tiny Qwen2-VL and Qwen2.5-VL (3-D rotary positions, mrope)."""
    return {"vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
            "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 1024,
            "rope_scaling": {"type": "mrope", "mrope_section": [2, 1, 1]}, "rope_theta": 10000.0,
            "bos_token_id": ids["<|im_start|>"], "eos_token_id": ids["<|im_end|>"],
            "pad_token_id": ids["<|endoftext|>"], "tie_word_embeddings": False, "initializer_range": INIT_RANGE}


def _qwen_vision_token_ids(ids: dict[str, int]) -> dict[str, int]:
    """The special token ids of the Qwen configs' vision markers."""
    return {"image_token_id": ids["<|image_pad|>"], "video_token_id": ids["<|video_pad|>"],
            "vision_start_token_id": ids["<|vision_start|>"], "vision_end_token_id": ids["<|vision_end|>"]}


def _qwen2_vl(tok, vocab: int):
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    config = Qwen2VLConfig(
        text_config=_qwen_text_config(ids, vocab),
        vision_config={"depth": 2, "embed_dim": 32, "hidden_size": 32, "num_heads": 2, "mlp_ratio": 2,
                       "patch_size": 4, "temporal_patch_size": 2, "spatial_merge_size": 2, "in_channels": 3},
        **_qwen_vision_token_ids(ids),
    )
    # frames of at most 32x32 pixels: 8 frames -> 4 x 8 x 8 patches -> 64 video tokens
    pre = dict(QWEN_PIXELS)
    return Qwen2VLForConditionalGeneration(config), QWEN_TEMPLATE, pre


def _llava_onevision(tok, vocab: int):
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
    pre = {"image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}
    return LlavaOnevisionForConditionalGeneration(config), LLAVA_TEMPLATE, pre


def _qwen2_5_vl(tok, vocab: int):
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    config = Qwen2_5_VLConfig(
        text_config=_qwen_text_config(ids, vocab),
        # window attention over 2x2 merged patches, one full-attention block, as the real model alternates them;
        # 4 tokens per second so that the frames' spacing moves the temporal positions (Qwen2.5-VL's rule)
        vision_config={"depth": 2, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2, "out_hidden_size": 32,
                       "patch_size": 4, "temporal_patch_size": 2, "spatial_merge_size": 2, "in_channels": 3,
                       "window_size": 16, "fullatt_block_indexes": [1], "tokens_per_second": 4},
        **_qwen_vision_token_ids(ids),
    )
    pre = dict(QWEN_PIXELS)
    return Qwen2_5_VLForConditionalGeneration(config), QWEN_TEMPLATE, pre


def _video_llava(tok, vocab: int):
    from transformers import VideoLlavaConfig, VideoLlavaForConditionalGeneration

    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    config = VideoLlavaConfig(
        text_config={"model_type": "llama", "vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64,
                     "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                     "max_position_embeddings": 1024, "eos_token_id": ids["<|im_end|>"],
                     "pad_token_id": ids["<|endoftext|>"], "tie_word_embeddings": False,
                     "initializer_range": INIT_RANGE},
        vision_config={"model_type": "clip_vision_model", "hidden_size": 32, "intermediate_size": 64,
                       "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": 16, "patch_size": 4,
                       "projection_dim": 32},
        image_token_index=ids["<image>"], video_token_index=ids["<video>"], vision_feature_layer=-2,
        vision_feature_select_strategy="default", tie_word_embeddings=False,
    )
    # the Hub checkpoints' preprocessor layout: shorter side to `shortest_edge`, then the centre crop
    pre = {"size": {"shortest_edge": 20}, "crop_size": {"height": 16, "width": 16},
           "image_mean": [0.48145466, 0.4578275, 0.40821073], "image_std": [0.26862954, 0.26130258, 0.27577711]}
    return VideoLlavaForConditionalGeneration(config), VIDEO_LLAVA_TEMPLATE, pre


_BUILDERS = {"qwen2-vl": _qwen2_vl, "llava-onevision": _llava_onevision, "qwen2.5-vl": _qwen2_5_vl,
             "video-llava": _video_llava}


def build_tiny_vlm(out: str | os.PathLike, architecture: str = "qwen2-vl") -> Path:
    """Write a tiny random-weight video LLM of `architecture` (config, weights, tokenizer, chat template)."""
    import json

    import torch

    if architecture not in ARCHITECTURES:
        raise ValueError(f"tiny-vlm architecture {architecture!r}: use one of {', '.join(ARCHITECTURES)}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tok = build_tokenizer()
    make = _BUILDERS[architecture]
    torch.manual_seed(SEED)
    model, template, pre = make(tok, len(tok))
    model = model.eval()
    tok.chat_template = template
    tok.save_pretrained(out)
    model.save_pretrained(out)
    (out / "chat_template.jinja").write_text(template, encoding="utf-8")
    (out / "video_preprocessor_config.json").write_text(json.dumps(pre, indent=2) + "\n", encoding="utf-8")
    return out


def tiny_vlm_path(architecture: str = "qwen2-vl") -> Path:
    """The tiny video LLM of `architecture`, built into the user cache on first use."""
    from hardneg.resources import cache_dir

    folder = cache_dir() / f"tiny_vlm_v{VERSION}" / architecture
    if not (folder / "config.json").is_file():
        import shutil
        import tempfile

        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{architecture}-", dir=folder.parent))
        try:
            build_tiny_vlm(tmp, architecture)
            try:
                tmp.rename(folder)  # atomic: a half-built folder is never seen
            except OSError:  # built meanwhile by another process
                pass
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return folder


if __name__ == "__main__":
    print(build_tiny_vlm(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "qwen2-vl"))
