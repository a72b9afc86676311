"""Value types of command-path validation (SPEC 4.3): statuses, error codes, verdicts."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

import msgspec

__all__ = [
    "STATUS_PRECEDENCE",
    "CallError",
    "CallErrorCode",
    "CaseVerdict",
    "PathStatus",
]


class PathStatus(StrEnum):
    """Per-case status of the path channel (SPEC 4.3)."""

    PASS = "pass"
    MISSING_COMMAND = "missing_command"
    #: a cited source was never (successfully) read
    INVALID_QUOTE = "invalid_quote"
    #: a command failure and a citation failure at once
    BOTH_FAILED = "both_failed"
    PARAM_ERROR = "param_error"
    TOOL_ERROR = "tool_error"
    TIMEOUT = "timeout"
    #: the answer cites sources but no tool call was executed at all
    ZERO_CALL_CITATION = "zero_call_citation"
    #: a quoted snippet does not occur in the content that was read
    FABRICATED_QUOTE = "fabricated_quote"
    #: a required value was returned by a successful tool call, but the answer does not state it
    UNUSED_RESULT = "unused_result"
    #: a required value is stated nowhere in the answer (and no successful tool call returned it)
    MISSING_VALUE = "missing_value"
    #: the case has ``require_path = false``: no strict check, never a failure
    NOT_REQUIRED = "not_required"
    #: no tool call ran and the case declares no path (no read, call or value required, not
    #: even an empty list of them): there is no command path to check (a RAG app that
    #: retrieves without tools); never a failure
    NOT_APPLICABLE = "not_applicable"


#: Most specific first: the first status of this tuple found in a case wins. Every issue
#: found is still listed in :attr:`CaseVerdict.issues`. ``unused_result`` comes before
#: ``missing_value``: both say a required value is not in the answer, the first also names
#: the tool call that returned it.
STATUS_PRECEDENCE: tuple[PathStatus, ...] = (
    PathStatus.NOT_REQUIRED,
    PathStatus.NOT_APPLICABLE,
    PathStatus.ZERO_CALL_CITATION,
    PathStatus.BOTH_FAILED,
    PathStatus.TIMEOUT,
    PathStatus.TOOL_ERROR,
    PathStatus.PARAM_ERROR,
    PathStatus.MISSING_COMMAND,
    PathStatus.INVALID_QUOTE,
    PathStatus.FABRICATED_QUOTE,
    PathStatus.UNUSED_RESULT,
    PathStatus.MISSING_VALUE,
    PathStatus.PASS,
)


class CallErrorCode(StrEnum):
    """Why an executed call does not satisfy a required one (BFCL checker style)."""

    #: a required call has no executed counterpart at all
    MISSING_CALL = "missing_call"
    #: an executed call has no required counterpart (strict / exclusive tools)
    UNEXPECTED_CALL = "unexpected_call"
    #: the call in that place names another function
    WRONG_FUNCTION = "wrong_function"
    #: a non-optional argument is absent
    MISSING_ARGUMENT = "missing_argument"
    #: an argument the function (or the constraint) does not know
    UNEXPECTED_ARGUMENT = "unexpected_argument"
    #: the value has the wrong JSON type for the declared parameter type
    WRONG_TYPE = "wrong_type"
    #: the value is not among the acceptable ones
    WRONG_VALUE = "wrong_value"
    #: every call matches, but not in the required order
    WRONG_ORDER = "wrong_order"
    #: a command outside the case's allowed commands ran
    DISALLOWED_COMMAND = "disallowed_command"


class CallError(msgspec.Struct, frozen=True):
    """One call-level error with what it concerns.

    Attributes:
        code: the :class:`CallErrorCode`.
        message: explanation naming the call and argument.
        required_index: index of the required call concerned, if any.
        executed_index: index of the executed call concerned, if any.
        argument: the argument concerned, if any.
    """

    code: CallErrorCode
    message: str
    required_index: int | None = None
    executed_index: int | None = None
    argument: str | None = None


class CaseVerdict(msgspec.Struct, frozen=True):
    """Both channels of one case, side by side (never merged).

    In JSON, ``case_id`` is ``id`` and ``text_f1`` is ``text_score``.

    Attributes:
        case_id: the case.
        trace_id: the trace validated (``None`` when no trace has this case id).
        status: the winning :class:`PathStatus` (see :data:`STATUS_PRECEDENCE`).
        issues: every path issue found, each ``{"status", "message", ...evidence}``.
        text_em: exact match vs the reference (``None``: no reference or no answer).
        text_f1: token F1 vs the reference (``None`` likewise).
        text_correct: fact correctness (``AnswerScore.fact_correct``; ``None`` likewise).
        cited: the cited sources.
        cited_read: the cited sources that were actually read.
        required_reads: the required reads of the case.
        required_cited: the required sources both read and cited.
        read: every resource read successfully, in call order.
        call_errors: call-level errors (BFCL style) of the required calls.
        details: further evidence (quote matches, values checked...).
    """

    case_id: str = msgspec.field(name="id")
    trace_id: str | None
    status: PathStatus
    issues: tuple[dict[str, Any], ...] = ()
    text_em: bool | None = None
    text_f1: float | None = msgspec.field(default=None, name="text_score")
    text_correct: bool | None = None
    cited: tuple[str, ...] = ()
    cited_read: tuple[str, ...] = ()
    required_reads: tuple[str, ...] = ()
    required_cited: tuple[str, ...] = ()
    read: tuple[str, ...] = ()
    call_errors: tuple[CallError, ...] = ()
    details: dict[str, Any] = msgspec.field(default_factory=dict)

    @property
    def path_pass(self) -> bool | None:
        """``True``/``False`` for strict cases; ``None`` for ``not_required`` and
        ``not_applicable`` ones (nothing was checked)."""
        if self.status in (PathStatus.NOT_REQUIRED, PathStatus.NOT_APPLICABLE):
            return None
        return self.status is PathStatus.PASS
