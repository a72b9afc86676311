"""A loopback OTLP/HTTP logs endpoint for tests: decodes every ExportLogsServiceRequest.

It binds 127.0.0.1 on a free port, serves from a background thread and stops when the ``with``
block ends. ``records`` lists what arrived, one dict per log record (hex trace and span ids,
event name, attributes as Python values). ``status`` makes it refuse every request.

Usage::

    with OTLPLogsServer() as srv:
        export_otlp(verdicts, srv.url)
        assert srv.records[0]["event_name"] == "gen_ai.evaluation.result"
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)

__all__ = ["OTLPLogsServer"]


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    return None if kind is None else getattr(any_value, kind)


class OTLPLogsServer:
    """Records the log records POSTed to ``/v1/logs``."""

    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.records: list[dict[str, Any]] = []
        self.requests = 0
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with outer._lock:
                    outer.requests += 1
                if self.path != "/v1/logs" or outer.status != 200:
                    self.send_response(404 if self.path != "/v1/logs" else outer.status)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                request = ExportLogsServiceRequest.FromString(body)
                outer._add(request)
                reply = ExportLogsServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _add(self, request: ExportLogsServiceRequest) -> None:
        for resource_logs in request.resource_logs:
            resource = {a.key: _value(a.value) for a in resource_logs.resource.attributes}
            for scope_logs in resource_logs.scope_logs:
                for record in scope_logs.log_records:
                    row = {
                        "trace_id": record.trace_id.hex(),
                        "span_id": record.span_id.hex(),
                        "event_name": record.event_name,
                        "severity": record.severity_text,
                        "attributes": {a.key: _value(a.value) for a in record.attributes},
                        "resource": resource,
                        "scope": scope_logs.scope.name,
                    }
                    with self._lock:
                        self.records.append(row)

    @property
    def url(self) -> str:
        """Base URL (the exporter appends ``/v1/logs``)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> OTLPLogsServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
