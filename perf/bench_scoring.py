"""Scoring throughput on realistic synthetic clips: decode, preprocess, encode, end to end.

Clips: H.264 (libx264, ffmpeg's defaults: preset medium, keyframe interval 250, scene-cut
keyframes) written with PyAV: a textured backdrop the camera pans over, moving objects, and one
hard cut at 55% of the clip. Three profiles:

    msrvtt  15 s  320x240   30 fps   (MSR-VTT-like)
    vatex   10 s  640x360   30 fps   (VATEX-like)
    uvo     10 s  1920x1080 30 fps   (UVO-like)

Rows, side by side in one run, in videos/s (8 frames per video at 224 px, the default settings):

- floor: PyAV decodes up to the last needed frame, keeps only the needed frames, no conversion
  (the least work any method must do; positions known beforehand);
- previous decode: the decoder before issue 14 (decode and keep every frame, PIL);
- decode: `decode_frames` (this project), with the default PIL resize and with `--scaler swscale`;
  torchcodec too when it is installed;
- preprocess: decoded frames -> pixel values on the device (tensor pipeline vs the PIL processor);
- encode: the model alone on prepared pixel values (the device ceiling);
- end to end: `hardneg.scoring.encode_videos` (decode on threads overlapping the model), and the
  previous path (all-frames decode, PIL processor) for comparison.

Decode rows are timed in a fresh process, all methods in alternating rounds, best round of each,
in CPU time as well as wall time (on a shared machine wall time mostly measures the other
tenants); another process per method reports its peak memory (VmHWM), and a clip four times as
long shows whether that peak grows with the video's length. A seeking section compares the seek
rule with never and always seeking, on default keyframes and on keyframes every 30 frames. The
model is a ViT-B/32-sized CLIP with random weights (the architecture of
openai/clip-vit-base-patch32; nothing is downloaded). Results and method: docs/scoring-speed.md.

    python perf/bench_scoring.py --quick          # one clip per profile, < 2 min on 2 cores
    python perf/bench_scoring.py --videos 4 --device cuda --fp16
    python perf/bench_scoring.py --end-to-end     # also hardneg score, cold and warm cache

Workers sweep (`--sweep`, or `--sweep-only` for nothing else): for 1, 2, 4, ... up to the cores,
decode-only and end-to-end rows on the pool of decoding processes (`hardneg.decoding`), the
decode-only row on threads of one process beside it (the path before issue 26; at 1 worker that is
one video at a time on FFmpeg's own threads), and the `floor x workers` line; videos/s (wall),
CPU-seconds per video (this process and its decoding processes) and peak memory (this process, and
the largest decoding process) per row; medians of alternating rounds. The end-to-end rows use the
built-in tiny CLIP on the CPU (decoding-bound; B/32 alone is about 1 video/s there) and the
ViT-B/32-sized CLIP on a GPU, where `--decoder nvdec` rows and the NVDEC-vs-PyAV pixel difference
are added when torchcodec's CUDA decoder loads.

Targets (reported, never asserted): decode within 1.5x of the floor on every profile on the CPU,
and peak memory per video independent of its length; end to end with the pool >= 1.6x the
single-process path on 2 cores, and >= 0.5 x min(encode ceiling, cores x floor) on a GPU machine.

    python perf/bench_scoring.py --sweep-only --videos 4
    python perf/bench_scoring.py --sweep-only --device cuda --fp16
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from hardneg.memory import peak_rss_mb

PROFILES = {  # name: (seconds, width, height, fps)
    "msrvtt": (15, 320, 240, 30),
    "vatex": (10, 640, 360, 30),
    "uvo": (10, 1920, 1080, 30),
}
VERBS = ["opens", "closes", "pushes", "pulls", "lifts", "drops"]


# --------------------------------------------------------------------------------------- clips


def _backdrop(rng, h, w):
    from PIL import Image

    coarse = Image.fromarray(rng.integers(0, 256, (max(2, h // 64), max(2, w // 64), 3), np.uint8)).resize((w, h), Image.BICUBIC)
    fine = Image.fromarray(rng.integers(0, 256, (max(2, h // 8), max(2, w // 8), 3), np.uint8)).resize((w, h), Image.BILINEAR)
    return (np.asarray(coarse, np.int16) * 3 // 4 + np.asarray(fine, np.int16) // 4).astype(np.uint8)


def write_clip(path: Path, seconds: float, width: int, height: int, fps: int, seed: int, gop: int | None = None) -> Path:
    """A clip with ffmpeg's default H.264 settings (or keyframes every `gop` frames): pan over a
    backdrop, moving discs, one hard cut."""
    import av

    rng = np.random.default_rng(seed)
    n, cut = int(round(seconds * fps)), int(round(seconds * fps * 0.55))
    backdrops = [_backdrop(rng, height + height // 2, width + width // 2) for _ in range(2)]
    discs = [dict(r=int(rng.integers(height // 12, height // 5)), colour=rng.integers(60, 256, 3).astype(np.uint8),
                  pos=rng.uniform(0, 1, 2) * (width, height), vel=rng.uniform(-3, 3, 2) * width / 320) for _ in range(3)]
    pan = rng.uniform(-1, 1, 2) * width / 320
    tmp = path.with_name(f".{path.name}.tmp.mp4")
    with av.open(str(tmp), "w") as c:
        s = c.add_stream("libx264", rate=fps)  # no options: libx264's defaults (medium, keyint 250)
        s.width, s.height, s.pix_fmt = width, height, "yuv420p"
        if gop:
            s.codec_context.gop_size = gop
        for t in range(n):
            ox = int(abs((width // 4 + pan[0] * t) % width - width // 2))  # bounces: no jump, no extra keyframe
            oy = int(abs((height // 4 + pan[1] * t) % height - height // 2))
            img = backdrops[t >= cut][oy:oy + height, ox:ox + width].copy()
            for d in discs:
                cx, cy = (d["pos"] + d["vel"] * t) % (width, height)
                r = d["r"]
                x0, x1, y0, y1 = int(max(0, cx - r)), int(min(width, cx + r)), int(max(0, cy - r)), int(min(height, cy + r))
                yy, xx = np.mgrid[y0:y1, x0:x1]
                img[y0:y1, x0:x1][(xx - cx) ** 2 + (yy - cy) ** 2 <= r * r] = d["colour"]
            for p in s.encode(av.VideoFrame.from_ndarray(img, format="rgb24")):
                c.mux(p)
        for p in s.encode():
            c.mux(p)
    os.replace(tmp, path)
    return path


def _clip_task(arg) -> str:
    write_clip(*arg[:5], seed=arg[5], gop=arg[6])
    return str(arg[0])


def clips(work: Path, profile: str, n: int, length_factor: int = 1, gop: int | None = None) -> list[Path]:
    """`n` clips of the profile in `work` (written once, on the pool of processes when several are missing)."""
    seconds, w, h, fps = PROFILES[profile]
    name = profile + (f"-x{length_factor}" if length_factor != 1 else "") + (f"-gop{gop}" if gop else "")
    folder = work / name
    folder.mkdir(parents=True, exist_ok=True)
    out = [folder / f"video{i}.mp4" for i in range(n)]
    todo = [(p, seconds * length_factor, w, h, fps, 1000 * length_factor + i, gop) for i, p in enumerate(out)
            if not p.is_file()]
    if len(todo) > 1:
        import importlib

        from hardneg.pool import WorkerPool

        task = importlib.import_module(Path(__file__).stem)._clip_task  # by module name: pool workers import it
        with WorkerPool(min(len(todo), os.cpu_count() or 1), name="bench-clips") as pool:
            for got in pool.imap(task, todo):
                if isinstance(got, BaseException):
                    raise got
    for t in todo if len(todo) == 1 else []:
        _clip_task(t)
    return out


def keyframes(path: Path) -> list[int]:
    import av

    with av.open(str(path)) as c:
        s = c.streams.video[0]
        pts = [(p.pts, p.is_keyframe) for p in c.demux(s) if p.size]
    order = sorted(t for t, _ in pts)
    return sorted(order.index(t) for t, k in pts if k)


# ------------------------------------------------------------------ decode rows (in subprocesses)


def _old_decode(path, settings):
    """The decoder before issue 14: every frame decoded and kept, then picked, PIL resize."""
    import av

    from hardneg.video import _resize, sample_positions

    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        frames, times = [], []
        for frame in container.decode(stream):
            frames.append(frame)
            times.append(float(frame.time) if frame.time is not None else len(times))
    picked = sample_positions(times, settings)
    return np.stack([np.asarray(_resize(frames[i].to_image(), settings.resize).convert("RGB")) for i in picked])


def _floor_decode(path, need: set[int], threads: int):
    """Decode up to the last needed frame; keep the needed frames as they come; convert nothing."""
    import av

    last, kept = max(need), []
    with av.open(str(path)) as c:
        s = c.streams.video[0]
        s.thread_type = "AUTO"
        s.codec_context.thread_count = threads
        for i, f in enumerate(c.decode(s)):
            if i in need:
                kept.append(f)
            if i >= last:
                break
    return kept


def _settings(method: str):
    from hardneg.video import FrameSettings

    return FrameSettings(n_frames=8, resize=224, scaler="swscale" if method == "decode-swscale" else "pil",
                         decoder="torchcodec" if method == "torchcodec" else "pyav")


def _decoder(method: str, paths: list[Path], threads: int, stats: list):
    """A function that decodes all `paths` the way `method` does."""
    from hardneg.video import DecodeStats, decode_frames, probe_video, sample_positions

    settings = _settings(method)
    if method == "floor":  # the positions are given to the floor, computed here, untimed
        needs = [set(int(i) for i in sample_positions(range(probe_video(p).n_frames), settings)) for p in paths]
        return lambda: [_floor_decode(p, need, threads) for p, need in zip(paths, needs)]
    if method == "previous":
        return lambda: [_old_decode(p, settings) for p in paths]
    seek_cost = {"decode-noseek": 10**9, "decode-seekall": 0}.get(method)

    def run():
        import hardneg.video as video

        default = video.SEEK_COST_FRAMES
        if seek_cost is not None:
            video.SEEK_COST_FRAMES = seek_cost
        try:
            for p in paths:
                st = DecodeStats()
                decode_frames(p, settings, threads=threads, stats=st)
                stats.append(st.__dict__)
        finally:
            video.SEEK_COST_FRAMES = default

    return run


def worker(spec: dict) -> dict:
    """In a fresh process. "time": every method in turn, `repeats` rounds (at most about 20 s), the
    best round of each (the machine may be shared, and alternating spreads any load evenly).
    "memory": one method once, and this process's peak memory."""
    paths, threads = [Path(p) for p in spec["paths"]], spec["threads"]
    if "torchcodec" in spec["methods"]:
        import torch  # noqa: F401  (imported, and FFmpeg's libraries loaded, outside the timing)

        from hardneg.video import decode_frames

        decode_frames(paths[0], _settings("torchcodec"), threads=threads)
    stats: list = []
    runs = {m: _decoder(m, paths, threads, stats) for m in spec["methods"]}
    if spec["kind"] == "memory":
        runs[spec["methods"][0]]()
        return {"peak_mb": peak_rss_mb(), "stats": stats[:1]}
    wall = {m: float("inf") for m in runs}
    cpu = dict(wall)
    started = time.perf_counter()
    for r in range(spec["repeats"]):
        if r and time.perf_counter() - started > 20:
            break
        for m, fn in runs.items():
            t, c = time.perf_counter(), time.process_time()
            fn()
            cpu[m] = min(cpu[m], time.process_time() - c)
            wall[m] = min(wall[m], time.perf_counter() - t)
    return {"cpu": cpu, "wall": wall, "videos": len(paths), "rounds": r + 1, "stats": stats[:1]}


def run_worker(kind: str, methods: list[str], paths: list[Path], threads: int = 1, repeats: int = 1) -> dict | None:
    spec = json.dumps({"kind": kind, "methods": methods, "paths": [str(p) for p in paths], "threads": threads,
                       "repeats": repeats})
    proc = subprocess.run([sys.executable, __file__, "--worker", spec], capture_output=True, text=True)
    if proc.returncode != 0:
        err = proc.stderr.strip().splitlines()
        print(f"  [{kind} {methods} failed: {err[-1] if err else proc.returncode}]")
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------------- model helpers


def random_clip_b32(model_dir: Path) -> Path:
    """A CLIP with the default model's architecture and random weights, saved like a Hub model."""
    import torch
    from transformers import CLIPConfig, CLIPImageProcessorPil, CLIPModel

    from hardneg.models.tiny_clip import SHIPPED

    if (model_dir / "config.json").is_file():
        return model_dir
    torch.manual_seed(0)
    cfg = CLIPConfig()  # defaults = ViT-B/32 text and vision towers
    cfg.text_config.vocab_size = 250
    cfg.text_config.bos_token_id, cfg.text_config.eos_token_id, cfg.text_config.pad_token_id = 2, 3, 0
    CLIPModel(cfg).save_pretrained(model_dir)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(SHIPPED / name, model_dir / name)
    CLIPImageProcessorPil(size={"shortest_edge": 224}, crop_size={"height": 224, "width": 224}).save_pretrained(model_dir)
    return model_dir


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def _old_encode_video(model, videos):
    """CLIPVideoModel.encode_video before issue 14: the PIL processor on threads, then the model."""
    import torch

    from hardneg.models.base import l2_normalize
    from hardneg.models.clip import preprocess_frames

    frames = np.concatenate([np.asarray(v) for v in videos])
    out = []
    for i in range(0, len(frames), model.frame_batch):
        pix = preprocess_frames(model.processor, frames[i:i + model.frame_batch])
        with torch.inference_mode():
            emb = model.model.get_image_features(pixel_values=pix.to(model.device, model.model.dtype))
        out.append(getattr(emb, "pooler_output", emb).float().cpu().numpy())
    emb = l2_normalize(np.concatenate(out))
    bounds = np.cumsum([0, *[len(v) for v in videos]])
    return np.stack([emb[a:b].mean(0) for a, b in zip(bounds[:-1], bounds[1:])]).astype(np.float32)


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


# ------------------------------------------------------------------------------------ workers sweep


def _sweep_folder(work: Path, profile: str, distinct: list[Path], n: int) -> tuple[Path, list[str]]:
    """A folder of `n` videos named s0..s{n-1}, hard links to the profile's distinct clips in turn."""
    folder = work / f"sweep-{profile}-{n}"
    folder.mkdir(parents=True, exist_ok=True)
    ids = [f"s{k}" for k in range(n)]
    for k, v in enumerate(ids):
        p = folder / f"{v}.mp4"
        if not p.exists():
            try:
                os.link(distinct[k % len(distinct)], p)
            except OSError:
                shutil.copy(distinct[k % len(distinct)], p)
    return folder, ids


def workers_sweep(work: Path, profile: str, distinct: list[Path], n: int, counts: list[int], model, floor: float,
                  ceiling: float | None, nvdec: bool, repeats: int = 3) -> dict:
    """Decode-only and end-to-end rows for each worker count, pool of processes vs threads of one process."""
    import hardneg.decoding as decoding
    import hardneg.pool as hpool
    from hardneg.scoring import encode_videos
    from hardneg.video import FrameSettings, VideoFolder, VideoReport
    from poolstats import Row, median

    settings = FrameSettings(n_frames=8, resize=224)
    folder, ids = _sweep_folder(work, profile, distinct, n)
    paths = [folder / f"{v}.mp4" for v in ids]
    dev = getattr(model, "device", "cpu")
    cores = hpool.available_cores()
    results: dict = {}

    def pool_row(kind: str, w: int, fn, warmup=None) -> Row:
        os.environ["HARDNEG_DECODE_WORKERS"] = str(w)
        pool = hpool.shared_pool(w, preload=decoding.PRELOAD).warm()
        if warmup is not None:  # e.g. each worker's first NVDEC context, outside the timing
            warmup()
        with Row(pool.pids()) as row:
            fn()
            _sync(dev)
        hpool.close_shared(w)
        return row

    def thread_row(fn) -> Row:
        with Row() as row:
            fn()
            _sync(dev)
        return row

    def decode_all(**kw):
        for got in decoding.decode_stream(paths, kw.pop("settings", settings), **kw):
            if isinstance(got, Exception):
                raise got

    def e2e(frames=settings):
        report = VideoReport()
        encode_videos(model, VideoFolder(folder), ids, frames, None, report)
        if report.ok != len(ids):
            raise RuntimeError(report.summary())

    encode_videos(model, VideoFolder(folder), ids[:2], settings, None, VideoReport())  # warm-up
    real_default = decoding.default_backend

    def today_e2e() -> Row:  # before issue 26: decode threads of one process (default: one per core)
        decoding.default_backend = lambda s: "thread"
        try:
            return thread_row(e2e)
        finally:
            decoding.default_backend = real_default

    user_env = os.environ.pop("HARDNEG_DECODE_WORKERS", None)
    chosen = decoding.choose_path()  # what a run on this machine picks, with HARDNEG_DECODE_WORKERS unset

    def default_e2e() -> Row:  # the path `choose_path` picks here (the pool of one process per core, or threads)
        os.environ.pop("HARDNEG_DECODE_WORKERS", None)
        if chosen.backend == "process":
            return pool_row("e2e", chosen.workers, e2e)
        return thread_row(e2e)

    rows: dict = {}
    for _ in range(repeats):  # rounds alternate every kind of row, so a busy moment spreads over all of them
        for w in counts:
            rows.setdefault(("decode", w), []).append(pool_row("decode", w, lambda: decode_all(workers=w, backend="process")))
            rows.setdefault(("threads", w), []).append(thread_row(lambda: decode_all(workers=w, backend="thread")))
            rows.setdefault(("e2e", w), []).append(pool_row("e2e", w, e2e))
        rows.setdefault(("today", 0), []).append(today_e2e())
        rows.setdefault(("default", 0), []).append(default_e2e())
    if user_env is not None:
        os.environ["HARDNEG_DECODE_WORKERS"] = user_env

    def med(key, attr, per_video=False):
        vals = [getattr(r, attr) for r in rows[key]]
        return median([n / v for v in vals]) if attr == "wall" else median([v / n if per_video else v for v in vals])

    print(f"\nworkers sweep ({profile}, {n} videos, 8 frames at 224 px, {cores} cores available; median of {repeats} "
          "alternating rounds): videos/s (wall), CPU-seconds per video (this process + its decoding processes), "
          "peak memory of this process / of the largest decoding process (MB, VmHWM reset per row)")
    print(f"  {'workers':>7s} {'floor x workers':>16s} | {'decode: pool':>13s} {'CPU-s/v':>8s} {'MB self/worker':>15s} | "
          f"{'decode: threads':>15s} {'CPU-s/v':>8s} | {'end to end: pool':>16s} {'CPU-s/v':>8s} {'of which self':>13s} "
          f"{'MB self/worker':>15s}")
    for w in counts:
        d, t, e = ("decode", w), ("threads", w), ("e2e", w)
        results[w] = {"decode_pool": med(d, "wall"), "decode_threads": med(t, "wall"), "e2e_pool": med(e, "wall"),
                      "cpu_decode_pool": med(d, "cpu", True), "cpu_e2e_pool": med(e, "cpu", True),
                      "peak_worker": med(e, "peak_worker_mb")}
        print(f"  {w:7d} {floor * w:16.2f} | {med(d, 'wall'):13.2f} {med(d, 'cpu', True):8.3f} "
              f"{med(d, 'peak_self_mb'):7.0f}/{med(d, 'peak_worker_mb'):<7.0f} | {med(t, 'wall'):15.2f} "
              f"{med(t, 'cpu', True):8.3f} | {med(e, 'wall'):16.2f} {med(e, 'cpu', True):8.3f} {med(e, 'cpu_self', True):13.3f} "
              f"{med(e, 'peak_self_mb'):7.0f}/{med(e, 'peak_worker_mb'):<7.0f}")
    today = ("today", 0)
    results["today"] = med(today, "wall")
    best_w = max(counts, key=lambda w: results[w]["e2e_pool"])
    best = results[best_w]["e2e_pool"]
    print(f"  end to end before the pool (threads of one process, {cores} threads): {results['today']:.2f} videos/s, "
          f"{med(today, 'cpu', True):.3f} CPU-s per video; each round's ratio pool ({best_w} workers) / before: "
          + ", ".join(f"{n / a.wall / (n / b.wall):.2f}" for a, b in zip(rows[('e2e', best_w)], rows[today])))
    dflt = ("default", 0)
    results["default"] = med(dflt, "wall")
    print(f"  end to end, the default path here ({chosen.backend}"
          + (f", {chosen.workers} workers" if chosen.workers else "") + f"; chosen because {chosen.reason}): "
          f"{results['default']:.2f} videos/s, {med(dflt, 'cpu', True):.3f} CPU-s per video; default / one process "
          f"{results['default'] / results['today']:.2f}x (per round: "
          + ", ".join(f"{b.wall / a.wall:.2f}" for a, b in zip(rows[dflt], rows[today])) + ")")
    import torch

    threads = torch.get_num_threads()
    if str(dev).startswith("cuda"):  # the rows above ran this process's torch on GPU_HOST_TORCH_THREADS threads
        host = decoding.GPU_HOST_TORCH_THREADS
        decoding.GPU_HOST_TORCH_THREADS = None
        try:
            other = pool_row("e2e", best_w, e2e)
        finally:
            decoding.GPU_HOST_TORCH_THREADS = host
        label = f"with torch's own {threads} threads instead of {host}"
    else:  # on the CPU the model needs torch's threads; how much does it cost the decoding processes?
        torch.set_num_threads(1)
        try:
            other = pool_row("e2e", best_w, e2e)
        finally:
            torch.set_num_threads(threads)
        label = f"with 1 torch thread instead of {threads}"
    print(f"  end to end, {best_w} workers, this process {label}: {n / other.wall:.2f} videos/s, "
          f"{other.cpu / n:.3f} CPU-s per video ({other.cpu_self / n:.3f} in this process)")
    print(f"  goal (2 cores): end to end >= 1.6x that; measured {best / results['today']:.2f}x (medians; {best:.2f} "
          f"videos/s with {best_w} workers)")
    if ceiling:
        target = 0.5 * min(ceiling, cores * floor)
        print(f"  goal (GPU machine): end to end >= 0.5 x min(encode ceiling {ceiling:.0f}, cores {cores} x floor "
              f"{floor:.2f} = {cores * floor:.0f}) = {target:.1f} videos/s; measured {best:.2f} "
              f"({best / target:.2f}x the goal)")
    if nvdec:
        from hardneg.video import decode_frames

        nv = FrameSettings(n_frames=8, resize=224, decoder="nvdec")
        diffs = []
        for v in distinct[:4]:  # at full size: the decoders' pixels, before any resize
            cpu = decode_frames(v, FrameSettings(n_frames=8, resize=None))
            gpu = decode_frames(v, FrameSettings(n_frames=8, resize=None, decoder="nvdec"), device=dev)
            diffs.append(np.abs(cpu.astype(int) - gpu.astype(int)))
        print(f"  nvdec vs pyav frames (same positions, full size, {len(diffs)} clips): mean "
              f"{np.mean([d.mean() for d in diffs]):.2f}, max {max(int(d.max()) for d in diffs)} levels of 255")
        for w in sorted({max(1, max(counts) // 4), max(counts)}):
            def warm(w=w):
                list(decoding.decode_stream(paths[:w], nv, device=dev, workers=w, backend="process"))

            dn = pool_row("nvdec", w, lambda: decode_all(settings=nv, device=dev, workers=w), warm)
            en = pool_row("nvdec", w, lambda: e2e(nv), warm)
            results[("nvdec", w)] = {"decode": n / dn.wall, "e2e": n / en.wall}
            print(f"  nvdec (the GPU's video decoder; {w} pool workers convert the sampled frames): decode "
                  f"{n / dn.wall:.2f} videos/s ({dn.cpu / n:.3f} CPU-s/video), end to end {n / en.wall:.2f} videos/s "
                  f"({en.cpu / n:.3f} CPU-s/video), worker peak {en.peak_worker_mb:.0f} MB", flush=True)
    return results


def encode_ceiling(model, paths: list[Path]) -> float:
    """Videos/s of the model alone on prepared pixel values (8 frames each; best of 3)."""
    from hardneg.video import FrameSettings, decode_frames

    frames = [decode_frames(v, FrameSettings(n_frames=8, resize=224)) for v in paths[:8]]
    dev = model.device
    pix = model.pixels(frames, dev, model.model.dtype)
    import torch

    best = float("inf")
    for _ in range(3):
        _sync(dev)
        t = time.perf_counter()
        with torch.inference_mode():
            for i in range(0, len(pix), model.frame_batch):
                model.model.get_image_features(pixel_values=pix[i:i + model.frame_batch])
        _sync(dev)
        best = min(best, time.perf_counter() - t)
    return len(frames) / best


def run_sweeps(args, work: Path, sets: dict[str, list[Path]], profiles: list[str]) -> None:
    import torch

    from hardneg.decoding import check_decoder
    from hardneg.models import load_model
    from hardneg.pool import available_cores
    from hardneg.video import DecoderUnavailable, FrameSettings
    from poolstats import workers_list

    cores = available_cores()
    counts = workers_list(cores, args.sweep_workers)
    dev = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    kind = args.sweep_model or ("b32" if dev.startswith("cuda") else "tiny")
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    name = str(random_clip_b32(work / "clip-b32-random")) if kind == "b32" else "tiny-clip"
    model = load_model(name, device=dev, fp16=args.fp16)
    gpu = torch.cuda.get_device_name() if dev.startswith("cuda") else "none"
    cpu_name = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                     if ln.startswith("model name")), "?") if Path("/proc/cpuinfo").exists() else "?"
    print(f"\nmachine: {cores} cores available ({cpu_name}), load average {os.getloadavg()[0]:.1f}")
    print(f"sweep model: {'ViT-B/32 CLIP, random weights' if kind == 'b32' else 'the built-in tiny CLIP'} on {dev} "
          f"({gpu}), {model.dtype}; torch {torch.__version__}, {torch.get_num_threads()} torch CPU threads")
    nvdec = False
    if dev.startswith("cuda"):
        try:
            check_decoder(FrameSettings(decoder="nvdec"), dev)
            nvdec = True
        except DecoderUnavailable as exc:
            print(f"nvdec rows skipped: {exc}")
    for p in profiles:
        distinct = sets[p]
        t = run_worker("time", ["floor"], distinct, 1, repeats=3)
        floor = len(distinct) / t["cpu"]["floor"] if t else float("nan")
        ceiling = encode_ceiling(model, distinct) if dev.startswith("cuda") else None
        print(f"\n{p}: floor (one worker, one FFmpeg thread) {floor:.2f} videos per CPU-second"
              + (f"; encode ceiling {ceiling:.0f} videos/s" if ceiling else ""))
        n = args.sweep_videos or max(16, 4 * max(counts))
        if p == "uvo" and not args.sweep_videos:  # 1080p: about one video per CPU-second
            n = max(counts)
        workers_sweep(work, p, distinct, n, counts, model, floor, ceiling, nvdec, repeats=args.sweep_repeats)


# ------------------------------------------------------------------------------------------ main


def rate(n: int, seconds: float) -> str:
    return f"{n / seconds:8.2f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="one clip per profile, length check on msrvtt only (< 2 min on 2 cores)")
    ap.add_argument("--videos", type=int, default=4, help="clips per profile (default 4; --quick: 1)")
    ap.add_argument("--profiles", default=",".join(PROFILES), help=f"comma-separated, from {list(PROFILES)}")
    ap.add_argument("--device", default=None, help="cpu or cuda (default: cuda when available)")
    ap.add_argument("--fp16", action="store_true", help="half precision on the GPU (also prints fp16-vs-fp32 score agreement)")
    ap.add_argument("--decoder-threads", type=int, default=1,
                    help="FFmpeg threads per decoding worker in the decode rows (default 1: one worker, one core)")
    ap.add_argument("--torch-threads", type=int, default=None,
                    help="torch CPU threads (default: torch's choice; 1 gives steadier CPU-time figures on a shared machine)")
    ap.add_argument("--repeats", type=int, default=5, help="alternating timing rounds of the decode rows (default 5)")
    ap.add_argument("--workdir", default=None, help="keep the clips (and the model) here between runs")
    ap.add_argument("--end-to-end", action="store_true", help="also time hardneg score (cold, then warm cache) on the first profile")
    ap.add_argument("--sweep", action="store_true", help="also the workers sweep (pool of decoding processes)")
    ap.add_argument("--sweep-only", action="store_true", help="only the workers sweep (and the floor it is compared with)")
    ap.add_argument("--sweep-videos", type=int, default=None, help="videos per sweep row (default 4 per core, at least 16)")
    ap.add_argument("--sweep-workers", default=None, help="worker counts, comma-separated (default 1,2,4,... up to the cores)")
    ap.add_argument("--sweep-repeats", type=int, default=3, help="alternating rounds of the sweep (medians; default 3)")
    ap.add_argument("--sweep-model", choices=("tiny", "b32"), default=None,
                    help="model of the end-to-end rows: the built-in tiny CLIP (decoding-bound) or a ViT-B/32-sized "
                         "CLIP (default: b32 on a GPU, tiny on the CPU, where B/32 alone is about 1 video/s)")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return 0

    t_start = time.perf_counter()
    n_videos = 1 if args.quick else args.videos
    profiles = [p for p in args.profiles.split(",") if p]
    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="bench-scoring-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        import torch

        from hardneg.threads import default_threads

        t = time.perf_counter()
        sets = {p: clips(work, p, n_videos) for p in profiles}
        print(f"clips ready in {time.perf_counter() - t:.1f} s ({n_videos} per profile, in {work})")
        for p in profiles:
            print(f"  {p:7s} {PROFILES[p][1]}x{PROFILES[p][2]}, {PROFILES[p][0]} s: keyframes at frames {keyframes(sets[p][0])}")
        from hardneg.decoding import choose_path

        path = choose_path()
        print(f"decoding path chosen here: {path.backend}" + (f" ({path.workers} workers)" if path.workers else "")
              + f", because {path.reason}")
        if args.sweep_only:
            run_sweeps(args, work, sets, profiles)
            print(f"\ntotal {time.perf_counter() - t_start:.0f} s")
            return 0

        # ---------------------------------------------------------------- decode rows
        try:
            from torchcodec.decoders import VideoDecoder  # noqa: F401

            has_torchcodec = True
        except Exception:
            has_torchcodec = False
        methods = ["floor", "previous", "decode", "decode-swscale"] + (["torchcodec"] if has_torchcodec and not args.quick else [])
        print(f"\ndecode: one worker, {args.decoder_threads} FFmpeg thread(s), 8 frames at 224 px. videos per CPU-second "
              "of the worker (best of alternating rounds; CPU time, since wall time on a shared machine measures the "
              "other tenants), and the peak memory of a process decoding the clips once")
        print(f"  {'profile':8s}" + "".join(f"{m:>22s}" for m in methods) + f"{'decode/floor':>14s}")
        timed: dict[str, dict] = {}
        for p in profiles:
            t = run_worker("time", methods, sets[p], args.decoder_threads, repeats=3 if args.quick else args.repeats)
            mem = {m: run_worker("memory", [m], sets[p], args.decoder_threads) for m in methods}
            timed[p] = t
            if t is None:
                continue
            cpu = t["cpu"]
            cells = "".join(f"{rate(t['videos'], cpu[m])} ({mem[m]['peak_mb'] if mem[m] else float('nan'):5.0f} MB)".rjust(22)
                            for m in methods)
            print(f"  {p:8s}{cells}{cpu['decode'] / cpu['floor']:14.2f}")
        for p in profiles:
            t = timed[p]
            if t:
                cpu, wall = t["cpu"], t["wall"]
                print(f"  {p}: {t['rounds']} rounds; decode does {cpu['previous'] / cpu['decode']:.2f}x the previous decoder's "
                      f"videos per CPU-second, swscale {cpu['decode'] / cpu['decode-swscale']:.2f}x the PIL resize's; "
                      "wall-clock videos/s " + ", ".join(f"{m} {t['videos'] / wall[m]:.2f}" for m in methods))
                print(f"    first clip: {t['stats'][0] if t['stats'] else ''}")

        # ---------------------------------------------------------------- memory vs length
        length_profiles = profiles[:1] if args.quick else [p for p in profiles if p != "uvo"] or profiles[:1]
        print("\npeak memory of one decoding process vs clip length (MB; one clip each)")
        for p in length_profiles:
            one, four = clips(work, p, 1, 1)[0], clips(work, p, 1, 4)[0]
            cells = []
            for m in ("previous", "decode"):
                a, b = run_worker("memory", [m], [one]), run_worker("memory", [m], [four])
                if a and b:
                    cells.append(f"{m}: {a['peak_mb']:.0f} -> {b['peak_mb']:.0f} MB (x{b['peak_mb'] / a['peak_mb']:.2f})")
            print(f"  {p} {PROFILES[p][0]} s -> {4 * PROFILES[p][0]} s: " + "; ".join(cells))

        # ---------------------------------------------------------------- seeking
        seek_profile = profiles[0] if args.quick else ("vatex" if "vatex" in profiles else profiles[0])
        seek_methods = ["floor", "decode", "decode-noseek", "decode-seekall"]
        print(f"\nseeking ({seek_profile}; videos per CPU-second): the rule seeks when it skips more than "
              "SEEK_COST_FRAMES frames; noseek never seeks, seekall seeks whenever it skips any")
        for gop in (None, 30):
            paths = clips(work, seek_profile, 1 if args.quick else min(2, n_videos), gop=gop)
            t = run_worker("time", seek_methods, paths, args.decoder_threads, repeats=3)
            if t:
                label = f"keyframes every {gop} frames" if gop else f"default keyframes {keyframes(paths[0])}"
                print(f"  {label:42s}" + ", ".join(f"{m} {t['videos'] / t['cpu'][m]:.2f}" for m in seek_methods))

        # ---------------------------------------------------------------- model rows
        from hardneg.models import load_model
        from hardneg.scoring import encode_videos
        from hardneg.video import FrameSettings, VideoFolder, VideoReport, decode_frames

        if args.torch_threads:
            torch.set_num_threads(args.torch_threads)
        model_dir = random_clip_b32(work / "clip-b32-random")
        model = load_model(str(model_dir), device=args.device, fp16=args.fp16)
        dev = model.device
        gpu = torch.cuda.get_device_name() if dev.startswith("cuda") else "none"
        print(f"\nmodel: ViT-B/32 CLIP, random weights, on {dev} ({gpu}), {model.dtype}; torch {torch.__version__}, "
              f"{torch.get_num_threads()} torch CPU threads, {default_threads()} decode threads")
        settings = FrameSettings(n_frames=8, resize=224)
        from hardneg.models.clip import preprocess_frames
        from hardneg.threads import thread_map

        def timed(fn):
            _sync(dev)
            t, c = time.perf_counter(), time.process_time()
            out = fn()
            _sync(dev)
            return out, time.perf_counter() - t, time.process_time() - c

        def encode(pix):
            with torch.inference_mode():
                for i in range(0, len(pix), model.frame_batch):
                    model.model.get_image_features(pixel_values=pix[i:i + model.frame_batch])

        # the model's work is the same for every profile (8 frames of 224 x 224): timed once, best of 3
        frames = [decode_frames(v, settings) for v in sets[profiles[0]]]
        model.encode_video(frames[:1])  # warm-up
        pix = model.pixels(frames, dev, model.model.dtype)
        enc = [timed(lambda: encode(pix))[1:] for _ in range(3)]
        enc = (min(e[0] for e in enc) / len(frames), min(e[1] for e in enc) / len(frames))  # per video
        cols = ["preprocess", "PIL processor", "encode", "end to end", "previous e2e"]
        results = {}
        for p in profiles:
            frames = [decode_frames(v, settings) for v in sets[p]]
            n = len(frames)
            pix, *pre = timed(lambda: model.pixels(frames, dev, model.model.dtype))
            _, *pil = timed(lambda: preprocess_frames(model.processor, np.concatenate(frames)).to(dev, model.model.dtype))
            ids = [v.stem for v in sets[p]]
            e2e, old = (float("inf"),) * 2, (float("inf"),) * 2
            for _ in range(2):  # best of 2, alternating
                _, *t = timed(lambda: encode_videos(model, VideoFolder(sets[p][0].parent), ids, settings, None, VideoReport()))
                e2e = tuple(min(a, b) for a, b in zip(e2e, t))
                _, *t = timed(lambda: _old_encode_video(model, thread_map(lambda v: _old_decode(v, settings), sets[p])))
                old = tuple(min(a, b) for a, b in zip(old, t))
            results[p] = (n, dict(zip(cols, (pre, pil, (enc[0] * n, enc[1] * n), e2e, old))))
        for k, label in ((0, "wall-clock videos/s"), (1, "videos per CPU-second of this process (all its threads)")):
            print(f"  {label}; encode: the model alone on prepared pixel values (best of 3); end to end: "
                  "hardneg.scoring.encode_videos (best of 2)")
            print(f"  {'profile':8s}" + "".join(f"{c:>15s}" for c in cols) + f"{'e2e/encode':>12s}{'previous/e2e':>14s}")
            for p, (n, r) in results.items():
                print(f"  {p:8s}" + "".join(f"{n / r[c][k]:15.2f}" for c in cols)
                      + f"{r['end to end'][k] / r['encode'][k]:12.2f}{r['previous e2e'][k] / r['end to end'][k]:14.2f}")
        if args.fp16 and dev.startswith("cuda"):
            ref = load_model(str(model_dir), device=dev, fp16=False)
            frames = [decode_frames(v, settings) for p in profiles for v in sets[p]]
            text = model.encode_text([f"a person {v} the door" for v in VERBS])
            s16 = model.similarity(model.encode_video(frames), text)
            s32 = ref.similarity(ref.encode_video(frames), ref.encode_text([f"a person {v} the door" for v in VERBS]))
            same_top = float(np.mean(s16.argmax(1) == s32.argmax(1)))
            print(f"fp16 vs fp32 scores: max abs difference {np.abs(s16 - s32).max():.2e}, same top caption {same_top:.0%}")

        if args.end_to_end:
            from hardneg.scoring import score_benchmark

            first = profiles[0]
            dataset = prepare_dataset(work / "dataset", n_videos)
            cache = work / "cache-end-to-end"
            shutil.rmtree(cache, ignore_errors=True)
            times = []
            for label in ("cold cache", "warm cache"):
                t = time.perf_counter()
                run = score_benchmark(str(model_dir), str(dataset), "msrvtt", work / "pred.parquet",
                                      videos=str(sets[first][0].parent), frames=settings, cache_dir=str(cache),
                                      progress=False, loaded_model=model, overwrite=True)
                times.append(time.perf_counter() - t)
                print(f"hardneg score end to end ({first}), {label}: {run.scored}/{run.rows} items, "
                      f"{run.embeddings_computed} videos encoded, {run.embeddings_cached} from cache: "
                      f"{times[-1]:.2f} s = {run.rows / times[-1]:.2f} videos/s")
            print(f"warm / cold time ratio: {times[1] / times[0]:.3f}")
        if args.sweep:
            run_sweeps(args, work, sets, profiles)
        print(f"\ntotal {time.perf_counter() - t_start:.0f} s")
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
