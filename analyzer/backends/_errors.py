"""Errors of the model backends."""

from __future__ import annotations

from groundtrace.collectors.errors import GroundtraceError

__all__ = ["BackendUnavailableError"]


class BackendUnavailableError(GroundtraceError):
    """A model backend could not be started or reached (missing package, model or server)."""

    exit_code: int = 3
