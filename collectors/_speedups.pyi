"""Type stub of the collectors' optional C extension (``_speedups.c``)."""

from typing import Any

from groundtrace.collectors.spans import SourceLocation, SpanRecord

def setup(
    layouts: tuple[tuple[type, tuple[str, ...]], ...],
    unset: Any,
    span_kinds: tuple[str, ...],
    status_codes: tuple[str, ...],
    status_by_code: tuple[Any, ...],
    /,
) -> None: ...
def records(request: Any, location: SourceLocation, /) -> list[SpanRecord] | None: ...
def step_attributes(attrs: dict[str, Any], /) -> dict[str, Any]: ...
def register_model(cls: type, field_names: tuple[str, ...], /) -> None: ...
def construct(cls: Any, /, *values: Any) -> Any: ...
