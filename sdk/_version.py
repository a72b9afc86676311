"""groundtrace's version: written here once.

``pyproject.toml`` reads it (``[tool.setuptools.dynamic]``), the SDK's tracers carry it as their
instrumentation scope version, and ``groundtrace --version`` prints it. It lives in the SDK
because the SDK is the base install: every install of groundtrace has ``groundtrace.sdk``.
"""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
