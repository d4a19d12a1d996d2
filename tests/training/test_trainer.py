"""`hardneg train` end to end on a tiny synthetic set: runs, refuses, resumes identically, scores."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from hardneg.cli import main  # noqa: E402

FAST = ["--batch-size", "8", "--no-progress"]


def digest(folder: Path) -> dict[str, str]:
    return {n: hashlib.sha256((folder / n).read_bytes()).hexdigest()
            for n in ("model.safetensors", "config.json", "trainer_state.safetensors")}


def test_cli_trains_and_records_provenance(pairs, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["train", "--data", str(pairs), "--out", str(out), "--steps", "3", *FAST]) == 0
    assert "trained 3 steps" in capsys.readouterr().out
    cfg = json.loads((out / "config.json").read_text())
    prov = cfg["provenance"]
    assert cfg["model_type"] == "hardneg-trained" and cfg["status"] == "complete" and cfg["step"] == 3
    assert prov["objective"] == "coarse" and prov["seed"] == 0 and prov["data"]["kind"] == "pairs"
    assert prov["data"]["n_pairs"] == 16 and prov["versions"]["torch"] == torch.__version__
    losses = [json.loads(x)["loss"] for x in (out / "train_log.jsonl").read_text().splitlines()]
    assert len(losses) == 3 and all(v > 0 for v in losses)


def test_refuses_another_runs_folder_unless_resume_or_overwrite(pairs, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["train", "--data", str(pairs), "--out", str(out), "--steps", "2", *FAST]) == 0
    before = digest(out)
    assert main(["train", "--data", str(pairs), "--out", str(out), "--steps", "2", "--seed", "1", *FAST]) == 2
    err = capsys.readouterr().err
    assert "holds another run's checkpoint" in err and "--resume" in err and "--overwrite" in err
    assert digest(out) == before
    # --resume with different settings names what differs
    assert main(["train", "--data", str(pairs), "--out", str(out), "--steps", "2", "--seed", "1", "--resume", *FAST]) == 2
    assert "seed" in capsys.readouterr().err
    assert main(["train", "--data", str(pairs), "--out", str(out), "--steps", "2", "--seed", "1", "--overwrite", *FAST]) == 0
    assert json.loads((out / "config.json").read_text())["provenance"]["seed"] == 1


def test_clear_errors_before_work(pairs, tmp_path, capsys):
    from hardneg.datasets import build_samples

    built = build_samples(tmp_path / "built", benchmarks=("feint6k",))["feint6k"]
    assert main(["train", "--data", str(built), "--out", str(tmp_path / "a"), "--steps", "1", *FAST]) == 2
    assert "has no train split" in capsys.readouterr().err
    assert main(["train", "--model", "blind-unigram", "--data", str(pairs), "--out", str(tmp_path / "b"), "--steps", "1",
                 *FAST]) == 2
    assert "nothing to train" in capsys.readouterr().err
    assert main(["train", "--data", str(tmp_path / "nope"), "--out", str(tmp_path / "c"), *FAST]) == 2
    assert "not found" in capsys.readouterr().err
    assert not (tmp_path / "a").joinpath("config.json").exists()


def test_nan_loss_stops_and_keeps_last_good_checkpoint(pairs, tmp_path):
    from hardneg.training.trainer import TrainingDiverged, train

    out = tmp_path / "nan"
    with pytest.raises(TrainingDiverged, match=r"at step (\d+)") as exc:
        train("tiny-temporal", pairs, out, steps=30, batch_size=8, lr=1e30, save_every=1000, progress=False)
    cfg = json.loads((out / "config.json").read_text())
    bad_step = int(str(exc.value).split("at step ")[1].split(";")[0])
    assert cfg["step"] == bad_step - 1 and cfg["status"].startswith("stopped")
    from hardneg.models.trainable import load_checkpoint

    net = load_checkpoint(out)
    assert all(torch.isfinite(p).all() for p in net.parameters())


def _cmd(pairs, out, *extra):
    return [sys.executable, "-m", "hardneg", "train", "--data", str(pairs), "--out", str(out), "--objective", "word",
            "--negatives", *extra, "--steps", "40", "--save-every", "3", "--n-negatives", "4", *FAST]


@pytest.mark.slow
def test_resume_after_kill_gives_identical_checkpoint(pairs, word_negatives, tmp_path):
    # one torch thread in all three runs (the same in each, so the bytes still compare): intra-op threads only cost
    # time on a model this small; on the 2-core machine under load a 40-step run took 37 s with two, 14 s with one
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "OMP_NUM_THREADS": "1"}
    ref = tmp_path / "ref"
    subprocess.run(_cmd(pairs, ref, str(word_negatives)), check=True, env=env, capture_output=True)
    out = tmp_path / "killed"
    proc = subprocess.Popen(_cmd(pairs, out, str(word_negatives)), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if (out / "config.json").is_file() and json.loads((out / "config.json").read_text()).get("step", 0) >= 6:
            break
        time.sleep(0.01)
    assert proc.poll() is None, "the run finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed_at = json.loads((out / "config.json").read_text())["step"]
    assert 0 < killed_at < 40
    (out / ".model.safetensors.0123456789ab.tmp").write_bytes(b"left by a kill mid-write")
    done = subprocess.run(_cmd(pairs, out, str(word_negatives)) + ["--resume"], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"resumed at step {killed_at}" in done.stdout or "resumed at step" in done.stdout
    assert digest(out) == digest(ref)  # the resume state too, byte for byte (issue 29)
    assert not list(out.glob("*.tmp")) and not list(out.glob(".*.tmp"))  # no temporary file left
    steps = [json.loads(x)["step"] for x in (out / "train_log.jsonl").read_text().splitlines()]
    assert steps == list(range(1, 41))


def test_checkpoint_scores_through_hardneg_score(pairs, tmp_path):
    """A checkpoint trained with fine-grained prompting scores by path through `hardneg score` (both heads)."""
    from hardneg.datasets import build_samples, sample_video_ids
    from hardneg.scoring import read_predictions
    from hardneg.video import write_synthetic_video

    out = tmp_path / "prompt"
    assert main(["train", "--data", str(pairs), "--out", str(out), "--objective", "prompt", "--steps", "2",
                 "--n-negatives", "2", *FAST]) == 0
    assert json.loads((out / "config.json").read_text())["score_head"] == "prompt"
    built = build_samples(tmp_path / "built", benchmarks=("feint6k",))["feint6k"]
    videos = tmp_path / "videos"
    for vid in sample_video_ids("feint6k"):
        write_synthetic_video(videos / f"{vid}.mp4", vid, n_frames=8, size=32)
    config = json.loads((built / "build_report.json").read_text()).get("configs") or ["msrvtt"]
    config = config[0] if isinstance(config, list) else sorted(config)[0]
    scores = {}
    for model in (str(out), f"{out}@cls"):
        pred = tmp_path / f"p{len(scores)}.parquet"
        assert main(["score", "--model", model, "--dataset", str(built), "--config", config, "--videos", str(videos),
                     "--out", str(pred), "--cache-dir", str(tmp_path / "cache")]) == 0
        table, meta = read_predictions(pred)
        assert table.num_rows > 0 and meta["model_revision"].startswith("sha256:")
        scores[model] = table.column("scores").to_pylist()
    assert scores[str(out)] != scores[f"{out}@cls"]  # the prompt head and CLS give different scores


@pytest.mark.slow
def test_two_process_ddp_on_cpu(pairs, word_negatives, tmp_path):
    """torchrun (torch.distributed, gloo) with 2 processes: replicas agree, rank 0 writes one checkpoint."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "OMP_NUM_THREADS": "1"}
    out = tmp_path / "ddp"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "-m", "hardneg",
           "train", "--data", str(pairs), "--out", str(out), "--objective", "word", "--negatives", str(word_negatives),
           "--steps", "3", "--n-negatives", "2", *FAST]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.count("trained 3 steps") == 1  # rank 0 only
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["provenance"]["world_size"] == 2 and cfg["step"] == 3
    from hardneg.models.trainable import load_checkpoint

    load_checkpoint(out)


@pytest.mark.parametrize("model,objective", [("tiny-clip", "prompt"), ("tiny-temporal", "llm-lbl"),
                                             ("tiny-temporal", "llm-lgt")])
def test_other_models_and_objectives_train(pairs, word_negatives, tmp_path, model, objective):
    from hardneg.models import load_model
    from hardneg.training.trainer import train

    out = tmp_path / objective
    res = train(model, pairs, out, objective=objective, negatives=str(word_negatives), steps=2, batch_size=8,
                n_negatives=2, progress=False)
    assert res.steps == 2 and res.last_loss is not None
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["architecture"] == ("clip" if model == "tiny-clip" else "tiny-temporal")
    assert (cfg["provenance"]["teacher"] is not None) == (objective == "llm-lgt")
    m = load_model(str(out))
    import numpy as np

    s = m.score(np.zeros((8, 32, 32, 3), np.uint8), ["a red square", "a blue circle"])
    assert s.shape == (2,) and np.isfinite(s).all()
