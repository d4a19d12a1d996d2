"""Video LLMs (issue 25): cached prefix == one forward per caption, the readouts, the errors, the Hub-id path.

Both tiny architectures (Qwen2-VL with its 3-D rotary positions, LLaVA-OneVision) run the real path: the
chat template, the tokenizer, frames -> pixels, the vision tower, the cache, each protocol. Every check
compares numbers computed two ways, or says which bad input gets which error.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from hardneg import benchmarks
from hardneg.benchmarks.base import VLMPrompt
from hardneg.models import load_model, resolve
from hardneg.models.vlm.support import tiny_names
from hardneg.models.vlm.model import DEFAULT_PROMPTS
from hardneg.models.vlm.engine import LETTERS

ARCHS = tiny_names()  # every type `hardneg models` marks verified (hardneg.models.vlm.support)
CAPTIONS = ["a man opens the door", "a man closes the door slowly", "the dog runs across the park"]


@pytest.fixture(scope="module", params=ARCHS)
def model(request):
    return load_model(request.param, device="cpu")


@pytest.fixture(scope="module")
def frames():
    return np.random.default_rng(0).integers(0, 256, (8, 40, 56, 3), dtype=np.uint8)


@pytest.mark.parametrize("protocol", list(DEFAULT_PROMPTS))
def test_cached_prefix_equals_one_forward_per_caption(model, frames, protocol):
    model.spec = DEFAULT_PROMPTS[protocol]
    model.engine.caption_batch = 2  # two chunks: the prefix cache is copied, never consumed
    cached = model.score(frames, CAPTIONS)
    naive = model.score(frames, CAPTIONS, naive=True)
    assert cached.shape == (len(CAPTIONS),) and np.isfinite(cached).all()
    np.testing.assert_allclose(cached, naive, rtol=0, atol=1e-4)
    batched = model.score(frames, CAPTIONS, full_batch=True)  # right padding and the repeated video agree too
    np.testing.assert_allclose(cached, batched, rtol=0, atol=1e-4)
    other = model.score(frames[::-1].copy(), CAPTIONS)  # the video reaches the scores
    assert np.abs(other - cached).max() > 1e-3


def test_a_wrong_position_after_the_cache_is_caught(frames, likelihood_model_without_rope_delta):
    """Qwen2-VL continues its 3-D positions from the prefix's rope delta; ignore it and the scores move."""
    m = likelihood_model_without_rope_delta("tiny-vlm")
    assert np.abs(m.score(frames, CAPTIONS) - m.score(frames, CAPTIONS, naive=True)).max() > 1e-3


def _raw_last_logits(model, frames, captions, spec):
    """Logits at the last position of the one full sequence, from a bare model forward."""
    import torch

    eng = model.engine
    video = eng.family.video_inputs(frames, eng.dtype, eng.device)
    seq = eng.sequences(spec, captions, video.n_tokens)[0]
    ids = torch.tensor([seq.ids])
    extra = dict(video.kwargs)
    if eng.takes_token_types:
        extra["mm_token_type_ids"] = (ids == eng.video_token_id).long() * 2
    if eng.family.mrope:  # Qwen's positions (tests/vlm/test_qwen_positions.py), not the installed get_rope_index's
        extra["position_ids"] = eng.family.position_ids(ids, None, video)
    with torch.inference_mode():
        return model.engine.model(input_ids=ids, **extra).logits[0, -1].double(), seq


def _word(vocab, word: str) -> str:
    """The vocabulary entry of a word as a tokenizer spells it alone: itself (byte-level BPE), or with
    SentencePiece's word-start mark (Llama / Vicuna: "▁Yes")."""
    return "\u2581" + word if "\u2581" + word in vocab else word


def test_choice_letter_reads_each_options_letter(model, frames):
    spec = DEFAULT_PROMPTS["choice-letter"]
    model.spec = spec
    got = model.score(frames, CAPTIONS)
    logits, seq = _raw_last_logits(model, frames, CAPTIONS, spec)
    vocab = model.engine.tok.get_vocab()
    want = [float(logits[vocab[_word(vocab, LETTERS[k])]]) for k in range(len(CAPTIONS))]  # looked up by name
    np.testing.assert_allclose(got, want, atol=1e-4)
    text = model.engine.tok.decode(seq.ids)
    assert [text.index(c) for c in CAPTIONS] == sorted(text.index(c) for c in CAPTIONS)  # options in item order
    assert len(set(model.engine.letter_ids())) == len(LETTERS)  # one distinct token per letter


def test_yes_probability_is_videocons_ratio(model, frames):
    spec = DEFAULT_PROMPTS["yes-probability"]
    model.spec = spec
    got = model.score(frames, CAPTIONS[:1])[0]
    logits, _ = _raw_last_logits(model, frames, CAPTIONS[:1], spec)
    vocab = model.engine.tok.get_vocab()
    p = logits.softmax(-1)
    yes, no = vocab[_word(vocab, "Yes")], vocab[_word(vocab, "No")]
    assert got == pytest.approx(float(p[yes] / (p[yes] + p[no])), abs=1e-6)


def test_caption_likelihood_reads_only_the_captions_tokens(model, frames):
    model.spec = DEFAULT_PROMPTS["caption-likelihood"]
    eng = model.engine
    video = eng.family.video_inputs(frames, eng.dtype, eng.device)
    seq = eng.sequences(model.spec, CAPTIONS[:1], video.n_tokens)[0]
    a, b = seq.span
    assert eng.tok.decode(seq.ids[a:b]).replace(" ", "") == CAPTIONS[0].replace(" ", "")


def test_each_benchmark_declares_a_protocol_and_the_user_overrides_it(model):
    declared = {n: benchmarks.get(n).vlm.protocol for n in benchmarks.names()}
    assert declared["tempcompass"] == "choice-letter"
    assert declared["videocon-ssv2"] == declared["videocon-atphard"] == "yes-probability"
    assert declared["vilma"] == "caption-likelihood"
    assert model.use_protocol(benchmarks.get("tempcompass")).protocol == "choice-letter"
    assert "protocol" in model.identity() and model.identity()["prompt"] == benchmarks.get("tempcompass").vlm.prompt
    assert model.use_protocol(benchmarks.get("tempcompass"), protocol="yes-probability").protocol == "yes-probability"
    mine = "{video}\nIs this it: {caption}?"
    spec = model.use_protocol(benchmarks.get("vitatecs"), protocol="yes-probability", prompt=mine)
    assert spec.prompt == mine and model.identity()["prompt_version"] == "user"
    assert "P(Yes)" in model.score_name


@pytest.mark.parametrize("protocol, prompt, words", [
    ("nope", None, ["unknown video-LLM protocol", "caption-likelihood"]),
    ("yes-probability", "{video} does it show this?", ["{caption}", "once"]),
    ("choice-letter", "{video} {caption}", ["{options}"]),
    ("caption-likelihood", "{caption} is shown in {video}", ["must end with {caption}"]),
])
def test_bad_protocol_or_prompt_is_a_clear_error(model, protocol, prompt, words):
    with pytest.raises(ValueError) as err:
        model.use_protocol(benchmarks.get("vitatecs"), protocol=protocol, prompt=prompt)
    assert all(w in str(err.value) for w in words), str(err.value)


def test_choice_letter_on_a_retrieval_benchmark_is_refused(model):
    with pytest.raises(ValueError, match="ranks videos for each query"):
        model.use_protocol(benchmarks.get("fire"), protocol="choice-letter")


def test_a_caption_longer_than_the_context_is_a_clear_error(model, frames):
    model.spec = VLMPrompt()
    with pytest.raises(ValueError, match="longer than the model's context of 1024"):
        model.score(frames, ["a man " * 600])


def test_a_protocol_for_a_dual_encoder_is_refused():
    from hardneg.models.prompting import bind_protocol

    with pytest.raises(ValueError, match="scores one way only"):
        bind_protocol(load_model("tiny-clip"), benchmarks.get("vitatecs"), protocol="yes-probability")
    assert bind_protocol(load_model("tiny-clip"), benchmarks.get("vitatecs")) is None


def test_an_image_only_model_is_named_with_what_to_do(tmp_path):
    from transformers import LlavaConfig

    folder = tmp_path / "image-llava"
    LlavaConfig(text_config={"model_type": "qwen2", "vocab_size": 64, "hidden_size": 16, "num_hidden_layers": 1,
                             "num_attention_heads": 2, "intermediate_size": 32},
                vision_config={"model_type": "siglip_vision_model", "hidden_size": 16, "num_hidden_layers": 1,
                               "num_attention_heads": 2, "intermediate_size": 32, "image_size": 16, "patch_size": 4},
                architectures=["LlavaForConditionalGeneration"]).save_pretrained(folder)
    with pytest.raises(ValueError) as err:
        load_model(f"vlm:{folder}", device="cpu")
    msg = str(err.value)
    assert "LlavaForConditionalGeneration" in msg and "no video input" in msg and "docs/models.md" in msg
    with pytest.raises(ValueError, match="model_type 'llava'"):  # the folder alone: the registry says what it takes
        load_model(str(folder))


def test_a_save_pretrained_folder_loads_by_path_like_a_hub_id(tmp_path, frames):
    """`--model <folder>` (what a Hub id downloads to) takes the same path: same scores as the built-in."""
    from hardneg.models.vlm.tiny import tiny_vlm_path

    folder = tmp_path / "my-qwen2-vl"
    shutil.copytree(tiny_vlm_path("qwen2-vl"), folder)
    assert json.loads((folder / "config.json").read_text())["model_type"] == "qwen2_vl"
    assert resolve(str(folder)) == ("vlm", str(folder))
    assert resolve("Qwen/Qwen2-VL-7B-Instruct")[0] == "vlm"
    assert resolve("llava-hf/llava-onevision-qwen2-7b-ov-hf")[0] == "vlm"
    mine, builtin = load_model(str(folder), device="cpu"), load_model("tiny-vlm", device="cpu")
    assert mine.model_id == str(folder) and mine.revision == builtin.revision  # the same content hash
    np.testing.assert_allclose(mine.score(frames, CAPTIONS), builtin.score(frames, CAPTIONS), atol=1e-6)


def test_the_cli_and_run_model_refuse_bad_protocol_settings(tmp_path, capsys):
    import hardneg
    from hardneg.cli import main as hardneg_main

    with pytest.raises(ValueError, match="scores one way only"):
        hardneg.run_model("tiny-clip", benchmarks="vitatecs", out=tmp_path / "a", resamples=0, protocol="yes-probability")
    with pytest.raises(SystemExit):  # argparse names the choices
        hardneg_main(["run", "--model", "tiny-vlm", "--out", str(tmp_path / "b"), "--protocol", "nope"])
    assert "caption-likelihood" in capsys.readouterr().err
    code = hardneg_main(["run", "--model", "tiny-vlm", "--benchmarks", "vitatecs", "--out", str(tmp_path / "c"),
                         "--device", "cpu", "--prompt", "{video} describe it"])
    assert code != 0 and "{caption}" in capsys.readouterr().err


@pytest.fixture(scope="module")
def llava_next_video_folder(tmp_path_factory):
    """A third architecture, random weights saved by `save_pretrained` with the package's tokenizer (a Hub
    checkpoint's folder, as `hardneg run --model <folder or id>` loads it)."""
    import torch
    from transformers import LlavaNextVideoConfig, LlavaNextVideoForConditionalGeneration

    from hardneg.models.vlm.tiny import LLAVA_TEMPLATE, SPECIALS, build_tokenizer

    tok = build_tokenizer()
    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    config = LlavaNextVideoConfig(
        text_config={"model_type": "qwen2", "vocab_size": len(tok), "hidden_size": 32, "intermediate_size": 64,
                     "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                     "max_position_embeddings": 1024, "initializer_range": 0.25, "pad_token_id": ids["<|endoftext|>"]},
        vision_config={"model_type": "clip_vision_model", "hidden_size": 32, "intermediate_size": 64,
                       "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": 16, "patch_size": 4,
                       "projection_dim": 32},
        image_token_index=ids["<image>"], video_token_index=ids["<video>"], vision_feature_layer=-1,
        vision_feature_select_strategy="default", tie_word_embeddings=False)
    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("hub") / "llava-next-video-tiny"
    tok.chat_template = LLAVA_TEMPLATE
    tok.save_pretrained(folder)
    LlavaNextVideoForConditionalGeneration(config).eval().save_pretrained(folder)
    return folder


@pytest.mark.parametrize("protocol", list(DEFAULT_PROMPTS))
def test_llava_next_video_from_a_save_pretrained_folder(llava_next_video_folder, frames, protocol):
    m = load_model(str(llava_next_video_folder), device="cpu")
    assert m.engine.family.name == "llava-video" and m.adapter == "video-llm"
    m.spec = DEFAULT_PROMPTS[protocol]
    np.testing.assert_allclose(m.score(frames, CAPTIONS), m.score(frames, CAPTIONS, naive=True), rtol=0, atol=1e-4)
