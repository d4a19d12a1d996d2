"""Scoring throughput (videos per second) on this machine, on synthetic videos.

Two parts, in one process on the same synthetic videos (48 frames at 256 px, sampled to 8
frames at 224 px), with a ViT-B/32-sized CLIP with random weights (the architecture of the
default openai/clip-vit-base-patch32; nothing is downloaded):

1. the pieces side by side: PyAV decoding alone, and the model encoding the decoded frames;
   prints the encode/decode ratio (what the embedding cache saves on a rerun);
2. `--end-to-end`: the real `hardneg score` path (`score_benchmark`: dataset folder, PyAV,
   tokenizer and image processor, both towers, embedding cache, resumable batch runner,
   predictions file) on a Feint6K-format dataset of `--videos` items, cold cache, then the
   same run again with a warm cache.

    python benchmarks/bench_scoring.py [--device cuda] [--fp16] [--videos 16] [--end-to-end]
    python benchmarks/bench_scoring.py --prepare DIR --videos 256   # build the dataset only
    python benchmarks/bench_scoring.py --end-to-end --dataset DIR    # use a prepared one

`--prepare` needs `datasets` (the build writes its features); a machine without it can run
the end-to-end part on a folder prepared elsewhere.
"""

from __future__ import annotations

import argparse
import csv
import shutil
import sys
import tempfile
import time
from pathlib import Path

VERBS = ["opens", "closes", "pushes", "pulls", "lifts", "drops"]


def prepare_dataset(out: Path, n_videos: int) -> Path:
    """A Feint6K-format raw CSV of `n_videos` synthetic items, built with `hardneg build`."""
    from hardneg.datasets.builder import build_benchmark

    raw = out / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    with open(raw / "feint6k_msrvtt.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["video_id", "sentence"])
        for i in range(n_videos):
            for v in VERBS:
                w.writerow([f"video{i}", f"a person {v} the door number {i}"])
    with open(raw / "feint6k_vatex.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["video_id", "sentence"])
        for v in VERBS:
            w.writerow(["video0", f"a person {v} the door"])
    return build_benchmark("feint6k", raw, out / "data", overwrite=True).out


def random_clip_b32(model_dir: Path) -> Path:
    """A CLIP with the default model's architecture and random weights, saved like a Hub model."""
    import torch
    from transformers import CLIPConfig, CLIPImageProcessorPil, CLIPModel

    from hardneg.models.tiny_clip import SHIPPED

    torch.manual_seed(0)
    cfg = CLIPConfig()  # defaults = ViT-B/32 text and vision towers
    cfg.text_config.vocab_size = 250
    cfg.text_config.bos_token_id, cfg.text_config.eos_token_id, cfg.text_config.pad_token_id = 2, 3, 0
    CLIPModel(cfg).save_pretrained(model_dir)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(SHIPPED / name, model_dir / name)
    CLIPImageProcessorPil(size={"shortest_edge": 224}, crop_size={"height": 224, "width": 224}).save_pretrained(model_dir)
    return model_dir


def synthetic_videos(folder: Path, n: int) -> list[Path]:
    from hardneg.threads import thread_map
    from hardneg.video import write_synthetic_video

    return thread_map(lambda i: write_synthetic_video(folder / f"video{i}.mp4", f"video{i}", n_frames=48, size=256), range(n))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--videos", type=int, default=16, help="number of synthetic videos (default 16)")
    ap.add_argument("--device", default=None, help="cpu or cuda (default: cuda when available)")
    ap.add_argument("--fp16", action="store_true", help="half precision on the GPU")
    ap.add_argument("--batch-size", type=int, default=64, help="items per batch of the end-to-end run")
    ap.add_argument("--end-to-end", action="store_true", help="also time the whole hardneg score path")
    ap.add_argument("--dataset", default=None, help="a folder made by --prepare (default: build one here)")
    ap.add_argument("--prepare", default=None, metavar="DIR", help="only build the end-to-end dataset into DIR")
    args = ap.parse_args()

    if args.prepare:
        path = prepare_dataset(Path(args.prepare), args.videos)
        print(f"prepared {args.videos} items in {path}")
        return 0

    import torch

    from hardneg.models import load_model
    from hardneg.scoring import score_benchmark
    from hardneg.threads import default_threads, thread_map
    from hardneg.video import FrameSettings, decode_frames

    work = Path(tempfile.mkdtemp(prefix="bench-scoring-"))
    try:
        t = time.perf_counter()
        vids = synthetic_videos(work / "videos", args.videos)
        t_write = time.perf_counter() - t
        model_dir = random_clip_b32(work / "clip-b32-random")
        frames = FrameSettings(n_frames=8, resize=224)

        t = time.perf_counter()
        decoded = thread_map(lambda v: decode_frames(v, frames), vids)
        t_decode = time.perf_counter() - t
        model = load_model(str(model_dir), device=args.device, fp16=args.fp16)
        model.encode_video(decoded[:1])  # warm-up
        if model.device.startswith("cuda"):
            torch.cuda.synchronize()
        t = time.perf_counter()
        model.encode_video(decoded)
        if model.device.startswith("cuda"):
            torch.cuda.synchronize()
        t_encode = time.perf_counter() - t
        n = len(vids)
        gpu = torch.cuda.get_device_name() if model.device.startswith("cuda") else "none"
        print(f"device: {model.device} ({gpu}), dtype {model.dtype}, {n} videos x {frames.n_frames} frames, "
              f"torch {torch.__version__}, torch CPU threads {torch.get_num_threads()}, decode/preprocess threads {default_threads()}")
        print(f"write synthetic videos (48 frames, 256 px):          {t_write:.2f} s")
        print(f"decode (PyAV on threads, 48 frames 256px -> 8 x 224): {t_decode:.2f} s = {n / t_decode:.1f} videos/s")
        print(f"encode (preprocess + CLIP ViT-B/32, random weights): {t_encode:.2f} s = {n / t_encode:.1f} videos/s")
        print(f"encode / decode time ratio: {t_encode / t_decode:.2f}")

        if args.end_to_end:
            dataset = Path(args.dataset) if args.dataset else prepare_dataset(work / "dataset", n)
            cache = work / "cache"
            runs = []
            for label in ("cold cache", "warm cache"):
                out = work / f"pred-{len(runs)}.parquet"
                t = time.perf_counter()
                run = score_benchmark(str(model_dir), str(dataset), "msrvtt", out, videos=str(work / "videos"),
                                      frames=frames, cache_dir=str(cache), batch_size=args.batch_size,
                                      progress=False, loaded_model=model)
                dt = time.perf_counter() - t
                runs.append(dt)
                print(f"hardneg score end to end, {label}: {run.scored}/{run.rows} items, "
                      f"{run.embeddings_computed} videos encoded, {run.embeddings_cached} from cache: "
                      f"{dt:.2f} s = {run.rows / dt:.1f} videos/s")
            print(f"warm / cold time ratio: {runs[1] / runs[0]:.3f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
