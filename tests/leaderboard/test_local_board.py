"""Issue 19 §2-§3: `--model-id`, `hardneg submit` of a run folder (atomic, with model metadata), and the local
board: `hardneg leaderboard show` and `serve` (HTTP 200 with no token; refused where it would be public)."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from hardneg.cli import main as hardneg_main
from hardneg.leaderboard import Leaderboard
from hardneg.leaderboard.example import predictions_bytes
from hardneg.leaderboard.identity import Identity, local_identity
from hardneg.leaderboard.model_meta import clean_model_meta, from_hub, parse_params

FEINT = ("feint6k", "msrvtt", "test")
GENDER = ("contrast_sets", "gender", "test")
SRC = str(Path(__file__).resolve().parents[2] / "src")


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)


@pytest.mark.slow
def test_run_then_submit_folder_then_show_matches_results_json(tmp_path, capsys):
    """Issue 27's "Done when": for a `tiny-clip` run, every declared benchmark's number is held in results.json under
    the benchmark's own key; the board's Overall cell and the tab's number column show 100 x that fraction, and
    `show --csv -` holds the fraction itself (interval bounds in their own columns)."""
    from hardneg import benchmarks as registry
    from hardneg.run import config_results

    run_dir, store = tmp_path / "R", tmp_path / "DIR"
    assert hardneg_main(["run", "--model", "tiny-clip", "--model-id", "local/tiny", "--out", str(run_dir),
                         "--no-charts", "--no-progress"]) == 0  # the board's own 1,000 resamples: same intervals
    printed = capsys.readouterr().out
    assert "one number per benchmark" in printed
    assert hardneg_main(["submit", str(run_dir), "--space", str(store), "--benchmarks", str(run_dir / "data"),
                         "--create"]) == 0
    out = capsys.readouterr().out
    results = json.loads((run_dir / "results.json").read_text())
    per_config = config_results(results)
    assert out.count("stored local/tiny v1 on ") == len(per_config)  # every config, one submission
    board = Leaderboard(store, benchmarks_dir=run_dir / "data", compute_blind=False)
    assert {s.local for s in board.store.all_submissions()} == {True}
    assert len({s.created_at[:16] for s in board.store.all_submissions()}) == 1  # one transaction

    declared = [b for b, d in registry.all_benchmarks().items() if d.sample]
    assert declared and set(declared) <= set(results)  # every declared benchmark with a sample has its number
    assert hardneg_main(["leaderboard", "show", "--data", str(store), "--csv", "-"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    mine = next(r for r in rows if r["model"] == "local/tiny")
    assert mine["kind"] == "local" and mine["coverage"] == f"{len(declared)}/{len(declared)}"
    assert not any("[" in v for v in mine.values())  # no "37.6 [32.7, 42.5]" strings in a machine output
    assert hardneg_main(["leaderboard", "show", "--data", str(store)]) == 0
    shown = capsys.readouterr().out
    table = board.average()
    tiny = table[table["Model"] == "local/tiny"].iloc[0]
    for bench in declared:
        number = results[bench]
        decl = registry.get(bench)
        assert number["metric"] == decl.overall_metric.key and number["rule"] == decl.overall_rule(
            [r["config"] for r in per_config.values() if r["benchmark"] == bench]).rule
        column = f"{bench}:{number['metric']}"
        assert float(mine[column]) == pytest.approx(number["value"], abs=1e-12), bench  # the fraction itself
        assert float(mine[f"{column} low"]) == pytest.approx(number["low"], abs=1e-12)
        assert float(mine[f"{column} high"]) == pytest.approx(number["high"], abs=1e-12)
        title = f"{decl.title} · {number['metric']} (%)"
        assert tiny[title].split()[0] == f"{100 * number['value']:.1f}", (bench, tiny[title])  # 100 x, one decimal
        tab = board.table(bench)
        number_col = next(c for c in board.columns(bench) if c.overall)
        cell = tab.loc[tab["Model"] == "local/tiny", f"{number_col.name} ({'%' if decl.overall_metric.percent else 'rank'})"]
        assert cell.item().split()[0] == f"{100 * number['value']:.1f}", (bench, cell.item())
    assert "local/tiny" in shown


def test_folder_is_stored_all_or_nothing(tmp_path, bench_root, item_sets, capsys):
    run = tmp_path / "run" / "predictions"
    run.mkdir(parents=True)
    (run / "a.parquet").write_bytes(predictions_bytes(item_sets[FEINT], "local/m", seed=1))
    (run / "b.parquet").write_bytes(predictions_bytes(item_sets[GENDER], "local/m", seed=1)[:-40] + b"x" * 40)
    store = tmp_path / "lb"
    assert hardneg_main(["submit", str(run.parent), "--space", str(store), "--benchmarks", str(bench_root),
                         "--create"]) != 0
    capsys.readouterr()
    assert Leaderboard(store, item_sets, compute_blind=False).store.count() == 0  # the good file was not stored
    (run / "b.parquet").write_bytes(predictions_bytes(item_sets[GENDER], "other/name", seed=1))
    assert hardneg_main(["submit", str(run.parent), "--space", str(store), "--benchmarks", str(bench_root),
                         "--model-id", "local/both"]) == 0
    out = capsys.readouterr().out
    assert "stored local/both v1 on feint6k/msrvtt/test" in out and "stored local/both v1 on contrast_sets/gender" in out
    assert hardneg_main(["submit", str(run.parent), "--space", str(store), "--benchmarks", str(bench_root),
                         "--model-id", "local/both"]) == 0  # the same folder again: nothing new
    assert capsys.readouterr().out.count("already stored local/both v1") == 2
    assert Leaderboard(store, item_sets, compute_blind=False).store.count() == 2


def test_files_of_different_models_are_refused_together(board, item_sets):
    out = board.submit_files([predictions_bytes(item_sets[FEINT], "alice/a", seed=1),
                              predictions_bytes(item_sets[GENDER], "alice/b", seed=1)], Identity("alice"))
    assert not out.ok and "different models" in out.message and board.store.count() == 0


def test_model_meta_from_flags_is_stored_and_checked(tmp_path, bench_root, item_sets, capsys):
    path = tmp_path / "p.parquet"
    path.write_bytes(predictions_bytes(item_sets[FEINT], "someone/else", seed=2))
    store = tmp_path / "lb"
    args = ["submit", str(path), "--space", str(store), "--benchmarks", str(bench_root), "--as", "dana", "--create",
            "--model-id", "dana/clip", "--params", "151M", "--model-type", "contrastive", "--license", "mit",
            "--link", "https://example.org/clip", "--revision", "abc123"]
    assert hardneg_main(args) == 0
    assert "offline" in capsys.readouterr().err  # the Hub card was skipped, and it says so
    board = Leaderboard(store, item_sets, compute_blind=False)
    (sub,) = board.store.all_submissions()
    assert sub.model_id == "dana/clip" and sub.submitter == "dana" and sub.local
    assert sub.model_meta == {"params": 151_000_000, "model_type": "contrastive", "license": "mit",
                              "link": "https://example.org/clip", "revision": "abc123"}
    row = next(r for r in board.overall_rows() if r.model == "dana/clip")
    assert row.params == 151_000_000 and row.model_type == "contrastive" and row.local
    with pytest.raises(ValueError, match="model_type"):
        clean_model_meta({"model_type": "diffusion"})
    with pytest.raises(ValueError, match="link"):
        clean_model_meta({"link": "javascript:alert(1)"})
    assert parse_params("7B") == 7_000_000_000 and parse_params("1,300") == 1300
    refused = board.submit(predictions_bytes(item_sets[FEINT], "dana/x", seed=3), local_identity("dana"),
                           {"params": "many"})
    assert not refused.ok and "model_meta.params" in refused.message


def test_model_meta_from_a_hub_card():
    class Info:
        safetensors = type("S", (), {"total": 149_620_737})()
        card_data = {"license": "mit"}
        pipeline_tag = "zero-shot-image-classification"
        sha = "3d74acf9a28c67741b2f4f2ea7635f0aaf6f0268"

    meta, note = from_hub("openai/clip-vit-base-patch32", model_info=lambda mid, revision=None: Info())
    assert meta == {"params": 149_620_737, "license": "mit", "model_type": "contrastive",
                    "revision": Info.sha, "link": "https://huggingface.co/openai/clip-vit-base-patch32"}
    assert "read the Hub model card" in note
    assert from_hub("tiny-clip")[0] == {}
    assert from_hub("a/b")[1].startswith("offline")


def test_model_id_must_name_a_namespace(tmp_path):
    with pytest.raises(ValueError, match="ORG/NAME"):
        from hardneg.scoring import check_model_id

        check_model_id("tiny")
    assert hardneg_main(["run", "--model", "tiny-clip", "--model-id", "no namespace", "--out", str(tmp_path)]) == 2


def test_local_identity_writes_its_name_and_local_only():
    who = local_identity("eve")
    assert who.local and who.may_write("eve/x") and who.may_write("local/x") and not who.may_write("bob/x")
    assert not Identity("eve").may_write("local/x")  # a Hub identity never writes local/
    assert local_identity("weird name!").username == "weird-name"


def _serve(tmp_path, bench_root, port, env_extra=None):
    env = {k: v for k, v in os.environ.items() if k not in ("HF_TOKEN", "SPACE_ID", "SYSTEM")}
    env.update(PYTHONPATH=SRC, HF_HUB_OFFLINE="1", HF_HUB_DISABLE_TELEMETRY="1", GRADIO_ANALYTICS_ENABLED="False",
               HF_HOME=str(tmp_path / "hf-home"), **(env_extra or {}))
    return subprocess.Popen([sys.executable, "-m", "hardneg", "leaderboard", "serve", "--data", str(tmp_path / "d"), "--create",
                             "--benchmarks", str(bench_root), "--port", str(port), "--resamples", "50"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_serve_answers_200_locally_with_no_token(tmp_path, bench_root):
    from helpers import free_port

    port = free_port()
    proc = _serve(tmp_path, bench_root, port)
    try:
        deadline, status = time.monotonic() + 120, None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as r:
                    status = r.status
                    break
            except OSError:
                time.sleep(0.5)
        assert status == 200, proc.stdout.read() if proc.poll() is not None else "no answer"
    finally:
        proc.terminate()
        out = proc.communicate(timeout=30)[0]
    assert out.count("LOCAL MODE") == 1, out  # said once (issue 41: twice before)


def test_serve_refuses_where_it_would_be_public(tmp_path, bench_root):
    from helpers import free_port

    proc = _serve(tmp_path, bench_root, free_port(), {"SPACE_ID": "someone/board"})
    out = proc.communicate(timeout=120)[0]
    assert proc.returncode != 0 and "SPACE_ID" in out and "public" in out
