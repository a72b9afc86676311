"""What each action records from a step's call and from its result.

:func:`~._capture.build_spec` picks one input recorder and one result recorder per action
when a function is decorated (:data:`INPUT_RECORDERS`, :data:`RESULT_RECORDERS`), so a call
runs only the code of its own action. Recorders may raise; :class:`~._capture.Step` catches
and logs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from . import semconv as sc
from ._attributes import safe_json
from ._evidence_attributes import record_evidence
from ._record import Recorder, text_of
from ._record_answer import record_answer, record_selected
from ._record_request import RequestFields, record_request
from ._record_tool import record_tool_arguments, record_tool_result

if TYPE_CHECKING:
    from ._capture import Step, StepSpec

__all__ = [
    "INPUT_RECORDERS",
    "RESULT_RECORDERS",
    "InputRecorder",
    "ResultRecorder",
    "arguments_of",
    "find_query",
    "record_query",
]

#: ``recorder(step, rec, args, kwargs)``: records what the step was called with.
InputRecorder = Callable[["Step", Recorder, tuple[Any, ...], Mapping[str, Any]], None]
#: ``recorder(step, rec, result, total)``: records what the step returned (``total``: the
#: number of items a generator step yielded, when it yielded more than were kept).
ResultRecorder = Callable[["Step", Recorder, Any, "int | None"], None]

_RETRIEVE: Final = sc.Action.RETRIEVE
_RERANK: Final = sc.Action.RERANK
_ANSWER: Final = sc.Action.ANSWER
_QUERY_NAMES: Final = ("query", "question")
_INPUT: Final = sc.OI_INPUT_VALUE
_INPUT_MIME: Final = sc.OI_INPUT_MIME_TYPE
_OUTPUT: Final = sc.OI_OUTPUT_VALUE
_OUTPUT_MIME: Final = sc.OI_OUTPUT_MIME_TYPE
_GT_QUERY: Final = sc.GT_RETRIEVAL_QUERY
_GENAI_QUERY: Final = sc.GENAI_RETRIEVAL_QUERY_TEXT
_RERANKER_QUERY: Final = sc.OI_RERANKER_QUERY
_TEXT: Final = "text/plain"
_JSON: Final = "application/json"
#: ``json.dumps(..., ensure_ascii=False)``, built once.
_SPACED_JSON: Final = json.JSONEncoder(ensure_ascii=False)


def arguments_of(
    spec: StepSpec, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> dict[str, Any]:
    """The call's arguments by parameter name (defaults not filled in; self/cls dropped)."""
    if spec.varargs and spec.signature is not None:
        try:
            bound = spec.signature.bind_partial(*args, **kwargs).arguments
        except TypeError:
            bound = {f"arg{i}": a for i, a in enumerate(args)} | dict(kwargs)
    elif spec.signature is None:
        bound = {f"arg{i}": a for i, a in enumerate(args)} | dict(kwargs)
    else:
        bound = dict(zip(spec.positional, args, strict=False))
        if kwargs:
            bound.update(kwargs)
    if spec.skip_first and spec.positional:
        bound.pop(spec.positional[0], None)
    return bound


def find_query(spec: StepSpec, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> object:
    """The query argument: ``query_param``, else a ``query``/``question`` keyword, else the
    first string argument."""
    name = spec.query_param
    if name is not None:
        if name in kwargs:
            return kwargs[name]
        index = spec.query_index
        return args[index] if index is not None and index < len(args) else None
    if kwargs:
        for key in _QUERY_NAMES:
            if key in kwargs:
                return kwargs[key]
    skip = spec.skip_first
    for value in args:
        if skip:
            skip = False
        elif isinstance(value, str):
            return value
    return None


def record_query(rec: Recorder, action: sc.Action, query: object) -> None:
    """Record the query a RETRIEVE/RERANK/ANSWER step works on (query capture only)."""
    if query is None or "query" not in rec.settings.capture:
        return
    text = rec.text(_INPUT, query if type(query) is str else text_of(query) or "")
    attrs = rec.attrs
    attrs[_INPUT] = text
    attrs[_INPUT_MIME] = _TEXT
    if action is _RETRIEVE:
        attrs[_GT_QUERY] = text
        attrs[_GENAI_QUERY] = text
    elif action is _RERANK:
        attrs[_GT_QUERY] = text
        attrs[_RERANKER_QUERY] = text


_ABSENT: Final[Any] = object()


def _named(
    indexes: Mapping[str, int], name: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> Any:
    """The argument of parameter ``name`` (``_ABSENT`` when not passed)."""
    if name in kwargs:
        return kwargs[name]
    index = indexes.get(name)
    return args[index] if index is not None and index < len(args) else _ABSENT


def _inputs_request(
    step: Step, rec: Recorder, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> None:
    spec = step.spec
    options = spec.options
    indexes = spec.request_indexes
    if indexes is None:  # a signature read by binding: varargs or unknown
        arguments = arguments_of(spec, args, kwargs)
        case_id = arguments.get(options.case_id_param)
        session_id = arguments.get(options.session_id_param)
        user_id = arguments.get(options.user_id_param)
        source_id = arguments.get(options.source_id_param, options.source_id)
    elif indexes or kwargs:
        case_id = _named(indexes, options.case_id_param, args, kwargs)
        session_id = _named(indexes, options.session_id_param, args, kwargs)
        user_id = _named(indexes, options.user_id_param, args, kwargs)
        source_id = _named(indexes, options.source_id_param, args, kwargs)
        case_id = None if case_id is _ABSENT else case_id
        session_id = None if session_id is _ABSENT else session_id
        user_id = None if user_id is _ABSENT else user_id
        source_id = options.source_id if source_id is _ABSENT else source_id
    else:  # the function has none of the id parameters
        case_id = session_id = user_id = None
        source_id = options.source_id
    fields = RequestFields(
        query=find_query(spec, args, kwargs),
        case_id=case_id,
        session_id=session_id,
        user_id=user_id,
        source_id=source_id,
        app_name=options.app_name,
        app_version=options.app_version,
    )
    record_request(rec, fields, step.span, spec.static)


def _inputs_retrieval(
    step: Step, rec: Recorder, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> None:
    spec = step.spec
    record_query(rec, spec.action, find_query(spec, args, kwargs))


def _jsonable(value: object) -> bool:
    try:
        json.dumps(value)
    except Exception:
        return False
    return True


def _inputs_answer(
    step: Step, rec: Recorder, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> None:
    spec = step.spec
    record_query(rec, _ANSWER, find_query(spec, args, kwargs))
    if spec.replayable:
        if not spec.replay_extra:  # the function takes nothing but the query and the evidence
            rec.attrs[sc.GT_REPLAY_KWARGS] = "{}"
            return
        skip = spec.replay_skip
        extra = {k: v for k, v in arguments_of(spec, args, kwargs).items() if k not in skip}
        if extra:
            extra = {k: v for k, v in extra.items() if _jsonable(v)}
        rec.attrs[sc.GT_REPLAY_KWARGS] = _SPACED_JSON.encode(extra) if extra else "{}"


def _inputs_tool(
    step: Step, rec: Recorder, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> None:
    arguments = arguments_of(step.spec, args, kwargs)
    call_id = arguments.pop(step.spec.options.call_id_param, None)
    if call_id is None:
        call_id = arguments.pop("tool_call_id", None)
    step.arguments = arguments
    record_tool_arguments(rec, arguments, call_id)


def _inputs_io(step: Step, rec: Recorder, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
    capture = rec.settings.capture
    if "io" in capture and "evidence" in capture:
        attrs = rec.attrs
        attrs[_INPUT] = rec.text(_INPUT, safe_json(arguments_of(step.spec, args, kwargs)))
        attrs[_INPUT_MIME] = _JSON


def _result_evidence(step: Step, rec: Recorder, result: Any, total: int | None) -> None:
    to_evidence = step.spec.options.to_evidence
    if to_evidence is not None:
        result = to_evidence(result)
        total = None
    record_evidence(rec, result, step.spec.action, total=total)


def _result_select(step: Step, rec: Recorder, result: Any, total: int | None) -> None:
    to_evidence = step.spec.options.to_evidence
    if to_evidence is not None:
        result = to_evidence(result)
    record_selected(rec, result)


def _result_answer(step: Step, rec: Recorder, result: Any, total: int | None) -> None:
    to_answer = step.spec.options.to_answer
    if to_answer is not None:
        result = to_answer(result)
    record_answer(rec, result)


def _result_tool(step: Step, rec: Recorder, result: Any, total: int | None) -> None:
    options = step.spec.options
    record_tool_result(rec, result, step.arguments, options.paths, options.paths_hook)


def _result_request(step: Step, rec: Recorder, result: Any, total: int | None) -> None:
    capture = rec.settings.capture
    if "answer" not in capture:
        return
    if isinstance(result, str):
        rec.attrs[_OUTPUT] = rec.text(_OUTPUT, result)
        rec.attrs[_OUTPUT_MIME] = _TEXT
    elif result is not None and "io" in capture:
        rec.attrs[_OUTPUT] = rec.text(_OUTPUT, safe_json(result))
        rec.attrs[_OUTPUT_MIME] = _JSON


def _result_io(step: Step, rec: Recorder, result: Any, total: int | None) -> None:
    if result is not None and "io" in rec.settings.capture:
        rec.attrs[_OUTPUT] = rec.text(_OUTPUT, safe_json(result))
        rec.attrs[_OUTPUT_MIME] = _JSON


#: The input recorder of each action.
INPUT_RECORDERS: Final[dict[sc.Action, InputRecorder]] = {
    sc.Action.REQUEST: _inputs_request,
    sc.Action.RETRIEVE: _inputs_retrieval,
    sc.Action.RERANK: _inputs_retrieval,
    sc.Action.SELECT: _inputs_io,
    sc.Action.VERIFY: _inputs_io,
    sc.Action.INFER: _inputs_io,
    sc.Action.ANSWER: _inputs_answer,
    sc.Action.TOOL: _inputs_tool,
}
#: The result recorder of each action.
RESULT_RECORDERS: Final[dict[sc.Action, ResultRecorder]] = {
    sc.Action.REQUEST: _result_request,
    sc.Action.RETRIEVE: _result_evidence,
    sc.Action.RERANK: _result_evidence,
    sc.Action.SELECT: _result_select,
    sc.Action.VERIFY: _result_io,
    sc.Action.INFER: _result_io,
    sc.Action.ANSWER: _result_answer,
    sc.Action.TOOL: _result_tool,
}
