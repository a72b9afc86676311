"""Strict parsing of a judge reply into accepted scores or protocol errors (SPEC §4.4).

A score is accepted only when it is a JSON number within [-0.01, 1.01]; it is then clamped to
[0, 1]. Everything else is a protocol error for that metric, recorded with the raw output:
non-numeric (strings, booleans, NaN), missing, out of range, malformed JSON, refusal,
truncation (``finish_reason == "length"``) and the call failures of the model client. A failed
metric is never imputed, zero-filled or silently clamped.

The reply must be one JSON object, optionally wrapped in a single Markdown code fence.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from groundtrace.analyzer.llm import CallFailure, FailureKind

from ._types import Metric, ProtocolError, ProtocolErrorKind

__all__ = [
    "SCORE_MAX",
    "SCORE_MIN",
    "failure_errors",
    "parse_judge_reply",
]

#: Lowest accepted raw score (then clamped to 0).
SCORE_MIN = -0.01
#: Highest accepted raw score (then clamped to 1).
SCORE_MAX = 1.01

_FENCE = re.compile(r"^```(?:json|JSON)?\s*\n?(.*?)\n?```$", re.DOTALL)
_REFUSAL = re.compile(
    r"\b(I\s+(?:can(?:no|')t|cannot|am\s+unable|won't|will\s+not)|I'm\s+(?:sorry|unable)|"
    r"as\s+an\s+AI|I\s+apologi[sz]e|unable\s+to\s+(?:assist|help|comply))",
    re.IGNORECASE,
)

_FAILURE_KINDS = {
    FailureKind.TIMEOUT: ProtocolErrorKind.TIMEOUT,
    FailureKind.HTTP_ERROR: ProtocolErrorKind.HTTP_ERROR,
    FailureKind.CONNECTION: ProtocolErrorKind.CONNECTION,
    FailureKind.INVALID_RESPONSE: ProtocolErrorKind.INVALID_RESPONSE,
    FailureKind.NOT_SENT: ProtocolErrorKind.NOT_SENT,
}


def _all(
    metrics: tuple[Metric, ...], kind: ProtocolErrorKind, message: str, raw: str | None
) -> list[ProtocolError]:
    return [ProtocolError(m, kind, message, raw) for m in metrics]


def failure_errors(
    failure: CallFailure, metrics: tuple[Metric, ...] = tuple(Metric)
) -> list[ProtocolError]:
    """Protocol errors for every metric of a call that failed in the model client."""
    kind = _FAILURE_KINDS[failure.kind]
    return _all(metrics, kind, failure.message, failure.raw)


def _reject_constant(name: str) -> float:
    raise ValueError(f"non-finite number {name}")


def _load_object(text: str) -> dict[str, Any] | None:
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        parsed = json.loads(body, parse_constant=_reject_constant)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def parse_judge_reply(
    text: str,
    finish_reason: str | None,
    metrics: tuple[Metric, ...] = tuple(Metric),
) -> tuple[dict[Metric, float], str | None, list[ProtocolError]]:
    """Accepted scores, rationale and protocol errors of one judge reply.

    Args:
        text: the model's reply.
        finish_reason: the endpoint's finish reason (``length`` means truncated).
        metrics: metrics the reply must score.

    Returns:
        ``(scores, rationale, errors)``: each metric is either in ``scores`` (clamped to
        [0, 1]) or has exactly one error.
    """
    if finish_reason == "length":
        return {}, None, _all(metrics, ProtocolErrorKind.TRUNCATION, "reply truncated", text)
    obj = _load_object(text)
    if obj is None:
        if _REFUSAL.search(text):
            return {}, None, _all(metrics, ProtocolErrorKind.REFUSAL, "judge refused", text)
        message = "reply is not one JSON object"
        return {}, None, _all(metrics, ProtocolErrorKind.MALFORMED_JSON, message, text)
    scores: dict[Metric, float] = {}
    errors: list[ProtocolError] = []
    for metric in metrics:
        if metric.value not in obj or obj[metric.value] is None:
            errors.append(ProtocolError(metric, ProtocolErrorKind.MISSING, "no score", text))
            continue
        value = obj[metric.value]
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            message = f"score is not a number: {value!r}"
            errors.append(ProtocolError(metric, ProtocolErrorKind.NON_NUMERIC, message, text))
            continue
        if not SCORE_MIN <= value <= SCORE_MAX:
            message = f"score {value!r} outside [{SCORE_MIN}, {SCORE_MAX}]"
            errors.append(ProtocolError(metric, ProtocolErrorKind.OUT_OF_RANGE, message, text))
            continue
        scores[metric] = min(1.0, max(0.0, float(value)))
    rationale = obj.get("rationale")
    return scores, rationale if isinstance(rationale, str) else None, errors
