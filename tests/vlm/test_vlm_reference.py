"""The engine's token ids equal the model's own processor's: one chat-template call and one tokenizer call on the
whole conversation, the video placeholder expanded to the video's token count.

That is what every `transformers` processor of these families does (`processing_*.py`, `__call__`: the rendered
text's video token repeated `n` times, then one `tokenizer(text)` call); the reference below is written from that
description, not from the engine's code (which cuts the text at the video and at the caption to share a prefix
and to keep captions as text). A tokenizer whose pre-tokenizer prefixes the first word of each call (Metaspace,
"▁": the Vicuna / Llama tokenizers of Video-LLaVA and LLaVA-NeXT-Video) shows the difference: text after the
video encoded in its own call gains a "▁" that the whole conversation does not have.
"""

from __future__ import annotations

import numpy as np
import pytest

from chat_reference import conversation
from hardneg.models import load_model
from hardneg.models.vlm.support import tiny_names
from hardneg.models.vlm.model import DEFAULT_PROMPTS

ARCHS = tiny_names()  # every type `hardneg models` marks verified (hardneg.models.vlm.support)
CAPTIONS = ["a man opens the door.", "The dog runs across the park", "café naïve – “quoted” 猫", "x",
            "Yes", " leading space", "two\nlines"]


@pytest.fixture(scope="module", params=ARCHS)
def model(request):
    return load_model(request.param, device="cpu")


def reference_ids(tok, template: str, video_token: str, n_video: int, prompt: str, protocol: str, text: str):
    msgs, gen = conversation(prompt, protocol, text)
    rendered = tok.apply_chat_template(msgs, chat_template=template, tokenize=False, add_generation_prompt=gen)
    assert rendered.count(video_token) == 1
    rendered = rendered.replace(video_token, video_token * n_video)  # the processor's expansion
    return tok(rendered, add_special_tokens=False)["input_ids"]


@pytest.mark.parametrize("protocol", ["caption-likelihood", "yes-probability", "choice-letter"])
def test_ids_equal_the_whole_conversation_tokenised_once(model, protocol):
    eng = model.engine
    spec = DEFAULT_PROMPTS[protocol]
    n = 12
    if protocol == "choice-letter":
        texts = ["\n".join(f"{'ABCDEFG'[i]}. {c}" for i, c in enumerate(CAPTIONS))]
        seqs = eng.sequences(spec, CAPTIONS, n)
    else:
        texts = CAPTIONS
        seqs = eng.sequences(spec, CAPTIONS, n)
    for s, text in zip(seqs, texts):
        want = reference_ids(eng.tok, eng.template, eng.video_token, n, spec.prompt, protocol, text)
        assert s.ids == want, (eng.tok.convert_ids_to_tokens(s.ids[-40:]), eng.tok.convert_ids_to_tokens(want[-40:]))


def test_no_extra_metaspace_token_after_the_video():
    """Video-LLaVA and LLaVA-NeXT-Video: the token after the last video token is the newline's, not a lone "▁"
    (the bug of tokenising the text after the video in its own call)."""
    for arch in ("tiny-vlm:video-llava", "tiny-vlm:llava-next-video"):
        eng = load_model(arch, device="cpu").engine
        for protocol in ("caption-likelihood", "yes-probability", "choice-letter"):
            s = eng.sequences(DEFAULT_PROMPTS[protocol], ["a man opens the door."], 5)[0]
            last = max(i for i, t in enumerate(s.ids) if t == eng.video_token_id)
            after = eng.tok.convert_ids_to_tokens(s.ids[last + 1:last + 3])
            assert after[0] != "▁", (arch, protocol, after)


def test_the_reference_can_fail(model):
    """Tokenising the text after the video in its own call (the old engine) differs from the reference for the
    Metaspace tokenizers, so the test above can fail; for byte-level BPE both agree."""
    eng = model.engine
    spec = DEFAULT_PROMPTS["yes-probability"]
    r = eng.render(spec)
    n = 4
    split = (eng.tok(r.before_video, add_special_tokens=False)["input_ids"] + [eng.video_token_id] * n
             + eng.tok(r.head + "a man" + r.tail, add_special_tokens=False)["input_ids"])
    want = reference_ids(eng.tok, eng.template, eng.video_token, n, spec.prompt, "yes-probability", "a man")
    metaspace = eng.family.config.model_type in ("video_llava", "llava_next_video")
    assert (split != want) == metaspace


def test_cached_scores_equal_a_forward_of_the_reference_ids(model):
    """Scores of the fast path (shared prefix, captions on copies of its cache) equal a plain forward of the
    reference ids to 1e-5 (float32): caption likelihood over the caption's tokens."""
    import torch

    eng = model.engine
    spec = DEFAULT_PROMPTS["caption-likelihood"]
    frames = np.random.default_rng(3).integers(0, 256, (8, 40, 56, 3), dtype=np.uint8)
    video = eng.family.video_inputs(frames, eng.dtype, "cpu")
    fast = eng.score(frames, CAPTIONS[:3], spec)
    for cap, got in zip(CAPTIONS[:3], fast):
        ids = reference_ids(eng.tok, eng.template, eng.video_token, video.n_tokens, spec.prompt,
                            "caption-likelihood", cap)
        t = torch.tensor([ids])
        kw = {}
        if eng.family.mrope:
            kw["position_ids"] = eng.family.position_ids(t, None, video)
        with torch.inference_mode():
            logits = eng.model(input_ids=t, attention_mask=torch.ones_like(t), **video.kwargs, **kw).logits[0]
        # the caption's tokens: those whose characters overlap the caption in the rendered text
        msgs, _ = conversation(spec.prompt, "caption-likelihood", cap)
        text = eng.tok.apply_chat_template(msgs, chat_template=eng.template, tokenize=False)
        text = text.replace(eng.video_token, eng.video_token * video.n_tokens)
        enc = eng.tok(text, add_special_tokens=False, return_offsets_mapping=True)
        a = text.rindex(cap)
        b = a + len(cap)
        idx = [j for j, (s, e) in enumerate(enc["offset_mapping"]) if e > a and s < b and e > s]
        lp = torch.log_softmax(logits.float(), -1)
        want = float(np.mean([lp[j - 1, ids[j]].item() for j in idx]))
        assert abs(got - want) < 1e-5, (got, want)
