"""Verdicts as Arize Phoenix annotations, in the views Phoenix shows them, through its REST API.

* a per-request result (gate decision, path status, judge score) is a *trace annotation*
  (``POST /v1/trace_annotations``): Phoenix's trace annotation scores panel shows it;
* an evidence-role result is a *document annotation* on the retrieval span and the position of
  the document (``POST /v1/document_annotations``): Phoenix shows it in the Document
  Annotations box under that retrieved document; one whose position is unknown stays a span
  annotation on the retrieval span (``POST /v1/span_annotations``).

Phoenix's UI cuts annotation names to about 12 characters, so each name is short with the
distinguishing word first (``gate``, ``paths``, ``adherence``, ``answer_relevance``,
``context_relevance``, ``role``); the full evaluation name (``groundtrace.judge.adherence``)
and the project are in the annotation's metadata. Every annotation has ``annotator_kind``
``CODE``. Phoenix keeps one trace or span annotation per (name, target, identifier), and one
document annotation per (name, span, document position) -- document annotations take no
identifier -- so a rerun updates what it wrote before instead of adding duplicates.

All requests use ``?sync=true``: Phoenix then checks that every span or trace exists and
answers 404 naming those that do not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import httpx

from groundtrace.analyzer.errors import WriteBackError
from groundtrace.sdk import semconv as sc

from ._verdict import Verdict

__all__ = ["annotate_phoenix", "phoenix_annotation", "phoenix_name"]

#: Annotations per request.
BATCH = 100
#: Request timeout, seconds.
TIMEOUT_S = 60.0
#: The ``source`` recorded in every annotation's metadata.
SOURCE: Final = "groundtrace"
#: Phoenix's three annotation endpoints, by what they annotate.
TRACE: Final = "trace_annotations"
DOCUMENT: Final = "document_annotations"
SPAN: Final = "span_annotations"
_SHORT: Final = {
    sc.GT_EVALUATION_GATE_CASE: "gate",
    sc.GT_EVALUATION_PATH_STATUS: "paths",
    sc.GT_EVALUATION_EVIDENCE_ROLE: "role",
    sc.GT_EVALUATION_EVIDENCE_ATTRIBUTION: "attribution",
}
_JUDGE_PREFIX: Final = sc.GT_EVALUATION_JUDGE + "."


def phoenix_name(name: str) -> str:
    """The short annotation name Phoenix shows for the evaluation ``name``.

    ``groundtrace.judge.<metric>`` -> ``<metric>``, the gate's case decision -> ``gate``, the
    path status -> ``paths``, evidence roles -> ``role``, evidence attribution ->
    ``attribution``; any other name is kept.
    """
    if name.startswith(_JUDGE_PREFIX):
        return name[len(_JUDGE_PREFIX) :]
    return _SHORT.get(name, name)


def phoenix_annotation(verdict: Verdict) -> tuple[str, dict[str, Any]]:
    """The Phoenix endpoint (``trace_annotations``...) and annotation object of one verdict."""
    result: dict[str, Any] = {}
    if verdict.label is not None:
        result["label"] = verdict.label
    if verdict.score is not None:
        result["score"] = verdict.score
    if verdict.explanation is not None:
        result["explanation"] = verdict.explanation
    metadata = {
        k: v
        for k, v in (
            ("source", SOURCE),
            ("evaluation", verdict.name),
            ("case_id", verdict.case_id),
            ("evidence_id", verdict.evidence_id),
            ("error_type", verdict.error_type),
            ("trace_id", verdict.trace_id),
            ("span_id", verdict.span_id),
            ("response_id", verdict.response_id),
        )
        if v is not None
    }
    annotation: dict[str, Any] = {
        "name": phoenix_name(verdict.name),
        "annotator_kind": "CODE",
        "result": result,
        "metadata": metadata,
    }
    if verdict.per_request:
        return TRACE, {"trace_id": verdict.trace_id, **annotation, "identifier": verdict.identifier}
    if verdict.document_position is not None:
        return DOCUMENT, {
            "span_id": verdict.span_id,
            "document_position": verdict.document_position,
            **annotation,
        }
    return SPAN, {"span_id": verdict.span_id, **annotation, "identifier": verdict.identifier}


def annotate_phoenix(
    verdicts: Sequence[Verdict], url: str, *, client: httpx.Client | None = None
) -> int:
    """Write the verdicts as trace, document and span annotations to the Phoenix at ``url``.

    Returns:
        the number of annotations Phoenix accepted.

    Raises:
        WriteBackError: Phoenix is unreachable or refused a batch (its reason is quoted).
    """
    base = url.rstrip("/")
    by_endpoint: dict[str, list[dict[str, Any]]] = {TRACE: [], DOCUMENT: [], SPAN: []}
    for verdict in verdicts:
        endpoint, annotation = phoenix_annotation(verdict)
        by_endpoint[endpoint].append(annotation)
    owned = client is None
    http = client or httpx.Client(timeout=TIMEOUT_S)
    accepted = 0
    try:
        for endpoint, annotations in by_endpoint.items():
            what = endpoint.replace("_", " ").removesuffix("s")
            for start in range(0, len(annotations), BATCH):
                batch = annotations[start : start + BATCH]
                try:
                    response = http.post(
                        f"{base}/v1/{endpoint}", params={"sync": "true"}, json={"data": batch}
                    )
                except httpx.HTTPError as exc:
                    raise WriteBackError(
                        f"Phoenix at {base} unreachable: {exc} ({accepted} annotation(s) written)"
                    ) from None
                if response.status_code >= 400:
                    raise WriteBackError(
                        f"Phoenix at {base} refused {len(batch)} {what}(s) "
                        f"(HTTP {response.status_code}): {response.text[:500]} "
                        f"({accepted} annotation(s) written before)"
                    )
                accepted += len(batch)
    finally:
        if owned:
            http.close()
    return accepted
