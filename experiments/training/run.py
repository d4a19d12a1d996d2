"""The training experiment (docs/training.md): one command runs it, one reports it.

    python experiments/training/run.py --profile cpu            # run (or resume) the CPU design
    python experiments/training/run.py --report                 # regenerate docs/training.md's tables
    python experiments/training/run.py --reproduce cpu          # retrain the first wave's stored jobs, compare bits

`--profile cpu` writes every finished job into experiments/training/results/cpu.json.gz at once; rerun the
same command after an interruption and it continues where it stopped (the prepared inputs are cached in
--work). `--profile gpu --device cuda --jobs 8` is the same design with larger sizes on a GPU;
`--profile ci` is the slow test's pipeline check (one contrast, 6 seeds).
`--profile controls` (issue 50) runs the positive control (world word-level vs coarse, scored with PoSRank's
own metric against the same generator's negatives) and the negative control (captions shuffled against
videos), small; `--profile paper` is the two claims on PoSRank's metrics with seeds by power, in waves
(claim (2) as non-inferiority, margin declared in docs/training.md). Both are resumable like `cpu`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))


def default_negatives(world_seed: int) -> Path | None:
    found = sorted((HERE / "data").glob(f"world-negatives-s{world_seed}-train*.json.gz"))
    return found[-1] if found else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--profile", choices=("ci", "cpu", "gpu", "controls", "paper"), help="run (or resume) this design")
    mode.add_argument("--report", action="store_true", help="regenerate docs/training.md's tables from the results")
    mode.add_argument("--reproduce", metavar="PROFILE", help="retrain stored jobs of the first wave and compare bits")
    ap.add_argument("--results", type=Path, default=None,
                    help="results file (default: experiments/training/results/<profile>.json.gz)")
    ap.add_argument("--work", type=Path, default=None, help="work folder: the prepared inputs (default: "
                    "experiments/training/work/<profile>, not committed)")
    ap.add_argument("--jobs", type=int, default=None, help="processes training jobs at once (default: the cores)")
    ap.add_argument("--workers", type=int, default=None, help="processes building the world (default: the cores)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--world-seed", type=int, default=0)
    ap.add_argument("--max-jobs", type=int, default=None, help="stop after this many jobs (exit 3; rerun to go on)")
    ap.add_argument("--rows", default=None, help="--reproduce: rows (default: every pilot row)")
    ap.add_argument("--seeds", default=None, help="--reproduce: seeds (default: the first wave's pilot seeds)")
    ap.add_argument("--upto", type=int, default=None, help="--reproduce: retrain to this step only")
    ap.add_argument("--docs", type=Path, default=ROOT / "docs" / "training.md")
    ap.add_argument("--check", action="store_true", help="--report: fail when docs/training.md is not up to date")
    args = ap.parse_args(argv)

    from training_runner import default_jobs

    name = args.profile or args.reproduce
    if args.report:
        from training_report import regenerate

        return regenerate(args.docs, HERE / "results", check=args.check)
    results = args.results or HERE / "results" / f"{name}.json.gz"
    work = args.work or HERE / "work" / name
    workers = args.workers or default_jobs()
    if args.reproduce:
        from training_runner import ResultsFile, reproduce

        body = ResultsFile(results).body
        rows = args.rows.split(",") if args.rows else body["profile"]["pilot_rows"]
        seeds = [int(s) for s in args.seeds.split(",")] if args.seeds else list(range(body["profile"]["pilot_seeds"]))
        bad = reproduce(results, work, [(r, s) for r in rows for s in seeds], args.upto, workers,
                        default_negatives(body["world_seed"]))
        print("\n".join(bad) if bad else "reproduced: every compared number is identical")
        return 1 if bad else 0
    from training_runner import run

    return run(args.profile, results, work, args.world_seed, workers, args.jobs, default_negatives(args.world_seed),
               args.device, log=lambda m: print(m, flush=True), max_jobs=args.max_jobs)


if __name__ == "__main__":
    sys.exit(main())
