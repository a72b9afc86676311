"""TOOL step recording: static tool description, arguments, status, paths read, result.

Arguments are the bound arguments of the call (JSON). ``paths_read`` comes from the argument
names declared with ``@tool(paths=("path",))`` and/or a ``paths_hook(arguments, result)``;
it is only written when the call succeeded (a failed read read nothing), and only with
``tool_arguments`` capture on (paths are argument values). The result is recorded by size and
``sha256`` hash, and by content when ``tool_results`` capture is on.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from . import semconv as sc
from ._attributes import safe_json
from ._record import AttributeValue, Recorder, content_hash, text_of
from ._runtime import logger
from ._settings import Content
from ._step import PathsHook, Step, arguments_of

__all__ = [
    "PathsHook",
    "parameters_schema",
    "record_tool_arguments",
    "record_tool_error",
    "record_tool_result",
    "result_text",
    "tool_inputs",
    "tool_result",
    "tool_static_attributes",
]


_CAPTURE_TOOL_ARGUMENTS: Final = Content.TOOL_ARGUMENTS
_CAPTURE_TOOL_RESULTS: Final = Content.TOOL_RESULTS
_OK: Final = sc.ToolStatus.OK.value
_STATUS: Final = sc.GT_TOOL_STATUS
_PATHS_READ: Final = sc.GT_TOOL_PATHS_READ
_SIZE: Final = sc.GT_TOOL_RESULT_SIZE
_HASH: Final = sc.GT_TOOL_RESULT_HASH
_CONTENT: Final = sc.GT_TOOL_RESULT_CONTENT
_GENAI_RESULT: Final = sc.GENAI_TOOL_CALL_RESULT
_OUTPUT: Final = sc.OI_OUTPUT_VALUE
_OUTPUT_MIME: Final = sc.OI_OUTPUT_MIME_TYPE
_ARGUMENTS: Final = sc.GT_TOOL_ARGUMENTS
_GENAI_ARGUMENTS: Final = sc.GENAI_TOOL_CALL_ARGUMENTS
_INPUT: Final = sc.OI_INPUT_VALUE
_INPUT_MIME: Final = sc.OI_INPUT_MIME_TYPE
_JSON_TYPES: Final[dict[Any, str]] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
    tuple: "array",
    dict: "object",
}


def parameters_schema(fn: Callable[..., Any], skip: Iterable[str] = ()) -> dict[str, Any]:
    """A JSON-schema-like description of ``fn``'s parameters (for ``tool.parameters``)."""
    skipped = set(skip)
    properties: dict[str, Any] = {}
    required: list[str] = []
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return {"type": "object", "properties": {}}
    for param in params:
        if param.name in skipped or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        annotation = param.annotation
        if isinstance(annotation, str):
            kind = {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}.get(
                annotation
            )
        else:
            kind = _JSON_TYPES.get(getattr(annotation, "__origin__", annotation))
        properties[param.name] = {"type": kind} if kind else {}
        if param.default is param.empty:
            required.append(param.name)
    return {"type": "object", "properties": properties, "required": required}


def tool_static_attributes(
    name: str, description: str | None, schema: dict[str, Any]
) -> dict[str, AttributeValue]:
    """Attributes that are the same for every call of one tool."""
    attrs: dict[str, AttributeValue] = {
        sc.GT_TOOL_NAME: name,
        sc.OI_TOOL_NAME: name,
        sc.GENAI_TOOL_NAME: name,
        sc.GENAI_TOOL_TYPE: "function",
        sc.OI_TOOL_PARAMETERS: safe_json(schema),
    }
    if description:
        attrs[sc.OI_TOOL_DESCRIPTION] = description
        attrs[sc.GENAI_TOOL_DESCRIPTION] = description
    return attrs


def record_tool_arguments(
    rec: Recorder, arguments: Mapping[str, Any], call_id: object | None
) -> None:
    """Record call id and (when ``tool_arguments`` capture is on) the arguments JSON."""
    attrs = rec.attrs
    if call_id is not None:
        call = text_of(call_id) or ""
        attrs[sc.GT_TOOL_CALL_ID] = call
        attrs[sc.GENAI_TOOL_CALL_ID] = call
    settings = rec.settings
    if settings.captures(_CAPTURE_TOOL_ARGUMENTS):
        text = rec.json(_ARGUMENTS, arguments)
        attrs[_ARGUMENTS] = text
        if settings.genai_latest:
            attrs[_GENAI_ARGUMENTS] = text
        attrs[_INPUT] = text
        attrs[_INPUT_MIME] = "application/json"


def result_text(result: object) -> tuple[str, str]:
    """The result as text plus its mime type (strings as they are, the rest as JSON)."""
    if isinstance(result, str):
        return result, "text/plain"
    if isinstance(result, bytes | bytearray):
        return bytes(result).decode("utf-8", "replace"), "text/plain"
    return safe_json(result), "application/json"


def _paths(value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str | os.PathLike):
        return [os.fspath(value) if not isinstance(value, str) else value]
    if isinstance(value, list | tuple | set | frozenset):
        out: list[str] = []
        for item in value:
            out.extend(_paths(item))
        return out
    return [text_of(value) or ""]


def record_tool_result(
    rec: Recorder,
    result: object,
    arguments: Mapping[str, Any] | None,
    path_params: tuple[str, ...],
    paths_hook: PathsHook | None,
) -> None:
    """Record a successful tool call: status ok, paths read, result size/hash/content."""
    attrs = rec.attrs
    attrs[_STATUS] = _OK
    paths: list[str] = []
    if rec.settings.captures(_CAPTURE_TOOL_ARGUMENTS):  # the paths are argument values: content
        if arguments is not None:
            for name in path_params:
                paths.extend(_paths(arguments.get(name)))
        if paths_hook is not None:
            try:
                paths.extend(_paths(list(paths_hook(arguments or {}, result))))
            except Exception:
                logger.debug("paths_hook failed", exc_info=True)
    if paths:
        attrs[_PATHS_READ] = [rec.text(_PATHS_READ, p) for p in dict.fromkeys(paths)]
    text, mime = result_text(result)
    attrs[_SIZE] = len(text)
    attrs[_HASH] = content_hash(text)
    settings = rec.settings
    if settings.captures(_CAPTURE_TOOL_RESULTS):
        shown = rec.text(_CONTENT, text, json_text=mime == "application/json")
        attrs[_CONTENT] = shown
        if settings.genai_latest:
            attrs[_GENAI_RESULT] = shown
        attrs[_OUTPUT] = shown
        attrs[_OUTPUT_MIME] = mime


def record_tool_error(rec: Recorder, exc: BaseException) -> None:
    """Record a failed tool call: status error, or timeout for ``TimeoutError``."""
    status = sc.ToolStatus.TIMEOUT if isinstance(exc, TimeoutError) else sc.ToolStatus.ERROR
    rec.attrs[sc.GT_TOOL_STATUS] = status.value
    rec.attrs[sc.GT_TOOL_ERROR_TYPE] = type(exc).__qualname__


def tool_inputs(step: Step, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
    """TOOL: the call id and the arguments (kept for ``paths`` and ``paths_hook``)."""
    arguments = arguments_of(step.spec, args, kwargs)
    call_id = arguments.pop(step.spec.options.call_id_param, None)
    if call_id is None:
        call_id = arguments.pop("tool_call_id", None)
    step.arguments = arguments
    record_tool_arguments(step, arguments, call_id)


def tool_result(step: Step, result: Any, total: int | None) -> None:
    """TOOL: status ok, the paths read and the result."""
    options = step.spec.options
    record_tool_result(step, result, step.arguments, options.paths, options.paths_hook)
