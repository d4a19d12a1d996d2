"""The generic dual encoder (`dual:<id>`, `hardneg.models.dual` and `hardneg.models.dual_video`) against a direct
forward of each tiny model (`hardneg.models.tiny_encoders`): the model's own `forward` on one call of its own
processor, its logits or its output embeddings, never our `get_*_features` calls or embedding functions.

frame-mean (CLIP, SigLIP, SigLIP 2): frame embeddings L2-normalised and averaged. video-native (X-CLIP, VideoPrism,
PE video): the score is the forward's logits (X-CLIP's without `logit_scale.exp()`; VideoPrism's similarity matrix,
whose softmax over the captions is its `logits_per_text`)."""

from __future__ import annotations

import numpy as np
import pytest

from hardneg.models import load_model
from hardneg.models.tiny_encoders import TINY_FRAMES, tiny_encoder_path

#: a repeated caption (a tie must stay a tie) and a non-ASCII one
CAPTIONS = ["a man opens the door", "the dog runs across the park", "café", "a man opens the door",
            "she quickly opens the door and walks into the dark room"]
VIDEO_TYPES = ["xclip", "videoprism", "pe_video"]


def _videos(n: int, frames: int = TINY_FRAMES, seed: int = 1) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, (frames, 20, 24, 3), dtype=np.uint8) for _ in range(n)]


def _folder(kind: str):
    if kind == "pe_video":
        pytest.importorskip("timm", reason="pe_video's frame tower is a timm model (the models extra)")
    return tiny_encoder_path(kind)


def direct_forward(kind: str, folder, videos, captions) -> np.ndarray:
    """(videos, captions) scores from one processor call and the model's own `forward`, written from the model's
    documented usage (its docstring / model card), independent of hardneg's encoders."""
    import torch
    from transformers import AutoModel, AutoProcessor

    model, proc = AutoModel.from_pretrained(folder).eval(), AutoProcessor.from_pretrained(folder)
    if kind == "xclip":  # its docstring: processor(text=..., videos=list(frames), padding=True)
        enc = proc(text=captions, videos=[list(v) for v in videos], padding=True, return_tensors="pt")
    elif kind == "videoprism":  # the processor's own text defaults (max_length padding); frames already sampled
        enc = proc(text=captions, videos=list(videos), do_sample_frames=False, return_tensors="pt")
    else:
        enc = proc(text=captions, videos=list(videos), padding=True, do_sample_frames=False, return_tensors="pt")
    with torch.no_grad():
        out = model(**enc)
        if kind == "xclip":
            return (out.logits_per_video / model.logit_scale.exp()).numpy()
        if kind == "videoprism":
            sim = (out.video_embeds @ out.text_embeds.T).numpy()
            # the forward's own normalised logits are the softmax of this over the captions, per video
            np.testing.assert_allclose(out.logits_per_text.T.numpy(), np.exp(sim) / np.exp(sim).sum(1, keepdims=True),
                                       rtol=0, atol=1e-6)
            return sim
        return out.logits_video_text.numpy()


@pytest.mark.slow
@pytest.mark.parametrize("kind", VIDEO_TYPES)
def test_video_native_equals_a_direct_forward(kind):
    folder = _folder(kind)
    m = load_model(f"dual:{folder}", device="cpu")
    assert type(m).__name__ in ("XClipDual", "VideoPrismDual", "PeVideoDual")
    assert m.identity()["adapter"] == "dual-video"
    videos = _videos(2)
    got = m.similarity(m.encode_video(videos), m.encode_text(CAPTIONS))  # two videos in one processor call
    want = direct_forward(kind, folder, videos, CAPTIONS)
    assert got.shape == want.shape == (2, len(CAPTIONS))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
    np.testing.assert_allclose(m.score(videos[1], CAPTIONS), want[1], rtol=0, atol=1e-5)  # one at a time
    # rankings are the forward's, and the repeated caption ties with itself in both
    assert (np.argsort(-got, axis=1, kind="stable") == np.argsort(-want, axis=1, kind="stable")).all()
    assert (got[:, 0] == got[:, 3]).all() and np.abs(want[:, 0] - want[:, 3]).max() < 1e-6
    assert np.ptp(got, axis=1).min() > 1e-3  # the captions are told apart: the comparison above means something


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["xclip", "videoprism"])
def test_frame_order_and_text_padding_change_the_scores(kind):
    """The equality above can fail: frames in another order (the video towers see time) or another batch layout
    move scores past 1e-3 (the text side: SigLIP's padding, in the frame-mean test)."""
    folder = _folder(kind)
    m = load_model(f"dual:{folder}", device="cpu")
    videos = _videos(2)
    want = direct_forward(kind, folder, videos, CAPTIONS)
    text = m.encode_text(CAPTIONS)
    reversed_ = m.similarity(m.encode_video([v[::-1] for v in videos]), text)
    assert np.abs(reversed_ - want).max() > 1e-3
    # frames of the two videos interleaved: (frames, videos) read as (videos, frames)
    mixed = [np.stack([videos[i % 2][i // 2] for i in range(j * TINY_FRAMES, (j + 1) * TINY_FRAMES)])
             for j in range(2)]
    assert np.abs(m.similarity(m.encode_video(mixed), text) - want).max() > 1e-3
    if kind == "videoprism":  # its class token has no position and the padding is masked: padding does not matter
        m._text_call = lambda: {"padding": True}
        np.testing.assert_allclose(m.similarity(m.encode_video(videos), m.encode_text(CAPTIONS)), want, atol=1e-5)


@pytest.mark.slow
def test_a_fixed_frame_count_is_required_by_name():
    m = load_model(f"dual:{_folder('videoprism')}", device="cpu")
    n = TINY_FRAMES
    with pytest.raises(ValueError, match=rf"exactly {n} frames .*vision_config.num_frames.*--frames {n}"):
        m.score(_videos(1, frames=TINY_FRAMES + 2)[0], CAPTIONS)


@pytest.mark.slow
def test_pe_video_takes_any_frame_count():
    folder = _folder("pe_video")
    m = load_model(f"dual:{folder}", device="cpu")
    videos = _videos(1, frames=7)
    np.testing.assert_allclose(m.score(videos[0], CAPTIONS), direct_forward("pe_video", folder, videos, CAPTIONS)[0],
                               rtol=0, atol=1e-5)
    assert m.identity()["frames_used"] == "as sampled"
    # 7 and 4 frames in one processor call: padded, with its frame padding mask, as each alone
    short = _videos(1, frames=4, seed=2)[0]
    both = m.similarity(m.encode_video([videos[0], short]), m.encode_text(CAPTIONS))
    np.testing.assert_allclose(both[1], m.score(short, CAPTIONS), rtol=0, atol=1e-5)
    np.testing.assert_allclose(both[0], m.score(videos[0], CAPTIONS), rtol=0, atol=1e-5)


@pytest.mark.slow
def test_the_handwritten_xclip_adapter_equals_the_dual_path():
    """`hardneg.models.xclip` (kept: the X-CLIP Hub ids load it) scores as `dual:` on the same frames when they come
    at the model's input size (the default: frames decoded at 224 px for X-CLIP's 224 px, so only the crop and the
    normalisation apply). Frames that must be resized differ a little: the hand-written adapter resizes with PIL
    (CLIPImageProcessorPil, the checkpoint's settings), the checkpoint's VideoMAEImageProcessor with torchvision."""
    folder = _folder("xclip")
    dual, hand = load_model(f"dual:{folder}", device="cpu"), load_model(f"xclip:{folder}", device="cpu")
    rng = np.random.default_rng(3)
    at_size = [rng.integers(0, 256, (TINY_FRAMES, 16, 21, 3), dtype=np.uint8) for _ in range(2)]  # shorter side 16
    text_h, text_d = hand.encode_text(CAPTIONS), dual.encode_text(CAPTIONS)
    np.testing.assert_allclose(text_h, text_d, rtol=0, atol=1e-6)
    want = dual.similarity(dual.encode_video(at_size), text_d)
    np.testing.assert_allclose(hand.similarity(hand.encode_video(at_size), text_h), want, rtol=0, atol=1e-5)
    np.testing.assert_allclose(want, direct_forward("xclip", folder, at_size, CAPTIONS), rtol=0, atol=1e-5)
    resized = _videos(2)  # 20x24: resized to 16 by each
    gap = np.abs(hand.similarity(hand.encode_video(resized), text_h)
                 - dual.similarity(dual.encode_video(resized), text_d)).max()
    assert 0 < gap < 0.05


@pytest.mark.parametrize("kind", ["clip", "siglip", "siglip2"])
def test_frame_mean_equals_a_direct_forward(kind):
    import torch
    from transformers import AutoModel, AutoProcessor

    folder = tiny_encoder_path(kind)
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
    assert m.identity()["adapter"] == "dual-frame-mean" and got[0] == got[3]
    # several videos (6 and 3 frames) share tower calls, chunks of 4 frames crossing a video's end: same rows
    m.frame_batch = 4
    short = np.random.default_rng(2).integers(0, 256, (3, 20, 24, 3), dtype=np.uint8)
    both = m.similarity(m.encode_video([frames, short]), m.encode_text(CAPTIONS))
    np.testing.assert_allclose(both[0], want, rtol=0, atol=1e-5)
    m.frame_batch = 256
    np.testing.assert_allclose(both[1], m.score(short, CAPTIONS), rtol=0, atol=1e-5)
    assert np.abs(both[1] - both[0]).max() > 1e-3
    if kind == "siglip":  # SigLIP pools the last position: captions padded to the longest, not max_length, differ
        m.padding = True  # two short captions (long ones fill the 16 tokens either way): padded to the longer
        assert np.abs(m.score(frames, [CAPTIONS[0], CAPTIONS[2]]) - want[[0, 2]]).max() > 1e-3


def test_a_model_without_image_features_is_refused(tmp_path):
    from hardneg.models.vlm.tiny import tiny_vlm_path

    with pytest.raises(ValueError, match=r"model_type 'qwen2_vl'\) has no get_text_features \(text features\)"):
        load_model(f"dual:{tiny_vlm_path('qwen2-vl')}", device="cpu")


def test_the_encoders_table_is_what_the_tests_verify_and_what_the_docs_hold(capsys):
    """`hardneg models --encoders` lists exactly the types with a tiny model and a direct-forward test above, and
    docs/models.md holds its table as generated."""
    import re
    from pathlib import Path

    from hardneg.cli import main
    from hardneg.models.dual_types import ENCODERS, FRAME_MEAN_TYPES, VIDEO_NATIVE_TYPES, encoders_markdown_table
    from hardneg.models.dual_video import VIDEO_ENCODERS
    from hardneg.models.tiny_encoders import KINDS

    assert set(ENCODERS) == set(KINDS) == {*FRAME_MEAN_TYPES, *VIDEO_NATIVE_TYPES} == {*VIDEO_TYPES, "clip", "siglip",
                                                                                     "siglip2"}
    assert set(VIDEO_ENCODERS) == set(VIDEO_NATIVE_TYPES)
    docs = (Path(__file__).resolve().parents[2] / "docs" / "models.md").read_text(encoding="utf-8")
    got = re.search(r"<!-- encoders-table:start -->\n(.*?)<!-- encoders-table:end -->", docs, re.S)
    assert got and got.group(1) == encoders_markdown_table(), "paste `hardneg models --encoders --markdown`"
    assert main(["models", "--encoders", "--markdown"]) == 0
    assert capsys.readouterr().out == encoders_markdown_table()
    assert main(["models", "--encoders"]) == 0
    out = capsys.readouterr().out
    assert all(re.search(rf"^{kind}\s+verified", out, re.M) for kind in ENCODERS)
