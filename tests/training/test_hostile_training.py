"""`hardneg train` and `score` against hostile folders and flags (issue 29): a crafted pickle in --out runs no code,
with or without --resume; damaged state and weights, bad flags and unwritable folders give a plain error naming
the value and the fix (exit code 2, no traceback), before any work."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from hardneg.cli import main  # noqa: E402
from hardneg.training.state import LEGACY_STATE, STATE, StateError, load_state, state_bytes  # noqa: E402

FAST = ["--batch-size", "8", "--no-progress"]


class Payload:
    """Unpickling this creates the marker file: proof that code from the folder ran."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def crafted_pickle(path: Path, marker: Path) -> None:
    torch.save({"step": 1, "settings": {}, "settings_key": "x", "model": Payload(marker)}, path)


def train(pairs, out, *extra) -> list[str]:
    return ["train", "--data", str(pairs), "--out", str(out), "--steps", "2", *FAST, *extra]


def refused(capsys, argv, *expected) -> str:
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    for text in expected:
        assert text in err, err
    assert "Traceback" not in err and len(err) < 1200
    return err


def test_the_crafted_pickle_really_runs_code_when_unpickled(tmp_path):
    """The control: loading it as the old trainer did (weights_only=False) creates the marker."""
    marker = tmp_path / "ran"
    crafted_pickle(tmp_path / "s.pt", marker)
    torch.load(tmp_path / "s.pt", weights_only=False)
    assert marker.exists()


@pytest.mark.parametrize("resume", [False, True])
def test_a_crafted_pickle_in_out_runs_no_code(pairs, tmp_path, capsys, resume):
    out, marker = tmp_path / "run", tmp_path / "ran"
    out.mkdir()
    crafted_pickle(out / LEGACY_STATE, marker)
    refused(capsys, train(pairs, out, *(["--resume"] if resume else [])), "--overwrite")
    assert not marker.exists()


def test_a_crafted_pickle_next_to_a_real_run_is_ignored_on_resume(pairs, tmp_path, capsys):
    out, marker = tmp_path / "run", tmp_path / "ran"
    assert main(train(pairs, out)) == 0
    crafted_pickle(out / LEGACY_STATE, marker)
    refused(capsys, train(pairs, out), "holds another run's checkpoint")
    capsys.readouterr()
    assert main(train(pairs, out, "--resume")) == 0  # resumes from the safetensors state only
    assert not marker.exists()
    assert load_state(out / STATE)["step"] == 2


@pytest.mark.parametrize("damage", ["empty", "truncated", "random", "tensors only"])
def test_a_damaged_state_is_refused_on_resume(pairs, tmp_path, capsys, damage):
    out = tmp_path / "run"
    assert main(train(pairs, out)) == 0
    good = (out / STATE).read_bytes()
    if damage == "tensors only":
        from safetensors.torch import save

        bad = save({"x": torch.zeros(2)})
    else:
        bad = {"empty": b"", "truncated": good[: len(good) // 2], "random": os.urandom(4096)}[damage]
    (out / STATE).write_bytes(bad)
    refused(capsys, train(pairs, out, "--resume"), STATE, "--overwrite")
    assert (out / STATE).read_bytes() == bad  # nothing overwritten by the refusal


def test_state_round_trips_and_is_not_a_pickle(tmp_path):
    net = torch.nn.Linear(3, 2)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
    net(torch.ones(1, 3)).sum().backward()
    opt.step()
    raw = state_bytes(step=3, settings={"a": 1}, settings_key="k", model=net.state_dict(), optimizer=opt.state_dict(),
                      status="running", last_loss=float("nan"))
    (tmp_path / STATE).write_bytes(raw)
    back = load_state(tmp_path / STATE)
    assert back["step"] == 3 and back["last_loss"] != back["last_loss"]  # NaN survives
    opt2 = torch.optim.AdamW(torch.nn.Linear(3, 2).parameters(), lr=1e-3)
    opt2.load_state_dict(back["optimizer"])
    assert torch.equal(opt2.state_dict()["state"][0]["exp_avg"], opt.state_dict()["state"][0]["exp_avg"])
    assert raw == state_bytes(step=3, settings={"a": 1}, settings_key="k", model=net.state_dict(),
                              optimizer=opt2.state_dict(), status="running", last_loss=float("nan"))  # same bytes
    with pytest.raises(StateError, match="empty"):
        (tmp_path / "e").write_bytes(b"")
        load_state(tmp_path / "e")


@pytest.mark.parametrize("flags,expected", [
    (["--save-every", "0"], "--save-every 0"), (["--save-every", "-1"], "--save-every -1"),
    (["--epochs", "0"], "--epochs 0"), (["--limit", "0"], "--limit 0"), (["--n-negatives", "0"], "--n-negatives 0"),
    (["--frames", "0"], "--frames 0"), (["--lr", "nan"], "--lr nan"), (["--device", "bogus"], "--device 'bogus'"),
    (["--objective", "word", "--negatives-set", "kk=3"], "'kk': not a setting of generator 'posrank'"),
    (["--objective", "phrase", "--negatives-set", "phrase=true"], "'phrase': not a setting"),
    (["--negatives-set", "k=3"], "drop --negatives-set"),
])
def test_bad_flags_are_refused_before_any_work(pairs, tmp_path, capsys, flags, expected):
    out = tmp_path / "run"
    cmd = ["train", "--data", str(pairs), "--out", str(out), *FAST, *flags]
    if "--epochs" not in flags:
        cmd += ["--steps", "2"]
    refused(capsys, cmd, expected)
    assert not out.exists()


def test_unwritable_out_is_refused_with_its_path(pairs, tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    refused(capsys, train(pairs, blocker / "run"), "cannot be written", "choose a folder")
    refused(capsys, train(pairs, blocker), "is a file")


def test_damaged_weights_are_refused_by_train_and_score(pairs, tmp_path, capsys):
    from hardneg.datasets import build_samples

    out = tmp_path / "run"
    assert main(train(pairs, out)) == 0
    weights = out / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])
    refused(capsys, train(pairs, tmp_path / "next", "--model", str(out)), "model.safetensors cannot be read",
            "copy the checkpoint again")
    built = build_samples(tmp_path / "built", benchmarks=("feint6k",))["feint6k"]
    config = json.loads((built / "build_report.json").read_text()).get("configs") or ["msrvtt"]
    config = config[0] if isinstance(config, list) else sorted(config)[0]
    refused(capsys, ["score", "--model", str(out), "--dataset", str(built), "--config", config, "--videos",
                     str(tmp_path), "--out", str(tmp_path / "p.parquet"), "--cache-dir", str(tmp_path / "c")],
            "model.safetensors cannot be read")
    refused(capsys, ["score", "--model", str(out), "--dataset", str(built), "--config", config, "--videos",
                     str(tmp_path), "--out", str(tmp_path / "p.parquet"), "--device", "bogus"], "--device 'bogus'")
