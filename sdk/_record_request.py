"""REQUEST (root span) recording: query, case id, app identity, session/user/source ids."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from . import semconv as sc
from ._record import Recorder, text_of
from ._settings import Content
from ._step import Step, arguments_of, find_query, io_result

__all__ = [
    "RequestFields",
    "app_identity",
    "record_request",
    "request_inputs",
    "request_result",
]

_CAPTURE_ANSWER: Final = Content.ANSWER
_CAPTURE_QUERY: Final = Content.QUERY
_NOTHING: Final[Mapping[str, object]] = MappingProxyType({})
_SCHEMA: Final = sc.GT_SCHEMA_VERSION
_QUERY: Final = sc.GT_REQUEST_QUERY
_INPUT: Final = sc.OI_INPUT_VALUE
_INPUT_MIME: Final = sc.OI_INPUT_MIME_TYPE
_APP_NAME: Final = sc.GT_APP_NAME
_APP_VERSION: Final = sc.GT_APP_VERSION
_OUTPUT: Final = sc.OI_OUTPUT_VALUE
_OUTPUT_MIME: Final = sc.OI_OUTPUT_MIME_TYPE


class RequestFields:
    """The per-request values of a REQUEST span (``None`` when not given)."""

    __slots__ = (
        "app_name",
        "app_version",
        "case_id",
        "query",
        "session_id",
        "source_id",
        "user_id",
    )

    def __init__(
        self,
        *,
        query: object = None,
        case_id: object = None,
        session_id: object = None,
        user_id: object = None,
        source_id: object = None,
        app_name: str | None = None,
        app_version: str | None = None,
    ) -> None:
        self.query = query
        self.case_id = case_id
        self.session_id = session_id
        self.user_id = user_id
        self.source_id = source_id
        self.app_name = app_name
        self.app_version = app_version


def app_identity(span: object) -> tuple[str | None, str | None]:
    """``service.name`` / ``service.version`` of the resource of ``span`` (SDK spans only).

    OpenTelemetry's placeholder ``unknown_service...`` is not an application name and is
    ignored.
    """
    resource = getattr(span, "resource", None)
    attributes: Mapping[str, Any] = getattr(resource, "attributes", None) or {}
    name = attributes.get(sc.SERVICE_NAME)
    version = attributes.get(sc.SERVICE_VERSION)
    if not isinstance(name, str) or name.startswith("unknown_service"):
        name = None
    return name, version if isinstance(version, str) else None


def record_request(
    rec: Recorder,
    fields: RequestFields,
    span: object,
    static: Mapping[str, object] = _NOTHING,
) -> None:
    """Record the request fields on the root span.

    Args:
        rec: the span's recorder.
        fields: the request's values.
        span: the span (its resource names the app when ``fields`` do not).
        static: attributes the span already carries; those are not written again.
    """
    attrs = rec.attrs
    if static.get(_SCHEMA) != sc.SCHEMA_VERSION:
        attrs[_SCHEMA] = sc.SCHEMA_VERSION
    query = fields.query
    if query is not None and rec.settings.captures(_CAPTURE_QUERY):
        query = rec.text(_QUERY, query if type(query) is str else text_of(query) or "")
        attrs[_QUERY] = query
        attrs[_INPUT] = query
        attrs[_INPUT_MIME] = "text/plain"
    if fields.case_id is not None:
        attrs[sc.GT_REQUEST_CASE_ID] = text_of(fields.case_id) or ""
    if fields.session_id is not None:
        session = text_of(fields.session_id) or ""
        attrs[sc.GT_SESSION_ID] = session
        attrs[sc.OI_SESSION_ID] = session
        attrs[sc.GENAI_CONVERSATION_ID] = session
    if fields.user_id is not None:
        user = text_of(fields.user_id) or ""
        attrs[sc.GT_USER_ID] = user
        attrs[sc.OI_USER_ID] = user
    if fields.source_id is not None:
        attrs[sc.GT_SOURCE_ID] = text_of(fields.source_id) or ""
    name, version = fields.app_name, fields.app_version
    if name is None or version is None:
        res_name, res_version = app_identity(span)
        name = name if name is not None else res_name
        version = version if version is not None else res_version
    if name is not None and static.get(_APP_NAME) != name:
        attrs[_APP_NAME] = name
    if version is not None and static.get(_APP_VERSION) != version:
        attrs[_APP_VERSION] = version


_ABSENT: Final[Any] = object()


def _named(
    indexes: Mapping[str, int], name: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> Any:
    """The argument of parameter ``name`` (``_ABSENT`` when not passed)."""
    if name in kwargs:
        return kwargs[name]
    index = indexes.get(name)
    return args[index] if index is not None and index < len(args) else _ABSENT


def request_inputs(step: Step, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
    """REQUEST: the query and the case/session/user/source ids among the arguments."""
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
    record_request(step, fields, step.span, spec.static)


def request_result(step: Step, result: Any, total: int | None) -> None:
    """REQUEST: the returned answer (``answer`` capture; a non-string with ``io`` too)."""
    if not step.settings.captures(_CAPTURE_ANSWER):
        return
    if isinstance(result, str):
        step.attrs[_OUTPUT] = step.text(_OUTPUT, result)
        step.attrs[_OUTPUT_MIME] = "text/plain"
    else:
        io_result(step, result, total)
