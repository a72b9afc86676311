"""What a failed step or instrumented call records: error type, status and exception event.

Decorators and instrumentors record exceptions alike, through :func:`record_exception`: the
``error.type`` attribute, the status description and the ``exception`` event carry the
exception's type, always. Its message and traceback are content of their own kind,
:attr:`Content.EXCEPTIONS <groundtrace.sdk.Content.EXCEPTIONS>` (an error message can quote
any value the failing code held: a tool argument, a connection string, a token), recorded only
when that kind is captured, and then always masked: with the configured redactor, or with the
built-in maskers when redaction is off. OpenTelemetry's own ``Span.record_exception`` is never
used: it writes the message and the traceback as they are.
"""

from __future__ import annotations

import dataclasses
import traceback
from typing import Final

from opentelemetry.trace import Span, Status, StatusCode

from . import semconv as sc
from ._attributes import safe_str
from ._record import AttributeValue, Recorder
from ._settings import Content
from .redaction import Redactor

__all__ = ["record_exception"]

_MESSAGE: Final = sc.EXCEPTION_MESSAGE
_STACKTRACE: Final = sc.EXCEPTION_STACKTRACE
_CAPTURE_EXCEPTIONS: Final = Content.EXCEPTIONS


def record_exception(span: Span, rec: Recorder, exc: BaseException) -> None:
    """Record ``exc`` on ``span``: ``error.type`` (among ``rec``'s attributes), an error
    status and an ``exception`` event; the message and traceback only when exceptions are
    captured, masked (noted in ``rec``'s redaction and truncation lists)."""
    name = type(exc).__qualname__
    rec.attrs[sc.ERROR_TYPE] = name
    module = type(exc).__module__
    event: dict[str, AttributeValue] = {
        sc.EXCEPTION_TYPE: name if module == "builtins" else f"{module}.{name}"
    }
    description = name
    if rec.settings.captures(_CAPTURE_EXCEPTIONS):
        masking = rec
        if rec.settings.redact is None:  # exception text is never exported unmasked
            masking = Recorder(dataclasses.replace(rec.settings, redact=Redactor.default()))
            masking.fired, masking.truncated = rec.fired, rec.truncated
        message = event[_MESSAGE] = masking.text(_MESSAGE, safe_str(exc))
        description = f"{name}: {message}"
        event[_STACKTRACE] = masking.text(_STACKTRACE, "".join(traceback.format_exception(exc)))
        rec.fired, rec.truncated = masking.fired, masking.truncated
    span.set_status(Status(StatusCode.ERROR, description))
    span.add_event(sc.EXCEPTION_EVENT, event)
