"""Exporter names -> OpenTelemetry span exporters.

Names (``configure(exporter=...)`` / ``GROUNDTRACE_EXPORTER`` / ``OTEL_TRACES_EXPORTER``):

* ``otlp_http`` -- OTLP over HTTP/protobuf (default endpoint ``http://localhost:4318/v1/traces``);
* ``otlp_grpc`` -- OTLP over gRPC (default endpoint ``localhost:4317``);
* ``otlp`` -- one of the two, chosen by ``OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`` /
  ``OTEL_EXPORTER_OTLP_PROTOCOL`` (``grpc`` or ``http/protobuf``, default ``http/protobuf``);
* ``file`` -- OTLP-JSON lines (:class:`~groundtrace.sdk.file_exporter.OTLPJsonFileExporter`);
* ``console`` -- human-readable spans on stdout (debugging);
* ``none`` -- no exporter.

The OTLP exporters read the standard ``OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT``, ``_HEADERS``,
``_TIMEOUT``, ``_COMPRESSION``, ``_CERTIFICATE`` and ``_INSECURE`` variables themselves; an
explicit ``endpoint`` / ``headers`` given to ``configure()`` wins over them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Final
from urllib.parse import urlsplit

from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SpanExporter

from ._env import OTEL_EXPORTER_OTLP_PROTOCOL, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, env_str, warn_bad
from ._runtime import logger
from .file_exporter import OTLPJsonFileExporter

__all__ = ["CONNECTED_EXPORTERS", "EXPORTER_NAMES", "build_exporter", "normalize_exporter_names"]

#: The exporter names accepted after alias resolution.
EXPORTER_NAMES: Final = ("otlp_http", "otlp_grpc", "file", "console", "none")
#: Exporters that hold a connection: a forked child builds its own (the parent's open
#: keep-alive connection or gRPC channel shared by two processes would mix their requests).
CONNECTED_EXPORTERS: Final = frozenset({"otlp_http", "otlp_grpc"})

_ALIASES: Final = {
    "otlp_proto_http": "otlp_http",
    "http/protobuf": "otlp_http",
    "http": "otlp_http",
    "otlp_proto_grpc": "otlp_grpc",
    "grpc": "otlp_grpc",
    "otlp_json": "file",
    "jsonl": "file",
}
_HTTP_TRACES_PATH: Final = "/v1/traces"


def _otlp_from_protocol() -> str:
    for variable in (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, OTEL_EXPORTER_OTLP_PROTOCOL):
        protocol = env_str(variable)
        if protocol is None:
            continue
        if protocol == "grpc":
            return "otlp_grpc"
        if protocol in ("http/protobuf", "http/json"):
            if protocol == "http/json":
                warn_bad(variable, protocol, "grpc or http/protobuf", "http/protobuf")
            return "otlp_http"
        warn_bad(variable, protocol, "grpc or http/protobuf", "http/protobuf")
        return "otlp_http"
    return "otlp_http"


def normalize_exporter_names(names: Iterable[str], source: str) -> list[str]:
    """Resolve aliases, drop duplicates and unknown names (with a warning naming ``source``).

    ``none`` anywhere in the list means no exporter at all.
    """
    resolved: list[str] = []
    for raw in names:
        name = raw.strip().lower()
        if not name:
            continue
        name = _otlp_from_protocol() if name == "otlp" else _ALIASES.get(name, name)
        if name not in EXPORTER_NAMES:
            warn_bad(source, raw, "one of " + ", ".join((*EXPORTER_NAMES, "otlp")), "skipped")
            continue
        if name not in resolved:
            resolved.append(name)
    if "none" in resolved:
        return []
    return resolved


def _http_traces_url(endpoint: str) -> str:
    path = urlsplit(endpoint).path
    if path.rstrip("/").endswith(_HTTP_TRACES_PATH):
        return endpoint
    return endpoint.rstrip("/") + _HTTP_TRACES_PATH


def build_exporter(
    name: str,
    *,
    endpoint: str | None = None,
    headers: Mapping[str, str] | None = None,
    file_path: str | os.PathLike[str] = "groundtrace-traces/",
    file_max_bytes: int = 0,
    file_backup_count: int = 5,
) -> SpanExporter | None:
    """Build the exporter called ``name`` (already normalised); None if it cannot be built.

    For ``otlp_http`` an explicit ``endpoint`` may be a base URL (``http://host:4318``): the
    ``/v1/traces`` path is appended unless already present.
    """
    try:
        if name == "otlp_http":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
                OTLPSpanExporter as HTTPExporter,
            )

            return HTTPExporter(
                endpoint=_http_traces_url(endpoint) if endpoint else None,
                headers=dict(headers) if headers else None,
            )
        if name == "otlp_grpc":
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
                OTLPSpanExporter as GRPCExporter,
            )

            return GRPCExporter(endpoint=endpoint, headers=dict(headers) if headers else None)
        if name == "file":
            return OTLPJsonFileExporter(
                file_path, max_bytes=file_max_bytes, backup_count=file_backup_count
            )
        if name == "console":
            return ConsoleSpanExporter()
    except Exception:
        logger.warning("groundtrace: could not create the %r exporter", name, exc_info=True)
    return None
