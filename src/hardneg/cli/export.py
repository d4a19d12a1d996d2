"""`hardneg export lmms-eval DIR --data ROOT|NAME=PATH --videos DIR|NAME=DIR [--benchmarks ...]`.

Writes lmms-eval 0.7.3 task folders for hardneg's benchmarks (hardneg.lmms_export): run them with
`lmms-eval --include_path DIR --tasks hardneg_<benchmark>,...` and any lmms-eval model. The prompt comes from the
benchmark's declared protocol; answers are scored by hardneg's metrics (tie rules, intervals).
"""

from __future__ import annotations

import argparse
from pathlib import Path

DESCRIPTION = """\
Write an lmms-eval task folder (a YAML, utils.py and hardneg_task.json per task) for each benchmark and each
protocol lmms-eval can express: generate_until for the protocol sets whose protocol is generate-match,
multiple_choice (loglikelihood) for caption likelihood. Retrieval benchmarks are skipped (listed).

  hardneg build tempcompass --raw tc-raw --out built/tempcompass
  hardneg export lmms-eval tasks --data built --videos ~/videos --benchmarks tempcompass,vitatecs
  hardneg fetch tempcompass && hardneg export lmms-eval tasks --benchmarks tempcompass   # the fetched cache
  lmms-eval --model qwen2_vl --model_args pretrained=Qwen/Qwen2-VL-2B-Instruct --include_path tasks \\
      --tasks hardneg_tempcompass
  lmms-eval --model hardneg_vlm --model_args pretrained=tiny-vlm,device=cpu --include_path tasks \\
      --tasks hardneg_tempcompass,hardneg_tempcompass_likelihood

The likelihood tasks run with hardneg_vlm (installed with hardneg: lmms-eval's entry point `lmms_eval.models`),
which runs hardneg's engine, so their numbers are `hardneg run`'s; lmms-eval's own video wrappers cannot run them.
The printed commands hold absolute paths; the tasks do too, so lmms-eval runs them from any folder.
"""


def _named(values: list[str] | None, what: str) -> tuple[str | None, dict[str, str]]:
    root, named = None, {}
    for v in values or []:
        name, eq, path = v.partition("=")
        if eq and "/" not in name and name:
            named[name] = path
        elif root is None:
            root = v
        else:
            raise ValueError(f"--{what}: give one folder, or NAME=PATH per benchmark (got {v!r} after {root!r})")
    return root, named


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("export", help="write lmms-eval task folders for the benchmarks",
                              description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="export_format", metavar="<lmms-eval>", required=True)
    e = sub.add_parser("lmms-eval", help="an lmms-eval --include_path folder")
    e.add_argument("dir", help="folder to write (must be empty unless --overwrite)")
    e.add_argument("--data", action="append", default=None,
                   help="a folder of built benchmarks (<folder>/<benchmark>), or NAME=PATH (a built folder or a Hub "
                        "dataset id) per benchmark; repeat the flag (default: what `hardneg fetch` built)")
    e.add_argument("--videos", action="append", default=None,
                   help="the folder of <video_id>.mp4 files for every benchmark, or NAME=DIR per benchmark "
                        "(default: the videos `hardneg fetch` put in the cache, per benchmark)")
    e.add_argument("--benchmarks", default=None, help="comma-separated benchmarks (default: every one under --data)")
    e.add_argument("--config", action="append", default=None,
                   help="NAME=CONFIG: export this config of a benchmark (repeat; default: the configs its headline "
                        "is computed on)")
    e.add_argument("--split", default="test", help="the split scored (default test)")
    e.add_argument("--ties", default="expected", help="hardneg's tie rule for the scores (default expected)")
    e.add_argument("--n-resamples", type=int, default=1000, help="bootstrap resamples for intervals (default 1000)")
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--overwrite", action="store_true", help="write into a folder that already holds files")
    e.set_defaults(func=run)
    return p


def run(args) -> int:
    from hardneg import benchmarks
    from hardneg.lmms_export import plan, write
    from hardneg.lmms_export.writer import protocols

    root, named = _named(args.data, "data")
    vroot, vnamed = _named(args.videos, "videos")
    wanted = [b for b in (args.benchmarks or "").split(",") if b] or None
    if not args.data or not args.videos:  # the fetched cache (hardneg.fetching), per benchmark
        from hardneg.fetching.runs import fetched_paths

        fetched_root, fetched_videos = fetched_paths(wanted)
        root = root if args.data else fetched_root
        vnamed = vnamed if args.videos else fetched_videos
    if root and not Path(root).is_dir():
        raise ValueError(f"--data {root}: no such folder; pass the folder the benchmarks were built into "
                         "(`hardneg build`), or NAME=PATH (a built folder or a Hub id) per benchmark")
    names = wanted or (sorted(named) + ([p.name for p in sorted(Path(root).iterdir()) if p.is_dir()
                                         and p.name in benchmarks.names()] if root else []))
    datasets, skipped = {}, []
    for name in names:
        decl = benchmarks.get(name)
        if not protocols(decl):
            skipped.append(f"{name} (it ranks videos per query; lmms-eval asks about one document at a time)")
            continue
        path = named.get(name) or (str(Path(root) / name) if root else None)
        if path is None:
            raise ValueError(f"--data: no dataset for {name}; pass --data {name}=PATH")
        datasets[name] = path
    videos = {n: vnamed.get(n, vroot) for n in datasets if vnamed.get(n, vroot)}
    configs: dict[str, list[str]] = {}
    for c in args.config or []:
        n, _, cfg = c.partition("=")
        configs.setdefault(n, []).append(cfg)
    tasks = plan(datasets, videos, configs, split=args.split, ties=args.ties, n_resamples=args.n_resamples,
                 seed=args.seed)
    write(args.dir, tasks, overwrite=args.overwrite)
    for t in tasks:
        print(f"{t.name}: {t.spec.benchmark}/{t.spec.config} {t.spec.protocol} (protocol set {t.spec.protocol_set})")
    for s in skipped:
        print(f"skipped: {s}")
    for line in run_commands(Path(args.dir).resolve(), tasks):
        print(line)
    return 0


def run_commands(folder: Path, tasks) -> list[str]:
    """The lmms-eval command lines for the written tasks: every task with hardneg's own model (`hardneg_vlm`, which
    runs the likelihood tasks too), and the generate tasks alone for lmms-eval's video wrappers (their
    loglikelihood raises NotImplementedError on a video and lmms-eval still exits 0)."""
    from hardneg.lmms_export.entry import MODEL_ID

    generate = [t.name for t in tasks if t.spec.protocol == "generate-match"]
    lines = [f"run (every task, hardneg's engine): lmms-eval --model {MODEL_ID} --model_args "
             f"pretrained=tiny-vlm,device=cpu --include_path {folder} --tasks {','.join(t.name for t in tasks)}"]
    if generate:
        lines.append(f"run (generate tasks, any lmms-eval video model): lmms-eval --model qwen2_vl --model_args "
                     f"pretrained=Qwen/Qwen2-VL-2B-Instruct --include_path {folder} --tasks {','.join(generate)}")
    return lines
