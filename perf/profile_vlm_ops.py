"""Where one verified tiny type's time goes, one item at a time against across videos, operator by operator.

    python perf/profile_vlm_ops.py --type gemma4            # 3 items x 21 captions of 16 tokens, 8 frames 32 px
    python perf/profile_vlm_ops.py --type glm5_next --rows 20 --threads 2

`perf/bench_vlm.py --paths` says how fast each path is; this says why two paths are as fast as each other (issue
52): torch's profiler over two passes of each path on the same items as `--paths` (`bench_vlm.path_items`), the
operators grouped by their input shapes, sorted by their own time. A type whose time is one
kernel at the same total work in both paths (the prefix's attention, say) cannot gain from batching on this
device; a type whose time is many small calls can. Figures are the profiler's (its own overhead included): read
them as shares and as the ratio of the two totals it prints, never as captions/s.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def profile_paths(model_type: str, n_items: int, n_captions: int, caption_tokens: int, rows: int) -> dict:
    """Profile the generic path one item at a time and across videos on the same items; print both tables."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_vlm import load_note, path_items

    from hardneg.benchmarks.base import VLMPrompt
    from hardneg.models.vlm.batch import BatchScorer
    from hardneg.models.vlm.model import VideoLLM
    from hardneg.models.vlm.support import VERIFIED
    from hardneg.models.vlm.tiny import tiny_vlm_path

    if model_type not in VERIFIED:
        raise SystemExit(f"error: --type {model_type}: not a verified type; choose from {', '.join(VERIFIED)}")
    engine = VideoLLM(str(tiny_vlm_path(VERIFIED[model_type])), device="cpu", path="generic").engine
    spec = VLMPrompt()
    items = path_items(engine, n_items, n_captions, caption_tokens, frames=8, side=32)  # `--paths`' defaults
    scorer = BatchScorer(engine)
    paths = {"one item": lambda: [engine.score(f, c, spec) for f, c in items],
             "across videos": lambda: scorer.score_items(items, spec)}
    for fn in paths.values():  # warm: lazy kernels, the processor's first call, first shapes
        fn()
    totals = {}
    print(f"{model_type}: {n_items} items x {n_captions} captions of {caption_tokens} tokens, "
          f"{torch.get_num_threads()} torch thread(s); {load_note()}")
    for name, fn in paths.items():
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            fn()
            fn()
        averages = prof.key_averages(group_by_input_shape=True)
        totals[name] = sum(e.self_cpu_time_total for e in averages) / 1e3 / 2
        print(f"===== {name}: {totals[name]:.0f} ms of operators per pass")
        print(averages.table(sort_by="self_cpu_time_total", row_limit=rows, max_name_column_width=44,
                             max_shapes_column_width=96))
    print(f"across videos / one item, operators' own time: {totals['across videos'] / totals['one item']:.2f}x "
          "(under 1: across videos does less)")
    return totals


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--type", required=True, help="a verified model type (perf/bench_vlm.py --paths lists them)")
    ap.add_argument("--items", type=int, default=3, help="videos (default 3, as --paths)")
    ap.add_argument("--captions", type=int, default=21, help="captions per video (default 21)")
    ap.add_argument("--caption-tokens", type=int, default=16, help="tokens per caption (default 16)")
    ap.add_argument("--rows", type=int, default=14, help="operator rows printed per path (default 14)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1, as --paths)")
    args = ap.parse_args(argv)
    for flag in ("items", "captions", "caption_tokens", "rows", "threads"):
        if getattr(args, flag) < 1:
            ap.error(f"--{flag.replace('_', '-')} must be at least 1")
    import torch

    torch.set_num_threads(args.threads)
    profile_paths(args.type, args.items, args.captions, args.caption_tokens, args.rows)


if __name__ == "__main__":
    main()
