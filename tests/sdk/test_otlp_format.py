"""The OTLP/JSON spellings shared by the SDK's file exporter and the receiver."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from groundtrace.sdk.otlp_format import (
    bytes_json,
    double_json,
    entry_json,
    put_attributes,
    resource_json,
    scope_json,
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.5, 0.5),
        (-0.0, -0.0),
        (1e300, 1e300),
        (float("nan"), "NaN"),
        (float("inf"), "Infinity"),
        (float("-inf"), "-Infinity"),
    ],
)
def test_a_double_is_its_number_or_the_protobuf_spelling(value: float, expected: object) -> None:
    got = double_json(value)
    assert got == expected and type(got) is type(expected)
    if isinstance(got, float):
        assert math.copysign(1.0, got) == math.copysign(1.0, value)
    json.dumps(got, allow_nan=False)  # always valid JSON


def test_bytes_are_padded_standard_base64() -> None:
    assert bytes_json(b"\x00\xff\xfe") == "AP/+"
    assert bytes_json(b"a") == "YQ=="
    assert bytes_json(b"") == ""


def test_scope_and_resource_write_only_what_is_set() -> None:
    attributes = [{"key": "k", "value": {"intValue": "1"}}]
    assert scope_json(None, None, []) == {}
    assert scope_json("", "", [], 0) == {}
    scope = scope_json("lib", "1.0", attributes, 2)
    assert list(scope.items()) == [
        ("name", "lib"),
        ("version", "1.0"),
        ("attributes", attributes),
        ("droppedAttributesCount", 2),
    ]
    assert resource_json([]) == {}
    assert resource_json(attributes, 1) == {"attributes": attributes, "droppedAttributesCount": 1}


def test_attributes_then_their_dropped_count_are_added_when_set() -> None:
    attributes = [{"key": "k", "value": {"boolValue": True}}]
    out: dict[str, object] = {"name": "s"}
    put_attributes(out, [], 0)
    assert out == {"name": "s"}
    put_attributes(out, attributes, 3)
    assert list(out.items()) == [
        ("name", "s"),
        ("attributes", attributes),
        ("droppedAttributesCount", 3),
    ]
    only_dropped: dict[str, object] = {}
    put_attributes(only_dropped, [], 2)
    assert only_dropped == {"droppedAttributesCount": 2}


def test_an_entry_holds_its_head_its_items_then_its_schema_url() -> None:
    entry = entry_json("scope", {"name": "lib"}, "spans", [{"name": "s"}], "https://example.org")
    assert list(entry) == ["scope", "spans", "schemaUrl"]
    assert entry_json("resource", {}, "scopeSpans", [], None) == {
        "resource": {},
        "scopeSpans": [],
    }
    assert "schemaUrl" not in entry_json("resource", {}, "scopeSpans", [], "")


def test_loading_it_loads_no_opentelemetry_nor_protobuf() -> None:
    """The receiver shares these spellings without loading the OpenTelemetry SDK."""
    code = (
        "import sys\n"
        "import groundtrace.sdk.otlp_format\n"
        "print(sorted(m for m in sys.modules if m.startswith(('opentelemetry', 'google'))))\n"
        "import groundtrace.collectors.receiver\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry.sdk')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.splitlines() == ["[]", "[]"]
