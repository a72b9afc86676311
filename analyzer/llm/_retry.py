"""Exponential backoff with seeded jitter, honouring ``Retry-After``."""

from __future__ import annotations

from dataclasses import dataclass

from groundtrace.analyzer._seeds import derived_uniform

__all__ = ["RETRYABLE_STATUS", "RetryPolicy"]

#: HTTP statuses worth retrying: request timeout, rate limit and server errors.
RETRYABLE_STATUS: frozenset[int] = frozenset({408, 409, 429, 500, 502, 503, 504})


@dataclass(slots=True)
class RetryPolicy:
    """How many times to try a call and how long to wait in between.

    The delay before retry ``n`` (1-based) is ``min(max_delay, base_delay * 2**(n-1))`` scaled
    by a jitter factor in ``[1 - jitter, 1]`` derived from ``seed``, the call's content key and
    ``n`` alone (the same wait whichever worker makes the call, in whatever order); a
    ``Retry-After`` header (seconds) takes precedence, capped at ``max_retry_after``.

    Attributes:
        max_attempts: total attempts including the first (>= 1).
        base_delay: first backoff in seconds.
        max_delay: cap of the exponential backoff in seconds.
        jitter: fraction of the delay that is randomised (0 = none).
        max_retry_after: cap on an honoured ``Retry-After`` value in seconds.
        seed: seed of the jitter generator (recorded with the run).
    """

    max_attempts: int = 5
    base_delay: float = 0.5
    max_delay: float = 30.0
    jitter: float = 0.5
    max_retry_after: float = 120.0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {self.max_attempts}")

    def delay(self, retry: int, retry_after: float | None = None, key: str = "") -> float:
        """Seconds to wait before retry number ``retry`` (1-based) of the call ``key``."""
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_retry_after)
        backoff = min(self.max_delay, self.base_delay * (2 ** (retry - 1)))
        return float(backoff * (1.0 - self.jitter * derived_uniform(self.seed, key, retry)))

    def backoff(
        self, attempt: int, status: int, retry_after: str | None = None, key: str = ""
    ) -> float | None:
        """Seconds to wait before retrying attempt ``attempt`` (1-based) of the call ``key``,
        answered HTTP ``status`` with the ``Retry-After`` header ``retry_after``; None when the
        status is not worth retrying (:data:`RETRYABLE_STATUS`) or the attempts are spent (for
        callers that send their own HTTP requests)."""
        if status not in RETRYABLE_STATUS or attempt >= self.max_attempts:
            return None
        return self.delay(attempt, parse_retry_after(retry_after), key)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header given in seconds (HTTP dates are ignored)."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if seconds >= 0 else None
