"""Fixtures of the leaderboard tests: small benchmark folders and a board on a temporary store."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from helpers import (CHROMIUM_ARGS, CHROMIUM, TOKENS, fake_whoami, free_port, load_space_module,  # noqa: E402,F401
                     mocked_oauth_info, write_benchmarks)

from hardneg.leaderboard import Leaderboard, load_benchmarks  # noqa: E402
from hardneg.leaderboard.signin import SignIn  # noqa: E402

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


@pytest.fixture(scope="module")
def space(tmp_path_factory, item_sets):
    """The Space app on a fresh store, served on loopback, with its sign-in mocked; yields (url, board)."""
    import gradio.oauth

    from hardneg.video import write_synthetic_video

    app = load_space_module()
    board = Leaderboard(tmp_path_factory.mktemp("space-store"), item_sets, n_resamples=100)
    videos = tmp_path_factory.mktemp("space-videos")  # the drill-down shows an item's video
    for vid in sorted({v for items in item_sets.values() for v in items.clusters.tolist()}):
        write_synthetic_video(videos / f"{vid}.mp4", vid, n_frames=8)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(gradio.oauth, "_get_mocked_oauth_info", mocked_oauth_info)
        # the test plays a Space with real OAuth (its session answered offline by the mock above); the modes a board
        # decides for itself outside a Space are tested in test_identity.py
        demo = app.create_app(board, whoami=fake_whoami, videos=videos, refresh_s=1.0, upload_grace_s=1.0,
                              sign_in=SignIn("oauth", "tests: a Space with OAuth")).queue(default_concurrency_limit=4)
        port = free_port()
        demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                    allowed_paths=[str(videos)], **app.launch_options(board))
        yield f"http://127.0.0.1:{port}/", board
        demo.close()


@pytest.fixture(scope="module")
def browser():
    """Debian's headless Chromium through Playwright, one per test module (the browser tests of this folder)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not shutil.which(CHROMIUM):
        pytest.skip(f"{CHROMIUM} not installed (apt-get install chromium)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()
