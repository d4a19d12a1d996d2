"""The generic dual encoder (`hardneg.models.dual`): CLIP, SigLIP and SigLIP 2 on video through their own processor,
frame embeddings L2-normalised and averaged, against a direct forward of the model (its `image_embeds` and
`text_embeds` outputs, not the adapter's `get_*_features` calls)."""

from __future__ import annotations

import numpy as np
import pytest

from hardneg.models import load_model

CAPTIONS = ["a man opens the door", "the dog runs across the park", "café"]


def _tokenizer():
    from hardneg.models.vlm.tiny import build_tokenizer

    tok = build_tokenizer()
    return tok


def build(kind: str, out):
    """A tiny random-weight checkpoint of `kind` with its own processor classes, saved as a Hub folder."""
    import torch
    import transformers as tf

    torch.manual_seed(0)
    tok = _tokenizer()
    vocab = len(tok)
    text = {"vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
            "num_attention_heads": 2, "max_position_embeddings": 16, "pad_token_id": tok.pad_token_id}
    vision = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
              "patch_size": 4}
    if kind == "clip":
        model = tf.CLIPModel(tf.CLIPConfig(text_config={**text, "eos_token_id": tok.eos_token_id},
                                           vision_config={**vision, "image_size": 16}, projection_dim=16))
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
    model.eval().save_pretrained(out)
    proc.save_pretrained(out)
    return out


@pytest.mark.parametrize("kind", ["clip", "siglip", "siglip2"])
def test_frame_mean_equals_a_direct_forward(kind, tmp_path):
    import torch
    from transformers import AutoModel, AutoProcessor

    folder = build(kind, tmp_path / kind)
    m = load_model(f"dual:{folder}", device="cpu")
    frames = np.random.default_rng(1).integers(0, 256, (6, 20, 24, 3), dtype=np.uint8)
    got = m.score(frames, CAPTIONS)

    model, proc = AutoModel.from_pretrained(folder).eval(), AutoProcessor.from_pretrained(folder)
    padding = "max_length" if kind != "clip" else True
    enc = {**proc.tokenizer(CAPTIONS, padding=padding, truncation=True, max_length=16, return_tensors="pt"),
           **proc.image_processor(images=list(frames), return_tensors="pt")}
    with torch.inference_mode():
        out = model(**enc)
    img = torch.nn.functional.normalize(out.image_embeds.float(), dim=-1).mean(0)
    txt = torch.nn.functional.normalize(out.text_embeds.float(), dim=-1)
    want = (txt @ torch.nn.functional.normalize(img, dim=0)).numpy()
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
    assert m.identity()["adapter"] == "dual-frame-mean"


def test_a_model_without_image_features_is_refused(tmp_path):
    from hardneg.models.vlm.tiny import tiny_vlm_path

    with pytest.raises(ValueError, match="dual encoder|model_type"):
        load_model(f"dual:{tiny_vlm_path('qwen2-vl')}", device="cpu")
