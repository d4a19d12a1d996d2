"""Shared fixtures: where the real release files are, and a scratch folder per test."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
REALDATA = REPO_ROOT.parent / "shared" / "realdata"
ARTIFACTS = REPO_ROOT / "test-artifacts"


@pytest.fixture(scope="session")
def realdata() -> Path:
    """The authors' real release files in ../shared/realdata; tests using it skip when absent."""
    if not REALDATA.is_dir():
        pytest.skip("../shared/realdata is not present in this checkout")
    return REALDATA


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    """Where tests save screenshots and plots for a person to look at."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
