"""The collectors' optional C extension (:mod:`._speedups`), when it is built and wanted.

The extension is compiled at install time where a C compiler is available. Every function in
it has a pure-Python reference in the module that uses it, and the collectors read the same
input into the same objects either way; the tests compare the two. Set
``GROUNDTRACE_PURE_PYTHON=1`` to use the Python code even where the extension is built.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import Final

__all__ = ["NATIVE", "speedups"]


def _load() -> ModuleType | None:
    if os.environ.get("GROUNDTRACE_PURE_PYTHON"):
        return None
    try:
        from . import _speedups
    except ImportError:
        return None
    return _speedups


#: The extension module, or ``None`` (not built, or ``GROUNDTRACE_PURE_PYTHON`` is set).
speedups: Final = _load()
#: Whether the collectors run the C code.
NATIVE: Final = speedups is not None
