"""The embedded OTLP/HTTP receiver: the zero-setup capture endpoint.

Apps export with any OTLP/HTTP exporter (protobuf or JSON, optionally gzip) to
``http://127.0.0.1:4318/v1/traces`` (and log records, such as the GenAI events the official
instrumentations send as logs, to ``/v1/logs``); every accepted batch is written as one
OTLP-JSON line (the OpenTelemetry Collector file exporter's format) and fsync'd before the
200, so the file readers take the output directory as it is (and join the log records to
their spans).

Usage::

    from groundtrace.collectors.receiver import Receiver

    with Receiver("127.0.0.1", 4318, "traces/") as receiver:
        ...  # point OTEL_EXPORTER_OTLP_TRACES_ENDPOINT at receiver.endpoint

or from the shell: ``groundtrace collect serve --port 4318 --out traces/``.
"""

from __future__ import annotations

from ._otlp_json import (
    BodyDecodeError,
    parse_json_request,
    parse_protobuf_request,
    request_to_json_line,
    request_to_otlp_json,
    validate_request,
)
from ._receiver import (
    LOGS_PATH,
    TRACES_PATH,
    ExposedReceiverWarning,
    Receiver,
    ReceiverLimits,
    ReceiverStats,
    exposure_warning,
)
from ._store import FILE_PREFIX, FILE_SUFFIX, BatchStore, StoreStats, repair_torn_tail

__all__ = [
    "FILE_PREFIX",
    "FILE_SUFFIX",
    "LOGS_PATH",
    "TRACES_PATH",
    "BatchStore",
    "BodyDecodeError",
    "ExposedReceiverWarning",
    "Receiver",
    "ReceiverLimits",
    "ReceiverStats",
    "StoreStats",
    "exposure_warning",
    "parse_json_request",
    "parse_protobuf_request",
    "repair_torn_tail",
    "request_to_json_line",
    "request_to_otlp_json",
    "validate_request",
]
