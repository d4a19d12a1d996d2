"""Videos/s of the dual encoders (`dual:<id>`) scoring caption lists, beside a naive loop, on the tiny encoders.

For each type of `hardneg.models.tiny_encoders`, on the same items (a video and its captions each):
* this path: `encode_video` over all the videos (processor and video tower in batches), `encode_text` over the
  captions once, `similarity`: what a scoring run does (without the embedding cache);
* naive: one processor call and one model `forward` per video with its captions (the model card's usage);
* for X-CLIP also the hand-written `xclip` adapter (`hardneg.models.xclip`), which X-CLIP Hub ids load.

Ratios are printed, never asserted. On the tiny models the numbers measure the Python, processor and batching
overhead more than the towers; run with --frames / --videos to change the load.

    python perf/bench_dual.py                 # CPU, every tiny type (seconds)
    python perf/bench_dual.py --types xclip videoprism --videos 64
"""

from __future__ import annotations

import argparse
import time

import numpy as np

CAPTIONS = ["a man opens the door", "a man closes the door", "the dog runs across the park",
            "a woman pours water into a glass", "she quickly opens the door and walks into the dark room"]


def best_of(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def naive(kind: str, model, proc, videos, captions):
    """One processor call and one forward per video (the model's documented usage)."""
    import torch

    out = []
    for v in videos:
        kw = {} if kind == "videoprism" else {"padding": True}
        if kind == "xclip":
            enc = proc(text=captions, videos=[list(v)], return_tensors="pt", **kw)
        elif kind in ("videoprism", "pe_video"):
            enc = proc(text=captions, videos=[v], do_sample_frames=False, return_tensors="pt", **kw)
        else:  # frame-mean: the frames as a batch of images (its image processor's own settings), mean embedding
            enc = {**proc.tokenizer(captions, padding="max_length" if kind.startswith("siglip") else True,
                                    truncation=True, max_length=16, return_tensors="pt"),
                   **proc.image_processor(images=list(v), return_tensors="pt")}
        with torch.inference_mode():
            o = model(**enc)
        if kind == "xclip":
            out.append(o.logits_per_video[0])
        elif kind == "videoprism":
            out.append(o.logits_per_text[:, 0])
        elif kind == "pe_video":
            out.append(o.logits_video_text[0])
        else:
            img = torch.nn.functional.normalize(o.image_embeds, dim=-1).mean(0)
            out.append(torch.nn.functional.normalize(o.text_embeds, dim=-1) @ img)
    return out


def main() -> None:
    import torch
    from transformers import AutoModel, AutoProcessor

    from hardneg.models import load_model
    from hardneg.models.tiny_encoders import KINDS, TINY_FRAMES, tiny_encoder_path

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--types", nargs="*", default=list(KINDS), choices=KINDS)
    ap.add_argument("--videos", type=int, default=32)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--size", type=int, default=16, help="frame side in pixels (the tiny models' input size)")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's, every core)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"{args.videos} videos x {len(CAPTIONS)} captions, frames {args.size}x{args.size + 5}, "
          f"torch threads {torch.get_num_threads()}, best of {args.repeats}")
    print(f"{'type':<11} {'path':<22} {'videos/s':>9} {'x naive':>8}")
    for kind in args.types:
        if kind == "pe_video":
            try:
                import timm  # noqa: F401
            except ImportError:
                print(f"{kind:<11} skipped: needs timm (the models extra)")
                continue
        folder = tiny_encoder_path(kind)
        frames = TINY_FRAMES if kind in ("xclip", "videoprism") else 8
        rng = np.random.default_rng(0)
        videos = [rng.integers(0, 256, (frames, args.size, args.size + 5, 3), dtype=np.uint8)
                  for _ in range(args.videos)]
        rows = []
        model, proc = AutoModel.from_pretrained(folder).eval(), AutoProcessor.from_pretrained(folder)
        t_naive = best_of(lambda: naive(kind, model, proc, videos, CAPTIONS), args.repeats)
        paths = [("dual", load_model(f"dual:{folder}", device="cpu"))]
        if kind == "xclip":
            paths.append(("xclip (hand-written)", load_model(f"xclip:{folder}", device="cpu")))
        for name, m in paths:
            t = best_of(lambda: m.similarity(m.encode_video(videos), m.encode_text(CAPTIONS)), args.repeats)
            rows.append((name, t))
        rows.append(("naive loop", t_naive))
        for name, t in rows:
            print(f"{kind:<11} {name:<22} {args.videos / t:>9.1f} {t_naive / t:>7.2f}x")


if __name__ == "__main__":
    main()
