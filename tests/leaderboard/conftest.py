"""Fixtures of the leaderboard tests: small benchmark folders and a board on a temporary store."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from helpers import load_space_module, write_benchmarks  # noqa: E402

from hardneg.leaderboard import Leaderboard, load_benchmarks  # noqa: E402

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


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def space(tmp_path_factory, item_sets):
    """The Space app on a fresh store, served on loopback; yields (url, board)."""
    app = load_space_module()
    board = Leaderboard(tmp_path_factory.mktemp("space-store"), item_sets, n_resamples=100)
    demo = app.create_app(board).queue(default_concurrency_limit=4)
    port = free_port()
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    yield f"http://127.0.0.1:{port}/", board
    demo.close()
