"""What a failed step or instrumented call records: error type, status and exception event.

Decorators and instrumentors record exceptions alike, through :func:`record_exception`: the
status description and the ``exception`` event carry the exception's type; its message and
traceback are content, recorded (masked and clipped, like every captured text) only when some
content field is captured. OpenTelemetry's own ``Span.record_exception`` is never used: it
writes the message and the traceback as they are.
"""

from __future__ import annotations

import traceback
from typing import Final

from opentelemetry.trace import Span, Status, StatusCode

from . import semconv as sc
from ._attributes import safe_str
from ._record import AttributeValue, Recorder

__all__ = ["record_exception"]

_MESSAGE: Final = sc.EXCEPTION_MESSAGE
_STACKTRACE: Final = sc.EXCEPTION_STACKTRACE


def record_exception(span: Span, rec: Recorder, exc: BaseException) -> None:
    """Record ``exc`` on ``span``: ``error.type`` (among ``rec``'s attributes), an error
    status and an ``exception`` event, the message and traceback masked through ``rec``."""
    name = type(exc).__qualname__
    rec.attrs[sc.ERROR_TYPE] = name
    module = type(exc).__module__
    event: dict[str, AttributeValue] = {
        sc.EXCEPTION_TYPE: name if module == "builtins" else f"{module}.{name}"
    }
    description = name
    if rec.settings.captures_any():
        message = event[_MESSAGE] = rec.text(_MESSAGE, safe_str(exc))
        description = f"{name}: {message}"
        event[_STACKTRACE] = rec.text(_STACKTRACE, "".join(traceback.format_exception(exc)))
    span.set_status(Status(StatusCode.ERROR, description))
    span.add_event(sc.EXCEPTION_EVENT, event)
