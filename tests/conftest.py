"""Test-wide fixtures: where the shared public data lives."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
#: ``../shared/data`` beside the checkout (override with GROUNDTRACE_SHARED_DATA).
SHARED_DATA = Path(os.environ.get("GROUNDTRACE_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared data folder; tests that need it skip loudly only if it is truly absent."""
    if not SHARED_DATA.is_dir():
        pytest.fail(f"shared data folder not found at {SHARED_DATA} (set GROUNDTRACE_SHARED_DATA)")
    return SHARED_DATA
