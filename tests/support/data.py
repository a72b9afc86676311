"""Where the tests' public data lives: shipped in the repository, plus an optional shared tier.

Every required test reads data shipped with the checkout (licences and attribution in
``tests/fixtures/data/README.md``); a test that also checks the larger shared samples asks for
the ``shared_data`` fixture, which skips when they are absent.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from groundtrace.examples.hotpot_rag.cases import DEFAULT_DATASET

__all__ = ["DATA", "HOTPOT", "SHARED_DATA"]

_REPO: Final = Path(__file__).resolve().parents[2]
#: The samples shipped for the tests.
DATA: Final = _REPO / "tests" / "fixtures" / "data"
#: The 200 HotpotQA questions shipped with the example app.
HOTPOT: Final = DEFAULT_DATASET
#: ``../shared/data`` beside the checkout (override with GROUNDTRACE_SHARED_DATA).
SHARED_DATA: Final = Path(
    os.environ.get("GROUNDTRACE_SHARED_DATA", _REPO.parent / "shared" / "data")
)
