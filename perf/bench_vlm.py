"""Captions/s of a video LLM scoring caption lists: the cached prefix against one forward per caption, and the ceiling.

Three rows, side by side in one run, on the same items (one video and its captions each):
* this path: `hardneg.models.vlm.engine.Engine.score` (video + prompt prefix once, the item's captions batched
  on its cached keys/values), including pixels, tokenization and the readout;
* naive: one full forward per (video, caption), what a likelihood harness does (`Engine.score(naive=True)`);
* batched full sequences: an item's full sequences in one right-padded batch, the video repeated
  (`Engine.score(full_batch=True)`);
* ceiling: the model's bare forward calls on prepared inputs (the prefix forward and the batched continuation
  forward, cache copies, pixels and tokens made outside the clock);
* items batched across videos: `hardneg.models.vlm.batch.BatchScorer` (several items' prefixes in one forward,
  the captions of many items on the batched cache).

Model FLOPs utilisation (MFU) per path: the FLOPs of the items' necessary work (every prefix once, every caption's
tokens, the vision tower once per video; `model_flops`, from the model's config: 2 FLOPs per weight per token, the
attention scores and the vocabulary projection included) over the row's time, over the device's dense peak: a
card's bf16 peak from `PEAK_TFLOPS` (or `--peak-tflops`), on the CPU a measured float32 matmul peak. The same
FLOPs for every row, so MFU compares paths. The attention kernel that ran is printed (SDPA's flash,
memory-efficient or math backend, or eager).

    python perf/bench_vlm.py                  # CPU, the built-in tiny-vlm (seconds)
    python perf/bench_vlm.py --device cuda    # a random-weight model of Qwen2-VL-7B's published sizes (8.3B, bf16),
                                              # built from its config: nothing downloaded
    python perf/bench_vlm.py --check [--device cuda]   # cached == naive == batched on both tiny models
    python perf/bench_vlm.py --paths          # every verified tiny type: generic vs hand-written vs naive captions/s
    python perf/bench_vlm.py --paths --types qwen2_vl,glm5_next --caption-tokens 8
    python perf/bench_vlm.py --paths --device cuda   # the generic path on Qwen2-VL-7B sizes (random weights)
    python perf/bench_vlm.py --breakdown      # where the cached path's time goes, stage by stage
    python perf/bench_vlm.py --paths --breakdown   # per type also: the caption forwards' share of one item's time,
                                                   # and the most batching across videos can gain with it

`--paths` (issues 39, 52): for each verified tiny type (or `--types`), captions/s of the generic family (the
model's own processor, `hardneg.models.vlm.generic`) one item at a time and batched across videos
(`BatchScorer`), of the hand-written family both ways where one exists, and of a naive loop (one full forward
per caption, generic inputs), in one run on the same items, the paths interleaved round by round, with the
ratios ("across videos ... N.Nx one item") and the machine's load (`os.getloadavg`) on every row: the machine
may be shared, so compare rows of one run. On the CPU the models run on `--threads` torch threads (default 1).

Items as in issue 25: 8 frames at 224 px (256 video tokens on the 7B), 21 captions of 16 tokens, protocol
caption-likelihood. Goals, printed and never asserted: >= 10x the naive path, >= 4x the batched full sequences, within 1.5x of
the ceiling.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Sequence

import numpy as np

from hardneg.benchmarks.base import VLMPrompt


def qwen2_vl_7b_engine(device: str):
    """An `Engine` over a random-weight Qwen2-VL-7B-sized model (sizes of its published config.json)."""
    import torch
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration

    from hardneg.models.vlm.tiny import QWEN_TEMPLATE, SPECIALS, build_tokenizer
    from hardneg.models.vlm.engine import Engine
    from hardneg.models.vlm.families import QwenVL

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
    from hardneg.models.vlm.tiny import _WORDS

    rng = np.random.default_rng(seed)
    words = [w for w in _WORDS if len(engine.tok.encode(w, add_special_tokens=False)) == 1 and w.islower()]
    return [" ".join(rng.choice(words, size=length)) for _ in range(n)]


def path_items(engine, n_items: int, n_captions: int, caption_tokens: int, frames: int, side: int) -> list:
    """The items every path comparison scores (`--paths`, its CUDA profile, `perf/profile_vlm_ops.py`): random
    frames from seed 0 and `captions_of`'s captions, so two scripts measure the very same items."""
    rng = np.random.default_rng(0)
    return [(rng.integers(0, 256, (frames, side, side, 3), dtype=np.uint8),
             captions_of(engine, n_captions, caption_tokens, i)) for i in range(n_items)]


def load_note() -> str:
    """The machine's load right now (1, 5, 15 min averages) and its cores: printed beside every figure, since the
    machine may be shared; compare the rows of one run, never runs on different loads."""
    import os

    a, b, c = os.getloadavg()
    return f"load {a:.2f} {b:.2f} {c:.2f} on {os.cpu_count()} cores"


def path_rates(engines: dict, items, spec, device: str, rounds: int) -> dict:
    """Captions/s of each path on the same items, the paths interleaved round by round (medians): generic and
    hand-written one item at a time (`Engine.score`) and across videos (`BatchScorer`), naive (one full forward per
    caption, the generic engine). `engines`: {"generic": Engine, "hand_written": Engine or None}."""
    from hardneg.models.vlm.batch import BatchScorer

    n_caps = sum(len(c) for _, c in items)
    runs = {}
    for name, eng in engines.items():
        if eng is None:
            continue
        scorer = BatchScorer(eng)
        runs[f"{name} one item"] = lambda e=eng: [e.score(f, c, spec) for f, c in items]
        runs[f"{name} across videos"] = lambda sc=scorer: sc.score_items(items, spec)
    g = engines["generic"]
    runs["naive"] = lambda: [g.score(f, c, spec, naive=True) for f, c in items]
    for fn in runs.values():  # one untimed pass each: lazy kernels, the processor's first call, first shapes
        fn()
    times: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(max(1, rounds)):
        for k, fn in runs.items():
            times[k].append(timed(fn, device))
    return {k: n_caps / float(np.median(v)) for k, v in times.items()}


def path_row(model_type: str, rates: dict) -> dict:
    """One type's row: the rates and the ratios the issue asks for (issue 52)."""
    one, across = rates["generic one item"], rates["generic across videos"]
    hw = rates.get("hand_written across videos")
    row = {"model_type": model_type, **{k.replace(" ", "_"): v for k, v in rates.items()},
           "across_vs_one": across / one, "generic_vs_naive": across / rates["naive"], "load": load_note()}
    if hw is not None:
        row["generic_vs_hand_written"] = across / hw
    return row


def print_path_row(row: dict) -> None:
    hw1, hwx = row.get("hand_written_one_item"), row.get("hand_written_across_videos")
    cell = lambda v: f"{v:>9.0f}" if v is not None else f"{'-':>9}"  # noqa: E731
    print(f"{row['model_type']:<22} {row['generic_one_item']:>9.0f} {row['generic_across_videos']:>9.0f} "
          f"{cell(hw1)} {cell(hwx)} {row['naive']:>9.0f}   ({row['load']})")
    hw = (f"; {row['generic_vs_hand_written']:.2f}x hand-written across videos"
          if "generic_vs_hand_written" in row else "")
    print(f"{'':<22} across videos {row['generic_across_videos']:.0f} c/s: {row['across_vs_one']:.1f}x one item, "
          f"{row['generic_vs_naive']:.1f}x naive{hw}", flush=True)


def compare_paths(device: str, n_items: int = 3, n_captions: int = 21, frames: int = 8, side: int = 32,
                  rounds: int = 3, caption_tokens: int = 16, types: Sequence[str] | None = None,
                  stages: bool = False) -> list[dict]:
    """Captions/s per verified tiny type (or `types`): generic one item at a time and across videos, hand-written
    (where one exists) both ways, and naive, side by side in one run, with the machine's load on every row.
    stages (`--paths --breakdown`): also the share of the generic one-item time spent in its caption forwards, and
    the bound it puts on across videos / one item (`caption_bound`)."""
    import torch

    from hardneg.models.vlm.model import VideoLLM
    from hardneg.models.vlm.support import VERIFIED
    from hardneg.models.vlm.tiny import tiny_vlm_path

    wanted = list(VERIFIED) if not types else list(types)
    unknown = [t for t in wanted if t not in VERIFIED]
    if unknown:
        raise SystemExit(f"error: --types {','.join(unknown)}: not a verified type; choose from {', '.join(VERIFIED)}")
    spec = VLMPrompt()
    rows = []
    print(f"captions/s; {n_items} items x {n_captions} captions of {caption_tokens} tokens, {frames} frames {side}px, "
          f"{torch.get_num_threads()} torch thread(s), device {device}")
    print(f"{'type':<22} {'gen 1':>9} {'gen x':>9} {'hand 1':>9} {'hand x':>9} {'naive':>9}   "
          "(1: one item at a time, x: across videos)")
    for model_type in wanted:
        folder = str(tiny_vlm_path(VERIFIED[model_type]))
        g = VideoLLM(folder, device=device, path="generic")
        h = VideoLLM(folder, device=device, path="hand-written") if model_type in _hand_written() else None
        items = path_items(g.engine, n_items, n_captions, caption_tokens, frames, side)
        rates = path_rates({"generic": g.engine, "hand_written": h.engine if h is not None else None}, items, spec,
                           device, rounds)
        row = path_row(model_type, rates)
        rows.append(row)
        print_path_row(row)
        if stages:
            row.update(caption_bound(g.engine, items, spec, device))
    return rows


def caption_bound(engine, items, spec, device: str) -> dict:
    """The share of the generic one-item path's time spent in its caption forwards (`breakdown`, one pass), and
    1 / that share: the most that batching across videos can gain over one item at a time while a caption row costs
    what it costs one item at a time (across videos saves the prefill's, the processor's and Python's per-item
    costs, never a caption row's own). A type whose bound is under the issue's 1.2x cannot reach it by batching;
    only cheaper caption rows can (its row says so)."""
    got = breakdown(engine, items, spec, device, quiet=True)
    share = got["caption forwards"] / got["total_s"]
    bound = 1.0 / share if share > 0 else float("inf")
    print(f"{'':<22} caption forwards {100 * share:.0f}% of one item's time: across videos can gain at most "
          f"{bound:.2f}x", flush=True)
    return {"caption_share": share, "caption_bound": bound}


def generic_profile_cuda(device: str, n_items: int, n_captions: int, caption_tokens: int, frames: int, side: int,
                         rounds: int) -> dict:
    """`--paths --device cuda`: the generic path on a random-weight model of Qwen2-VL-7B's published sizes (its
    config.json's numbers; nothing downloaded), through the tiny Qwen2-VL's processor (the same tokenizer and
    video processor class), beside the hand-written family on the same weights and the naive loop."""
    from transformers import AutoProcessor

    from hardneg.models.vlm.engine import Engine
    from hardneg.models.vlm.generic import Generic
    from hardneg.models.vlm.tiny import tiny_vlm_path

    hand, params, what = qwen2_vl_7b_engine(device)
    folder = str(tiny_vlm_path("qwen2-vl"))
    processor = AutoProcessor.from_pretrained(folder)
    settings = {"min_pixels": side * side, "max_pixels": side * side}
    processor.video_processor.min_pixels = processor.video_processor.max_pixels = side * side
    processor.video_processor.size = {"shortest_edge": side * side, "longest_edge": side * side}
    family = Generic(hand.model.config, settings, processor, hand.tok, hand.template)
    generic = Engine(hand.model, hand.tok, hand.template, family, family.video_token_id, device, hand.dtype,
                     32768, 32)
    items = path_items(generic, n_items, n_captions, caption_tokens, frames, side)
    print(f"model: {what}; generic path through Qwen2VLProcessor; {n_items} items x {n_captions} captions of "
          f"{caption_tokens} tokens, {frames} frames {side}px")
    rates = path_rates({"generic": generic, "hand_written": hand}, items, VLMPrompt(), device, rounds)
    row = path_row("qwen2_vl (7B sizes)", rates)
    print_path_row(row)
    import torch

    row["gpu"] = torch.cuda.get_device_name(0)
    row["max_memory_gib"] = torch.cuda.max_memory_allocated() / 2**30
    print(f"GPU: {row['gpu']}; peak memory {row['max_memory_gib']:.1f} GiB")
    return row


def _hand_written() -> set[str]:
    from hardneg.models.vlm.families import supported_model_types

    return set(supported_model_types())


def check(device: str) -> None:
    """Cached prefix vs one forward per caption vs all full sequences in one batch, on the tiny architectures and
    every protocol: the largest differences, in float32 (CPU, and the GPU when named) and in the GPU's bf16, with
    the number of model calls each path made (so two different paths are seen to run), and a sabotaged run (the
    rope delta dropped after the cache) to show the comparison can fail."""
    import torch

    from hardneg.models import load_model
    from hardneg.models.vlm.model import DEFAULT_PROMPTS

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
            from hardneg.models.vlm.batch import BatchScorer

            other = rng.integers(0, 256, (4, 40, 56, 3), dtype=np.uint8)  # fewer frames: a shorter prefix
            for proto, spec in DEFAULT_PROMPTS.items():
                m.spec = spec
                items = [(frames, caps), (other, caps[::-1]), (frames[::-1].copy(), caps[:2])]
                got = BatchScorer(m.engine).score_items(items, spec)
                worst = max(np.abs(g - m.score(f, c)).max() for (f, c), g in zip(items, got))
                print(f"check {name:<26} {dev:<5} {str(dt)[6:]:<9} {proto:<19} |across videos - one item| {worst:.2e}")
            if m.engine.family.mrope:
                m.spec = DEFAULT_PROMPTS["caption-likelihood"]
                real = m.engine.prefix
                m.engine.prefix = lambda ids, video: (lambda r: (r[0], r[1], r[2] * 0))(real(ids, video))
                bad = np.abs(m.score(frames, caps) - m.score(frames, caps, naive=True)).max()
                print(f"check {name:<26} {dev:<5} {str(dt)[6:]:<9} sabotaged (rope delta dropped): |cached-naive| {bad:.2e}")


#: dense bf16 peak (TFLOP/s, no sparsity) of known cards, from the vendors' data sheets; matched on the name
PEAK_TFLOPS = {"H200": 989.0, "H100 NVL": 835.0, "H100 PCIe": 756.0, "H100": 989.0, "GH200": 989.0, "B200": 2250.0,
               "A100": 312.0, "L40S": 362.0, "L4": 121.0, "A10G": 70.0, "A10": 125.0, "RTX 4090": 165.0}


def peak_tflops(device: str, given: float | None) -> tuple[float, str]:
    """The device's dense peak in TFLOP/s and where it comes from."""
    import torch

    if given:
        return given, "--peak-tflops"
    if device.startswith("cuda"):
        name = torch.cuda.get_device_name(torch.device(device))
        for key, value in PEAK_TFLOPS.items():  # the longer names first, as listed
            if key in name:
                return value, f"{name}: dense bf16 peak from the data sheet"
        raise SystemExit(f"error: no peak known for {name!r}; give --peak-tflops (dense bf16 TFLOP/s of the card)")
    n = 1024
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    t = time.perf_counter()
    reps = 20
    for _ in range(reps):
        a @ b
    sec = time.perf_counter() - t
    return 2 * n ** 3 * reps / sec / 1e12, f"CPU: measured float32 {n}x{n} matmul on {torch.get_num_threads()} thread(s)"


def text_flops_per_token(config, attended: int, logits: bool) -> float:
    """FLOPs of one token through the language model: its linear layers (2 per weight), the attention scores and
    values over `attended` keys, and the vocabulary projection when its logits are computed."""
    c = config.get_text_config() if hasattr(config, "get_text_config") else config
    h, layers = c.hidden_size, c.num_hidden_layers
    heads = c.num_attention_heads
    kv = getattr(c, "num_key_value_heads", None) or heads
    hd = getattr(c, "head_dim", None) or h // heads
    linear = h * hd * (heads + 2 * kv) + heads * hd * h + 3 * h * c.intermediate_size
    attention = 2 * heads * hd * attended
    return 2.0 * layers * linear + 2.0 * layers * attention + (2.0 * h * c.vocab_size if logits else 0.0)


def vision_flops(config, video) -> float:
    """FLOPs of one video through the vision tower: 2 per weight per patch (patch embedding, attention and MLP
    projections), plus attention scores within each frame."""
    v = config.vision_config
    d = getattr(v, "embed_dim", None) or v.hidden_size
    depth = getattr(v, "depth", None) or v.num_hidden_layers
    mlp = getattr(v, "intermediate_size", None) or int(getattr(v, "mlp_ratio", 4) * d)
    px = video.kwargs["pixel_values_videos"]
    if px.dim() == 2:  # Qwen: flattened patches (N, C * t * p * p), attention within each frame's grid
        patches, patch_in = px.shape[0], px.shape[1]
        frames = int(video.kwargs["video_grid_thw"][:, 0].sum())
    else:  # (1, T, 3, S, S)
        frames, side, p = px.shape[1], px.shape[-1], v.patch_size
        patches, patch_in = frames * (side // p) ** 2, 3 * p * p
    per_frame = patches / max(frames, 1)
    per_patch = 2 * (4 * d * d + 2 * d * mlp) * depth + 2 * 2 * d * per_frame * depth
    return float(patches * (per_patch + 2 * patch_in * d))


def model_flops(engine, video, seqs, start: int) -> float:
    """The necessary FLOPs of one item: the vision tower once, the prefix once (logits of its last token only), and
    every caption's continuation on the prefix's cache."""
    cfg = engine.model.config
    total = vision_flops(cfg, video)
    total += sum(text_flops_per_token(cfg, k + 1, k == start - 1) for k in range(start))
    for s in seqs:
        total += sum(text_flops_per_token(cfg, k + 1, True) for k in range(start, len(s.ids)))
    return total


def attention_kernel(engine, run) -> str:
    """Which attention ran: eager, or SDPA's backend; for SDPA, the first of PyTorch's own order (flash, then
    memory-efficient, then math) that accepts every call of `run` alone is the one SDPA picks."""
    impl = getattr(engine.model.config, "_attn_implementation", None) or "eager"
    if impl != "sdpa":
        return impl
    from torch.nn.attention import SDPBackend, sdpa_kernel

    for backend, name in ((SDPBackend.FLASH_ATTENTION, "flash"), (SDPBackend.EFFICIENT_ATTENTION, "memory-efficient"),
                          (SDPBackend.MATH, "math")):
        try:
            with sdpa_kernel([backend]):
                run()
            return f"SDPA {name}"
        except RuntimeError:
            continue
    return "SDPA (backend unknown)"


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
    ap.add_argument("--rounds", type=int, default=3,
                    help="alternating rounds of this path and the items batched across videos (medians; default 3)")
    ap.add_argument("--captions", type=int, default=21)
    ap.add_argument("--caption-tokens", type=int, default=16)
    ap.add_argument("--frames", type=int, default=8)
    ap.add_argument("--size", type=int, default=None, help="frame side in pixels (default 224 on a GPU, 32 on CPU)")
    ap.add_argument("--json", default=None, help="also write the rows here")
    ap.add_argument("--peak-tflops", type=float, default=None,
                    help="the device's dense peak in TFLOP/s (default: the card's bf16 peak from a table; on the CPU, "
                         "a measured float32 matmul)")
    ap.add_argument("--check", action="store_true", help="only compare cached and naive scores on the tiny models")
    ap.add_argument("--paths", action="store_true",
                    help="per verified tiny type: generic one item at a time and across videos, hand-written (where "
                         "one exists), naive captions/s (issues 39, 52); with --device cuda: the generic path on "
                         "Qwen2-VL-7B's published sizes (random weights, nothing downloaded)")
    ap.add_argument("--types", default=None,
                    help="with --paths: comma-separated model types (e.g. qwen2_vl,glm5_next; default every verified one)")
    ap.add_argument("--breakdown", action="store_true",
                    help="where the cached path's time goes (processor, tokenization, prefix, captions, readout); "
                         "with --paths: per type, the caption forwards' share of one item's time and the bound it "
                         "puts on across videos / one item")
    ap.add_argument("--threads", type=int, default=None,
                    help="torch threads (default on the CPU: 1, as the tests run the tiny models: intra-op threads "
                         "only cost time on models this small; the prefetching worker then has a core to itself)")
    args = ap.parse_args(argv)
    if args.threads is not None or not args.device.startswith("cuda"):
        import torch

        torch.set_num_threads(max(1, args.threads or 1))
    if args.types and not args.paths:
        ap.error("--types goes with --paths")
    if args.paths:
        if args.device.startswith("cuda"):
            row = generic_profile_cuda(args.device, args.items or 12, args.captions, args.caption_tokens, args.frames,
                                       args.size or 224, args.rounds)
            rows = [row]
        else:
            types = [t.strip() for t in args.types.split(",") if t.strip()] if args.types else None
            rows = compare_paths(args.device, n_items=args.items or 3, n_captions=args.captions, frames=args.frames,
                                 side=args.size or 32, rounds=args.rounds, caption_tokens=args.caption_tokens,
                                 types=types, stages=args.breakdown)
        if args.json:
            write_json(args.json, rows)
        return {"paths": rows}
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

    from hardneg.models.vlm.batch import BatchScorer

    scorer = BatchScorer(engine)

    def across():
        scorer.score_items(items, spec)

    across()  # warm-up of the batched shapes
    import statistics

    ceiling()  # warm-up of the ceiling's calls
    # this path, across videos and the ceiling interleaved round by round, so that a busy machine slows all three
    triples = [(timed(ours, args.device), timed(across, args.device), ceiling()) for _ in range(max(1, args.rounds))]
    pairs = [(a, b) for a, b, _ in triples]
    t_across = statistics.median(b for _, b in pairs)
    per_prefill = max(scorer.stats.prefill_sizes)
    flops = sum(model_flops(engine, v, ss, st) for v, ss, st in prepared)
    peak, peak_from = peak_tflops(args.device, args.peak_tflops)
    kernels = {"this path": attention_kernel(engine, lambda: engine.score(items[0][0], items[0][1][:3], spec)),
               "across": attention_kernel(engine, lambda: scorer.score_items(items[:2], spec))}
    t_ours = statistics.median(a for a, _ in pairs)
    print("rounds, across videos / this path (time ratio, lower is faster): "
          + ", ".join(f"{b / a:.2f}" for a, b in pairs))
    t_naive = timed(naive, args.device)
    engine.score(items[0][0], items[0][1], spec, full_batch=True)  # warm-up of the batched shapes
    t_batched = timed(batched, args.device)
    t_ceil = statistics.median(c for _, _, c in triples)
    print("rounds, this path / the ceiling (time ratio): " + ", ".join(f"{a / c:.2f}" for a, _, c in triples))
    n_caps = n_items * args.captions
    rows = [
        ("cached prefix, captions batched (this path)", t_ours),
        ("one forward per (video, caption) (naive)", t_naive),
        ("the full sequences of an item in one batch", t_batched),
        ("bare model forward on prepared inputs (ceiling)", t_ceil),
        (f"items batched across videos ({per_prefill} per prefill)", t_across),
    ]
    print(f"\nFLOPs of the items' necessary work: {flops / 1e12:.4f} TFLOP ({flops / n_items / 1e9:.2f} GFLOP per item); "
          f"peak {peak:.3f} TFLOP/s ({peak_from})")
    print(f"attention kernel: {kernels['this path']} (one item per forward), {kernels['across']} (items batched; "
          f"attn_implementation {getattr(engine.model.config, '_attn_implementation', None)!r})")
    print(f"\n{'path':<50} {'captions/s':>11} {'videos/s':>9} {'vs naive':>9} {'vs this':>8} {'TFLOP/s':>9} {'MFU':>7}")
    for name, t in rows:
        print(f"{name:<50} {n_caps / t:>11.1f} {n_items / t:>9.2f} {t_naive / t:>8.1f}x {t_ours / t:>7.2f}x "
              f"{flops / t / 1e12:>9.4f} {100 * flops / t / 1e12 / peak:>6.1f}%")
    print(f"\nthis path: {t_naive / t_ours:.1f}x the naive path (goal >= 10x), {t_batched / t_ours:.1f}x the batched full "
          f"sequences (goal >= 4x); {t_ours / t_ceil:.2f}x the ceiling's time (goal <= 1.5x). Goals are printed, never asserted.")
    out = {"model": what, "device": args.device, "params": params, "items": n_items, "captions": args.captions,
           "caption_tokens": args.caption_tokens, "frames": args.frames, "side": side, "video_tokens": video.n_tokens,
           "flops": flops, "peak_tflops": peak, "peak_from": peak_from, "attention": kernels,
           "rows": {name: {"seconds": t, "captions_per_s": n_caps / t, "videos_per_s": n_items / t,
                           "mfu": flops / t / 1e12 / peak} for name, t in rows}}
    if gpu:
        import torch

        out["gpu"] = torch.cuda.get_device_name(0)
        out["max_memory_gib"] = torch.cuda.max_memory_allocated() / 2**30
        print(f"GPU: {out['gpu']}; peak memory {out['max_memory_gib']:.1f} GiB")
    if args.breakdown:
        out["breakdown"] = breakdown(engine, items, spec, args.device)
    out["load"] = load_note()
    print(f"machine: {out['load']}")
    if args.json:
        write_json(args.json, out)
    return out


def write_json(path: str, obj) -> None:
    """`obj` as JSON at `path`, written whole or not at all (a temporary file renamed over it)."""
    import os
    import tempfile

    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".bench-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(obj, f, indent=2)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def breakdown(engine, items, spec, device: str, quiet: bool = False) -> dict:
    """Where the cached path's time goes, one item at a time: each stage's method timed in place (the processor /
    pixels, the token sequences, the prefix forward, the caption forwards with their cache copies, the readout),
    the rest (Python glue) as what is left of the whole."""
    stages = {"pixels (processor / family)": (engine.family, "video_inputs"), "token sequences": (engine, "sequences"),
              "prefix forward": (engine, "prefix"), "caption forwards": (engine, "continuation"),
              "readout": (engine, "readout_tensor")}
    spent = dict.fromkeys(stages, 0.0)
    saved = []
    for name, (obj, attr) in stages.items():
        real = getattr(obj, attr)
        saved.append((obj, attr))

        def wrap(*a, _real=real, _name=name, **k):
            sync(device)
            t = time.perf_counter()
            got = _real(*a, **k)
            sync(device)
            spent[_name] += time.perf_counter() - t
            return got

        setattr(obj, attr, wrap)
    try:
        total = timed(lambda: [engine.score(f, c, spec) for f, c in items], device)
    finally:
        for obj, attr in saved:
            delattr(obj, attr)
    spent["other (glue)"] = max(total - sum(spent.values()), 0.0)
    if quiet:
        return {"total_s": total, **spent}
    print(f"\nwhere the cached path's time goes ({len(items)} items, {total:.3f} s, {load_note()}):")
    for name, sec in spent.items():
        print(f"  {name:<28} {sec:>8.3f} s {100 * sec / total:>6.1f}%")
    return {"total_s": total, **{k: v for k, v in spent.items()}}


if __name__ == "__main__":
    main()
