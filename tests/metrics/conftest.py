"""Fixtures for the evaluate metric module tests: modules loaded once, small random data."""

from __future__ import annotations

import uuid

import pytest

evaluate = pytest.importorskip("evaluate")

from hardneg.metric_modules import metric_path  # noqa: E402


@pytest.fixture(scope="session")
def load():
    """load(name, **kw) -> a fresh evaluate module; each gets its own experiment id (parallel-safe cache)."""

    def _load(name: str, **kwargs):
        kwargs.setdefault("experiment_id", uuid.uuid4().hex)
        return evaluate.load(metric_path(name), **kwargs)

    return _load
