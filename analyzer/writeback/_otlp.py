"""Verdicts as OTel GenAI ``gen_ai.evaluation.result`` log records, exported over OTLP/HTTP.

Each verdict becomes one log record whose event name is ``gen_ai.evaluation.result``, whose
trace and span ids are those of the span evaluated (so a backend shows it on the original
trace) and whose attributes are ``gen_ai.evaluation.name``, ``.score.value``,
``.score.label``, ``gen_ai.evaluation.explanation`` (plus ``error.type`` when the evaluation
itself failed, and the groundtrace case / evidence id). The records go through the stock
OpenTelemetry OTLP/HTTP log exporter, called directly so that a refused export is an error.

Arize Phoenix takes OTLP traces but no OTLP logs (it answers 405 on ``/v1/logs``): when an
export fails, the endpoint is asked whether it is Phoenix, and if so the error says so and
names ``--write-back phoenix``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence

import httpx
from opentelemetry import trace
from opentelemetry._logs import LogRecord, SeverityNumber
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk._logs.export import LogRecordExportResult
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from groundtrace.analyzer.errors import WriteBackError
from groundtrace.sdk import __version__
from groundtrace.sdk import semconv as sc

from ._verdict import Verdict

__all__ = ["export_otlp", "log_record"]

#: Log records per export request.
BATCH = 512
#: Timeout of one export request (the exporter retries transient failures within it), seconds.
TIMEOUT_S = 30.0
#: The analyzer's service name on the exported resource.
SERVICE = "groundtrace-analyzer"
#: Instrumentation scope of the records.
SCOPE = "groundtrace.analyzer.writeback"
#: Timeout of the question whether a refusing endpoint is Arize Phoenix, seconds.
PROBE_TIMEOUT_S = 5.0
_VERSION = re.compile(r"\d+\.\d+(\.\d+)?[\w.+-]{0,20}")


def log_record(
    verdict: Verdict, resource: Resource, scope: InstrumentationScope
) -> ReadableLogRecord:
    """The ``gen_ai.evaluation.result`` log record of one verdict."""
    context = SpanContext(
        int(verdict.trace_id, 16), int(verdict.span_id, 16), is_remote=True,
        trace_flags=TraceFlags(TraceFlags.SAMPLED),
    )  # fmt: skip
    now = time.time_ns()
    record = LogRecord(
        timestamp=now,
        observed_timestamp=now,
        context=trace.set_span_in_context(NonRecordingSpan(context)),
        severity_number=SeverityNumber.INFO,
        severity_text="INFO",
        attributes=verdict.attributes(),
        event_name=sc.GENAI_EVENT_EVALUATION_RESULT,
    )
    return ReadableLogRecord(log_record=record, resource=resource, instrumentation_scope=scope)


def export_otlp(verdicts: Sequence[Verdict], endpoint: str) -> int:
    """Export the verdicts as log records to the OTLP/HTTP logs ``endpoint``.

    ``endpoint`` is the collector's base URL (``http://host:4318``) or the full logs URL
    (``.../v1/logs``).

    Returns:
        the number of records exported.

    Raises:
        WriteBackError: an export request failed (the exporter logs the reason).
    """
    url = endpoint.rstrip("/")
    if not url.endswith("/v1/logs"):
        url += "/v1/logs"
    resource = Resource.create({sc.SERVICE_NAME: SERVICE, sc.SERVICE_VERSION: __version__})
    scope = InstrumentationScope(SCOPE, __version__)
    exporter = OTLPLogExporter(endpoint=url, timeout=TIMEOUT_S)
    exported = 0
    try:
        for start in range(0, len(verdicts), BATCH):
            batch = [log_record(v, resource, scope) for v in verdicts[start : start + BATCH]]
            if exporter.export(batch) is not LogRecordExportResult.SUCCESS:
                phoenix = _phoenix_version(url.removesuffix("/v1/logs"))
                if phoenix is not None:
                    raise WriteBackError(
                        f"{url} is Arize Phoenix {phoenix}, which takes no OTLP logs: use "
                        f"--write-back phoenix --phoenix-url {url.removesuffix('/v1/logs')} "
                        f"(annotations in Phoenix's own views); {exported} record(s) exported"
                    )
                raise WriteBackError(
                    f"OTLP export of {len(batch)} evaluation record(s) to {url} failed "
                    f"({exported} exported before; the exporter's warning above says why)"
                )
            exported += len(batch)
    finally:
        exporter.shutdown()  # type: ignore[no-untyped-call]
    return exported


def _phoenix_version(base: str) -> str | None:
    """The Arize Phoenix version served at ``base``, ``None`` when it is not Phoenix."""
    try:
        response = httpx.get(f"{base}/arize_phoenix_version", timeout=PROBE_TIMEOUT_S)
    except httpx.HTTPError:
        return None
    version = response.text.strip()
    if response.status_code != 200 or _VERSION.fullmatch(version) is None:
        return None
    return version
