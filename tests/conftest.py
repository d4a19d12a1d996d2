"""Shared fixtures: where the real release files are, and a scratch folder per test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# One torch (OpenMP) thread in the test process and every process it starts (CLI runs, trainers, Ray workers),
# unless the caller chose: the suite's models are tiny, and intra-op threads only cost time on them. On the shared
# 2-core machine, a 40-step `hardneg train` took 37 s with two threads and 14 s with one (the two threads spin for
# each other), and six heavy test files 180 s with two against 147 s with one. Set here, before anything imports
# torch, which reads it once. Tests of thread handling set their own counts.
os.environ.setdefault("OMP_NUM_THREADS", "1")

REPO_ROOT = Path(__file__).resolve().parents[1]
REALDATA = REPO_ROOT.parent / "shared" / "realdata"
ARTIFACTS = REPO_ROOT / "test-artifacts"


@pytest.fixture(scope="session")
def realdata() -> Path:
    """The authors' real release files in ../shared/realdata; tests using it skip when absent."""
    if not REALDATA.is_dir():  # a fresh clone has no ../shared: these tests read the authors' own files
        pytest.skip(f"needs the authors' real release files in {REALDATA} (../shared/realdata beside the clone), "
                    "which a fresh clone does not have; docs/install.md#running-the-tests")
    return REALDATA


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    """Where tests save screenshots and plots for a person to look at."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


# Hypothesis profiles (the fuzz suites, tests/test_guards_fuzz.py and its kin, take their example counts from the
# profile: tests with their own `max_examples` keep it): "ci" (the default) keeps the suites within CI's time
# budget; "long" runs 50 times as many examples, by hand: HYPOTHESIS_PROFILE=long pytest tests -k fuzz
# (docs/leaderboard-reliability.md gives the figures).
try:
    import os as _os

    from hypothesis import HealthCheck as _HealthCheck
    from hypothesis import settings as _settings

    _settings.register_profile("ci", max_examples=100, deadline=None, print_blob=True,
                               suppress_health_check=[_HealthCheck.too_slow, _HealthCheck.function_scoped_fixture])
    _settings.register_profile("long", max_examples=5000, deadline=None, print_blob=True,
                               suppress_health_check=[_HealthCheck.too_slow, _HealthCheck.function_scoped_fixture])
    _settings.load_profile(_os.environ.get("HYPOTHESIS_PROFILE", "ci"))
except ImportError:  # hypothesis is a test extra; the suites that need it skip without it
    pass
