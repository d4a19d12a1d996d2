"""A model folder whose `pytorch_model.bin` is damaged or crafted (issue 36 N7): `hardneg train --model FOLDER` and
`load_model(FOLDER)` refuse it with an `error:` line naming the file and the fix, not torch's UnpicklingError,
EOFError or RuntimeError traceback; and a crafted pickle's code never runs (weights are read with
torch.load(weights_only=True) only)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from hardneg.cli import main  # noqa: E402

FAST = ["--batch-size", "8", "--no-progress", "--steps", "1"]


class Payload:
    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.fixture
def folder(tmp_path) -> Path:
    from hardneg.models.tiny_clip import tiny_clip_path

    out = tmp_path / "clip-folder"
    shutil.copytree(tiny_clip_path(), out)
    (out / "model.safetensors").unlink()  # the weights as the older .bin format
    return out


DAMAGE = {"truncated zip": b"PK\x03\x04" + b"x" * 64, "empty": b"", "random": None, "pickle garbage": b"\x80\x02garbage",
          "bytes torch decodes as text": b"X\x00\x00\x00\x01\x80"}  # (a UnicodeDecodeError, found by fuzzing)


@pytest.mark.parametrize("damage", [*DAMAGE, "crafted pickle"])
def test_a_damaged_pytorch_model_bin_is_an_error_line(folder, pairs, tmp_path, capsys, damage):
    marker = tmp_path / "ran"
    weights = folder / "pytorch_model.bin"
    if damage == "crafted pickle":
        torch.save({"w": Payload(marker)}, weights, _use_new_zipfile_serialization=True)
    else:
        weights.write_bytes(DAMAGE[damage] if DAMAGE[damage] is not None else os.urandom(4096))
    capsys.readouterr()
    rc = main(["train", "--model", str(folder), "--data", str(pairs), "--out", str(tmp_path / "run"), *FAST])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "error:" in err and "pytorch_model.bin cannot be read" in err and "copy the model folder again" in err
    assert "Traceback" not in err and len(err) < 800
    assert not marker.exists()  # no code from the folder ran

    from hardneg.models import load_model

    with pytest.raises(ValueError, match="pytorch_model.bin cannot be read"):
        load_model(str(folder))
    assert not marker.exists()
