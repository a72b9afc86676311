"""Verdicts as Arize Phoenix span annotations, through Phoenix's REST API.

``POST {url}/v1/span_annotations?sync=true`` with ``{"data": [...]}``; each annotation names
its span, an ``annotator_kind`` of ``CODE`` and an ``identifier``. Phoenix keeps one annotation
per (name, span, identifier) and updates it on a second post, so a rerun replaces the
annotations it wrote before instead of adding duplicates.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx

from groundtrace.analyzer.errors import WriteBackError

from ._verdict import Verdict

__all__ = ["annotate_phoenix", "phoenix_annotation"]

#: Annotations per request.
BATCH = 100
#: Request timeout, seconds.
TIMEOUT_S = 60.0


def phoenix_annotation(verdict: Verdict) -> dict[str, Any]:
    """The ``SpanAnnotationData`` object Phoenix expects for one verdict."""
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
            ("case_id", verdict.case_id),
            ("evidence_id", verdict.evidence_id),
            ("error_type", verdict.error_type),
            ("trace_id", verdict.trace_id),
        )
        if v is not None
    }
    return {
        "span_id": verdict.span_id,
        "name": verdict.name,
        "annotator_kind": "CODE",
        "result": result,
        "metadata": metadata,
        "identifier": verdict.identifier,
    }


def annotate_phoenix(
    verdicts: Sequence[Verdict], url: str, *, client: httpx.Client | None = None
) -> int:
    """Write the verdicts as span annotations to the Phoenix server at ``url``.

    Returns:
        the number of annotations Phoenix accepted.

    Raises:
        WriteBackError: Phoenix is unreachable or refused a batch (its reason is quoted).
    """
    base = url.rstrip("/")
    owned = client is None
    http = client or httpx.Client(timeout=TIMEOUT_S)
    accepted = 0
    try:
        for start in range(0, len(verdicts), BATCH):
            batch = verdicts[start : start + BATCH]
            body = {"data": [phoenix_annotation(v) for v in batch]}
            try:
                response = http.post(
                    f"{base}/v1/span_annotations", params={"sync": "true"}, json=body
                )
            except httpx.HTTPError as exc:
                raise WriteBackError(
                    f"Phoenix at {base} unreachable: {exc} ({accepted} annotation(s) written)"
                ) from None
            if response.status_code >= 400:
                raise WriteBackError(
                    f"Phoenix at {base} refused {len(batch)} span annotation(s) "
                    f"(HTTP {response.status_code}): {response.text[:500]} "
                    f"({accepted} annotation(s) written before)"
                )
            accepted += len(batch)
    finally:
        if owned:
            http.close()
    return accepted
