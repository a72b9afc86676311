"""Stored traces into the user's stack: re-export trace files to any OTLP endpoint.

The stored exports are read whole (:func:`~groundtrace.collectors.readers.read_exports`), so
what is sent is what was stored: trace and span ids byte for byte, events, links, status,
kind, resource and scope. Only two resource attributes may change: ``service.name`` (when a
service is given) and Phoenix's project, ``openinference.project.name`` (when a project is
given). Spans are regrouped into requests of at most ``batch_spans`` spans, each resource
and scope kept with its spans.

A request answered 429, 502, 503 or 504 (gRPC: ``UNAVAILABLE`` and the other transient codes,
``RESOURCE_EXHAUSTED`` only with a retry delay), or not answered at all, is retried after
the server's ``Retry-After`` (gRPC: its ``RetryInfo``) or else an exponential backoff, at
most ``retries`` times, as the OTLP specification says; any other refusal fails its request
and the send goes on. When the endpoint cannot be reached after the retries, the rest is not
tried: every later request would wait the same way.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans

from groundtrace.sdk import semconv as sc

if TYPE_CHECKING:
    from opentelemetry.proto.trace.v1.trace_pb2 import Span

__all__ = ["Protocol", "SendReport", "send_exports"]

#: Retryable HTTP statuses (OTLP/HTTP specification).
RETRYABLE_HTTP: Final = frozenset({429, 502, 503, 504})
#: First backoff delay, doubled on each retry, seconds.
BACKOFF_S: Final = 0.5
#: Longest wait before one retry, whatever the server asks, seconds.
MAX_DELAY_S: Final = 60.0


class Protocol(StrEnum):
    """The OTLP transport."""

    HTTP = "http/protobuf"
    GRPC = "grpc"


@dataclass(slots=True)
class SendReport:
    """What a send did: spans sent, failed (refused, or rejected by a partial success) and
    not tried (the endpoint could not be reached), requests, retries and each failure."""

    requests: int = 0
    spans_sent: int = 0
    spans_failed: int = 0
    spans_not_tried: int = 0
    retries: int = 0
    failures: list[str] = field(default_factory=list)


class _Unreachable(Exception):
    """The endpoint could not be reached (after the retries)."""


@dataclass(frozen=True, slots=True)
class _Answer:
    """One attempt's outcome: done (with the spans the server rejected), or retry after
    ``delay`` (``None``: the backoff), or a refusal (``reason``)."""

    ok: bool
    rejected: int = 0
    retry: bool = False
    delay: float | None = None
    reason: str = ""
    #: no answer at all (connection refused, timed out...)
    unreachable: bool = False


def send_exports(
    exports: Iterable[ExportTraceServiceRequest],
    endpoint: str,
    *,
    protocol: Protocol = Protocol.HTTP,
    service: str | None = None,
    project: str | None = None,
    headers: Mapping[str, str] | None = None,
    batch_spans: int = 512,
    timeout: float = 10.0,
    retries: int = 5,
    sleep: Callable[[float], None] = time.sleep,
) -> SendReport:
    """Send the exports to the OTLP ``endpoint`` (a base URL such as
    ``http://host:4318``, or the full ``/v1/traces`` URL; for gRPC ``http(s)://host:4317``).

    Returns:
        what was sent and what failed (this function raises nothing for a refused request).
    """
    if batch_spans < 1:
        raise ValueError("batch_spans must be at least 1")
    report = SendReport()
    overrides = {sc.SERVICE_NAME: service, sc.OI_PROJECT_NAME: project}
    post = (_Grpc if protocol is Protocol.GRPC else _Http)(endpoint, dict(headers or {}), timeout)
    requests = _batches(exports, batch_spans, {k: v for k, v in overrides.items() if v})
    try:
        for request, spans in requests:
            try:
                _send_one(post, request, spans, report, retries, sleep)
            except _Unreachable as exc:
                report.failures.append(str(exc))
                report.spans_not_tried += spans + sum(n for _, n in requests)
    finally:
        post.close()
    return report


def _send_one(
    post: _Transport,
    request: ExportTraceServiceRequest,
    spans: int,
    report: SendReport,
    retries: int,
    sleep: Callable[[float], None],
) -> None:
    body = request.SerializeToString()
    report.requests += 1
    for attempt in range(retries + 1):
        answer = post.send(body)
        if answer.ok:
            report.spans_sent += spans - answer.rejected
            report.spans_failed += answer.rejected
            if answer.rejected:
                report.failures.append(f"{answer.rejected} span(s) rejected: {answer.reason}")
            return
        if not answer.retry or attempt == retries:
            if answer.unreachable:
                raise _Unreachable(f"{answer.reason} (after {attempt} retries)")
            report.spans_failed += spans
            report.failures.append(answer.reason + (f" (after {attempt} retries)" * answer.retry))
            return
        report.retries += 1
        backoff = BACKOFF_S * 2**attempt
        sleep(min(answer.delay if answer.delay is not None else backoff, MAX_DELAY_S))


def _batches(
    exports: Iterable[ExportTraceServiceRequest], size: int, overrides: Mapping[str, str]
) -> Iterator[tuple[ExportTraceServiceRequest, int]]:
    """Requests of at most ``size`` spans (each resource and scope with its spans), the
    resource attributes ``overrides`` set."""
    request = ExportTraceServiceRequest()
    count = 0
    for export in exports:
        for resource_spans in export.resource_spans:
            _override(resource_spans.resource, overrides)
            for scope_spans in resource_spans.scope_spans:
                spans = list(scope_spans.spans)
                start = 0
                while start < len(spans):
                    chunk = spans[start : start + size - count]
                    _append(request, resource_spans, scope_spans, chunk)
                    count += len(chunk)
                    start += len(chunk)
                    if count == size:
                        yield request, count
                        request, count = ExportTraceServiceRequest(), 0
    if count:
        yield request, count


def _append(
    request: ExportTraceServiceRequest,
    resource_spans: ResourceSpans,
    scope_spans: ScopeSpans,
    spans: list[Span],
) -> None:
    out = request.resource_spans[-1] if request.resource_spans else None
    if out is None or out.resource != resource_spans.resource:
        out = request.resource_spans.add(
            resource=resource_spans.resource, schema_url=resource_spans.schema_url
        )
    last = out.scope_spans[-1] if out.scope_spans else None
    if last is None or last.scope != scope_spans.scope or last.schema_url != scope_spans.schema_url:
        last = out.scope_spans.add(scope=scope_spans.scope, schema_url=scope_spans.schema_url)
    last.spans.extend(spans)


def _override(resource: Resource, values: Mapping[str, str]) -> None:
    for key, value in values.items():
        kept = [kv for kv in resource.attributes if kv.key != key]
        del resource.attributes[:]
        resource.attributes.extend([*kept, KeyValue(key=key, value=AnyValue(string_value=value))])


class _Transport:
    """Sends one serialised request; closes its connection."""

    def send(self, body: bytes) -> _Answer:  # pragma: no cover - interface
        raise NotImplementedError

    def close(self) -> None:  # pragma: no cover - interface
        raise NotImplementedError


class _Http(_Transport):
    def __init__(self, endpoint: str, headers: dict[str, str], timeout: float) -> None:
        import httpx

        url = endpoint.rstrip("/")
        self.url = url if url.endswith("/v1/traces") else url + "/v1/traces"
        self.client = httpx.Client(
            timeout=timeout, headers={**headers, "Content-Type": "application/x-protobuf"}
        )

    def send(self, body: bytes) -> _Answer:
        import httpx

        try:
            response = self.client.post(self.url, content=body)
        except httpx.HTTPError as exc:
            reason = f"{self.url}: {exc or type(exc).__name__}"
            return _Answer(False, retry=True, reason=reason, unreachable=True)
        status = response.status_code
        if 200 <= status < 300:
            return _rejected(response.content)
        reason = f"{self.url} answered {status}: {response.text.strip()[:200]}"
        if status in RETRYABLE_HTTP:
            return _Answer(False, retry=True, delay=_retry_after(response.headers), reason=reason)
        return _Answer(False, reason=reason)

    def close(self) -> None:
        self.client.close()


class _Grpc(_Transport):
    _RETRYABLE: Final = ("UNAVAILABLE", "CANCELLED", "DEADLINE_EXCEEDED", "ABORTED")

    def __init__(self, endpoint: str, headers: dict[str, str], timeout: float) -> None:
        import grpc  # type: ignore[import-untyped]
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2_grpc import (
            TraceServiceStub,
        )

        parts = urlsplit(endpoint if "//" in endpoint else f"//{endpoint}")
        self.target = parts.netloc
        if parts.scheme == "https":
            self.channel = grpc.secure_channel(self.target, grpc.ssl_channel_credentials())
        else:
            self.channel = grpc.insecure_channel(self.target)
        self.export = TraceServiceStub(self.channel).Export  # type: ignore[no-untyped-call]
        self.metadata = [(k.lower(), v) for k, v in headers.items()]
        self.timeout = timeout

    def send(self, body: bytes) -> _Answer:
        import grpc

        try:
            response = self.export(
                ExportTraceServiceRequest.FromString(body),
                timeout=self.timeout,
                metadata=self.metadata,
            )
        except grpc.RpcError as exc:
            code = exc.code() if isinstance(exc, grpc.Call) else None
            name = code.name if code is not None else "UNKNOWN"
            detail = exc.details() if isinstance(exc, grpc.Call) else str(exc)
            reason = f"{self.target} answered {name}: {detail}"
            delay = _retry_info(exc)
            if name == "UNAVAILABLE":
                return _Answer(False, retry=True, delay=delay, reason=reason, unreachable=True)
            if name in self._RETRYABLE or (name == "RESOURCE_EXHAUSTED" and delay is not None):
                return _Answer(False, retry=True, delay=delay, reason=reason)
            return _Answer(False, reason=reason)
        return _rejected(response.SerializeToString())

    def close(self) -> None:
        self.channel.close()


def _rejected(body: bytes) -> _Answer:
    """A success, with the spans its partial success says were rejected."""
    response = ExportTraceServiceResponse()
    try:
        response.ParseFromString(body)
    except (DecodeError, ValueError):  # not a protobuf answer: a success all the same
        return _Answer(True)
    partial = response.partial_success
    return _Answer(True, rejected=partial.rejected_spans, reason=partial.error_message)


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """The ``Retry-After`` delay in seconds (a number or an HTTP date), ``None`` if absent."""
    value = headers.get("retry-after", "").strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _retry_info(exc: object) -> float | None:
    """The delay of a gRPC error's ``RetryInfo`` detail, ``None`` if it has none."""
    trailing = getattr(exc, "trailing_metadata", None)
    if trailing is None:
        return None
    from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]

    for key, value in trailing() or ():
        if key != "grpc-status-details-bin":
            continue
        status = status_pb2.Status.FromString(value)
        for detail in status.details:
            info = error_details_pb2.RetryInfo()
            if detail.Unpack(info):
                delay = info.retry_delay
                return float(delay.seconds) + float(delay.nanos) / 1e9
    return None
