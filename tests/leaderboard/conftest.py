"""Fixtures of the leaderboard tests: small benchmark folders and a board on a temporary store."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from helpers import write_benchmarks  # noqa: E402

from hardneg.leaderboard import Leaderboard, load_benchmarks  # noqa: E402

SPACE_DIR = Path(__file__).resolve().parents[2] / "spaces" / "leaderboard"


@pytest.fixture(scope="session")
def bench_root(tmp_path_factory) -> Path:
    return write_benchmarks(tmp_path_factory.mktemp("benchmarks"))


@pytest.fixture(scope="session")
def item_sets(bench_root):
    return load_benchmarks(bench_root)


@pytest.fixture
def board(tmp_path, item_sets, monkeypatch) -> Leaderboard:
    monkeypatch.setenv("HARDNEG_ADMIN_TOKEN", "test-admin-token")
    return Leaderboard(tmp_path / "store", item_sets, n_resamples=200)


def load_space_module():
    """spaces/leaderboard/app.py as a module (it is a Space, not part of the package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("leaderboard_space_app", SPACE_DIR / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
