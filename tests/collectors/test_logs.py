"""OTLP log records: read from OTLP/JSON and protobuf files, joined to their spans as events,
GenAI message events and ``gen_ai.evaluation.result`` read into τ; what cannot be joined is
reported."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from google.protobuf.internal.encoder import _VarintBytes
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord as ProtoLogRecord

from groundtrace.collectors import (
    ReadReport,
    Trace,
    build_traces,
    read_spans,
    read_traces,
)
from groundtrace.collectors.receiver import parse_json_request
from groundtrace.sdk import semconv as sc

TRACE = "0af7651916cd43dd8448eb211c80319c"
SPAN = "b7ad6b7169203331"


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def _spans_line() -> dict[str, Any]:
    span = {
        "traceId": TRACE,
        "spanId": SPAN,
        "name": "chat m",
        "kind": 3,
        "startTimeUnixNano": "1000",
        "endTimeUnixNano": "2000",
        "attributes": [
            _attr(sc.GENAI_OPERATION_NAME, "chat"),
            _attr(sc.GENAI_SYSTEM, "openai"),
            _attr(sc.GENAI_REQUEST_MODEL, "m"),
            _attr(sc.GENAI_RESPONSE_ID, "chatcmpl-1"),
        ],
    }
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": [span]}]}]}


def _log(
    name: str | None,
    body: Any = None,
    attributes: list[dict[str, Any]] | None = None,
    span_id: str | None = SPAN,
    time: int = 1500,
    old_style: bool = False,
) -> dict[str, Any]:
    record: dict[str, Any] = {"timeUnixNano": str(time), "attributes": attributes or []}
    if name is not None and old_style:
        record["attributes"].append(_attr(sc.EVENT_NAME, name))
    elif name is not None:
        record["eventName"] = name
    if body is not None:
        record["body"] = body
    if span_id is not None:
        record["traceId"] = TRACE
        record["spanId"] = span_id
    return record


def _kv(**items: Any) -> dict[str, Any]:
    values = []
    for key, value in items.items():
        if isinstance(value, dict):
            values.append({"key": key, "value": _kv(**value)})
        else:
            values.append({"key": key, "value": {"stringValue": value}})
    return {"kvlistValue": {"values": values}}


def _logs_line(records: list[dict[str, Any]]) -> dict[str, Any]:
    return {"resourceLogs": [{"resource": {}, "scopeLogs": [{"scope": {}, "logRecords": records}]}]}


def _evaluation(**attrs: Any) -> dict[str, Any]:
    return _log(
        sc.GENAI_EVENT_EVALUATION_RESULT, attributes=[_attr(k, v) for k, v in attrs.items()]
    )


MESSAGE_LOGS = [
    _log(sc.GENAI_EVENT_SYSTEM_MESSAGE, _kv(content="Answer briefly."), time=1100),
    _log(sc.GENAI_EVENT_USER_MESSAGE, _kv(content="Who directed Jaws?"), time=1200, old_style=True),
    _log(
        sc.GENAI_EVENT_CHOICE,
        _kv(finish_reason="stop", message={"role": "assistant", "content": "Steven Spielberg"}),
        time=1900,
    ),
]
EVALUATION = _evaluation(
    **{
        sc.GENAI_EVALUATION_NAME: "faithfulness",
        sc.GENAI_EVALUATION_SCORE_VALUE: 0.75,
        sc.GENAI_EVALUATION_SCORE_LABEL: "pass",
        sc.GENAI_EVALUATION_EXPLANATION: "cites d1",
        sc.GENAI_RESPONSE_ID: "chatcmpl-1",
    }
)


def _write(path: Path, *objects: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objects), encoding="utf-8")
    return path


def _check_joined(trace: Trace) -> None:
    (llm,) = trace.llm_calls
    assert [(m.role, m.content) for m in llm.messages] == [
        ("system", "Answer briefly."),
        ("user", "Who directed Jaws?"),
    ]
    assert llm.output_text == "Steven Spielberg" and llm.finish_reasons == ("stop",)
    assert not trace.findings_of("content_not_captured")
    (evaluation,) = trace.evaluations
    assert (evaluation.span_id, evaluation.name, evaluation.score_value) == (
        SPAN,
        "faithfulness",
        0.75,
    )
    assert (evaluation.score_label, evaluation.explanation, evaluation.response_id) == (
        "pass",
        "cites d1",
        "chatcmpl-1",
    )


def test_json_log_records_before_or_after_their_span_are_joined(tmp_path: Path) -> None:
    for order in ("logs first", "spans first"):
        lines = [_logs_line([*MESSAGE_LOGS, EVALUATION]), _spans_line()]
        if order == "spans first":
            lines.reverse()
        report = ReadReport()
        (trace,) = read_traces([_write(tmp_path / "mixed.jsonl", *lines)], report=report)
        assert report.ok, report.errors
        assert (report.spans, report.log_records) == (1, 4)
        _check_joined(trace)


def test_logs_in_their_own_file_are_joined_and_read_spans_leaves_them_out(tmp_path: Path) -> None:
    spans = _write(tmp_path / "a-spans.jsonl", _spans_line())
    logs = _write(tmp_path / "b-logs.jsonl", _logs_line([*MESSAGE_LOGS, EVALUATION]))
    (trace,) = read_traces([tmp_path])
    _check_joined(trace)
    report = ReadReport()
    assert [s.span_id for s in read_spans([spans, logs], report=report)] == [SPAN]
    assert report.log_records == 4


def test_an_evaluation_record_sent_again_is_read_once_and_a_changed_one_kept(
    tmp_path: Path,
) -> None:
    again = {**EVALUATION, "timeUnixNano": "2500"}  # a rerun: same record, later
    changed = _evaluation(
        **{sc.GENAI_EVALUATION_NAME: "faithfulness", sc.GENAI_EVALUATION_SCORE_VALUE: 0.5}
    )
    message = MESSAGE_LOGS[1]
    lines = [
        _spans_line(),
        _logs_line([EVALUATION, message]),
        _logs_line([again, message, changed]),
    ]
    report = ReadReport()
    (trace,) = read_traces([_write(tmp_path / "rerun.jsonl", *lines)], report=report)
    assert report.ok and report.log_records == 5
    assert [(e.name, e.score_value) for e in trace.evaluations] == [
        ("faithfulness", 0.75),
        ("faithfulness", 0.5),
    ]
    (llm,) = trace.llm_calls  # other events are not deduplicated: a message may repeat
    assert [m.content for m in llm.messages] == ["Who directed Jaws?", "Who directed Jaws?"]


def _proto_frames() -> bytes:
    spans = ExportTraceServiceRequest()
    parse = parse_json_request(json.dumps(_spans_line()).encode())
    spans.CopyFrom(parse)
    logs = ExportLogsServiceRequest()
    scope = logs.resource_logs.add().scope_logs.add()
    for name, body in (
        (sc.GENAI_EVENT_SYSTEM_MESSAGE, "Answer briefly."),
        (sc.GENAI_EVENT_USER_MESSAGE, "Who directed Jaws?"),
    ):
        record: ProtoLogRecord = scope.log_records.add()
        record.time_unix_nano = 1100
        record.trace_id = bytes.fromhex(TRACE)
        record.span_id = bytes.fromhex(SPAN)
        record.event_name = name
        record.body.kvlist_value.values.append(
            KeyValue(key="content", value=AnyValue(string_value=body))
        )
    choice = scope.log_records.add()
    choice.trace_id, choice.span_id = bytes.fromhex(TRACE), bytes.fromhex(SPAN)
    choice.event_name = sc.GENAI_EVENT_CHOICE
    message = AnyValue()
    message.kvlist_value.values.extend(
        [
            KeyValue(key="role", value=AnyValue(string_value="assistant")),
            KeyValue(key="content", value=AnyValue(string_value="Steven Spielberg")),
        ]
    )
    choice.body.kvlist_value.values.extend(
        [
            KeyValue(key="finish_reason", value=AnyValue(string_value="stop")),
            KeyValue(key="message", value=message),
        ]
    )
    evaluation = scope.log_records.add()
    evaluation.trace_id, evaluation.span_id = bytes.fromhex(TRACE), bytes.fromhex(SPAN)
    evaluation.event_name = sc.GENAI_EVENT_EVALUATION_RESULT
    for key, value in (
        (sc.GENAI_EVALUATION_NAME, AnyValue(string_value="faithfulness")),
        (sc.GENAI_EVALUATION_SCORE_VALUE, AnyValue(double_value=0.75)),
        (sc.GENAI_EVALUATION_SCORE_LABEL, AnyValue(string_value="pass")),
        (sc.GENAI_EVALUATION_EXPLANATION, AnyValue(string_value="cites d1")),
        (sc.GENAI_RESPONSE_ID, AnyValue(string_value="chatcmpl-1")),
    ):
        evaluation.attributes.append(KeyValue(key=key, value=value))
    unjoinable = scope.log_records.add()
    unjoinable.event_name = sc.GENAI_EVENT_USER_MESSAGE
    out = b""
    for message_bytes in (logs.SerializeToString(), spans.SerializeToString()):
        out += _VarintBytes(len(message_bytes)) + message_bytes
    return out


def test_protobuf_logs_messages_are_told_from_trace_messages(tmp_path: Path) -> None:
    path = tmp_path / "mixed.pb"
    path.write_bytes(_proto_frames())
    report = ReadReport()
    (trace,) = read_traces([path], report=report)
    _check_joined(trace)
    (error,) = report.errors  # the record without ids: reported with the message index
    assert error.line == 1 and "cannot be joined" in str(error)
    assert "log_records[4]" in str(error.field)


def test_unjoinable_and_orphan_log_records_are_reported(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "x.jsonl",
        _spans_line(),
        _logs_line(
            [
                _log(sc.GENAI_EVENT_USER_MESSAGE, _kv(content="no ids"), span_id=None),
                _log(sc.GENAI_EVENT_CHOICE, _kv(content="lost"), span_id="00000000000000aa"),
            ]
        ),
    )
    report = ReadReport()
    (trace,) = read_traces([path], report=report)
    (error,) = report.errors
    assert (error.path, error.line) == (str(path), 2)
    assert error.field == "resourceLogs[0].scopeLogs[0].logRecords[0]"
    (orphan,) = trace.findings_of("orphan_log")
    assert orphan.span_id == "00000000000000aa" and orphan.location == f"{path}:2"
    assert sc.GENAI_EVENT_CHOICE in orphan.message


def test_log_records_of_a_trace_without_spans_become_a_trace_saying_so(tmp_path: Path) -> None:
    path = _write(tmp_path / "logs.jsonl", _logs_line(MESSAGE_LOGS))
    (trace,) = read_traces([path])
    assert trace.trace_id == TRACE and trace.steps == ()
    assert [f.kind for f in trace.findings] == ["no_root", "orphan_log", "orphan_log", "orphan_log"]


def test_an_evaluation_span_event_is_read_and_a_nameless_one_reported(tmp_path: Path) -> None:
    line = _spans_line()
    span = line["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    span["events"] = [
        {
            "name": sc.GENAI_EVENT_EVALUATION_RESULT,
            "timeUnixNano": "1950",
            "attributes": [
                _attr(sc.GENAI_EVALUATION_NAME, "relevance"),
                _attr(sc.GENAI_EVALUATION_SCORE_LABEL, "relevant"),
            ],
        },
        {
            "name": sc.GENAI_EVENT_EVALUATION_RESULT,
            "timeUnixNano": "1960",
            "attributes": [_attr(sc.GENAI_EVALUATION_SCORE_VALUE, "high")],
        },
    ]
    (trace,) = read_traces([_write(tmp_path / "e.jsonl", line)])
    (evaluation,) = trace.evaluations
    assert (evaluation.name, evaluation.score_label, evaluation.score_value) == (
        "relevance",
        "relevant",
        None,
    )
    (bad,) = trace.findings_of("bad_attribute_type")
    assert bad.field == sc.GENAI_EVALUATION_NAME and bad.span_id == SPAN


def test_build_traces_takes_spans_and_log_records_from_any_source(tmp_path: Path) -> None:
    path = _write(tmp_path / "all.jsonl", _logs_line([*MESSAGE_LOGS, EVALUATION]), _spans_line())
    from groundtrace.collectors.readers import read_records

    (trace,) = build_traces(read_records([path]))
    _check_joined(trace)


def test_the_current_operation_details_event_as_a_log_record_with_structured_values(
    tmp_path: Path,
) -> None:
    """The current conventions' one event: messages in structured (not JSON-text) values."""

    def parts(role: str, text: str) -> dict[str, Any]:
        part = _kv(type="text", content=text)
        return {
            "kvlistValue": {
                "values": [
                    {"key": "role", "value": {"stringValue": role}},
                    {"key": "parts", "value": {"arrayValue": {"values": [part]}}},
                ]
            }
        }

    details = _log(
        sc.GENAI_EVENT_OPERATION_DETAILS,
        attributes=[
            {
                "key": sc.GENAI_INPUT_MESSAGES,
                "value": {"arrayValue": {"values": [parts("user", "Who directed Jaws?")]}},
            },
            {
                "key": sc.GENAI_OUTPUT_MESSAGES,
                "value": {"arrayValue": {"values": [parts("assistant", "Steven Spielberg")]}},
            },
        ],
    )
    path = _write(tmp_path / "d.jsonl", _spans_line(), _logs_line([details]))
    (trace,) = read_traces([path])
    (llm,) = trace.llm_calls
    assert [(m.role, m.content) for m in llm.messages] == [("user", "Who directed Jaws?")]
    assert llm.output_text == "Steven Spielberg"
