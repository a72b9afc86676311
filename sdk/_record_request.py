"""REQUEST (root span) recording: query, case id, app identity, session/user/source ids."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from . import semconv as sc
from ._record import Recorder, text_of

__all__ = ["RequestFields", "app_identity", "record_request"]

_NOTHING: Final[Mapping[str, object]] = MappingProxyType({})
_SCHEMA: Final = sc.GT_SCHEMA_VERSION
_QUERY: Final = sc.GT_REQUEST_QUERY
_INPUT: Final = sc.OI_INPUT_VALUE
_INPUT_MIME: Final = sc.OI_INPUT_MIME_TYPE
_APP_NAME: Final = sc.GT_APP_NAME
_APP_VERSION: Final = sc.GT_APP_VERSION


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
    if query is not None and "query" in rec.settings.capture:
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
