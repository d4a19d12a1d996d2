"""Issue 19 §5: a model or dataset that cannot be had offline fails at once with the fix; `-` is standard output.

The Hub is made unreachable on purpose (HF_ENDPOINT points at a closed port on this machine) and the Hub
cache is an empty temporary folder, so these tests mean the same with or without a network. "At once" is
checked by what happened, not by a timer (tests never assert timings): the error comes before transformers
is even imported, so huggingface_hub's retries (1 + 2 + 4 + 8 + 8 s) cannot have run. The time each
failure took is printed (`pytest -s`).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from hardneg.cli import main

MODEL = "openai/clip-vit-base-patch32"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens there once the socket is closed


@pytest.fixture()
def offline_env(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.upper().endswith("_PROXY") and k not in ("HF_HUB_OFFLINE",
                                                                                                  "TRANSFORMERS_OFFLINE")}
    env.update(HF_ENDPOINT=f"http://127.0.0.1:{_closed_port()}", HF_HOME=str(tmp_path / "hf-home"))
    env.pop("HF_HUB_CACHE", None)
    return env


def _run_python(code: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


CHECK = f"""
import sys, time
from hardneg.hub_access import ModelUnavailable
from hardneg.models import load_model
t = time.perf_counter()
try:
    load_model({MODEL!r})
except ModelUnavailable as exc:
    print("ERROR", exc)
print("SECONDS", round(time.perf_counter() - t, 2))
print("TRANSFORMERS_IMPORTED", "transformers" in sys.modules)
"""


@pytest.mark.parametrize("offline_flag", [False, True], ids=["hub-unreachable", "HF_HUB_OFFLINE=1"])
def test_missing_model_fails_at_once_naming_both_ways_out(offline_env, offline_flag):
    env = dict(offline_env, **({"HF_HUB_OFFLINE": "1"} if offline_flag else {}))
    out = _run_python(CHECK, env)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "ERROR" in text, text
    assert MODEL in text and "HF_HUB_OFFLINE=1" in text and "local folder" in text and "--model DIR" in text
    assert "TRANSFORMERS_IMPORTED False" in text  # failed before any from_pretrained, so before any retry
    print(text.strip().splitlines()[-2])


def test_cli_error_is_one_line_not_a_traceback(offline_env, tmp_path):
    assert main(["build", "feint6k", "--sample", "--out", str(tmp_path / "feint6k")]) == 0
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "hardneg", "score", "--model", MODEL, "--dataset",
                          str(tmp_path / "feint6k"), "--config", "msrvtt", "--out", str(tmp_path / "p.parquet")],
                         env=offline_env, capture_output=True, text=True, timeout=120)
    print(f"hardneg score with an unavailable model: exit {out.returncode} after {time.perf_counter() - t:.1f} s")
    assert out.returncode == 2 and "Traceback" not in out.stderr and "Retrying" not in out.stderr
    assert out.stderr.startswith(f"hardneg score: error: model '{MODEL}'") and "HF_HUB_OFFLINE" in out.stderr


def _fake_cache(hf_home: Path, repo: str) -> None:
    snap = hf_home / "hub" / f"models--{repo.replace('/', '--')}" / "snapshots" / ("0" * 40)
    snap.mkdir(parents=True)
    (snap / "config.json").write_text("{}")
    refs = snap.parents[1] / "refs"
    refs.mkdir()
    (refs / "main").write_text("0" * 40)


def test_cached_model_with_the_hub_out_of_reach_uses_the_cache(offline_env):
    _fake_cache(Path(offline_env["HF_HOME"]), MODEL)
    code = f"""
import os
from hardneg.hub_access import ensure_loadable
ensure_loadable({MODEL!r})
import huggingface_hub.constants as c
print("OFFLINE", os.environ.get("HF_HUB_OFFLINE"), c.HF_HUB_OFFLINE)
"""
    out = _run_python(code, offline_env)
    assert out.returncode == 0, out.stderr
    assert "OFFLINE 1 True" in out.stdout and "local Hub cache" in out.stderr


def test_reachable_hub_changes_nothing(offline_env):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    try:
        env = dict(offline_env, HF_ENDPOINT=f"http://127.0.0.1:{server.getsockname()[1]}")
        code = f"""
import os
from hardneg.hub_access import ensure_loadable
ensure_loadable({MODEL!r})
print("OFFLINE", os.environ.get("HF_HUB_OFFLINE"))
"""
        out = _run_python(code, env)
    finally:
        server.close()
    assert out.returncode == 0, out.stderr
    assert "OFFLINE None" in out.stdout  # online use untouched: from_pretrained downloads as before


@pytest.mark.slow
def test_local_folder_and_builtin_models_are_never_checked(offline_env, tmp_path):
    code = f"""
from hardneg.hub_access import ensure_loadable
ensure_loadable({str(tmp_path)!r})
from hardneg.models import load_model
load_model("blind-unigram"); load_model("random:5"); load_model("tiny-clip")
print("OK")
"""
    out = _run_python(code, offline_env)
    assert out.returncode == 0 and "OK" in out.stdout, out.stderr


@pytest.fixture()
def predictions(tmp_path):
    data = tmp_path / "data" / "feint6k"
    assert main(["build", "feint6k", "--sample", "--out", str(data)]) == 0
    pred = tmp_path / "p.parquet"
    assert main(["score", "--model", "blind-unigram", "--dataset", str(data), "--config", "msrvtt",
                 "--out", str(pred), "--no-progress"]) == 0
    return pred, data


@pytest.mark.parametrize("offline_flag", [False, True], ids=["hub-unreachable", "HF_HUB_OFFLINE=1"])
def test_evaluate_offline_without_dataset_says_what_to_do(predictions, offline_env, offline_flag):
    pred, data = predictions
    data.rename(data.parent / "moved")  # the file's own folder is gone: the declared Hub repo would be loaded
    env = dict(offline_env, **({"HF_HUB_OFFLINE": "1"} if offline_flag else {}))
    out = subprocess.run([sys.executable, "-m", "hardneg", "evaluate", str(pred)], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr and "OfflineModeIsEnabled" not in out.stderr
    assert "video-hardneg/feint6k" in out.stderr and "--dataset" in out.stderr and "hardneg build" in out.stderr


def test_json_dash_is_standard_output(predictions, tmp_path, monkeypatch, capsys):
    pred, _ = predictions
    monkeypatch.chdir(tmp_path)
    assert main(["evaluate", str(pred), "--json", "-", "--resamples", "0"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)  # standard output holds the JSON alone
    assert result["benchmark"] == "feint6k" and 0 <= result["metrics"]["R@1"]["value"] <= 1
    assert "R@1 (%)" in captured.err  # the report goes to standard error
    assert not (tmp_path / "-").exists() and pred.with_suffix(".metrics.png").is_file()


def test_plot_dash_and_both_dashes(predictions, tmp_path, monkeypatch, capfdbinary):
    pred, _ = predictions
    monkeypatch.chdir(tmp_path)
    assert main(["evaluate", str(pred), "--plot", "-", "--json", str(tmp_path / "r.json"), "--resamples", "0"]) == 0
    assert capfdbinary.readouterr().out.startswith(b"\x89PNG\r\n\x1a\n") and (tmp_path / "r.json").is_file()
    assert main(["evaluate", str(pred), "--plot", "-", "--json", "-"]) == 2
    assert b"standard output" in capfdbinary.readouterr().err and not (tmp_path / "-").exists()


def test_score_out_dash_writes_parquet_to_standard_output(predictions, tmp_path):
    _, data = predictions
    out = subprocess.run([sys.executable, "-m", "hardneg", "score", "--model", "blind-unigram", "--dataset", str(data),
                          "--config", "msrvtt", "--out", "-", "--no-progress"], cwd=tmp_path, capture_output=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr.decode()
    assert out.stdout[:4] == b"PAR1" and out.stdout[-4:] == b"PAR1", (out.stdout[:200], out.stdout[-200:])
    (tmp_path / "piped.parquet").write_bytes(out.stdout)
    table = pq.read_table(tmp_path / "piped.parquet")
    assert table.num_rows == 5 and b"wrote" in out.stderr and not (tmp_path / "-").exists()


def test_dash_for_a_folder_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--model", "tiny-clip", "--out", "-"]) == 2
    assert "names a folder" in capsys.readouterr().err and not (tmp_path / "-").exists()


@pytest.mark.parametrize("offline_flag", [False, True], ids=["hub-unreachable", "HF_HUB_OFFLINE=1"])
def test_score_on_a_hub_dataset_id_offline_is_one_clear_line(offline_env, tmp_path, offline_flag):
    """Issue 27 §5: `score --dataset video-hardneg/feint6k` offline names the dataset and the fix, no httpx traceback."""
    env = dict(offline_env, **({"HF_HUB_OFFLINE": "1"} if offline_flag else {}))
    (tmp_path / "v").mkdir()
    out = subprocess.run([sys.executable, "-m", "hardneg", "score", "--model", "tiny-clip", "--dataset",
                          "video-hardneg/feint6k", "--config", "msrvtt", "--videos", str(tmp_path / "v"), "--out",
                          str(tmp_path / "x.parquet")], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr and "httpx" not in out.stderr and len(out.stderr.splitlines()) == 1
    assert out.stderr.startswith("hardneg score: error:") and "'video-hardneg/feint6k'" in out.stderr
    assert "hardneg build" in out.stderr and "hf download" in out.stderr and not (tmp_path / "x.parquet").exists()


def test_training_pairs_from_a_hub_dataset_id_offline_say_what_to_do(offline_env):
    code = """
from hardneg.hub_access import DatasetUnavailable
from hardneg.items import load_pairs
try:
    load_pairs("video-hardneg/world")
except DatasetUnavailable as exc:
    print("ERROR", exc)
"""
    out = _run_python(code, dict(offline_env, HF_HUB_OFFLINE="1"))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ERROR") and "video-hardneg/world" in out.stdout, out.stdout
