"""The public data the required tests read, shipped with the checkout.

Licences and attribution are in ``tests/fixtures/data/README.md``. A test that also checks the
larger shared samples asks for the ``shared_data`` fixture, which skips when they are absent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from groundtrace.examples.hotpot_rag.cases import DEFAULT_DATASET

__all__ = ["DATA", "HOTPOT"]

#: The samples shipped for the tests.
DATA: Final = Path(__file__).resolve().parents[1] / "fixtures" / "data"
#: The 200 HotpotQA questions shipped with the example app.
HOTPOT: Final = DEFAULT_DATASET
