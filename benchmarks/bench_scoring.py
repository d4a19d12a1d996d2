"""Scoring throughput (videos per second) on this machine, on synthetic videos.

Runs, in one process on the same 16 synthetic videos (8 frames each, 224 px): PyAV decoding
alone, and a ViT-B/32-sized CLIP with random weights (the architecture of the default
openai/clip-vit-base-patch32, no download) encoding the frames. Prints times, videos per
second and the encode/decode ratio (what the embedding cache saves on a rerun).

    python benchmarks/bench_scoring.py [--device cuda] [--videos 16]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--videos", type=int, default=16)
    ap.add_argument("--device", default=None)
    ap.add_argument("--fp16", action="store_true")
    args = ap.parse_args()

    import torch
    from transformers import CLIPConfig, CLIPImageProcessorPil, CLIPModel

    from hardneg.models import load_model
    from hardneg.models.tiny_clip import SHIPPED
    from hardneg.video import FrameSettings, decode_frames, write_synthetic_video

    work = Path(tempfile.mkdtemp(prefix="bench-scoring-"))
    try:
        vids = [write_synthetic_video(work / "videos" / f"v{i}.mp4", f"v{i}", n_frames=48, size=256)
                for i in range(args.videos)]
        model_dir = work / "clip-b32-random"
        torch.manual_seed(0)
        cfg = CLIPConfig()  # defaults = ViT-B/32 text and vision towers
        cfg.text_config.vocab_size = 250
        cfg.text_config.bos_token_id, cfg.text_config.eos_token_id, cfg.text_config.pad_token_id = 2, 3, 0
        CLIPModel(cfg).save_pretrained(model_dir)
        for name in ("tokenizer.json", "tokenizer_config.json"):
            shutil.copy(SHIPPED / name, model_dir / name)
        CLIPImageProcessorPil(size={"shortest_edge": 224}, crop_size={"height": 224, "width": 224}).save_pretrained(model_dir)
        frames = FrameSettings(n_frames=8, resize=224)

        t = time.perf_counter()
        decoded = [decode_frames(v, frames) for v in vids]
        t_decode = time.perf_counter() - t
        model = load_model(str(model_dir), device=args.device, fp16=args.fp16)
        model.encode_video(decoded[:1])  # warm-up
        t = time.perf_counter()
        model.encode_video(decoded)
        t_encode = time.perf_counter() - t
        n = len(vids)
        print(f"device: {model.device}, dtype {model.dtype}, {n} videos x {frames.n_frames} frames, torch threads "
              f"{torch.get_num_threads()}")
        print(f"decode (PyAV, 48-frame 256px clips -> 8 x 224px): {t_decode:.2f} s = {n / t_decode:.1f} videos/s")
        print(f"encode (CLIP ViT-B/32 size, random weights):      {t_encode:.2f} s = {n / t_encode:.1f} videos/s")
        print(f"encode / decode time ratio: {t_encode / t_decode:.1f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
