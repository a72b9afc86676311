"""The step decorators: ``@request``, ``@retrieve``, ``@rerank``, ``@select``, ``@verify``,
``@infer``, ``@answer`` and ``@tool``.

Each works bare (``@retrieve``) or with options (``@retrieve(retriever="bm25", k=5)``) on
sync functions, coroutines, generators and async generators, and records the return value
by the convention of its action (see the recording modules).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar, overload

from . import semconv as sc
from ._capture_adapters import make_decorator
from ._record import AttributeValue
from ._step import PathsHook, StepOptions

__all__ = ["answer", "infer", "request", "rerank", "retrieve", "select", "tool", "verify"]

F = TypeVar("F", bound=Callable[..., Any])
Attributes = Mapping[str, AttributeValue] | None


@overload
def request(fn: F, /) -> F: ...
@overload
def request(
    *,
    name: str | None = None,
    query_param: str | None = None,
    app_name: str | None = None,
    app_version: str | None = None,
    source_id: str | None = None,
    case_id_param: str = "case_id",
    session_id_param: str = "session_id",
    user_id_param: str = "user_id",
    source_id_param: str = "source_id",
    attributes: Attributes = None,
) -> Callable[[F], F]: ...
def request(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    query_param: str | None = None,
    app_name: str | None = None,
    app_version: str | None = None,
    source_id: str | None = None,
    case_id_param: str = "case_id",
    session_id_param: str = "session_id",
    user_id_param: str = "user_id",
    source_id_param: str = "source_id",
    attributes: Attributes = None,
) -> Any:
    """Root REQUEST span: one user request = one trace.

    Records the query (argument ``query_param``; by default a ``query=``/``question=``
    keyword or the first string argument), the case/session/user/source ids from the
    arguments of those names, the app name/version (options, else the ``service.name`` /
    ``service.version`` resource) and the schema version.
    """
    options = StepOptions(
        name=name,
        query_param=query_param,
        app_name=app_name,
        app_version=app_version,
        source_id=source_id,
        case_id_param=case_id_param,
        session_id_param=session_id_param,
        user_id_param=user_id_param,
        source_id_param=source_id_param,
        attributes=attributes,
    )
    return make_decorator(sc.Action.REQUEST, fn, options)


@overload
def retrieve(fn: F, /) -> F: ...
@overload
def retrieve(
    *,
    name: str | None = None,
    retriever: str | None = None,
    k: int | None = None,
    mode: str | None = None,
    data_source: str | None = None,
    query_param: str | None = None,
    to_evidence: Callable[[Any], Any] | None = None,
    attributes: Attributes = None,
) -> Callable[[F], F]: ...
def retrieve(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    retriever: str | None = None,
    k: int | None = None,
    mode: str | None = None,
    data_source: str | None = None,
    query_param: str | None = None,
    to_evidence: Callable[[Any], Any] | None = None,
    attributes: Attributes = None,
) -> Any:
    """RETRIEVE step: the return value (or the yielded items) is the ranked evidence list.

    Args:
        fn: the function, when used bare.
        name: step name (default: the function's name; qualname in ``groundtrace.step.name``).
        retriever: retriever name, e.g. ``"bm25"``; also names the span ``retrieval bm25``.
        k: requested top-k.
        mode: retrieval mode, e.g. ``"full_text"`` or ``"hierarchical"``.
        data_source: ``gen_ai.data_source.id`` (default: the retriever name).
        query_param: argument holding the query (default ``query``/``question`` or the
            first string argument).
        to_evidence: maps the whole return value to a list of evidence items.
        attributes: extra static attributes.
    """
    options = StepOptions(
        name=name,
        retriever=retriever,
        k=k,
        mode=mode,
        data_source=data_source,
        query_param=query_param,
        to_evidence=to_evidence,
        attributes=attributes,
    )
    return make_decorator(sc.Action.RETRIEVE, fn, options)


@overload
def rerank(fn: F, /) -> F: ...
@overload
def rerank(
    *,
    name: str | None = None,
    model: str | None = None,
    k: int | None = None,
    query_param: str | None = None,
    to_evidence: Callable[[Any], Any] | None = None,
    attributes: Attributes = None,
) -> Callable[[F], F]: ...
def rerank(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    model: str | None = None,
    k: int | None = None,
    query_param: str | None = None,
    to_evidence: Callable[[Any], Any] | None = None,
    attributes: Attributes = None,
) -> Any:
    """RERANK step: the return value is the re-ordered evidence list (``reranker.*``)."""
    options = StepOptions(
        name=name,
        model=model,
        k=k,
        query_param=query_param,
        to_evidence=to_evidence,
        attributes=attributes,
    )
    return make_decorator(sc.Action.RERANK, fn, options)


@overload
def select(fn: F, /) -> F: ...
@overload
def select(
    *,
    name: str | None = None,
    to_evidence: Callable[[Any], Any] | None = None,
    attributes: Attributes = None,
) -> Callable[[F], F]: ...
def select(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    to_evidence: Callable[[Any], Any] | None = None,
    attributes: Attributes = None,
) -> Any:
    """SELECT step: the return value (evidence items or ids) is the used set U."""
    options = StepOptions(name=name, to_evidence=to_evidence, attributes=attributes)
    return make_decorator(sc.Action.SELECT, fn, options)


@overload
def verify(fn: F, /) -> F: ...
@overload
def verify(*, name: str | None = None, attributes: Attributes = None) -> Callable[[F], F]: ...
def verify(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    attributes: Attributes = None,
) -> Any:
    """VERIFY step (e.g. a self-check); input/output recorded as JSON when ``io`` is captured."""
    return make_decorator(sc.Action.VERIFY, fn, StepOptions(name=name, attributes=attributes))


@overload
def infer(fn: F, /) -> F: ...
@overload
def infer(*, name: str | None = None, attributes: Attributes = None) -> Callable[[F], F]: ...
def infer(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    attributes: Attributes = None,
) -> Any:
    """INFER step (intermediate reasoning the app exposes); recorded like VERIFY."""
    return make_decorator(sc.Action.INFER, fn, StepOptions(name=name, attributes=attributes))


@overload
def answer(fn: F, /) -> F: ...
@overload
def answer(
    *,
    name: str | None = None,
    replayable: bool = False,
    query_param: str | None = None,
    evidence_param: str | None = None,
    to_answer: Callable[[Any], Any] | None = None,
    attributes: Attributes = None,
) -> Callable[[F], F]: ...
def answer(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    replayable: bool = False,
    query_param: str | None = None,
    evidence_param: str | None = None,
    to_answer: Callable[[Any], Any] | None = None,
    attributes: Attributes = None,
) -> Any:
    """ANSWER step: the return value (str, mapping or object) is the answer.

    Args:
        fn: the function, when used bare.
        name: step name.
        replayable: record the importable entry point (``module:qualname``) and parameter
            names so the analyzer can call this step again with perturbed evidence.
        query_param: parameter receiving the query (default: the first parameter).
        evidence_param: parameter receiving the evidence list (default: the second).
        to_answer: maps the return value to a str/mapping/object read by the conventions.
        attributes: extra static attributes.
    """
    options = StepOptions(
        name=name,
        replayable=replayable,
        query_param=query_param,
        evidence_param=evidence_param,
        to_answer=to_answer,
        attributes=attributes,
    )
    return make_decorator(sc.Action.ANSWER, fn, options)


@overload
def tool(fn: F, /) -> F: ...
@overload
def tool(
    *,
    name: str | None = None,
    paths: tuple[str, ...] = (),
    paths_hook: PathsHook | None = None,
    call_id_param: str = "call_id",
    description: str | None = None,
    attributes: Attributes = None,
) -> Callable[[F], F]: ...
def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    paths: tuple[str, ...] = (),
    paths_hook: PathsHook | None = None,
    call_id_param: str = "call_id",
    description: str | None = None,
    attributes: Attributes = None,
) -> Any:
    """TOOL step (a tool/command execution), span ``execute_tool <name>``.

    Args:
        fn: the function, when used bare.
        name: tool name (default: the function's name).
        paths: names of the arguments that are paths/resources the tool reads.
        paths_hook: ``hook(arguments, result) -> paths`` for paths known only afterwards.
        call_id_param: argument carrying the model's tool call id (not recorded as an
            argument); ``tool_call_id`` is also recognised.
        description: tool description (default: first docstring line).
        attributes: extra static attributes.
    """
    options = StepOptions(
        name=name,
        paths=tuple(paths),
        paths_hook=paths_hook,
        call_id_param=call_id_param,
        description=description,
        attributes=attributes,
    )
    return make_decorator(sc.Action.TOOL, fn, options)
