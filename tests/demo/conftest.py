"""Import the Space's modules (spaces/demo is not a package) and share built sample data."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

DEMO_DIR = Path(__file__).resolve().parents[2] / "spaces" / "demo"
sys.path.insert(0, str(DEMO_DIR))


@pytest.fixture(scope="session")
def demo_data(tmp_path_factory):
    """Built multiple-choice samples and their synthetic videos, as the app prepares them."""
    import app

    cache = tmp_path_factory.mktemp("democache")
    data, videos = app.prepare_default_data(cache)
    return cache, data, videos
