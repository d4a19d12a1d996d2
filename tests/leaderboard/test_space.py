"""The running Space over loopback: API submissions, a bounded concurrent burst, `hardneg submit`."""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from hardneg.cli import main as hardneg_main
from hardneg.leaderboard.example import predictions_bytes

gradio_client = pytest.importorskip("gradio_client")

FEINT = ("feint6k", "msrvtt", "test")
BURST, CLIENTS = 50, 10


def client(url, token: str | None = "tok-alice"):
    """An API client; `token` is the Hub token it passes as `oauth_token` (what `hardneg submit` does)."""
    return gradio_client.Client(url, verbose=False, oauth_token=token)


def write(tmp_path, name, data: bytes):
    p = tmp_path / name
    p.write_bytes(data)
    return str(p)


def submit(c, path) -> str:
    """Submit through the API, once no upload is waiting for its deletion. Gradio stores an upload under its
    content's hash, so the same bytes sent again land at the same path; a release timer of the earlier request (the
    fixture's grace: 1 s) could delete the new upload before its request leases it when the machine is slow (seen:
    "internal error", FileNotFoundError). Waiting here keeps the tests off the machine's speed."""
    from hardneg import uploads

    assert uploads.wait_settled(60)
    return c.predict(gradio_client.handle_file(path), api_name="/submit")


@pytest.mark.slow
def test_api_submit_and_refusal(space, item_sets, tmp_path):
    url, board = space
    c = client(url)
    before = board.store.count()
    good = write(tmp_path, "a.parquet", predictions_bytes(item_sets[FEINT], "alice/api-model", seed=5))
    assert submit(c, good).startswith("stored alice/api-model v1 on feint6k/msrvtt/test")
    assert submit(c, good).startswith("already stored alice/api-model v1")  # a retry: nothing new
    assert "not a readable Parquet file" in submit(c, write(tmp_path, "b.parquet", b"not parquet"))
    assert board.store.count() == before + 1
    hist = json.loads(c.predict("alice/api-model", api_name="/history"))
    assert [h["version"] for h in hist] == [1]
    assert "hardneg-feint6k.yaml" in c.predict("alice/api-model", api_name="/eval_results")
    assert c.predict("wrong", "alice/api-model", "hide", "x", api_name="/moderate").startswith("refused")


def test_api_identity_decides_the_namespace(space, item_sets, tmp_path):
    """No token: nothing stored. A token Hub refuses: nothing stored. bob cannot write alice's or org's names;
    carol (member of org) can add a version to org/*."""
    url, board = space
    items = item_sets[FEINT]
    before = board.store.count()
    org_file = write(tmp_path, "org.parquet", predictions_bytes(items, "org/shared", seed=1))
    assert "sign in with your Hugging Face account" in submit(client(url, token=None), org_file)
    assert "sign in with your Hugging Face account" in submit(client(url, token="tok-forged"), org_file)
    assert board.store.count() == before
    assert submit(client(url), org_file).startswith("stored org/shared v1")
    takeover = write(tmp_path, "take.parquet", predictions_bytes(items, "org/shared", seed=2))
    msg = submit(client(url, "tok-bob"), takeover)
    assert msg.startswith("submission refused") and "is in namespace 'org'; you are signed in as 'bob'" in msg
    reserved = write(tmp_path, "human.parquet", predictions_bytes(items, "bob/Human", seed=3))
    assert "is reserved" in submit(client(url, "tok-bob"), reserved)
    assert submit(client(url, "tok-carol"), takeover).startswith("stored org/shared v2")
    assert board.store.count() == before + 2


def _uploads_named(name: str) -> set[str]:
    """Paths of the files called `name` in Gradio's upload folder (os.walk skips a folder that vanishes)."""
    from gradio.utils import get_upload_folder

    return {os.path.join(d, name) for d, _, files in os.walk(get_upload_folder()) if name in files}


def test_uploads_are_capped_and_removed(space, item_sets, tmp_path, monkeypatch):
    """The upload is deleted after use. The test waits for the app's clean-up (`hardneg.uploads.wait_settled`: every
    release timer has run) before it looks, so it never walks the folder while the app deletes in it (issue 41)."""
    from hardneg import uploads

    url, board = space
    big = tmp_path / "big.parquet"
    with open(big, "wb") as f:
        f.truncate(board.upload_limit + 1)
    with pytest.raises(Exception, match="(?i)size|large|exceed"):
        submit(client(url), str(big))
    assert uploads.wait_settled(60)
    good = write(tmp_path, "u41.parquet", predictions_bytes(item_sets[FEINT], "alice/cleanup", seed=9))
    before = _uploads_named("u41.parquet")
    removed: list[str] = []
    remove = uploads.remove_upload
    monkeypatch.setattr(uploads, "remove_upload", lambda path: (removed.append(path), remove(path)))
    assert submit(client(url), good).startswith("stored alice/cleanup")
    assert uploads.wait_settled(60)  # deleted once no request holds it (the fixture's grace: 1 s)
    assert [Path(p).name for p in removed] == ["u41.parquet"] and not Path(removed[0]).exists()  # by the app
    assert not _uploads_named("u41.parquet") - before  # nothing of it left in the upload folder


@pytest.mark.slow
def test_burst_of_concurrent_submissions_each_stored_once(space, item_sets, tmp_path):
    """50 submissions from 10 client threads over HTTP: every one stored exactly once, counts match."""
    url, board = space
    items = item_sets[FEINT]
    files = [write(tmp_path, f"burst{i}.parquet", predictions_bytes(items, f"org/burst-m{i % 5}", seed=100 + i))
             for i in range(BURST)]
    before = board.store.count()

    def worker(k):
        c = client(url, ("tok-alice", "tok-carol")[k % 2])
        return [submit(c, files[i]) for i in range(k, BURST, CLIENTS)]

    with ThreadPoolExecutor(CLIENTS) as pool:
        messages = [m for ms in pool.map(worker, range(CLIENTS)) for m in ms]
    assert len(messages) == BURST and all(m.startswith("stored org/burst-m") for m in messages), messages[:3]
    ids = [m.split("(submission ")[1].split(")")[0] for m in messages]
    assert len(set(ids)) == BURST
    stored = [s for s in board.store.all_submissions("feint6k") if s.model_id.startswith("org/burst-")]
    assert sorted(s.id for s in stored) == sorted(ids)  # each exactly once
    assert sorted((s.model_id, s.version) for s in stored) == sorted(
        (f"org/burst-m{m}", v) for m in range(5) for v in range(1, BURST // 5 + 1))
    counts = json.loads(client(url).predict(api_name="/counts"))
    assert counts["stored_versions"] == before + BURST
    table = board.table("feint6k", kinds=["submitted"], search="burst-")
    assert len(table) == 5 and all(f"v{BURST // 5}" in v for v in table["Version"])
    print(f"\nburst: {BURST} submissions from {CLIENTS} clients -> {len(messages)} acknowledged, "
          f"{len(set(ids))} stored once each; store {counts['stored_versions']} versions; "
          f"board rows for burst models: {len(table)}")
    # every client retries every file (a lost reply): all acknowledged as the version already stored, nothing new
    with ThreadPoolExecutor(CLIENTS) as pool:
        again = [m for ms in pool.map(worker, range(CLIENTS)) for m in ms]
    assert all(m.startswith("already stored org/burst-m") for m in again), again[:3]
    assert sorted(m.split("(submission ")[1].split(")")[0] for m in again) == sorted(ids)
    assert board.store.count() == before + BURST
    print(f"retry burst: {BURST} resubmissions of the same files -> {len(again)} acknowledged as already stored, "
          f"{board.store.count() - before - BURST} new versions")


def test_cli_submit_through_the_space(space, item_sets, tmp_path, capsys):
    url, board = space
    path = write(tmp_path, "cli.parquet", predictions_bytes(item_sets[("contrast_sets", "gender", "test")],
                                                            "carol/cli-model", seed=3))
    assert hardneg_main(["submit", path, "--space", url, "--hf-token", "tok-carol"]) == 0
    assert "stored carol/cli-model v1 on contrast_sets/gender/test" in capsys.readouterr().out
    assert board.store.history("carol/cli-model")[0].submitter == "carol"
    assert hardneg_main(["submit", path, "--space", url, "--hf-token", "tok-carol"]) == 0  # a retry: same version
    assert "already stored carol/cli-model v1" in capsys.readouterr().out
    assert hardneg_main(["submit", path, "--space", url, "--hf-token", "tok-bob"]) == 1
    assert "is in namespace 'carol'; you are signed in as 'bob'" in capsys.readouterr().out
    assert len(board.store.history("carol/cli-model")) == 1


def test_cli_submit_needs_a_token_for_a_space(tmp_path, item_sets, monkeypatch, capsys):
    import hardneg.cli.submit as cli

    monkeypatch.setattr(cli, "hub_token", lambda explicit=None: explicit)
    path = write(tmp_path, "p.parquet", predictions_bytes(item_sets[FEINT], "alice/x", seed=1))
    assert hardneg_main(["submit", path, "--space", "https://board.example.invalid"]) == 2
    assert "hf auth login" in capsys.readouterr().err
    assert hardneg_main(["submit", path, "--space", "owner/board"]) == 2  # a Space id: the public Hub
    assert "hf auth login" in capsys.readouterr().err


def test_cli_submit_local_folder(tmp_path, bench_root, item_sets, capsys):
    path = write(tmp_path, "p.parquet", predictions_bytes(item_sets[FEINT], "dave/local-model", seed=1))
    store = tmp_path / "lb"
    assert hardneg_main(["submit", path, "--space", str(store), "--benchmarks", str(bench_root), "--submitter", "dave",
                         "--create"]) == 0
    assert "stored dave/local-model v1" in capsys.readouterr().out
    assert hardneg_main(["submit", str(tmp_path / "missing.parquet"), "--space", str(store)]) == 2
    assert "not found" in capsys.readouterr().err


def test_space_configuration_from_environment(tmp_path, bench_root, monkeypatch):
    from helpers import load_space_module

    monkeypatch.setenv("HARDNEG_LB_BENCHMARKS", str(bench_root))
    monkeypatch.setenv("HARDNEG_LB_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("HARDNEG_LB_RESULTS_REPO", "org/results")
    monkeypatch.setenv("HARDNEG_LB_RESAMPLES", "50")
    import huggingface_hub.constants

    # org/results is not a real repo: no request to the Hub from a test (the constant, read when a request is made;
    # the variable is read once, at import), and no restore retrying in the background after it
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    board = load_space_module().leaderboard_from_env()
    board.close()
    from hardneg import benchmarks

    # every built folder, in the declarations' order
    assert board.benchmarks == [b for b in benchmarks.names() if b in {"feint6k", "contrast_sets", "posrank", "fire", "vitatecs"}]
    assert board.benchmarks[:3] == ["feint6k", "contrast_sets", "posrank"] and "vitatecs" in board.benchmarks
    assert board.n_resamples == 50 and board.mirror.repo_id == "org/results"
    assert board.store.path == tmp_path / "data" / "leaderboard.sqlite"


def test_cli_submit_run_folder_through_the_space(space, item_sets, tmp_path, capsys, monkeypatch):
    """The README's signed-in example: a `hardneg run` folder to a Space, with --model-id and metadata flags."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    url, board = space
    pred = tmp_path / "run" / "predictions"
    pred.mkdir(parents=True)
    (pred / "feint6k-msrvtt.parquet").write_bytes(predictions_bytes(item_sets[FEINT], "tiny-clip", seed=21))
    (pred / "contrast_sets-gender.parquet").write_bytes(
        predictions_bytes(item_sets[("contrast_sets", "gender", "test")], "tiny-clip", seed=21))
    args = ["submit", str(pred.parent), "--space", url, "--hf-token", "tok-alice", "--model-id", "alice/run-folder",
            "--params", "1M", "--model-type", "contrastive", "--license", "mit", "--no-hub-card"]
    assert hardneg_main(args) == 0
    out = capsys.readouterr().out
    assert "stored alice/run-folder v1 on feint6k/msrvtt/test" in out and "on contrast_sets/gender/test" in out
    subs = board.store.history("alice/run-folder")
    assert len(subs) == 2 and all(s.model_meta["params"] == 1_000_000 and not s.local for s in subs)
    assert hardneg_main(args[:4] + ["--hf-token", "tok-bob", "--model-id", "alice/run-folder", "--no-hub-card"]) == 1
    assert "you are signed in as 'bob'" in capsys.readouterr().out
    assert len(board.store.history("alice/run-folder")) == 2
