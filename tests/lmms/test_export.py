"""`hardneg export lmms-eval` (issue 40, item 5): the task folders lmms-eval 0.7.3's own loader reads, and an
exported task run by lmms-eval itself on the tiny Qwen2-VL giving `hardneg run`'s numbers on the same items."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .helpers import lmms_eval_root

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from hardneg.datasets import build_samples

    root = tmp_path_factory.mktemp("export_data")
    build_samples(root / "data")
    (root / "videos").mkdir()
    return root


def _export(built: Path, out: Path, *extra: str) -> int:
    from hardneg.cli import main

    return main(["export", "lmms-eval", str(out), "--data", str(built / "data"), "--videos", str(built / "videos"),
                 *extra])


def test_export_every_benchmark_loads_in_lmms_eval_task_manager(built, tmp_path, capsys):
    """Every benchmark with a built sample: a YAML + utils.py per task that lmms-eval's TaskManager indexes and
    builds (its dataset read by lmms-eval from the built folder), the protocol each declaration allows."""
    lmms_eval_root()
    from hardneg import benchmarks
    from hardneg.lmms_eval_compat import install_shims
    from hardneg.lmms_export.writer import protocols

    out = tmp_path / "tasks"
    assert _export(built, out) == 0
    printed = capsys.readouterr().out
    specs = {p.parent.name: json.loads(p.read_text()) for p in out.glob("*/hardneg_task.json")}
    names = sorted(p.name for p in (built / "data").iterdir() if p.is_dir())
    for name in names:
        decl = benchmarks.get(name)
        mine = [s for s in specs.values() if s["benchmark"] == name]
        if decl.is_retrieval:
            assert not mine and f"skipped: {name}" in printed
            continue
        assert {(s["protocol_set"], s["protocol"]) for s in mine} == {(p, q) for _, p, q in protocols(decl)}
        gm = [s for s in mine if s["protocol"] == "generate-match"]
        assert all(decl.vlm_for(s["protocol_set"]).protocol == "generate-match" for s in gm)
    for task, spec in specs.items():
        doc = yaml.load((out / task / f"{task}.yaml").read_text().replace("!function", ""), Loader=yaml.SafeLoader)
        assert doc["task"] == task and doc["dataset_name"] == spec["config"]
        assert doc["output_type"] == {"generate-match": "generate_until", "caption-likelihood": "multiple_choice"}[
            spec["protocol"]]
        # a likelihood task says it reproduces hardneg run only with hardneg_vlm (lmms-eval's own models sum)
        likelihood = spec["protocol"] == "caption-likelihood"
        assert (doc["metadata"].get("hardneg_reproduces_run", True) is True) is not likelihood
        assert ("--model hardneg_vlm" in doc["metadata"].get("hardneg_note", "")) is likelihood
        assert Path(spec["dataset"]).is_absolute() and Path(spec["videos"]).is_absolute()
    install_shims()
    from lmms_eval.tasks import TaskManager, get_task_dict

    old = {k: os.environ.get(k) for k in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")}
    os.environ.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    try:
        tm = TaskManager(include_path=str(out), include_defaults=False)
        assert set(specs) <= set(tm.all_tasks)
        got = get_task_dict(["hardneg_tempcompass", "hardneg_vitatecs_likelihood"], tm)
    finally:
        for k, v in old.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    tc = got["hardneg_tempcompass"]
    docs = list(tc.test_docs())
    from hardneg.items import load_benchmark

    items = load_benchmark(str(built / "data" / "tempcompass"), "all").items
    assert len(docs) == items.num_rows
    decl = benchmarks.get("tempcompass")
    vlm = decl.vlm_for("lmms-eval")
    q = vlm.function("item_text")({"captions": docs[0]["captions"], "provenance": docs[0]["provenance"]})
    assert tc.doc_to_text(docs[0]) == vlm.prompt.replace("{video}", "").replace("{question}", q)
    lk = got["hardneg_vitatecs_likelihood"]
    d0 = next(iter(lk.test_docs()))
    assert lk.doc_to_choice(d0) == list(d0["captions"])
    # the printed commands: every task with hardneg_vlm; lmms-eval's own wrappers get the generate tasks only
    every = [line for line in printed.splitlines() if line.startswith("run (every task")]
    gen_only = [line for line in printed.splitlines() if line.startswith("run (generate tasks")]
    assert len(every) == len(gen_only) == 1 and "--model hardneg_vlm" in every[0]
    assert f"--include_path {out.resolve()} " in every[0]
    likelihood_tasks = [t for t, s in specs.items() if s["protocol"] == "caption-likelihood"]
    assert all(t in every[0].split("--tasks ")[1].split(",") for t in likelihood_tasks)
    assert not set(likelihood_tasks) & set(gen_only[0].split("--tasks ")[1].split(","))


def test_export_refuses_a_full_folder_and_a_missing_dataset(built, tmp_path):
    out = tmp_path / "tasks"
    out.mkdir()
    (out / "x").write_text("keep")
    assert _export(built, out, "--benchmarks", "tempcompass") == 2
    assert (out / "x").read_text() == "keep"
    from hardneg.cli import main

    assert main(["export", "lmms-eval", str(tmp_path / "t2"), "--data", "tempcompass=" + str(tmp_path / "none"),
                 "--videos", str(built / "videos"), "--benchmarks", "tempcompass"]) == 2


def test_export_names_a_missing_data_folder(tmp_path, capsys):
    from hardneg.cli import main

    assert main(["export", "lmms-eval", str(tmp_path / "t"), "--data", str(tmp_path / "none"),
                 "--videos", str(tmp_path)]) == 2
    assert "--data" in capsys.readouterr().err and not (tmp_path / "t").exists()


@pytest.mark.slow
def test_exported_task_in_lmms_eval_equals_hardneg_run(built, tmp_path):
    """lmms-eval runs the exported TempCompass and VITATECS tasks (generate_until, the lmms-eval protocol set) with
    its Qwen2-VL wrapper on the tiny Qwen2-VL; `hardneg run --protocol-set lmms-eval` on the same built items and
    videos must give the same answers (item by item) and the same Accuracy."""
    lmms_eval_root()
    from hardneg.cli import main
    from hardneg.items import load_benchmark
    from hardneg.models.vlm.tiny import tiny_vlm_path
    from hardneg.run import sample_videos

    names = ("tempcompass", "vitatecs")
    ids = sorted({v for n in names for v in load_benchmark(str(built / "data" / n), "all").items["video_id"]
                  .to_pylist()})
    videos = sample_videos(ids, tmp_path / "cache")
    out = tmp_path / "tasks"
    from hardneg.cli import main as cli

    assert cli(["export", "lmms-eval", str(out), "--data", str(built / "data"), "--videos", str(videos),
                "--benchmarks", ",".join(names), "--n-resamples", "0"]) == 0
    tasks = [f"hardneg_{n}" for n in names]
    cfg = {"hf_home": str(tmp_path / "hf"), "tasks_dir": str(out), "tasks": tasks,
           "pretrained": str(tiny_vlm_path("qwen2-vl"))}
    (tmp_path / "cfg.json").write_text(json.dumps(cfg))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(Path.cwd() / "src"), os.environ.get(
        "PYTHONPATH", "")) if p)}
    got = subprocess.run([sys.executable, str(HERE / "run_exported.py"), str(tmp_path / "cfg.json"),
                          str(tmp_path / "lmms.json")], env=env, capture_output=True, text=True, timeout=1800)
    assert got.returncode == 0, got.stderr[-3000:]
    lmms = json.loads((tmp_path / "lmms.json").read_text())
    assert main(["run", "--model", "tiny-vlm", "--benchmarks", ",".join(names), "--data", str(built / "data"),
                 "--videos", str(videos), "--out", str(tmp_path / "R"), "--resamples", "0", "--no-charts",
                 "--no-progress", "--device", "cpu", "--protocol-set", "lmms-eval"]) == 0
    results = json.loads((tmp_path / "R" / "results.json").read_text())
    for name, task in zip(names, tasks):
        ours = results[f"{name}/all"]
        theirs = lmms["results"][task]["hardneg_Accuracy,none"]
        assert theirs == pytest.approx(100 * ours["metrics"]["Accuracy"]["value"], abs=1e-9)
        gen = ours["run"]["generation"]
        samples = lmms["samples"][task]
        assert gen["answers"] == len(samples)
        assert gen["undecided"] == sum(not s["decided"] for s in samples)
        undecided = sorted(u["answer"] for u in gen["undecided_items"])
        assert undecided == sorted(s["answer"] for s in samples if not s["decided"])


def test_exported_scores_go_through_the_results_engine(built, tmp_path):
    """The bound utils: lmms-eval's per-caption log-likelihoods and generated answers become score rows whose
    aggregate is the accuracy counted by hand (label scored highest on the first k items; undecided answers 0
    under lmms-eval's rule)."""
    from hardneg.items import load_benchmark
    from hardneg.lmms_export.task import BoundTask

    out = tmp_path / "tasks"
    assert _export(built, out, "--benchmarks", "vitatecs,tempcompass", "--n-resamples", "0") == 0
    items = load_benchmark(str(built / "data" / "vitatecs"), "all").items.to_pylist()
    lk = BoundTask(out / "hardneg_vitatecs_likelihood")
    k = len(items) // 2
    values = []
    for n, doc in enumerate(items):
        ll = [-5.0] * len(doc["captions"])
        ll[doc["label"] if n < k else (doc["label"] + 1) % len(ll)] = -1.0
        # lmms-eval 0.7.3 hands process_results the str() of each (loglikelihood, is_greedy) pair
        resps = [(v, False) for v in ll] if n % 2 else [str((v, False)) for v in ll]
        values.append(next(iter(lk.process_results(doc, resps).values())))
    by_cat: dict = {}  # VITATECS' Accuracy: the unweighted mean over aspects (its declaration, `over="category"`)
    for n, doc in enumerate(items):
        by_cat.setdefault(doc["category"], []).append(n < k)
    assert lk.aggregate(values) == pytest.approx(100 * sum(sum(v) / len(v) for v in by_cat.values()) / len(by_cat))
    tc_items = load_benchmark(str(built / "data" / "tempcompass"), "all").items.to_pylist()
    gm = BoundTask(out / "hardneg_tempcompass")
    vals = [next(iter(gm.process_results(d, ["I cannot tell"]).values())) for d in tc_items]
    assert not any(v["decided"] for v in vals)
    assert gm.aggregate(vals) == 0.0  # lmms-eval's rule: undecided is wrong
