"""Pull the spans of an Arize Phoenix project through its REST API and rebuild τ.

Phoenix (``arize-phoenix`` >= 11, checked against 20.x) serves
``GET /v1/projects/{project}/spans`` with cursor pagination (``next_cursor``; ``limit`` at most
1000), newest first by default; the puller asks for ``sort=start_time&order=asc`` so the spans
of one trace arrive close together and the streaming trace builder keeps little in memory.

What Phoenix's span JSON does and does not carry, and how it is mapped back:

* ids (hex), name, ISO-8601 start/end times (microsecond precision: nanoseconds are lost),
  status code and message, events: copied.
* ``span_kind`` is the OpenInference span kind Phoenix lifted out of the attributes; it is put
  back under ``openinference.span.kind`` (Phoenix writes ``UNKNOWN`` when a span had none,
  which is left out rather than invented).
* attributes come back flattened to dotted keys; the OpenInference attributes Phoenix parses
  from JSON strings on ingestion (``metadata``, ``document.metadata``, ``tool.parameters``,
  ``llm.prompt_template.variables``) are folded back into JSON strings.
* the OTel span kind (SERVER, CLIENT...), the resource (``service.name``) and the
  instrumentation scope are not served by this API: records get kind ``UNSPECIFIED`` and an
  empty resource and scope, rather than a guess.
* annotations -- span annotations (``GET .../span_annotations``), trace annotations
  (``GET .../trace_annotations``, put on the trace's root span) and document annotations
  (Phoenix serves these through its GraphQL API only: ``Span.documentEvaluations``, put on
  the retrieval span with their document position and the id of the document there, so two
  annotations on two documents of one span stay apart) -- become
  ``gen_ai.evaluation.result`` events of their span, so each trace's ``evaluations`` hold
  them, whoever wrote them. The name is the annotation's, or the evaluation name groundtrace's
  write-back keeps in the metadata (``groundtrace.judge.adherence`` for ``adherence``); Phoenix
  UI notes (``note``) are not evaluations and are left out. Annotations are read page by page
  with the spans they concern.

Usage::

    from groundtrace.collectors.phoenix import pull_phoenix_traces

    for trace in pull_phoenix_traces("http://127.0.0.1:6006", "default"):
        print(trace.trace_id, trace.request.query, trace.answer)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any, Final
from urllib.parse import quote

import httpx
import msgspec

from groundtrace.sdk import semconv as sc

from .errors import TraceReadError
from .model import Trace
from .normalize import build_traces
from .spans import AttributeValue, SourceLocation, SpanEvent, SpanRecord, SpanStatus

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "annotation_event",
    "fetch_phoenix_spans",
    "phoenix_span_to_record",
    "pull_phoenix_traces",
]

#: Spans requested per page (Phoenix accepts 1..1000).
DEFAULT_PAGE_SIZE: Final = 1000
#: Attribute keys Phoenix parses from JSON strings into objects when it ingests a span.
_JSON_STRING_KEYS: Final = (
    sc.OI_DOCUMENT_METADATA,
    sc.OI_LLM_PROMPT_TEMPLATE_VARIABLES,
    sc.OI_METADATA,
    sc.OI_TOOL_PARAMETERS,
)
_UNKNOWN_KIND: Final = "UNKNOWN"
_STATUS_CODES: Final = frozenset({"UNSET", "OK", "ERROR"})
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
#: Ids per annotation request (Phoenix accepts up to 1000 span or trace ids).
_IDS_PER_REQUEST: Final = 1000
#: Retrieval spans per GraphQL request for their document annotations.
_SPANS_PER_QUERY: Final = 100
#: The name Phoenix gives UI notes (span annotations that are not evaluations).
_NOTE: Final = "note"
_DOCUMENTS_PREFIX: Final = sc.OI_RETRIEVAL_DOCUMENTS + "."
_DOCUMENTS_QUERY: Final = "{ name label score explanation metadata documentPosition updatedAt }"


# ---------------------------------------------------------------------------------------------
# one span
# ---------------------------------------------------------------------------------------------


def _time_ns(value: object, where: SourceLocation, field: str) -> int:
    if not isinstance(value, str):
        raise TraceReadError(
            f"expected an ISO-8601 time, got {value!r}", path=str(where), field=field
        )
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise TraceReadError(
            f"not an ISO-8601 time: {value!r}", path=str(where), field=field
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)  # Phoenix stores UTC
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1_000


def _json_string_root(key: str) -> str | None:
    """The prefix of ``key`` that names a JSON-string attribute, when ``key`` lies below it."""
    parts = key.split(".")
    for end in range(1, len(parts)):
        prefix = ".".join(parts[:end])
        for suffix in _JSON_STRING_KEYS:
            if prefix == suffix or prefix.endswith("." + suffix):
                return prefix
    return None


def _nest(pairs: list[tuple[str, Any]]) -> Any:
    tree: dict[str, Any] = {}
    for path, value in pairs:
        node = tree
        parts = path.split(".")
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[parts[-1]] = value
    return _lists(tree)


def _lists(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    items = {key: _lists(value) for key, value in node.items()}
    if items and all(key.isdigit() for key in items):
        indices = sorted(int(key) for key in items)
        if indices == list(range(len(indices))):
            return [items[str(index)] for index in indices]
    return items


def _flat_attributes(
    raw: Mapping[str, Any], where: SourceLocation, field: str
) -> dict[str, AttributeValue]:
    out: dict[str, AttributeValue] = {}
    folded: dict[str, list[tuple[str, Any]]] = {}

    def visit(key: str, value: Any) -> None:
        if value is None:
            return
        if isinstance(value, Mapping):
            for sub_key, sub_value in value.items():
                visit(f"{key}.{sub_key}", sub_value)
            return
        if not isinstance(value, str | bool | int | float | list):
            message = f"unsupported attribute value {value!r}"
            raise TraceReadError(message, path=str(where), field=f"{field}.{key}")
        root = _json_string_root(key)
        if root is not None:
            folded.setdefault(root, []).append((key[len(root) + 1 :], value))
        else:
            out[key] = value

    for key, value in raw.items():
        visit(str(key), value)
    for root, pairs in folded.items():
        out[root] = json.dumps(_nest(pairs), ensure_ascii=False, separators=(",", ":"))
    return out


def phoenix_span_to_record(span: Mapping[str, Any], *, location: SourceLocation) -> SpanRecord:
    """Turn one span of Phoenix's ``/v1/projects/{p}/spans`` JSON into a :class:`SpanRecord`.

    Raises:
        TraceReadError: a required field is missing or has the wrong type.
    """
    where = str(location)

    def text(value: object, field: str) -> str:
        if not isinstance(value, str) or not value:
            raise TraceReadError(
                f"expected a non-empty string, got {value!r}", path=where, field=field
            )
        return value

    context = span.get("context")
    if not isinstance(context, Mapping):
        raise TraceReadError("missing span context", path=where, field="context")
    trace_id = text(context.get("trace_id"), "context.trace_id").lower()
    span_id = text(context.get("span_id"), "context.span_id").lower()
    parent = span.get("parent_id")
    if parent is not None and not isinstance(parent, str):
        raise TraceReadError(f"expected a string, got {parent!r}", path=where, field="parent_id")
    raw_attributes = span.get("attributes") or {}
    if not isinstance(raw_attributes, Mapping):
        raise TraceReadError("attributes must be an object", path=where, field="attributes")
    attributes = _flat_attributes(raw_attributes, location, "attributes")
    kind = span.get("span_kind")
    if isinstance(kind, str) and kind and kind != _UNKNOWN_KIND:
        attributes[sc.OI_SPAN_KIND] = kind
    status_code = span.get("status_code") or "UNSET"
    if status_code not in _STATUS_CODES:
        message = f"unknown status code {status_code!r}"
        raise TraceReadError(message, path=where, field="status_code")
    status_message = span.get("status_message") or ""
    events: list[SpanEvent] = []
    raw_events = span.get("events") or []
    if not isinstance(raw_events, list):
        raise TraceReadError("events must be a list", path=where, field="events")
    for index, event in enumerate(raw_events):
        field = f"events[{index}]"
        if not isinstance(event, Mapping):
            raise TraceReadError("an event must be an object", path=where, field=field)
        event_attributes = event.get("attributes") or {}
        if not isinstance(event_attributes, Mapping):
            raise TraceReadError("attributes must be an object", path=where, field=field)
        events.append(
            SpanEvent(
                name=str(event.get("name") or ""),
                time_unix_nano=_time_ns(event.get("timestamp"), location, f"{field}.timestamp"),
                attributes=_flat_attributes(event_attributes, location, f"{field}.attributes"),
            )
        )
    return SpanRecord(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=parent or None,
        name=str(span.get("name") or ""),
        start_time_unix_nano=_time_ns(span.get("start_time"), location, "start_time"),
        end_time_unix_nano=_time_ns(span.get("end_time"), location, "end_time"),
        attributes=attributes,
        status=SpanStatus(code=str(status_code), message=str(status_message)),
        events=events,
        kind="UNSPECIFIED",
        location=location,
    )


# ---------------------------------------------------------------------------------------------
# annotations
# ---------------------------------------------------------------------------------------------


def annotation_event(
    annotation: Mapping[str, Any],
    where: SourceLocation,
    *,
    evidence_id: str | None = None,
    document_position: int | None = None,
) -> SpanEvent:
    """One Phoenix annotation (span, trace or document) as a ``gen_ai.evaluation.result`` event.

    A document annotation keeps which document it concerns: ``document_position`` (its
    position among the span's ``retrieval.documents``) and the document's id (``evidence_id``,
    the one groundtrace's write-back keeps in the metadata first), so two annotations of one
    name on two documents of a span stay apart.

    Raises:
        TraceReadError: the annotation has no name or a malformed result or metadata.
    """
    field = "annotation"
    name = annotation.get("name")
    if not isinstance(name, str) or not name:
        raise TraceReadError(f"annotation without a name: {name!r}", path=str(where), field=field)
    result = annotation.get("result")
    if result is None:  # GraphQL serves the result's fields on the annotation itself
        result = annotation
    metadata = annotation.get("metadata") or {}
    if not isinstance(result, Mapping) or not isinstance(metadata, Mapping):
        raise TraceReadError(
            "annotation result and metadata must be objects", path=str(where), field=field
        )
    evaluation = metadata.get("evaluation")
    score = result.get("score")
    if score is not None and not isinstance(score, int | float):
        raise TraceReadError(f"score {score!r} is not a number", path=str(where), field=field)
    attributes: dict[str, AttributeValue] = {
        sc.GENAI_EVALUATION_NAME: evaluation if isinstance(evaluation, str) and evaluation else name
    }
    for key, value in (
        (sc.GENAI_EVALUATION_SCORE_VALUE, None if score is None else float(score)),
        (sc.GENAI_EVALUATION_SCORE_LABEL, result.get("label")),
        (sc.GENAI_EVALUATION_EXPLANATION, result.get("explanation")),
        (sc.ERROR_TYPE, metadata.get("error_type")),
        (sc.GENAI_RESPONSE_ID, metadata.get("response_id")),
        (sc.GT_EVALUATION_CASE_ID, metadata.get("case_id")),
        (sc.GT_EVALUATION_EVIDENCE_ID, metadata.get("evidence_id") or evidence_id),
    ):
        if isinstance(value, str | float) and value != "":
            attributes[key] = value
    if document_position is not None:
        attributes[sc.GT_EVALUATION_DOCUMENT_POSITION] = document_position
    when = annotation.get("updated_at") or annotation.get("updatedAt")
    return SpanEvent(
        name=sc.GENAI_EVENT_EVALUATION_RESULT,
        time_unix_nano=_time_ns(when, where, f"{field}.updated_at"),
        attributes=attributes,
    )


def _paged_annotations(
    http: httpx.Client,
    endpoint: str,
    id_param: str,
    ids: list[str],
    headers: dict[str, str],
    max_pages: int | None,
) -> Iterator[dict[str, Any]]:
    for start in range(0, len(ids), _IDS_PER_REQUEST):
        params: dict[str, Any] = {
            id_param: ids[start : start + _IDS_PER_REQUEST],
            "limit": 1000,
            "exclude_annotation_names": [_NOTE],
        }
        for data in _pages(http, endpoint, params, headers, max_pages, "annotations"):
            for row in data:
                if not isinstance(row, dict):
                    raise TraceReadError("an annotation must be an object", path=endpoint)
                yield row


def _document_annotations(
    http: httpx.Client, base: str, global_ids: list[str], headers: dict[str, str]
) -> Iterator[tuple[str, dict[str, Any]]]:
    """(global span id, annotation) of every document annotation of the given spans."""
    endpoint = f"{base}/graphql"
    for start in range(0, len(global_ids), _SPANS_PER_QUERY):
        chunk = global_ids[start : start + _SPANS_PER_QUERY]
        fields = " ".join(
            f"s{i}: node(id: {json.dumps(gid)}) {{ ... on Span {{ documentEvaluations "
            f"{_DOCUMENTS_QUERY} }} }}"
            for i, gid in enumerate(chunk)
        )
        body = _call(http.post, endpoint, json={"query": f"{{ {fields} }}"}, headers=headers)
        errors = body.get("errors") if isinstance(body, dict) else None
        data = body.get("data") if isinstance(body, dict) else None
        if errors or not isinstance(data, dict):
            message = f"Phoenix refused the document-annotation query: {str(errors)[:300]}"
            raise TraceReadError(message, path=endpoint)
        for i, gid in enumerate(chunk):
            node = data.get(f"s{i}") or {}
            rows = node.get("documentEvaluations") if isinstance(node, dict) else None
            if not isinstance(rows, list):
                message = f"no documentEvaluations for span {gid}"
                raise TraceReadError(message, path=endpoint, field=f"s{i}")
            for row in rows:
                if not isinstance(row, dict):
                    raise TraceReadError("an annotation must be an object", path=endpoint)
                yield gid, row


def _with_annotations(
    http: httpx.Client,
    base: str,
    project_endpoint: str,
    page: list[tuple[str, SpanRecord]],
    headers: dict[str, str],
    max_pages: int | None,
) -> list[SpanRecord]:
    """The page's records, each with its span's (and, for a root, its trace's) annotations."""
    events: dict[str, list[SpanEvent]] = {}
    by_span = {record.span_id: record for _, record in page}
    where = SourceLocation(f"phoenix:{project_endpoint}/span_annotations", 0)
    for row in _paged_annotations(
        http, f"{project_endpoint}/span_annotations", "span_ids", sorted(by_span), headers,
        max_pages,
    ):  # fmt: skip
        span_id = str(row.get("span_id", "")).lower()
        if span_id in by_span:
            events.setdefault(span_id, []).append(annotation_event(row, where))
    roots = {r.trace_id: r.span_id for _, r in page if r.parent_span_id is None}
    where = SourceLocation(f"phoenix:{project_endpoint}/trace_annotations", 0)
    for row in _paged_annotations(
        http, f"{project_endpoint}/trace_annotations", "trace_ids", sorted(roots), headers,
        max_pages,
    ):  # fmt: skip
        root = roots.get(str(row.get("trace_id", "")).lower())
        if root is not None:
            events.setdefault(root, []).append(annotation_event(row, where))
    retrievers = {
        gid: record
        for gid, record in page
        if gid and any(key.startswith(_DOCUMENTS_PREFIX) for key in record.attributes)
    }
    where = SourceLocation(f"phoenix:{base}/graphql", 0)
    for gid, row in _document_annotations(http, base, sorted(retrievers), headers):
        record = retrievers[gid]
        position = row.get("documentPosition")
        if isinstance(position, bool) or not isinstance(position, int) or position < 0:
            message = f"document annotation without a document position: {position!r}"
            raise TraceReadError(message, path=str(where), field="annotation.documentPosition")
        document = record.attributes.get(
            f"{_DOCUMENTS_PREFIX}{position}.{sc.OI_DOCUMENT_ID}"
        )  # the document annotated, when it has an id
        event = annotation_event(
            row,
            where,
            evidence_id=document if isinstance(document, str) else None,
            document_position=position,
        )
        events.setdefault(record.span_id, []).append(event)
    return [
        record
        if record.span_id not in events
        else msgspec.structs.replace(record, events=[*record.events, *events[record.span_id]])
        for _, record in page
    ]


# ---------------------------------------------------------------------------------------------
# paging
# ---------------------------------------------------------------------------------------------


def fetch_phoenix_spans(
    url: str,
    project: str,
    *,
    api_key: str | None = None,
    page_size: int = DEFAULT_PAGE_SIZE,
    timeout: float = 30.0,
    max_pages: int | None = None,
    client: httpx.Client | None = None,
    annotations: bool = True,
) -> Iterator[SpanRecord]:
    """Yield every span of ``project``, oldest first, page by page.

    Args:
        url: Phoenix base URL, e.g. ``http://127.0.0.1:6006``.
        project: project name or id.
        api_key: sent as ``Authorization: Bearer`` when Phoenix has auth enabled.
        page_size: spans per request (1..1000).
        timeout: seconds per HTTP request.
        max_pages: stop with an error rather than page forever past this many pages.
        client: an ``httpx.Client`` to use (tests inject one); one is made otherwise.
        annotations: also read the span, trace and document annotations of each page of
            spans, as ``gen_ai.evaluation.result`` events of their spans.

    Raises:
        TraceReadError: Phoenix cannot be reached, answers an error (404: no such project),
            or sends something that is not its span or annotation JSON.
    """
    if not 1 <= page_size <= 1000:
        raise ValueError("page_size must be within 1..1000")
    base = url.rstrip("/")
    endpoint = f"{base}/v1/projects/{quote(project, safe='')}/spans"
    headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
    own = client is None
    http = client if client is not None else httpx.Client(timeout=timeout)
    try:
        position = 0
        params = {"limit": page_size, "sort": "start_time", "order": "asc"}
        for data in _pages(http, endpoint, params, headers, max_pages, "spans"):
            page: list[tuple[str, SpanRecord]] = []
            for span in data:
                position += 1
                if not isinstance(span, Mapping):
                    raise TraceReadError("a span must be an object", path=endpoint, line=position)
                where = SourceLocation(f"phoenix:{endpoint}", position)
                page.append(
                    (str(span.get("id") or ""), phoenix_span_to_record(span, location=where))
                )
            if annotations and page:
                yield from _with_annotations(http, base, endpoint.removesuffix("/spans"), page,
                                             headers, max_pages)  # fmt: skip
            else:
                yield from (record for _, record in page)
    finally:
        if own:
            http.close()


def _pages(
    http: httpx.Client,
    endpoint: str,
    params: Mapping[str, Any],
    headers: dict[str, str],
    max_pages: int | None,
    what: str,
) -> Iterator[list[Any]]:
    """The ``data`` list of every page of a cursor-paginated Phoenix list, in order.

    Raises:
        TraceReadError: more than ``max_pages`` pages, a page that is not Phoenix's list JSON,
            or a ``next_cursor`` that is not a string or repeats the last one.
    """
    cursor: str | None = None
    pages = 0
    while True:
        if max_pages is not None and pages >= max_pages:
            raise TraceReadError(f"more than {max_pages} pages of {what}", path=endpoint)
        query = dict(params) if cursor is None else {**params, "cursor": cursor}
        body = _call(http.get, endpoint, "Phoenix has no such project", params=query,
                     headers=headers)  # fmt: skip
        if not isinstance(body, dict):
            raise TraceReadError("Phoenix sent a non-object response", path=endpoint)
        pages += 1
        data = body.get("data")
        if not isinstance(data, list):
            raise TraceReadError("the response has no data list", path=endpoint, field="data")
        yield data
        next_cursor = body.get("next_cursor")
        if next_cursor is None:
            return
        if not isinstance(next_cursor, str) or next_cursor == cursor:
            message = f"bad next_cursor {next_cursor!r}"
            raise TraceReadError(message, path=endpoint, field="next_cursor")
        cursor = next_cursor


def _call(
    send: Callable[..., httpx.Response], endpoint: str, not_found: str = "", **request: Any
) -> Any:
    """The JSON body of Phoenix's 200 answer to ``send(endpoint, **request)``.

    Raises:
        TraceReadError: Phoenix cannot be reached, answers another status (404 says
            ``not_found`` when given) or sends invalid JSON.
    """
    try:
        response = send(endpoint, **request)
    except httpx.HTTPError as exc:
        raise TraceReadError(f"cannot reach Phoenix: {exc}", path=endpoint) from exc
    if response.status_code == 404 and not_found:
        raise TraceReadError(f"{not_found}: {response.text[:200]}", path=endpoint)
    if response.status_code != 200:
        message = f"Phoenix answered {response.status_code}: {response.text[:200]}"
        raise TraceReadError(message, path=endpoint)
    try:
        return response.json()
    except ValueError as exc:
        raise TraceReadError(f"Phoenix sent invalid JSON: {exc}", path=endpoint) from exc


def pull_phoenix_traces(
    url: str,
    project: str,
    *,
    api_key: str | None = None,
    page_size: int = DEFAULT_PAGE_SIZE,
    timeout: float = 30.0,
    client: httpx.Client | None = None,
    annotations: bool = True,
) -> Iterator[Trace]:
    """Every trace of a Phoenix project as τ (spans pulled and normalised lazily), with its
    annotations as the trace's ``evaluations`` (unless ``annotations`` is false).

    Raises:
        TraceReadError: see :func:`fetch_phoenix_spans`.
    """
    records = fetch_phoenix_spans(
        url, project, api_key=api_key, page_size=page_size, timeout=timeout, client=client,
        annotations=annotations,
    )  # fmt: skip
    return build_traces(records)
