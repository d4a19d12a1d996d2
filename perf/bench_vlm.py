"""Captions/s of a video LLM scoring caption lists: the cached prefix against one forward per caption, and the ceiling.

Three rows, side by side in one run, on the same items (one video and its captions each):
* this path: `hardneg.models.vlm_engine.Engine.score` (video + prompt prefix once, the item's captions batched
  on its cached keys/values), including pixels, tokenization and the readout;
* naive: one full forward per (video, caption), what a likelihood harness does (`Engine.score(naive=True)`);
* batched full sequences: an item's full sequences in one right-padded batch, the video repeated
  (`Engine.score(full_batch=True)`);
* ceiling: the model's bare forward calls on prepared inputs (the prefix forward and the batched continuation
  forward, cache copies, pixels and tokens made outside the clock).

    python perf/bench_vlm.py                  # CPU, the built-in tiny-vlm (seconds)
    python perf/bench_vlm.py --device cuda    # a random-weight model of Qwen2-VL-7B's published sizes (8.3B, bf16),
                                              # built from its config: nothing downloaded
    python perf/bench_vlm.py --check [--device cuda]   # cached == naive == batched on both tiny models

Items as in issue 25: 8 frames at 224 px (256 video tokens on the 7B), 21 captions of 16 tokens, protocol
caption-likelihood. Goals, printed and never asserted: >= 10x the naive path, >= 4x the batched full sequences, within 1.5x of
the ceiling.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from hardneg.benchmarks.base import VLMPrompt


def qwen2_vl_7b_engine(device: str):
    """An `Engine` over a random-weight Qwen2-VL-7B-sized model (sizes of its published config.json)."""
    import torch
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration

    from hardneg.models.tiny_vlm import QWEN_TEMPLATE, SPECIALS, build_tokenizer
    from hardneg.models.vlm_engine import Engine
    from hardneg.models.vlm_families import QwenVL

    tok = build_tokenizer()
    ids = {t: tok.convert_tokens_to_ids(t) for t in SPECIALS}
    config = Qwen2VLConfig(
        text_config={"vocab_size": 152064, "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28,
                     "num_attention_heads": 28, "num_key_value_heads": 4, "max_position_embeddings": 32768,
                     "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}, "rope_theta": 1000000.0,
                     "rms_norm_eps": 1e-6, "tie_word_embeddings": False, "pad_token_id": ids["<|endoftext|>"]},
        vision_config={"depth": 32, "embed_dim": 1280, "hidden_size": 3584, "num_heads": 16, "mlp_ratio": 4,
                       "patch_size": 14, "temporal_patch_size": 2, "spatial_merge_size": 2, "in_channels": 3},
        image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"], vision_end_token_id=ids["<|vision_end|>"],
    )
    torch.manual_seed(0)
    with torch.device(device):
        model = Qwen2VLForConditionalGeneration._from_config(config, dtype=torch.bfloat16).eval()
    params = sum(p.numel() for p in model.parameters())
    family = QwenVL(config, {"min_pixels": 224 * 224, "max_pixels": 224 * 224})
    engine = Engine(model, tok, QWEN_TEMPLATE, family, config.video_token_id, device, torch.bfloat16, 32768, 32)
    return engine, params, f"random-weight Qwen2-VL-7B sizes ({params / 1e9:.2f}B params, bf16)"


def tiny_engine(device: str):
    from hardneg.models import load_model

    m = load_model("tiny-vlm", device=device)
    params = sum(p.numel() for p in m.engine.model.parameters())
    return m.engine, params, f"tiny-vlm ({params / 1e3:.0f}k params, {m.dtype})"


def captions_of(engine, n: int, length: int, seed: int) -> list[str]:
    """`n` captions of exactly `length` tokens from the tokenizer's own words."""
    from hardneg.models.tiny_vlm import _WORDS

    rng = np.random.default_rng(seed)
    words = [w for w in _WORDS if len(engine.tok.encode(w, add_special_tokens=False)) == 1 and w.islower()]
    return [" ".join(rng.choice(words, size=length)) for _ in range(n)]


def check(device: str) -> None:
    """Cached prefix vs one forward per caption vs all full sequences in one batch, on the tiny architectures and
    every protocol: the largest differences, in float32 (CPU, and the GPU when named) and in the GPU's bf16, with
    the number of model calls each path made (so two different paths are seen to run), and a sabotaged run (the
    rope delta dropped after the cache) to show the comparison can fail."""
    import torch

    from hardneg.models import load_model
    from hardneg.models.vlm import DEFAULT_PROMPTS

    rng = np.random.default_rng(0)
    frames = rng.integers(0, 256, (8, 40, 56, 3), dtype=np.uint8)
    caps = ["a man opens the door", "a man closes the door", "the dog runs across the park quickly"]
    runs = [("cpu", torch.float32)] + ([(device, torch.float32), (device, torch.bfloat16)] if device != "cpu" else [])
    for name in ("tiny-vlm", "tiny-vlm:llava-onevision", "tiny-vlm:qwen2.5-vl", "tiny-vlm:video-llava"):
        for dev, dt in runs:
            m = load_model(name, device=dev)
            m.engine.model.to(dt)
            m.engine.dtype = dt
            calls = []
            hook = m.engine.model.register_forward_pre_hook(lambda mod, args, kw: calls.append(1), with_kwargs=True)
            for proto, spec in DEFAULT_PROMPTS.items():
                m.spec = spec
                counts = []
                for kw in ({}, {"naive": True}, {"full_batch": True}):
                    calls.clear()
                    counts.append((m.score(frames, caps, **kw), len(calls)))
                (a, na), (b, nb), (c, nc) = counts
                print(f"check {name:<26} {dev:<5} {str(dt)[6:]:<9} {proto:<19} |cached-naive| {np.abs(a - b).max():.2e} "
                      f"|cached-batched| {np.abs(a - c).max():.2e}  model calls {na}/{nb}/{nc}  scores {np.round(a, 4)}")
            hook.remove()
            if m.engine.family.mrope:
                m.spec = DEFAULT_PROMPTS["caption-likelihood"]
                real = m.engine.prefix
                m.engine.prefix = lambda ids, video: (lambda r: (r[0], r[1], r[2] * 0))(real(ids, video))
                bad = np.abs(m.score(frames, caps) - m.score(frames, caps, naive=True)).max()
                print(f"check {name:<26} {dev:<5} {str(dt)[6:]:<9} sabotaged (rope delta dropped): |cached-naive| {bad:.2e}")


def sync(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def timed(fn, device: str) -> float:
    sync(device)
    t = time.perf_counter()
    fn()
    sync(device)
    return time.perf_counter() - t


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--items", type=int, default=None, help="items timed per row (default 3 on CPU, 12 on a GPU)")
    ap.add_argument("--captions", type=int, default=21)
    ap.add_argument("--caption-tokens", type=int, default=16)
    ap.add_argument("--frames", type=int, default=8)
    ap.add_argument("--size", type=int, default=None, help="frame side in pixels (default 224 on a GPU, 32 on CPU)")
    ap.add_argument("--json", default=None, help="also write the rows here")
    ap.add_argument("--check", action="store_true", help="only compare cached and naive scores on the tiny models")
    args = ap.parse_args(argv)
    if args.check:
        check(args.device)
        return {}
    gpu = args.device.startswith("cuda")
    engine, params, what = (qwen2_vl_7b_engine if gpu else tiny_engine)(args.device)
    n_items = args.items or (12 if gpu else 3)
    side = args.size or (224 if gpu else 32)
    spec = VLMPrompt()
    rng = np.random.default_rng(0)
    items = [(rng.integers(0, 256, (args.frames, side, side, 3), dtype=np.uint8),
              captions_of(engine, args.captions, args.caption_tokens, i)) for i in range(n_items)]
    video = engine.family.video_inputs(items[0][0], engine.dtype, engine.device)
    seqs = engine.sequences(spec, items[0][1], video.n_tokens)
    start = engine.shared_prefix(seqs)
    print(f"model: {what}; device {args.device}")
    print(f"items: {n_items} x ({args.frames} frames {side}px -> {video.n_tokens} video tokens, {args.captions} captions "
          f"of {args.caption_tokens} tokens); prefix {start} tokens, continuations "
          f"{min(len(s.ids) for s in seqs) - start}-{max(len(s.ids) for s in seqs) - start} tokens")

    engine.score(*items[0], spec)  # warm-up (kernels, allocator)
    engine.score(items[0][0], items[0][1][:2], spec, naive=True)

    def ours():
        for frames, caps in items:
            engine.score(frames, caps, spec)

    def naive():
        for frames, caps in items:
            engine.score(frames, caps, spec, naive=True)

    def batched():
        for frames, caps in items:
            engine.score(frames, caps, spec, full_batch=True)

    prepared = []
    for frames, caps in items:
        v = engine.family.video_inputs(frames, engine.dtype, engine.device)
        ss = engine.sequences(spec, caps, v.n_tokens)
        st = engine.shared_prefix(ss)
        prepared.append((v, ss, st))

    def ceiling() -> float:
        total = 0.0
        for v, ss, st in prepared:
            total += timed(lambda: engine.prefix(ss[0].ids[:st], v), args.device)
            cache, _, delta = engine.prefix(ss[0].ids[:st], v)
            rows = [s.ids[st:] for s in ss]
            # the cache copy happens inside `continuation`: time a second call's share apart and subtract it
            t_all = timed(lambda: engine.continuation(cache, st, rows, delta), args.device)
            import copy

            t_copy = timed(lambda: copy.deepcopy(cache).batch_repeat_interleave(len(rows)), args.device)
            total += max(t_all - t_copy, 0.0)
        return total

    t_ours = timed(ours, args.device)
    t_naive = timed(naive, args.device)
    engine.score(items[0][0], items[0][1], spec, full_batch=True)  # warm-up of the batched shapes
    t_batched = timed(batched, args.device)
    t_ceil = ceiling()
    n_caps = n_items * args.captions
    rows = [
        ("cached prefix, captions batched (this path)", t_ours),
        ("one forward per (video, caption) (naive)", t_naive),
        ("the full sequences of an item in one batch", t_batched),
        ("bare model forward on prepared inputs (ceiling)", t_ceil),
    ]
    print(f"\n{'path':<50} {'captions/s':>11} {'videos/s':>9} {'vs naive':>9} {'vs this':>8}")
    for name, t in rows:
        print(f"{name:<50} {n_caps / t:>11.1f} {n_items / t:>9.2f} {t_naive / t:>8.1f}x {t_ours / t:>7.2f}x")
    print(f"\nthis path: {t_naive / t_ours:.1f}x the naive path (goal >= 10x), {t_batched / t_ours:.1f}x the batched full "
          f"sequences (goal >= 4x); {t_ours / t_ceil:.2f}x the ceiling's time (goal <= 1.5x). Goals are printed, never asserted.")
    out = {"model": what, "device": args.device, "params": params, "items": n_items, "captions": args.captions,
           "caption_tokens": args.caption_tokens, "frames": args.frames, "side": side, "video_tokens": video.n_tokens,
           "rows": {name: {"seconds": t, "captions_per_s": n_caps / t, "videos_per_s": n_items / t} for name, t in rows}}
    if gpu:
        import torch

        out["gpu"] = torch.cuda.get_device_name(0)
        out["max_memory_gib"] = torch.cuda.max_memory_allocated() / 2**30
        print(f"GPU: {out['gpu']}; peak memory {out['max_memory_gib']:.1f} GiB")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=2)
    return out


if __name__ == "__main__":
    main()
