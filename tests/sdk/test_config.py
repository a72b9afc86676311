"""configure(): options, environment variables, precedence, defaults and fail-open behaviour."""

from __future__ import annotations

import logging
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GRPCExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HTTPExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, set_span_in_context

import groundtrace.sdk as gt
from groundtrace.sdk import _config, _runtime
from groundtrace.sdk import semconv as sc
from groundtrace.sdk._config import configure, export_stats, shutdown
from groundtrace.sdk.file_exporter import OTLPJsonFileExporter
from groundtrace.sdk.redaction import PatternMasker, Redactor

pytestmark = pytest.mark.usefixtures("clean_config")


def _spans_via(memory: InMemorySpanExporter, count: int = 3) -> None:
    tracer = _runtime.get_tracer()
    for i in range(count):
        with tracer.start_as_current_span(f"s{i}"):
            pass


def _exporters() -> list[object]:
    return [p.exporter for p in _config._OWNED.processors]


def test_service_name_and_version_on_resource() -> None:
    memory = InMemorySpanExporter()
    provider = configure(service_name="hotpot-rag", app_version="2026.11.1", exporter=memory)
    assert isinstance(provider, TracerProvider)
    _spans_via(memory)
    shutdown()
    spans = memory.get_finished_spans()
    assert len(spans) == 3
    assert spans[0].resource.attributes[sc.SERVICE_NAME] == "hotpot-rag"
    assert spans[0].resource.attributes[sc.SERVICE_VERSION] == "2026.11.1"
    assert export_stats().exported == 3


def test_env_service_name_and_version(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_SERVICE_NAME", "from-otel")
    monkeypatch.setenv("GROUNDTRACE_APP_VERSION", "9.9")
    memory = InMemorySpanExporter()
    configure(exporter=memory)
    _spans_via(memory, 1)
    shutdown()
    (span,) = memory.get_finished_spans()
    assert span.resource.attributes[sc.SERVICE_NAME] == "from-otel"
    assert span.resource.attributes[sc.SERVICE_VERSION] == "9.9"
    monkeypatch.setenv("GROUNDTRACE_SERVICE_NAME", "from-gt")  # wins over OTEL_SERVICE_NAME
    memory = InMemorySpanExporter()
    configure(exporter=memory)
    _spans_via(memory, 1)
    shutdown()
    assert memory.get_finished_spans()[0].resource.attributes[sc.SERVICE_NAME] == "from-gt"


def test_global_provider_untouched_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []
    monkeypatch.setattr(_config.trace, "set_tracer_provider", calls.append)
    before = trace.get_tracer_provider()
    provider = configure(exporter="none")
    assert calls == []
    assert trace.get_tracer_provider() is before
    assert _runtime.get_tracer() is not None
    provider = configure(exporter="none", set_global=True)
    assert calls == [provider]


def test_user_tracer_provider_is_used_and_left_running() -> None:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    assert configure(tracer_provider=provider) is provider
    assert _config._OWNED.processors == []  # no exporter added to the user's provider
    _spans_via(memory, 2)
    shutdown()
    _spans_via(memory, 1)  # the user's provider still works after our shutdown
    assert len(memory.get_finished_spans()) == 3


def test_user_provider_with_explicit_exporter(tmp_path: Path) -> None:
    provider = TracerProvider()
    configure(tracer_provider=provider, exporter="file", file_path=tmp_path / "t.jsonl")
    _spans_via(InMemorySpanExporter(), 2)
    shutdown()
    assert len((tmp_path / "t.jsonl").read_text().splitlines()) >= 1
    assert export_stats().exported == 2


@pytest.mark.parametrize(
    ("variable", "value"), [("GROUNDTRACE_ENABLED", "false"), ("OTEL_SDK_DISABLED", "true")]
)
def test_disabled_by_env(monkeypatch: pytest.MonkeyPatch, variable: str, value: str) -> None:
    monkeypatch.setenv(variable, value)
    assert configure(exporter="file") is None
    assert _runtime.settings().enabled is False
    assert _config._OWNED.processors == []


def test_disabled_decorators_call_straight_through() -> None:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    configure(enabled=False, tracer_provider=provider)

    @gt.retrieve
    def search(q: str) -> list[str]:
        return [q]

    assert search("x") == ["x"]
    assert memory.get_finished_spans() == ()


def test_capture_content_default_off_and_switches(monkeypatch: pytest.MonkeyPatch) -> None:
    configure(exporter="none")
    assert _runtime.settings().capture == frozenset()
    configure(exporter="none", capture_content=True)
    assert _runtime.settings().capture == _runtime.CONTENT_FIELDS
    configure(exporter="none", capture_content={"evidence", "answer"})
    assert _runtime.settings().capture == {"evidence", "answer"}
    monkeypatch.setenv("GROUNDTRACE_CAPTURE_CONTENT", "evidence, query")
    configure(exporter="none")
    assert _runtime.settings().capture == {"evidence", "query"}
    monkeypatch.setenv("GROUNDTRACE_CAPTURE_CONTENT", "true")
    configure(exporter="none")
    assert _runtime.settings().capture == _runtime.CONTENT_FIELDS
    configure(exporter="none", capture_content=False)  # the argument wins over the env var
    assert _runtime.settings().capture == frozenset()


def test_unknown_capture_field_warns_and_is_skipped(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("GROUNDTRACE_CAPTURE_CONTENT", "evidence,evidnce")
    with caplog.at_level(logging.WARNING, logger="groundtrace.sdk"):
        configure(exporter="none")
    assert _runtime.settings().capture == {"evidence"}
    assert "GROUNDTRACE_CAPTURE_CONTENT" in caplog.text
    assert "evidnce" in caplog.text


def test_size_limits_from_args_and_env(monkeypatch: pytest.MonkeyPatch) -> None:
    configure(exporter="none", max_attribute_length=100, max_evidence_items=3)
    assert _runtime.settings().max_attribute_length == 100
    assert _runtime.settings().max_evidence_items == 3
    monkeypatch.setenv("GROUNDTRACE_MAX_ATTRIBUTE_LENGTH", "2048")
    monkeypatch.setenv("GROUNDTRACE_MAX_EVIDENCE_ITEMS", "7")
    configure(exporter="none")
    assert _runtime.settings().max_attribute_length == 2048
    assert _runtime.settings().max_evidence_items == 7


@pytest.mark.parametrize(
    ("variable", "value", "check"),
    [
        ("GROUNDTRACE_MAX_ATTRIBUTE_LENGTH", "lots", lambda s: s.max_attribute_length == 32_768),
        ("GROUNDTRACE_MAX_EVIDENCE_ITEMS", "-4", lambda s: s.max_evidence_items == 100),
        ("GROUNDTRACE_ENABLED", "perhaps", lambda s: s.enabled is True),
        ("GROUNDTRACE_PROPAGATE_THREADS", "2", lambda s: s.propagate_threads is True),
        ("GROUNDTRACE_REDACT", "emails", lambda s: s.redact is not None),
    ],
)
def test_bad_env_values_warn_and_fall_back(
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    variable: str,
    value: str,
    check: object,
) -> None:
    monkeypatch.setenv(variable, value)
    with caplog.at_level(logging.WARNING, logger="groundtrace.sdk"):
        configure(exporter="none")
    assert callable(check) and check(_runtime.settings())
    assert variable in caplog.text


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("GROUNDTRACE_EXPORTER", "zipkin"),
        ("OTEL_TRACES_SAMPLER", "sometimes"),
        ("GROUNDTRACE_SAMPLE_RATIO", "1.5"),
        ("GROUNDTRACE_FILE_MAX_BYTES", "big"),
        ("OTEL_BSP_MAX_QUEUE_SIZE", "0"),
    ],
)
def test_bad_env_values_never_crash(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    memory = InMemorySpanExporter()
    with caplog.at_level(logging.WARNING, logger="groundtrace.sdk"):
        configure(exporter=["file", memory] if variable.startswith("GROUNDTRACE_F") else memory)
        if variable == "GROUNDTRACE_EXPORTER":
            configure()
    assert variable in caplog.text
    assert _runtime.settings().enabled


def test_sampling_ratio_zero_records_nothing_but_follows_sampled_parent() -> None:
    memory = InMemorySpanExporter()
    configure(exporter=memory, sample_ratio=0.0)
    tracer = _runtime.get_tracer()
    with tracer.start_as_current_span("new-trace"):
        pass
    parent = SpanContext(
        trace_id=0xABC, span_id=0xDEF, is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED)
    )
    with tracer.start_as_current_span(
        "child", context=set_span_in_context(NonRecordingSpan(parent))
    ):
        pass
    shutdown()
    assert [s.name for s in memory.get_finished_spans()] == ["child"]


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"OTEL_TRACES_SAMPLER": "always_off"}, 0),
        ({"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0"}, 0),
        ({"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "1"}, 4),
        ({"GROUNDTRACE_SAMPLE_RATIO": "0", "OTEL_TRACES_SAMPLER": "always_on"}, 0),
        ({}, 4),
    ],
)
def test_sampler_env(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], expected: int) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    memory = InMemorySpanExporter()
    configure(exporter=memory)
    _spans_via(memory, 4)
    shutdown()
    assert len(memory.get_finished_spans()) == expected


def test_redaction_on_by_default_and_configurable(monkeypatch: pytest.MonkeyPatch) -> None:
    configure(exporter="none")
    redact = _runtime.settings().redact
    assert redact is not None
    assert redact("mail bob@example.com") == ("mail [REDACTED:email]", ("email",))
    configure(exporter="none", redact=False)
    assert _runtime.settings().redact is None
    monkeypatch.setenv("GROUNDTRACE_REDACT", "email")
    configure(exporter="none")
    only_email = _runtime.settings().redact
    assert only_email is not None
    assert only_email("bob@example.com 123-45-6789") == ("[REDACTED:email] 123-45-6789", ("email",))
    ticket = PatternMasker("ticket", r"\bTCK-\d{6}\b")
    configure(exporter="none", maskers=[ticket])
    custom = _runtime.settings().redact
    assert custom is not None
    assert custom("TCK-123456 bob@example.com")[1] == ("email", "ticket")
    mine = Redactor([ticket])
    configure(exporter="none", redact=mine)
    assert _runtime.settings().redact is mine


def test_redaction_applies_to_captured_text() -> None:
    memory = InMemorySpanExporter()
    configure(exporter=memory, capture_content=True)

    @gt.request
    def handle(question: str) -> str:
        return "ok"

    handle("my card is 4111 1111 1111 1111, mail bob@example.com")
    shutdown()
    (span,) = memory.get_finished_spans()
    text = " ".join(str(v) for v in span.attributes.values())
    assert "4111 1111 1111 1111" not in text
    assert "bob@example.com" not in text
    assert "[REDACTED:credit_card]" in text
    assert set(span.attributes[sc.GT_REDACTED]) >= {"credit_card", "email"}  # type: ignore[arg-type]


def test_exporter_names_and_lists(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    memory = InMemorySpanExporter()
    configure(exporter=["file", memory], file_path=tmp_path / "t.jsonl")
    kinds = [type(e) for e in _exporters()]
    assert kinds == [OTLPJsonFileExporter, InMemorySpanExporter]
    _spans_via(memory, 2)
    shutdown()
    stats = export_stats()
    assert [s.name for s in stats.exporters] == ["file", "InMemorySpanExporter"]
    assert stats.exported == 4
    assert len(memory.get_finished_spans()) == 2
    monkeypatch.setenv("GROUNDTRACE_EXPORTER", "otlp_grpc,console")
    configure()
    assert [type(e).__name__ for e in _exporters()] == ["OTLPSpanExporter", "ConsoleSpanExporter"]
    assert isinstance(_exporters()[0], GRPCExporter)


def test_none_drops_named_exporters_but_keeps_instances(tmp_path: Path) -> None:
    memory = InMemorySpanExporter()
    configure(exporter=["file", memory, "none"], file_path=tmp_path / "t.jsonl")
    assert _exporters() == [memory]


def test_otlp_protocol_and_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    configure(exporter="otlp_http", endpoint="http://127.0.0.1:4318", headers={"x-k": "v"})
    (http,) = _exporters()
    assert isinstance(http, HTTPExporter)
    assert http._endpoint == "http://127.0.0.1:4318/v1/traces"
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "otlp")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    configure()
    assert isinstance(_exporters()[0], GRPCExporter)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:9999/custom")
    configure()
    (http,) = _exporters()
    assert isinstance(http, HTTPExporter)
    assert http._endpoint == "http://127.0.0.1:9999/custom"


class _Collector(BaseHTTPRequestHandler):
    received: ClassVar[list[tuple[str, dict[str, str], bytes]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.received.append((self.path, dict(self.headers.items()), body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_otlp_http_reaches_a_loopback_collector_with_headers() -> None:
    _Collector.received = []
    server = HTTPServer(("127.0.0.1", 0), _Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        configure(
            exporter="otlp_http",
            endpoint=f"http://127.0.0.1:{port}",
            headers={"x-tenant": "acme"},
            service_name="svc",
        )
        _spans_via(InMemorySpanExporter(), 2)
        shutdown()
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert export_stats().exported == 2
    (path, headers, body) = _Collector.received[0]
    assert path == "/v1/traces"
    assert {k.lower(): v for k, v in headers.items()}["x-tenant"] == "acme"
    request = ExportTraceServiceRequest.FromString(body)
    names = [s.name for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]
    assert names == ["s0", "s1"]


def test_default_exporter_is_otlp_http() -> None:
    configure()
    assert [type(e) for e in _exporters()] == [HTTPExporter]


def test_reconfigure_flushes_the_previous_exporters(tmp_path: Path) -> None:
    configure(exporter="file", file_path=tmp_path / "a.jsonl")
    _spans_via(InMemorySpanExporter(), 3)
    configure(exporter="file", file_path=tmp_path / "b.jsonl")
    assert (tmp_path / "a.jsonl").read_text().count('"spanId"') == 3
    assert export_stats().exported == 0  # counts restart with the new configuration


def test_configure_failure_disables_instead_of_raising(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(**_: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(_config, "_configure", broken)
    assert configure(exporter="none") is None
    assert _runtime.settings().enabled is False
