"""JSON attribute text: orjson for native data, the standard encoder for everything else."""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
from typing import Any

import pytest

from groundtrace.sdk._attributes import json_list, native_json, safe_json


@dataclasses.dataclass
class Point:
    x: int
    _hidden: int = 0


@dataclasses.dataclass(slots=True)
class Slotted:
    x: int


class Ratio(float):
    pass


def _standard(value: object) -> str:
    from groundtrace.sdk._attributes import _default

    return json.dumps(value, default=_default, ensure_ascii=False, separators=(",", ":"))


@pytest.mark.parametrize(
    "value",
    [
        {"q": 'Zürich ✓ "quoted" \n', "k": 5, "ok": True, "none": None, "f": 0.25},
        [1, "a", [2, {"b": []}]],
        ("tuple", 1),
        Point(1, 2),  # dataclass: the standard encoder's ``default`` (public fields)
        Slotted(3),
        datetime.datetime(2026, 1, 2, 3, 4, 5),  # str(dt), not orjson's RFC 3339
        {"big": 10**30},  # beyond 64 bits
        {1: "int key", 2.5: "float key"},
        {"s": "lone \ud800 surrogate"},
        [Ratio(0.5)],
        {"set": {1}},
    ],
)
def test_same_text_as_the_standard_encoder(value: Any) -> None:
    assert safe_json(value) == _standard(value)


def test_native_json_refuses_what_it_would_write_differently() -> None:
    for value in (Point(1), datetime.date(2026, 1, 1), 10**30, "\ud800", Ratio(1.0), {1: 2}):
        with pytest.raises(TypeError):
            native_json(value)
    assert native_json({"a": [1, 2.5, None]}) == '{"a":[1,2.5,null]}'


def test_non_finite_floats_become_null_and_stay_parseable() -> None:
    text = safe_json({"a": math.nan, "b": math.inf, "c": [-math.inf]})
    assert json.loads(text) == {"a": None, "b": None, "c": [None]}


def test_circular_values_fall_back_to_a_string() -> None:
    loop: list[Any] = []
    loop.append(loop)
    assert isinstance(json.loads(safe_json(loop)), str)


def test_json_list_matches_json_dumps() -> None:
    ids = ["d1", "é", 'q"uote', "\ud800"]
    assert json_list(ids) == json.dumps(ids, ensure_ascii=False)
    assert json_list([]) == "[]"
