"""The trace model's fast constructors behave like the dataclass-generated ones."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from groundtrace.collectors import model
from groundtrace.collectors._model_init import fast_init

_CLASSES = [getattr(model, n) for n in model.__all__ if dataclasses.is_dataclass(getattr(model, n))]


@pytest.mark.parametrize("cls", _CLASSES, ids=lambda c: c.__name__)
def test_signature_matches_the_fields(cls: type) -> None:
    params = list(inspect.signature(cls).parameters.values())
    fields = dataclasses.fields(cls)
    assert [p.name for p in params] == [f.name for f in fields]
    for p, f in zip(params, fields, strict=True):
        if f.default is not dataclasses.MISSING:
            assert p.default == f.default
        elif f.default_factory is not dataclasses.MISSING:
            assert repr(p.default) == "<factory>"
        else:
            assert p.default is inspect.Parameter.empty


def test_positional_keyword_defaults_and_fresh_factories() -> None:
    a = model.Step("s1", None, "RETRIEVE", "search", 1, 5)
    b = model.Step(span_id="s2", parent_span_id="s1", action=None, name="x", start_ns=2, end_ns=3)
    assert (a.status, a.convention, a.location, a.attributes) == ("UNSET", "unknown", None, {})
    assert a.attributes is not b.attributes
    assert b.parent_span_id == "s1" and b.duration_ns == 1
    call = model.LLMCall("c1", model="m", usage=model.Usage(3, 4, 7))
    assert call.usage.total_tokens == 7 and call.params == {} and call.messages == ()
    assert model.LLMCall("c2").usage == model.Usage()
    with pytest.raises(TypeError):
        model.Step("s1", None)  # type: ignore[call-arg]


def test_instances_stay_frozen_and_round_trip() -> None:
    ev = model.Evidence("d1", "s1", "RETRIEVE", 1, 0.5, content="text")
    with pytest.raises(dataclasses.FrozenInstanceError):
        ev.score = 1.0  # type: ignore[misc]
    trace = model.Trace(model.Request("t1", query="q"), evidence=(ev,), answer="a")
    assert model.Trace.from_json(trace.to_json()) == trace


def test_only_frozen_slotted_dataclasses_are_accepted() -> None:
    @dataclasses.dataclass
    class Plain:
        x: int

    with pytest.raises(TypeError):
        fast_init(Plain)

    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked:
        x: int

        def __post_init__(self) -> None:
            if self.x < 0:
                raise ValueError("x < 0")

    with pytest.raises(TypeError, match="__post_init__"):
        fast_init(Checked)  # the check would be skipped: refused instead


def test_instances_keep_their_class_and_subclasses_are_filled_too() -> None:
    ev = model.Evidence("d1", "s1", "RETRIEVE")
    assert type(ev) is model.Evidence and isinstance(ev, model.Evidence)

    @dataclasses.dataclass(frozen=True, slots=True)
    class Tagged(model.Evidence):
        tag: str = "x"

    tagged = Tagged("d2", "s1", "RERANK", tag="y")  # the dataclass __init__ of the subclass
    assert type(tagged) is Tagged and (tagged.id, tagged.stage, tagged.tag) == ("d2", "RERANK", "y")
    plain = model.Evidence.__init__  # the fast one, on an instance of another slot layout
    other = object.__new__(Tagged)
    plain(other, "d3", "s1", "RETRIEVE", 2)
    assert type(other) is Tagged and (other.id, other.rank, other.metadata) == ("d3", 2, {})
