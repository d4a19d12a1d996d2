"""Tiny random-weight video-text dual encoders, one per model type `dual:` serves, as complete Hub folders.

Each is a small config of the model's own class, a tokenizer built offline the way the real one is built, and the
model's own processor classes, saved by their `save_pretrained`: `AutoModel.from_pretrained` and
`AutoProcessor.from_pretrained` load the folder unchanged, and `load_model("dual:<folder>")` runs it
(tests/vlm/test_dual_encoders.py checks its scores against a direct forward of the model). Their scores carry no
meaning. `tiny_encoder_path(kind)` builds a folder once into the user cache (`hardneg.resources.cache_dir()`), under a
versioned name: bump `VERSION` whenever a built folder would change.

| kind | classes | tokenizer (as the real checkpoint's) |
|---|---|---|
| clip | CLIPModel, CLIPProcessor | CLIP's byte-level BPE with `</w>`, lower-cased (CLIPTokenizer) |
| siglip | SiglipModel, SiglipProcessor | T5-style SentencePiece Unigram, `</s>` appended (a `tokenizers` backend) |
| siglip2 | Siglip2Model, Siglip2Processor | Gemma's BPE with byte fallback, lower-cased (Siglip2Tokenizer) |
| xclip | XCLIPModel, XCLIPProcessor with VideoMAEImageProcessor (as microsoft/xclip-*) | CLIPTokenizer |
| videoprism | VideoPrismClipModel, VideoPrismProcessor (LlavaOnevisionVideoProcessor) | T5-style Unigram (VideoPrismTokenizer) |
| pe_video | PeVideoModel (ModernBERT text, timm PE-core frames), PeVideoProcessor | byte-level BPE, `[CLS] text [SEP]` (ModernBERT) |

`pe_video`'s frame tower is a timm model (`TimmWrapper`), so that kind needs `timm` (the models extra).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

SEED = 1234
VERSION = "1"  # bump when a built folder changes: it is rebuilt under a new cache name
KINDS = ("clip", "siglip", "siglip2", "xclip", "videoprism", "pe_video")
#: CLIP's image mean and std (the tiny towers' pixels)
CLIP_MEAN_STD = {"image_mean": [0.48145466, 0.4578275, 0.40821073], "image_std": [0.26862954, 0.26130258, 0.27577711]}
#: frames per video of the tiny video-native encoders whose architecture fixes the count (X-CLIP, VideoPrism)
TINY_FRAMES = 4
#: tower sizes shared by every tiny encoder
_TOWER = {"hidden_size": 32, "intermediate_size": 64, "num_attention_heads": 2}


def _corpus() -> list[str]:
    from hardneg.models.vlm.tiny import _corpus as vlm_corpus  # the tiny video LLMs' caption text

    return vlm_corpus()


def clip_tokenizer():
    """CLIP's tokenizer (`CLIPTokenizer`: NFC, whitespace cleaned, lower-cased, CLIP's split, byte-level BPE with
    `</w>` word ends, `<|startoftext|> ... <|endoftext|>`), its merges trained here on the caption corpus."""
    from tokenizers import pre_tokenizers, trainers
    from transformers import CLIPTokenizer

    backend = CLIPTokenizer().backend_tokenizer  # CLIP's normaliser, split and post-processor, an empty vocabulary
    trainer = trainers.BpeTrainer(vocab_size=700, special_tokens=["<|startoftext|>", "<|endoftext|>"],
                                  end_of_word_suffix="</w>", initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    backend.train_from_iterator(_corpus(), trainer)
    spec = json.loads(backend.to_str())["model"]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in spec["merges"]]
    return CLIPTokenizer(vocab=spec["vocab"], merges=merges)


def videoprism_tokenizer():
    """VideoPrism's tokenizer (`VideoPrismTokenizer`: T5's SentencePiece Unigram, `<pad>`=0, `</s>`=1, `<unk>`=2, no
    EOS appended), its pieces and scores trained here with the same Metaspace split."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import VideoPrismTokenizer

    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")])
    trainer = trainers.UnigramTrainer(vocab_size=500, special_tokens=["<pad>", "</s>", "<unk>"], unk_token="<unk>",
                                      show_progress=False)
    tok.train_from_iterator(_corpus(), trainer)
    vocab = [tuple(v) for v in json.loads(tok.to_str())["model"]["vocab"]]
    if [v[0] for v in vocab[:3]] != ["<pad>", "</s>", "<unk>"]:
        raise RuntimeError(f"the tiny VideoPrism vocabulary does not start with T5's specials: {vocab[:3]}")
    return VideoPrismTokenizer(vocab=vocab, extra_ids=0)


def siglip2_tokenizer():
    """SigLIP 2's tokenizer (`Siglip2Tokenizer`: Gemma's BPE with byte fallback, spaces as "▁", lower-cased), its
    merges trained here with the same normaliser and split."""
    from tokenizers import trainers
    from transformers import Siglip2Tokenizer

    backend = Siglip2Tokenizer().backend_tokenizer  # its normaliser and split, an empty vocabulary
    specials = ["<pad>", "<eos>", "<bos>", "<unk>", "<mask>"] + [f"<0x{i:02X}>" for i in range(256)]
    backend.train_from_iterator(_corpus(), trainers.BpeTrainer(vocab_size=900, special_tokens=specials,
                                                               show_progress=False))
    spec = json.loads(backend.to_str())["model"]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in spec["merges"]]
    return Siglip2Tokenizer(vocab=spec["vocab"], merges=merges)


def siglip_tokenizer():
    """SigLIP's kind of tokenizer: a SentencePiece Unigram (T5's layout: `<pad>`=0, `</s>`=1, `<unk>`=2, `</s>`
    appended), trained here. `SiglipTokenizer` itself needs the `sentencepiece` package and a `.spm` file, which the
    lock does not have: this one is saved as a `tokenizers` backend with the same pieces-and-scores model."""
    from tokenizers import processors
    from transformers import PreTrainedTokenizerFast

    unigram = videoprism_tokenizer().backend_tokenizer  # the same Unigram, Metaspace split
    unigram.post_processor = processors.TemplateProcessing(single="$A </s>", pair="$A </s> $B </s>",
                                                           special_tokens=[("</s>", 1)])
    return PreTrainedTokenizerFast(tokenizer_object=unigram, pad_token="<pad>", eos_token="</s>", unk_token="<unk>",
                                   model_max_length=64)


def modernbert_tokenizer():
    """ModernBERT's kind of tokenizer (PE video's text tower): byte-level BPE, `[CLS] text [SEP]` around each text
    (PE's text embedding is the hidden state at `[CLS]`)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    specials = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]
    tok = Tokenizer(models.BPE(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=700, special_tokens=specials, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(_corpus(), trainer)
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
                                                       special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]",
                                   pad_token="[PAD]", mask_token="[MASK]", model_max_length=64)


def _frame_mean(kind: str):
    """CLIP, SigLIP or SigLIP 2: an image-text model whose frames `dual:` averages."""
    import transformers as tf

    tok = {"clip": clip_tokenizer, "siglip": siglip_tokenizer, "siglip2": siglip2_tokenizer}[kind]()
    text = {"vocab_size": len(tok), **_TOWER, "num_hidden_layers": 2, "max_position_embeddings": 16,
            "pad_token_id": tok.pad_token_id}
    vision = {**_TOWER, "num_hidden_layers": 2, "patch_size": 4}
    if kind == "clip":
        text.update(bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
        model = tf.CLIPModel(tf.CLIPConfig(text_config=text, vision_config={**vision, "image_size": 16},
                                           projection_dim=16))
        proc = tf.CLIPProcessor(image_processor=tf.CLIPImageProcessor(size={"shortest_edge": 16},
                                                                      crop_size={"height": 16, "width": 16}),
                                tokenizer=tok)
    elif kind == "siglip":
        model = tf.SiglipModel(tf.SiglipConfig(text_config=text, vision_config={**vision, "image_size": 16}))
        proc = tf.SiglipProcessor(image_processor=tf.SiglipImageProcessor(size={"height": 16, "width": 16}),
                                  tokenizer=tok)
    else:
        model = tf.Siglip2Model(tf.Siglip2Config(text_config=text, vision_config={**vision, "num_patches": 16}))
        proc = tf.Siglip2Processor(image_processor=tf.Siglip2ImageProcessor(patch_size=4, max_num_patches=16),
                                   tokenizer=tok)
    return model, proc


def _xclip():
    """X-CLIP: CLIP towers, the cross-frame MIT over TINY_FRAMES frames, the video-specific prompt generator; the
    frames processed by VideoMAEImageProcessor as the microsoft/xclip-* checkpoints' preprocessor config names."""
    import transformers as tf

    tok = clip_tokenizer()
    text = {"vocab_size": len(tok), **_TOWER, "num_hidden_layers": 2, "max_position_embeddings": 77,
            "pad_token_id": tok.pad_token_id, "bos_token_id": tok.bos_token_id, "eos_token_id": tok.eos_token_id}
    vision = {**_TOWER, "image_size": 16, "patch_size": 4, "num_frames": TINY_FRAMES, "num_hidden_layers": 2,
              "mit_hidden_size": 16, "mit_intermediate_size": 32, "mit_num_attention_heads": 2}
    model = tf.XCLIPModel(tf.XCLIPConfig(text_config=text, vision_config=vision, projection_dim=16,
                                         prompt_num_attention_heads=2))
    images = tf.VideoMAEImageProcessor(size={"shortest_edge": 16}, crop_size={"height": 16, "width": 16},
                                       **CLIP_MEAN_STD)
    return model, tf.XCLIPProcessor(image_processor=images, tokenizer=tok)


def _videoprism():
    """VideoPrism (LvT: the video tower with its attention-pooling head, the causal text tower with a trailing
    class token): a factorised spatial/temporal ViT over TINY_FRAMES frames; frames unnormalised in [0, 1] as its
    processor's defaults say; text padded to the processor's max_length (64, so 64 text positions)."""
    import transformers as tf

    tok = videoprism_tokenizer()
    text = {"vocab_size": len(tok), **_TOWER, "num_hidden_layers": 2, "max_position_embeddings": 64}
    vision = {**_TOWER, "image_size": 16, "num_frames": TINY_FRAMES, "tubelet_size": [1, 4, 4],
              "num_spatial_layers": 2, "num_temporal_layers": 1, "num_auxiliary_layers": 1}
    model = tf.VideoPrismClipModel(tf.VideoPrismConfig(text_config=text, vision_config=vision))
    frames = tf.LlavaOnevisionVideoProcessor(size={"height": 16, "width": 16}, do_resize=True, do_rescale=True,
                                             do_normalize=False, do_convert_rgb=True)
    return model, tf.VideoPrismProcessor(video_processor=frames, tokenizer=tok)


def _pe_video():
    """Perception Encoder video (PE-AV's video-text model): a timm PE-core ViT per frame, a small rotary transformer
    over the frames, ModernBERT text; its logit scale and bias set positive/negative as a trained one's are (they
    start at 0, which would make every score equal)."""
    import torch
    import transformers as tf

    tok = modernbert_tokenizer()
    text = {"model_type": "modernbert", "vocab_size": len(tok), **_TOWER, "num_hidden_layers": 2,
            "max_position_embeddings": 64, "global_attn_every_n_layers": 1, "local_attention": 16,
            "pad_token_id": tok.pad_token_id, "bos_token_id": tok.cls_token_id, "eos_token_id": tok.sep_token_id,
            "cls_token_id": tok.cls_token_id, "sep_token_id": tok.sep_token_id, "initializer_range": 0.1}
    frames = {"architecture": "vit_pe_core_tiny_patch16_384", "num_classes": 16, "global_pool": "map",
              "model_args": {"img_size": 32, "embed_dim": 32, "depth": 2, "num_heads": 2}}
    video = {**_TOWER, "vision_config": frames, "num_hidden_layers": 2, "head_dim": 16, "initializer_range": 0.1}
    model = tf.PeVideoModel(tf.PeVideoConfig(text_config=text, video_config=video))
    with torch.no_grad():
        model.text_video_logit_scale.fill_(1.0)
        model.text_video_logit_bias.fill_(-2.0)
    pixels = tf.PeVideoVideoProcessor(size={"height": 32, "width": 32}, do_resize=True, do_rescale=True,
                                      do_normalize=True, image_mean=[0.5] * 3, image_std=[0.5] * 3,
                                      do_convert_rgb=True)
    return model, tf.PeVideoProcessor(video_processor=pixels, tokenizer=tok)


def build_tiny_encoder(out: str | os.PathLike, kind: str) -> Path:
    """Write the tiny `kind` encoder (config, weights, tokenizer, processor files) to `out` and return it."""
    import torch

    if kind not in KINDS:
        raise ValueError(f"tiny encoder kind {kind!r}: use one of {', '.join(KINDS)}")
    if kind == "pe_video":
        try:
            import timm  # noqa: F401
        except ImportError as exc:
            raise ImportError("the tiny pe_video encoder's frame tower is a timm model: install the models extra "
                              "(pip install -e '.[models]')") from exc
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(SEED)
    model, processor = {"xclip": _xclip, "videoprism": _videoprism, "pe_video": _pe_video}.get(
        kind, lambda: _frame_mean(kind))()
    model.eval().save_pretrained(out)
    processor.save_pretrained(out)
    return out


def tiny_encoder_path(kind: str) -> Path:
    """The tiny `kind` encoder, built into the user cache on first use (atomically: a half-built folder is never
    seen)."""
    from hardneg.resources import cache_dir, cached_folder

    return cached_folder(cache_dir() / f"tiny_encoders_v{VERSION}" / kind, lambda tmp: build_tiny_encoder(tmp, kind))


if __name__ == "__main__":  # python -m hardneg.models.tiny_encoders KIND DIR
    print(build_tiny_encoder(sys.argv[2], sys.argv[1]))
