"""Test-wide fixtures: the optional shared data tier (see tests/fixtures/data/README.md).

The data every required test reads ships with the checkout (``tests.support.data``); the
larger shared samples beside it are optional, and the tests that ask for them skip without.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

#: ``../shared/data`` beside the checkout (override with GROUNDTRACE_SHARED_DATA).
SHARED_DATA = Path(
    os.environ.get("GROUNDTRACE_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared/data")
)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The optional larger shared samples; the tests that ask for them skip when absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"optional shared data not found at {SHARED_DATA} (GROUNDTRACE_SHARED_DATA)")
    return SHARED_DATA
