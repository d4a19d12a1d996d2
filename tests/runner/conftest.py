"""Small caption tables for the runner tests."""

from __future__ import annotations

import pyarrow as pa
import pytest

from runner_fns import make_captions

@pytest.fixture
def captions() -> pa.Table:
    return make_captions()
