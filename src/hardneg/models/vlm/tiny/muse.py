"""The tiny Muse types: Muse Glimmer and Muse Spark (the same vision path over experts, with audio)."""

from __future__ import annotations

from functools import partial

from hardneg.models.vlm.tiny.builders import INIT_RANGE, LLAVA_TEMPLATE
from hardneg.models.vlm.tiny.record import CHATML, StandIn, TinyType
from hardneg.models.vlm.tiny.tokenizer import SPECIALS


#: Muse Glimmer's vision tokens (its processor's names: patches, image and video markers, frame separators)
MUSE_SPECIALS = ("<|patch|>", "<|image_start|>", "<|image_end|>", "<|video|>", "<|vid_frame_separator|>", "<|vid_start|>",
                 "<|vid_end|>")


#: the frame processors' settings of the types `_muse_glimmer` builds (their records' `pixels`)
MUSE_GLIMMER_PIXELS = {"patch_size": 4, "merge_size": 2, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}


def _muse_glimmer(tok, vocab: int, pixels: dict, spark: bool = False):
    """Muse Glimmer: a vision tower with 2-frame temporal groups, window attention and a 2x2 pixel shuffle, each group
    "Time: {t}s" + its "<|video|>" tokens between "<|vid_start|>", "<|vid_frame_separator|>" and "<|vid_end|>" (its
    processor writes them), a language model of sliding and full attention layers with soft-capped logits. Its
    processor needs the video's metadata back from its video processor (`return_metadata`, set in the saved video
    processor config). Departure: ChatML with its video token as the chat template (its published one is not
    available offline here). `spark`: Muse Spark, the same vision path and processors over a mixture-of-experts
    language model (4 experts, 2 routed) with an audio encoder (a tiny default one of its class: unused for video)."""
    import transformers
    from transformers import MuseGlimmerImageProcessor, MuseGlimmerVideoProcessor

    prefix = "MuseSpark" if spark else "MuseGlimmer"
    MuseGlimmerConfig, MuseGlimmerForConditionalGeneration, MuseGlimmerProcessor = (
        getattr(transformers, prefix + n) for n in ("Config", "ForConditionalGeneration", "Processor"))
    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS + list(MUSE_SPECIALS)}
    experts = {"num_local_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
               "moe_hidden_size": 32} if spark else {}
    audio = ({"audio_config": {"hidden_sizes": [8, 8, 8, 16], "depths": [1, 1, 1, 1], "out_hidden_size": 32},
              "audio_token_id": tok.convert_tokens_to_ids("<|audio|>")} if spark else {})
    config = MuseGlimmerConfig(
        text_config={"vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                     "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8, "max_position_embeddings": 4096,
                     "sliding_window": 4096, "layer_types": ["sliding_attention", "full_attention"],
                     "pad_token_id": ids["<|endoftext|>"], "bos_token_id": ids["<|im_start|>"],
                     "eos_token_id": ids["<|im_end|>"], "tie_word_embeddings": False, "initializer_range": INIT_RANGE,
                     **experts},
        vision_config={"patch_size": 4, "pos_emb_height": 8, "pos_emb_width": 8, "num_attention_heads": 2,
                       "num_hidden_layers": 2, "hidden_size": 32, "intermediate_size": 64, "max_position_embeddings": 64},
        out_hidden_size=128, projector_hidden_size=32, image_token_id=ids["<|patch|>"], video_token_id=ids["<|video|>"],
        tie_word_embeddings=False, **audio,
    )
    template = LLAVA_TEMPLATE.replace("<video>", "<|video|>")
    more = {"feature_extractor": transformers.MuseSparkFeatureExtractor()} if spark else {}
    processor = MuseGlimmerProcessor(
        **more, image_processor=MuseGlimmerImageProcessor(**pixels),
        video_processor=MuseGlimmerVideoProcessor(**pixels, max_video_frame_tokens=4, do_sample_frames=False,
                                                  return_metadata=True),
        tokenizer=tok, chat_template=template)
    return MuseGlimmerForConditionalGeneration(config), template, processor


RECORDS = (
    TinyType("muse-glimmer", "muse_glimmer", _muse_glimmer, MUSE_GLIMMER_PIXELS, StandIn(CHATML), tokens=MUSE_SPECIALS),
    TinyType("muse-spark", "muse_spark", partial(_muse_glimmer, spark=True), MUSE_GLIMMER_PIXELS, StandIn(CHATML),
             tokens=MUSE_SPECIALS + ("<|audio|>", "<|soft_audio_start|>", "<|soft_audio_end|>")),
)
