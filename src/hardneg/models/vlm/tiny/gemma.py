"""The tiny Gemma 4 types: Gemma 4 and Gemma 4 Unified (Gemma 4's turn layout and tokens)."""

from __future__ import annotations

from hardneg.models.vlm.tiny.builders import INIT_RANGE
from hardneg.models.vlm.tiny.record import PublishedTemplate, StandIn, TinyType
from hardneg.models.vlm.tiny.tokenizer import SPECIALS


#: Gemma 4's control tokens (its prompt-formatting guide: turns, image / audio markers and placeholders; the
#: processor adds "<|video|>")
GEMMA4_SPECIALS = ("<bos>", "<|turn>", "<turn|>", "<|image>", "<image|>", "<|image|>", "<|video|>", "<|audio>", "<audio|>",
                   "<|audio|>", "<|channel>", "<channel|>", "<|think|>")
#: Gemma 4's turn layout ("<bos><|turn>user\n...<turn|>\n<|turn>model\n", ai.google.dev prompt-formatting-gemma4),
#: the video as its processor's "<|video|>" placeholder; simplified: no system turn, tools or thinking channel. The
#: gemma4 folder carries the published template (`hardneg.models.vlm.published`); this one stays Gemma 4 Unified's
#: stand-in
GEMMA4_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "<|turn>{{ 'model' if message['role'] == 'assistant' else message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for c in message['content'] %}"
    "{% if c['type'] == 'video' %}<|video|>{% elif c['type'] == 'image' %}<|image|>"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<turn|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|turn>model\n{% endif %}"
)


#: the frame processors' settings of the types `_gemma4` builds (their records' `pixels`)
GEMMA4_PIXELS = {"patch_size": 4, "max_soft_tokens": 70, "pooling_kernel_size": 2}


def _gemma4(tok, vocab: int, pixels: dict):
    """Gemma 4: each frame "MM:SS <|image><|video|>...<image|>" joined by spaces (its processor writes them), a
    vision tower of 2-D patch positions with 2x2 pooling, a language model with sliding and full attention layers
    and per-layer input embeddings. Its processor takes an audio feature extractor too (a default one of its own
    class: unused for video). Departure: the tokenizer is the tiny byte-level BPE (Gemma's own is a SentencePiece
    BPE with byte fallback and no dummy prefix; both keep every byte and split no control token)."""
    from transformers import (Gemma4AudioFeatureExtractor, Gemma4Config, Gemma4ForConditionalGeneration,
                              Gemma4ImageProcessor, Gemma4Processor, Gemma4VideoProcessor)

    tok.bos_token = "<bos>"
    tok.model_max_length = 8192  # 64 frames of at least 63 tokens each fit (tests/vlm/test_vlm_generic.py)
    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS + list(GEMMA4_SPECIALS)}
    config = Gemma4Config(
        text_config={"vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                     "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
                     "layer_types": ["sliding_attention", "full_attention"], "sliding_window": 8192,
                     "max_position_embeddings": 8192, "vocab_size_per_layer_input": vocab,
                     "hidden_size_per_layer_input": 8, "pad_token_id": ids["<|endoftext|>"],
                     "eos_token_id": ids["<turn|>"], "bos_token_id": ids["<bos>"], "tie_word_embeddings": False,
                     "initializer_range": INIT_RANGE},
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                       "num_key_value_heads": 2, "head_dim": 16, "patch_size": 4, "pooling_kernel_size": 2,
                       "position_embedding_size": 64, "initializer_range": INIT_RANGE},
        audio_config=None, boi_token_id=ids["<|image>"], eoi_token_id=ids["<image|>"],
        image_token_id=ids["<|image|>"], video_token_id=ids["<|video|>"], boa_token_id=ids["<|audio>"],
        eoa_token_index=ids["<audio|>"], audio_token_id=ids["<|audio|>"], tie_word_embeddings=False,
    )
    # 4-pixel patches pooled 2x2; 70 soft tokens a frame at most (the smallest budget the processors accept)
    processor = Gemma4Processor(feature_extractor=Gemma4AudioFeatureExtractor(),
                                image_processor=Gemma4ImageProcessor(**pixels),
                                video_processor=Gemma4VideoProcessor(**pixels, do_sample_frames=False),
                                tokenizer=tok, chat_template=GEMMA4_TEMPLATE, image_seq_length=70)
    return Gemma4ForConditionalGeneration(config), GEMMA4_TEMPLATE, processor


def _gemma4_unified(tok, vocab: int, pixels: dict):
    """Gemma 4 Unified: Gemma 4's turn layout, tokens and per-frame "MM:SS <|image><|video|>...<image|>" (its
    processor writes them), its own vision encoder (patches pooled 2x2, 2-D patch positions) and a language model
    whose vision tokens attend to each other both ways (`use_bidirectional_attention="vision"`, from the processor's
    `mm_token_type_ids`). Same tokenizer departure as the tiny Gemma 4."""
    from transformers import (Gemma4UnifiedAudioFeatureExtractor, Gemma4UnifiedConfig,
                              Gemma4UnifiedForConditionalGeneration, Gemma4UnifiedImageProcessor, Gemma4UnifiedProcessor,
                              Gemma4UnifiedVideoProcessor)

    tok.bos_token = "<bos>"
    tok.model_max_length = 8192
    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS + list(GEMMA4_SPECIALS)}
    config = Gemma4UnifiedConfig(
        text_config={"vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                     "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
                     "layer_types": ["sliding_attention", "full_attention"], "sliding_window": 8192,
                     "max_position_embeddings": 8192, "pad_token_id": ids["<|endoftext|>"],
                     "eos_token_id": ids["<turn|>"], "bos_token_id": ids["<bos>"], "tie_word_embeddings": False,
                     "initializer_range": INIT_RANGE},
        vision_config={"patch_size": 4, "pooling_kernel_size": 2, "mm_embed_dim": 32, "mm_posemb_size": 64,
                       "output_proj_dims": 32, "initializer_range": INIT_RANGE},
        audio_config=None, boi_token_id=ids["<|image>"], eoi_token_id=ids["<image|>"],
        image_token_id=ids["<|image|>"], video_token_id=ids["<|video|>"], boa_token_id=ids["<|audio>"],
        eoa_token_index=ids["<audio|>"], audio_token_id=ids["<|audio|>"], tie_word_embeddings=False,
    )
    processor = Gemma4UnifiedProcessor(feature_extractor=Gemma4UnifiedAudioFeatureExtractor(),
                                       image_processor=Gemma4UnifiedImageProcessor(**pixels),
                                       video_processor=Gemma4UnifiedVideoProcessor(**pixels, do_sample_frames=False),
                                       tokenizer=tok, chat_template=GEMMA4_TEMPLATE, image_seq_length=70)
    return Gemma4UnifiedForConditionalGeneration(config), GEMMA4_TEMPLATE, processor


#: the names Gemma 4's processor reads from its tokenizer (Gemma 4 Unified's are the same)
GEMMA4_NAMED = {"boi_token": "<|image>", "eoi_token": "<image|>", "image_token": "<|image|>", "video_token": "<|video|>",
                "audio_token": "<|audio|>", "boa_token": "<|audio>", "eoa_token": "<audio|>"}

RECORDS = (
    TinyType("gemma4", "gemma4", _gemma4, GEMMA4_PIXELS, PublishedTemplate(
        "gemma4.jinja", "https://github.com/ggml-org/llama.cpp/blob/75f1ba7389067a9f90082515e124c377a1e104b2/"
        "models/templates/gemma4.jinja", "75f1ba7389067a9f90082515e124c377a1e104b2",
        "87294f1fa94c3733b7f325252567c990edfd0269ff7df285f995ca5226c8989b",
        "llama.cpp's copy of the Gemma 4 checkpoints' chat template (models/templates/, 12,133 characters): the "
        "video as \"\\n\\n<|video|>\\n\\n\", user text trimmed, the generation prompt \"<|turn>model\\n"
        "<|channel>thought\\n<channel|>\" without thinking"),
        tokens=GEMMA4_SPECIALS, named_tokens=GEMMA4_NAMED),
    TinyType("gemma4-unified", "gemma4_unified", _gemma4_unified, GEMMA4_PIXELS, StandIn(
        "Gemma 4's template (`tiny.GEMMA4_TEMPLATE`, hand-written); Gemma 4 Unified's own was not found",
        also_searched="llama.cpp models/templates"),
        tokens=GEMMA4_SPECIALS, named_tokens=GEMMA4_NAMED),
)
