"""The OTLP/JSON spellings shared by every groundtrace writer of the format.

Two writers produce the OpenTelemetry Collector file exporter's lines (one export request per
line, in the OTLP/JSON encoding): the SDK's file exporter, from SDK spans
(:mod:`groundtrace.sdk.file_exporter`), and the collectors' receiver, from the protobuf
requests apps send it (:mod:`groundtrace.collectors.receiver`). They walk different inputs
(SDK objects, protobuf messages), so each keeps its own walk of a span; what the format itself
spells is here, once: doubles JSON has no number for, bytes, encoded attributes with their
dropped count, the instrumentation scope and resource objects, and the resource/scope entries
of a request with their ``schemaUrl``. (Each walk encodes an attribute *value* itself: a
Python value in the SDK, a protobuf ``AnyValue`` in the receiver.)

Standard library only: importing this module loads neither the OpenTelemetry SDK nor protobuf.

Usage::

    from groundtrace.sdk.otlp_format import double_json, entry_json, scope_json

    attributes = [{"key": "score", "value": {"doubleValue": double_json(float("nan"))}}]
    scope = scope_json("lib", "1.0", attributes)
    entry = entry_json("scope", scope, "spans", [], schema_url="https://example.org/s")
    # {"scope": {"name": "lib", "version": "1.0", "attributes": [...]}, "spans": [],
    #  "schemaUrl": "https://example.org/s"}; the double is written "NaN"
"""

from __future__ import annotations

import base64
import math
from typing import Any

__all__ = [
    "bytes_json",
    "double_json",
    "entry_json",
    "put_attributes",
    "resource_json",
    "scope_json",
]


def double_json(value: float) -> float | str:
    """``value`` as an OTLP/JSON ``doubleValue``: the number itself when it is finite, else
    the protobuf JSON mapping's ``"NaN"``, ``"Infinity"`` or ``"-Infinity"`` (JSON has no
    number for them)."""
    if math.isfinite(value):
        return value
    if math.isnan(value):
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity"


def bytes_json(value: bytes) -> str:
    """``value`` as an OTLP/JSON ``bytesValue``: standard base64 with padding (ids are not
    bytes values: they are written as hex by the walks)."""
    return base64.b64encode(value).decode("ascii")


def put_attributes(out: dict[str, Any], attributes: list[dict[str, Any]], dropped: int) -> None:
    """Add the already encoded ``attributes`` (``{"key", "value"}`` objects) of a span, event,
    link, log record, scope or resource to its object ``out``, then its
    ``droppedAttributesCount``; each only when set."""
    if attributes:
        out["attributes"] = attributes
    if dropped:
        out["droppedAttributesCount"] = dropped


def resource_json(attributes: list[dict[str, Any]], dropped: int = 0) -> dict[str, Any]:
    """A ``Resource`` object from its already encoded ``attributes`` and its number of dropped
    attributes; each field only when set."""
    out: dict[str, Any] = {}
    put_attributes(out, attributes, dropped)
    return out


def scope_json(
    name: str | None, version: str | None, attributes: list[dict[str, Any]], dropped: int = 0
) -> dict[str, Any]:
    """An ``InstrumentationScope`` object: ``name``, ``version``, the already encoded
    ``attributes`` and the number of dropped ones, each only when set."""
    out: dict[str, Any] = {}
    if name:
        out["name"] = name
    if version:
        out["version"] = version
    put_attributes(out, attributes, dropped)
    return out


def entry_json(
    head_key: str, head: dict[str, Any], items_key: str, items: list[Any], schema_url: str | None
) -> dict[str, Any]:
    """One entry of a request's ``resourceSpans`` (``head_key="resource"``, ``items_key=
    "scopeSpans"``) or of a ``scopeSpans`` (``"scope"``, ``"spans"``), likewise for logs:
    ``{head_key: head, items_key: items}``, then ``schemaUrl`` when there is one."""
    out: dict[str, Any] = {head_key: head, items_key: items}
    if schema_url:
        out["schemaUrl"] = schema_url
    return out
