"""Every field of the trace model is documented in its struct's ``Attributes:`` section.

msgspec ``Struct`` fields take no docstrings of their own, so each field is described where the
project describes attributes: one ``name: description`` entry in the class docstring. A field
without an entry, or an entry naming no field, fails the test with the struct and field named.
"""

from __future__ import annotations

import inspect
import re

import msgspec

from groundtrace.collectors import model

STRUCTS = [
    obj
    for name in model.__all__
    if isinstance(obj := getattr(model, name), type) and issubclass(obj, msgspec.Struct)
]
_ENTRY = re.compile(r"    (\w+): \S")


def documented(cls: type) -> dict[str, str]:
    """The entries of the ``Attributes:`` section of ``cls``'s docstring, name -> text."""
    lines = inspect.cleandoc(cls.__doc__ or "").splitlines()
    try:
        start = lines.index("Attributes:") + 1
    except ValueError:
        return {}
    entries: dict[str, str] = {}
    name = None
    for line in lines[start:]:
        if line and not line.startswith("    "):
            break  # the next section (Raises:, ...) or prose
        match = _ENTRY.match(line)
        if match:
            name = match.group(1)
            entries[name] = line.split(":", 1)[1].strip()
        elif name is not None and line.startswith("        "):
            entries[name] += " " + line.strip()
    return entries


def test_every_model_struct_is_checked() -> None:
    names = {cls.__name__ for cls in STRUCTS}
    assert {"Trace", "Request", "Step", "Evidence", "LLMCall", "ToolCall"} <= names
    assert len(STRUCTS) == 14


def test_every_trace_model_field_has_a_docstring() -> None:
    missing = [
        f"{cls.__name__}.{field}"
        for cls in STRUCTS
        for field in cls.__struct_fields__
        if not documented(cls).get(field)
    ]
    total = sum(len(cls.__struct_fields__) for cls in STRUCTS)
    assert not missing, (
        f"{len(missing)} of {total} trace-model fields have no entry in their struct's "
        f"Attributes section: {', '.join(missing)}"
    )


def test_every_documented_attribute_is_a_field() -> None:
    stale = [
        f"{cls.__name__}.{name}"
        for cls in STRUCTS
        for name in documented(cls)
        if name not in cls.__struct_fields__
    ]
    assert not stale, f"documented but not a field: {', '.join(stale)}"
