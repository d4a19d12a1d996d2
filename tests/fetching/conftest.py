"""A TempCompass stand-in (the real release files, synthetic clips for a few real video ids) and a fresh cache."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from standins import StandIn, declaration_for  # noqa: E402

N_VIDEOS = 4  # real ids with a synthetic clip each in the stand-in's archive


@pytest.fixture(scope="session")
def clips(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("clips")


@pytest.fixture()
def tempcompass(realdata, clips, tmp_path, monkeypatch):
    """(stand-in, source, ids served): the declared release served from ../shared/realdata at its pinned paths,
    the declared archive with clips for the first N_VIDEOS real ids; HARDNEG_CACHE and HF_HOME fresh."""
    from hardneg import benchmarks

    source = benchmarks.get("tempcompass").source
    folder = realdata / "tempcompass"
    ids = sorted(json.loads((folder / "caption_matching.json").read_text(encoding="utf-8")))[:N_VIDEOS]
    monkeypatch.setenv("HARDNEG_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    real = benchmarks.get("tempcompass")
    with StandIn() as standin:
        standin.serve_release(source, folder)
        standin.serve_videos(source, ids, clips)
        patched = declaration_for(real, standin.pins(source))
        benchmarks.register(patched, replace=True)  # the stand-in's synthetic archive, pinned (see StandIn.pins)
        try:
            yield standin, patched.source, ids
        finally:
            benchmarks.register(real, replace=True)
