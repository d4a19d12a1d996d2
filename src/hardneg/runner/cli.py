"""Command-line options shared by every subcommand that maps a batch function."""

from __future__ import annotations

import argparse
import json


def add_backend_arguments(parser: argparse.ArgumentParser, default_batch_size: int = 256) -> None:
    """Add --backend, --ray-address, --workers, --batch-size (+ --num-gpus, --ray-runtime-env)."""
    g = parser.add_argument_group("execution (local or Ray)")
    g.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="local: this machine (process pool for --workers > 1); ray: a Ray cluster "
                        "(needs pip install -e '.[distributed]' in the clone). Output is identical either way.")
    g.add_argument("--ray-address", default=None, metavar="ADDR",
                   help="Ray cluster to join, e.g. auto or ray://head:10001 (default: start a local "
                        "Ray instance with max(2, --workers) CPUs)")
    g.add_argument("--workers", type=int, default=1, metavar="N",
                   help="parallel workers (processes or Ray actors); each loads the models once (default 1)")
    g.add_argument("--batch-size", type=int, default=default_batch_size, metavar="B",
                   help=f"rows per batch and per output shard; resume needs the same value (default {default_batch_size})")
    g.add_argument("--num-gpus", type=float, default=0, metavar="G",
                   help="GPUs per Ray actor when the model runs on a GPU (Ray backend only, default 0)")
    g.add_argument("--ray-runtime-env", default=None, metavar="JSON",
                   help='Ray runtime_env as JSON, e.g. \'{"pip": ["/shared/video-hardneg[generate]"]}\' (a clone '
                        "every node can read; the package is not on PyPI) for a cluster whose nodes lack the package")


def backend_kwargs(args: argparse.Namespace) -> dict:
    """The `run_map` keyword arguments chosen on the command line by `add_backend_arguments`."""
    if args.workers < 1:
        raise ValueError(f"--workers must be at least 1, got {args.workers}")
    if args.batch_size < 1:
        raise ValueError(f"--batch-size must be at least 1, got {args.batch_size}")
    if args.backend != "ray" and (args.ray_address or args.num_gpus or args.ray_runtime_env):
        raise ValueError("--ray-address, --num-gpus and --ray-runtime-env need --backend ray")
    runtime_env = None
    if args.ray_runtime_env:
        try:
            runtime_env = json.loads(args.ray_runtime_env)
        except json.JSONDecodeError as exc:
            raise ValueError(f"--ray-runtime-env is not valid JSON ({exc}); e.g. '{{\"pip\": [\"video-hardneg\"]}}'") from exc
    return {
        "backend": args.backend,
        "ray_address": args.ray_address,
        "num_workers": args.workers,
        "batch_size": args.batch_size,
        "num_gpus": args.num_gpus,
        "ray_runtime_env": runtime_env,
    }
