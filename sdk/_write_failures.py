"""Warnings about failed trace writes while the app runs: once per kind, then rate-limited.

A file exporter whose volume died (full, read-only, unmounted, its directory replaced) loses
every batch from then on. :class:`WriteFailures` says so on the ``groundtrace.sdk`` logger at
WARNING while the app runs, without flooding it: the first failure of each kind (an ``errno``
name such as ``ENOSPC``, or an exception type) is reported at once, later ones of that kind at
most once per ``interval`` seconds, each report with the failed writes and spans lost since the
previous one. :meth:`WriteFailures.flush` reports what is still unreported (at shutdown).
"""

from __future__ import annotations

import errno
import logging
import threading
import time
from dataclasses import dataclass
from typing import Final

__all__ = ["REPORT_INTERVAL_S", "WriteFailures", "failure_kind"]

_logger: Final = logging.getLogger("groundtrace.sdk")

#: Seconds between two warnings about failures of the same kind.
REPORT_INTERVAL_S: Final = 60.0


def failure_kind(exc: BaseException) -> str:
    """``ENOSPC``, ``EACCES``... for an ``OSError`` with an ``errno``; else the type's name."""
    if isinstance(exc, OSError) and exc.errno is not None:
        return errno.errorcode.get(exc.errno, f"errno {exc.errno}")
    return type(exc).__name__


@dataclass(slots=True)
class _Pending:
    """Failures of one kind not yet reported, and when the last report was made."""

    reported_at: float
    writes: int = 0
    spans: int = 0
    last: str = ""


class WriteFailures:
    """Rate-limited warnings about the failed writes to one target (thread-safe).

    Args:
        interval: seconds between two warnings of the same kind.
    """

    def __init__(self, interval: float = REPORT_INTERVAL_S) -> None:
        self._interval = interval
        self._lock = threading.Lock()
        self._kinds: dict[str, _Pending] = {}

    def failed(self, target: object, exc: BaseException, spans: int) -> None:
        """Count one failed write of ``spans`` spans to ``target``; warn if it is due."""
        kind = failure_kind(exc)
        now = time.monotonic()
        with self._lock:
            pending = self._kinds.get(kind)
            if pending is None:
                self._kinds[kind] = _Pending(reported_at=now)
                first = True
            else:
                pending.writes += 1
                pending.spans += spans
                pending.last = str(exc)
                if now - pending.reported_at < self._interval:
                    return
                writes, lost, since = pending.writes, pending.spans, now - pending.reported_at
                pending.reported_at, pending.writes, pending.spans = now, 0, 0
                first = False
        if first:
            _logger.warning(
                "groundtrace: writing traces to %s failed (%s: %s): %d span(s) lost; "
                "further %s failures are reported at most every %.0f s",
                target,
                kind,
                exc,
                spans,
                kind,
                self._interval,
            )
        else:
            _logger.warning(
                "groundtrace: writing traces to %s still fails (%s: %s): %d more failed "
                "write(s), %d span(s) lost in the last %.0f s",
                target,
                kind,
                exc,
                writes,
                lost,
                since,
            )

    def flush(self, target: object) -> None:
        """Warn about the failures not reported yet (each kind's counts since its last report)."""
        now = time.monotonic()
        with self._lock:
            due = [(kind, p) for kind, p in self._kinds.items() if p.writes]
            report = [(kind, p.writes, p.spans, p.last, now - p.reported_at) for kind, p in due]
            for _, pending in due:
                pending.reported_at, pending.writes, pending.spans = now, 0, 0
        for kind, writes, lost, last, since in report:
            _logger.warning(
                "groundtrace: writing traces to %s failed (%s: %s): %d more failed write(s), "
                "%d span(s) lost in the last %.0f s",
                target,
                kind,
                last,
                writes,
                lost,
                since,
            )
