"""Crafted `trainer_state.safetensors` files (issue 36 N4): each is refused on `train --resume` with one `error:`
line naming the file and the fix (exit code 2, no traceback), and nothing is written over it. Before: a deep
header raised RecursionError, a huge step OverflowError, a malformed param group TypeError; a negative step, NaN
weights, a NaN learning rate and a negative second moment were accepted, the last two writing NaN checkpoints."""

from __future__ import annotations

import json
import shutil

import pytest

torch = pytest.importorskip("torch")

from safetensors import safe_open  # noqa: E402
from safetensors.torch import save  # noqa: E402

from hardneg.cli import main  # noqa: E402
from hardneg.training.state import STATE  # noqa: E402

FAST = ["--batch-size", "8", "--no-progress"]


def _read(path):
    with safe_open(str(path), framework="pt") as fh:
        return json.loads(fh.metadata()["hardneg_state"]), {k: fh.get_tensor(k) for k in fh.keys()}


def _header(info) -> str:
    return json.dumps(info)


def _edit(name):
    """(header text, tensors) of the damaged state, from the good one's (info, tensors)."""
    def deep(info, t):
        return "[" * 50_000 + "]" * 50_000, t

    def huge_step(info, t):
        return _header(info).replace('"step": 2', '"step": 1e400'), t

    def groups_not_a_list(info, t):
        return _header({**info, "param_groups": 5}), t

    def lr_text(info, t):
        info["param_groups"][0]["lr"] = "fast"
        return _header(info), t

    def negative_step(info, t):
        return _header({**info, "step": -5}), t

    def nan_weights(info, t):
        name = next(k for k in t if k.startswith("model.") and t[k].is_floating_point())
        return _header(info), {**t, name: torch.full_like(t[name], float("nan"))}

    def nan_lr(info, t):
        info["param_groups"][0]["lr"] = {"__float__": "nan"}
        return _header(info), t

    def negative_moment(info, t):
        name = next(k for k in t if k.endswith(".exp_avg_sq"))
        return _header(info), {**t, name: -torch.ones_like(t[name])}

    def float_text(info, t):
        return _header({**info, "last_loss": {"__float__": [1]}}), t

    def moment_shape(info, t):
        name = next(k for k in t if k.endswith(".exp_avg"))
        return _header(info), {**t, name: torch.zeros(3, 1, 2)}

    return locals()[name]


CASES = ["deep", "huge_step", "groups_not_a_list", "lr_text", "negative_step", "nan_weights", "nan_lr",
         "negative_moment", "float_text", "moment_shape"]


@pytest.fixture(scope="module")
def trained(pairs, tmp_path_factory):
    """One finished 4-step run, copied by each test."""
    out = tmp_path_factory.mktemp("crafted") / "run"
    assert main(["train", "--data", str(pairs), "--out", str(out), "--steps", "4", *FAST]) == 0
    return out


@pytest.mark.parametrize("damage", CASES)
def test_a_crafted_state_is_refused_on_resume(pairs, trained, tmp_path, capsys, damage):
    out = tmp_path / "run"
    shutil.copytree(trained, out)
    cmd = ["train", "--data", str(pairs), "--out", str(out), "--steps", "4", *FAST]
    info, tensors = _read(out / STATE)
    info["step"] = 2  # as if stopped half-way: a resume would run two steps from it
    header, tensors = _edit(damage)(info, tensors)
    bad = save({k: v.contiguous() for k, v in tensors.items()}, metadata={"hardneg_state": header})
    (out / STATE).write_bytes(bad)
    weights = (out / "model.safetensors").read_bytes()
    capsys.readouterr()
    assert main(cmd + ["--resume"]) == 2
    err = capsys.readouterr().err
    assert "error:" in err and STATE in err and "--overwrite" in err, err
    assert "Traceback" not in err and len(err) < 1500
    assert (out / STATE).read_bytes() == bad and (out / "model.safetensors").read_bytes() == weights
