"""The running Space over loopback: API submissions, a bounded concurrent burst, `hardneg submit`."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from hardneg.cli import main as hardneg_main
from hardneg.leaderboard.example import predictions_bytes

gradio_client = pytest.importorskip("gradio_client")

FEINT = ("feint6k", "msrvtt", "test")
BURST, CLIENTS = 50, 10


def client(url):
    return gradio_client.Client(url, verbose=False)


def write(tmp_path, name, data: bytes):
    p = tmp_path / name
    p.write_bytes(data)
    return str(p)


def test_api_submit_and_refusal(space, item_sets, tmp_path):
    url, board = space
    c = client(url)
    before = board.store.count()
    ok = c.predict(gradio_client.handle_file(write(tmp_path, "a.parquet", predictions_bytes(item_sets[FEINT], "api/model", seed=5))),
                   "alice", api_name="/submit")
    assert ok.startswith("stored api/model v1 on feint6k/msrvtt/test")
    bad = c.predict(gradio_client.handle_file(write(tmp_path, "b.parquet", b"not parquet")), "alice", api_name="/submit")
    assert "not a readable Parquet file" in bad
    assert board.store.count() == before + 1
    hist = json.loads(c.predict("api/model", api_name="/history"))
    assert [h["version"] for h in hist] == [1]
    assert "hardneg-feint6k.yaml" in c.predict("api/model", api_name="/eval_results")
    assert c.predict("wrong", "api/model", "hide", "x", api_name="/moderate").startswith("refused")


@pytest.mark.slow
def test_burst_of_concurrent_submissions_each_stored_once(space, item_sets, tmp_path):
    """50 submissions from 10 client threads over HTTP: every one stored exactly once, counts match."""
    url, board = space
    items = item_sets[FEINT]
    files = [write(tmp_path, f"burst{i}.parquet", predictions_bytes(items, f"burst/m{i % 5}", seed=100 + i))
             for i in range(BURST)]
    before = board.store.count()

    def worker(k):
        c = client(url)
        return [c.predict(gradio_client.handle_file(files[i]), f"user{i % 5}", api_name="/submit")
                for i in range(k, BURST, CLIENTS)]

    with ThreadPoolExecutor(CLIENTS) as pool:
        messages = [m for ms in pool.map(worker, range(CLIENTS)) for m in ms]
    assert len(messages) == BURST and all(m.startswith("stored burst/m") for m in messages), messages[:3]
    ids = [m.split("(submission ")[1].split(")")[0] for m in messages]
    assert len(set(ids)) == BURST
    stored = [s for s in board.store.all_submissions("feint6k") if s.model_id.startswith("burst/")]
    assert sorted(s.id for s in stored) == sorted(ids)  # each exactly once
    assert sorted((s.model_id, s.version) for s in stored) == sorted(
        (f"burst/m{m}", v) for m in range(5) for v in range(1, BURST // 5 + 1))
    counts = json.loads(client(url).predict(api_name="/counts"))
    assert counts["stored_versions"] == before + BURST
    table = board.table("feint6k", kinds=["submitted"], search="burst/")
    assert len(table) == 5 and all(f"v{BURST // 5}" in v for v in table["Version"])
    print(f"\nburst: {BURST} submissions from {CLIENTS} clients -> {len(set(ids))} stored once each; "
          f"store {counts['stored_versions']} versions; board rows for burst models: {len(table)}")


def test_cli_submit_through_the_space(space, item_sets, tmp_path, capsys):
    url, board = space
    path = write(tmp_path, "cli.parquet", predictions_bytes(item_sets[("contrast_sets", "gender", "test")], "cli/model", seed=3))
    assert hardneg_main(["submit", path, "--space", url, "--submitter", "carol"]) == 0
    assert "stored cli/model v1 on contrast_sets/gender/test" in capsys.readouterr().out
    assert board.store.history("cli/model")[0].submitter == "carol"
    assert hardneg_main(["submit", path, "--space", url, "--submitter", "mallory"]) == 1
    assert "already belongs to submitter 'carol'" in capsys.readouterr().out


def test_cli_submit_local_folder(tmp_path, bench_root, item_sets, capsys):
    path = write(tmp_path, "p.parquet", predictions_bytes(item_sets[FEINT], "local/model", seed=1))
    store = tmp_path / "lb"
    assert hardneg_main(["submit", path, "--space", str(store), "--benchmarks", str(bench_root), "--submitter", "dave"]) == 0
    assert "stored local/model v1" in capsys.readouterr().out
    assert hardneg_main(["submit", str(tmp_path / "missing.parquet"), "--space", str(store)]) == 2
    assert "not found" in capsys.readouterr().err


def test_space_configuration_from_environment(tmp_path, bench_root, monkeypatch):
    from helpers import load_space_module

    monkeypatch.setenv("HARDNEG_LB_BENCHMARKS", str(bench_root))
    monkeypatch.setenv("HARDNEG_LB_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("HARDNEG_LB_RESULTS_REPO", "org/results")
    monkeypatch.setenv("HARDNEG_LB_RESAMPLES", "50")
    board = load_space_module().leaderboard_from_env()
    assert board.benchmarks == ["feint6k", "contrast_sets", "posrank", "fire"]
    assert board.n_resamples == 50 and board.mirror.repo_id == "org/results"
    assert board.store.path == tmp_path / "data" / "leaderboard.sqlite"
