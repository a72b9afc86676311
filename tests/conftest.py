"""Test-wide fixtures: the public data the tests read (see tests/fixtures/data/README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.data import SHARED_DATA


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The optional larger shared samples; the tests that ask for them skip when absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"optional shared data not found at {SHARED_DATA} (GROUNDTRACE_SHARED_DATA)")
    return SHARED_DATA
