"""``POST /v1/logs`` on the embedded receiver: log records stored beside the spans and joined
to them on read; and the official OTel GenAI openai instrumentation in its default mode
(content in log records) exported over OTLP/HTTP to the receiver, read back with content."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import openai
import pytest
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

from groundtrace.collectors import ReadReport, read_traces
from groundtrace.collectors.receiver import LOGS_PATH, TRACES_PATH, BodyDecodeError, Receiver
from groundtrace.collectors.receiver._otlp_logs import parse_json_logs
from tests.collectors.test_logs import (
    EVALUATION,
    MESSAGE_LOGS,
    SPAN,
    _check_joined,
    _logs_line,
    _spans_line,
)
from tests.support.instrumented import GENAI_PREVIOUS, MESSAGES, QUERY, handler, instrumented
from tests.support.openai_server import OpenAICompatServer

PROTO = "application/x-protobuf"
JSON = "application/json"


def _url(receiver: Receiver, path: str) -> str:
    return receiver.endpoint.replace(TRACES_PATH, path)


def test_logs_in_both_encodings_are_stored_and_joined(tmp_path: Path) -> None:
    logs = _logs_line([*MESSAGE_LOGS, EVALUATION])
    half = len(logs["resourceLogs"][0]["scopeLogs"][0]["logRecords"]) // 2
    first = json.loads(json.dumps(logs))
    first["resourceLogs"][0]["scopeLogs"][0]["logRecords"] = first["resourceLogs"][0]["scopeLogs"][
        0
    ]["logRecords"][:half]
    second = json.loads(json.dumps(logs))
    second["resourceLogs"][0]["scopeLogs"][0]["logRecords"] = second["resourceLogs"][0][
        "scopeLogs"
    ][0]["logRecords"][half:]
    with Receiver("127.0.0.1", 0, tmp_path / "out") as receiver, httpx.Client() as http:
        url = _url(receiver, LOGS_PATH)
        reply = http.post(url, content=json.dumps(first), headers={"content-type": JSON})
        assert (reply.status_code, reply.text) == (200, "{}")
        body = parse_json_logs(json.dumps(second).encode()).SerializeToString()
        reply = http.post(url, content=body, headers={"content-type": PROTO})
        assert reply.status_code == 200
        reply = http.post(
            receiver.endpoint, content=json.dumps(_spans_line()), headers={"content-type": JSON}
        )
        assert reply.status_code == 200
        bad = json.loads(json.dumps(first))
        bad["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]["spanId"] = "not-hex"
        reply = http.post(url, content=json.dumps(bad), headers={"content-type": JSON})
        assert reply.status_code == 400 and "spanId" in reply.text
        reply = http.post(_url(receiver, "/v1/metrics"), content=b"{}")
        assert reply.status_code == 404 and LOGS_PATH in reply.text
        stats = receiver.stats
    assert (stats.batches, stats.spans, stats.log_records) == (3, 1, 4)
    report = ReadReport()
    (trace,) = read_traces([tmp_path / "out"], report=report)
    assert report.ok, report.errors
    assert trace.evaluations[0].span_id == SPAN
    _check_joined(trace)


@pytest.mark.integration
def test_openai_v2_default_mode_content_in_log_records_reaches_the_trace(tmp_path: Path) -> None:
    """The official instrumentation's default: previous conventions, message content sent as
    log records. Spans and logs go over OTLP/HTTP to the receiver; τ has the content."""
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    with Receiver("127.0.0.1", 0, tmp_path / "out") as receiver:
        spans = OTLPSpanExporter(endpoint=receiver.endpoint)
        logs = OTLPLogExporter(endpoint=_url(receiver, LOGS_PATH))
        with (
            instrumented(OpenAIInstrumentor(), spans, GENAI_PREVIOUS, logs),  # type: ignore[no-untyped-call]
            OpenAICompatServer(handler=handler) as srv,
        ):
            client = openai.OpenAI(base_url=srv.base_url, api_key="test", max_retries=0)
            client.chat.completions.create(model="local-model", messages=MESSAGES)
        stats = receiver.stats
    assert stats.spans == 1 and stats.log_records >= 3
    report = ReadReport()
    (trace,) = read_traces([tmp_path / "out"], report=report)
    assert report.ok, report.errors
    (llm,) = trace.llm_calls
    assert [(m.role, m.content) for m in llm.messages] == [
        ("system", "Answer briefly."),
        ("user", QUERY),
    ]
    assert llm.output_text == "Steven Spielberg" and llm.finish_reasons == ("stop",)
    assert not trace.findings_of("content_not_captured")
    assert not trace.findings_of("orphan_log")


def test_a_non_hex_log_id_is_named_at_its_own_position() -> None:
    """The index counts every entry of the list, as the trace bodies' do (a non-object entry
    before the bad record does not shift it)."""
    records = [5, {"traceId": "zz"}]
    body = {"resourceLogs": [{"scopeLogs": [{"logRecords": records}]}]}
    with pytest.raises(BodyDecodeError) as info:
        parse_json_logs(json.dumps(body).encode())
    assert str(info.value) == (
        "resourceLogs[0].scopeLogs[0].logRecords[1].traceId: id 'zz' is not hex-encoded"
    )
