"""Issue 48 item 4: lmms-eval from its own command line, in a fresh venv with the project and the `lmms-eval` extra.

The venv is new (`venv_helpers.make_venv_over_running_env`: it sees the running environment's packages, after its
own); the project is installed into it editable from this checkout (its entry points: `hardneg`, and lmms-eval's
`lmms_eval.models` group naming `hardneg_vlm`; its start-up .pth hooks), and lmms-eval 0.7.3 itself with --no-deps,
so that the venv has its own `lmms-eval` console script. The command `hardneg export lmms-eval` prints for
`hardneg_vlm` then runs from another folder, with no Python shim: one generate task and one likelihood task. It
must exit 0 with no traceback, and equal `hardneg run` item by item (answers, scores) and in Accuracy."""

from __future__ import annotations

import glob
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from .helpers import LMMS_EVAL_VERSION, lmms_eval_root

REPO = Path(__file__).resolve().parents[2]


def _extra_requirements() -> list[str]:
    """The distributions the `lmms-eval` extra names (this checkout's pyproject.toml)."""
    import tomllib

    reqs = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["lmms-eval"]
    return [re.split(r"[<>=!~ ;\[]", r, maxsplit=1)[0] for r in reqs]


def _venv(tmp_path: Path) -> Path:
    sys.path.insert(0, str(REPO / "tests"))
    try:
        from venv_helpers import make_venv_over_running_env
    finally:
        sys.path.remove(str(REPO / "tests"))
    py = make_venv_over_running_env(tmp_path / "venv")
    pip = [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps"]
    done = subprocess.run([*pip, "--no-build-isolation", "-e", str(REPO)], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    done = subprocess.run([*pip, "--ignore-installed", "-c", str(REPO / "constraints.txt"),
                           f"lmms-eval=={LMMS_EVAL_VERSION}"], capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        pytest.skip(f"cannot install lmms-eval {LMMS_EVAL_VERSION} into a new venv here: {done.stderr[-500:]}")
    return py.parent


def _samples(out: Path, task: str) -> list[dict]:
    path = glob.glob(str(out / "**" / f"*_samples_{task}.jsonl"), recursive=True)
    assert len(path) == 1, f"lmms-eval wrote no samples for {task} under {out}"
    rows = [json.loads(line) for line in Path(path[0]).read_text().splitlines() if line.strip()]
    return [next(v for k, v in r.items() if k.startswith("hardneg_") and isinstance(v, dict)) for r in rows]


@pytest.mark.slow
def test_printed_lmms_eval_command_runs_hardneg_vlm_and_equals_hardneg_run(tmp_path):
    lmms_eval_root()
    from hardneg.cli import main
    from hardneg.datasets import build_samples
    from hardneg.items import load_benchmark
    from hardneg.run import sample_videos

    wanted = _extra_requirements()
    assert "pytablewriter" in wanted  # lmms-eval's closing table (make_table) needs it
    bin_dir = _venv(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", HF_HOME=str(tmp_path / "hf"),
               HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    missing = subprocess.run([str(bin_dir / "python"), "-c", "import importlib.util as u; "
                              f"print(' '.join(n for n in {wanted!r} if u.find_spec(n.replace('-', '_')) is None))"],
                             capture_output=True, text=True, env=env, timeout=120).stdout.split()
    assert not missing, f"the lmms-eval extra's {missing} do not import in the venv"

    build_samples(tmp_path / "data")
    ids = sorted(load_benchmark(str(tmp_path / "data" / "vitatecs"), "all").items["video_id"].to_pylist())
    videos = sample_videos(sorted(set(ids)), tmp_path / "cache")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # relative --data and --videos: the exported tasks must hold absolute paths, as lmms-eval runs elsewhere
    rel_videos = os.path.relpath(videos, tmp_path)
    exported = subprocess.run(["hardneg", "export", "lmms-eval", "tasks", "--data", "data", "--videos", rel_videos,
                               "--benchmarks", "vitatecs", "--n-resamples", "0"], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=600)
    assert exported.returncode == 0, exported.stderr[-3000:]
    printed = [line.split(": ", 1)[1] for line in exported.stdout.splitlines()
               if line.startswith("run (every task")]
    assert len(printed) == 1, exported.stdout
    command = shlex.split(printed[0])
    assert command[:3] == ["lmms-eval", "--model", "hardneg_vlm"]
    tasks = command[command.index("--tasks") + 1].split(",")
    assert tasks == ["hardneg_vitatecs", "hardneg_vitatecs_likelihood"]
    generate_only = [line for line in exported.stdout.splitlines() if line.startswith("run (generate tasks")]
    assert generate_only and "hardneg_vitatecs_likelihood" not in generate_only[0]  # not for lmms-eval's wrappers
    spec = json.loads((tmp_path / "tasks" / "hardneg_vitatecs" / "hardneg_task.json").read_text())
    assert Path(spec["dataset"]).is_absolute() and Path(spec["videos"]).is_absolute()

    out = tmp_path / "lmms-out"
    ran = subprocess.run([*command, "--output_path", str(out), "--log_samples"], cwd=elsewhere, env=env,
                         capture_output=True, text=True, timeout=1800)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert "Traceback" not in ran.stderr and "Error during evaluation" not in ran.stderr, ran.stderr[-3000:]
    assert "filelock._api" not in ran.stderr
    results = json.loads(next(out.glob("**/*_results.json")).read_text())["results"]

    for task, flags in (("hardneg_vitatecs", ["--protocol-set", "lmms-eval"]),
                        ("hardneg_vitatecs_likelihood", ["--protocol", "caption-likelihood"])):
        run_dir = tmp_path / f"run-{task}"
        assert main(["run", "--model", "tiny-vlm", "--benchmarks", "vitatecs", "--data", str(tmp_path / "data"),
                     "--videos", str(videos), "--out", str(run_dir), "--resamples", "0", "--no-charts",
                     "--no-progress", "--device", "cpu", *flags]) == 0
        ours = json.loads((run_dir / "results.json").read_text())["vitatecs/all"]
        theirs = results[task]["hardneg_Accuracy,none"]
        assert theirs == pytest.approx(100 * ours["metrics"]["Accuracy"]["value"], abs=1e-9), task
        samples = _samples(out, task)
        assert len(samples) == len(ids)
        if task == "hardneg_vitatecs":
            gen = ours["run"]["generation"]
            assert gen["answers"] == len(samples)
            assert gen["undecided"] == sum(not s["decided"] for s in samples)
            assert sorted(u["answer"] for u in gen["undecided_items"]) == sorted(
                s["answer"] for s in samples if not s["decided"])
        else:
            import pyarrow.parquet as pq

            rows = {r["id"]: r["scores"] for r in pq.read_table(run_dir / "predictions" / "vitatecs-all.parquet")
                    .to_pylist()}
            for s in samples:  # hardneg run stores float32
                np.testing.assert_allclose(s["scores"], rows[s["id"]], atol=1e-5, rtol=0)
