"""Structural checks of one trace's spans: duplicates, roots, orphans, clock skew, order,
and the malformed fields a reader dropped."""

from __future__ import annotations

from operator import attrgetter

from groundtrace.collectors.model import Finding, FindingKind
from groundtrace.collectors.spans import SpanRecord

from ._values import location_text

__all__ = ["Structure", "check_structure"]


_ORDER = attrgetter("start_time_unix_nano", "span_id")


def _loc(span: SpanRecord) -> str | None:
    return location_text(span.location)


class Structure:
    """The spans of a trace, deduplicated and ordered, with their structural findings."""

    __slots__ = ("root", "spans")

    def __init__(self, spans: list[SpanRecord], root: SpanRecord | None) -> None:
        self.spans = spans
        self.root = root


def _bad_fields(span: SpanRecord, findings: list[Finding]) -> None:
    loc = _loc(span)
    for bad in span.bad_fields:
        findings.append(
            Finding(
                FindingKind.MALFORMED_FIELD,
                f"span {span.span_id} ({span.name!r}) at {loc or 'unknown location'}: "
                f"{bad.field}: {bad.message}",
                span.span_id,
                loc,
                bad.field,
            )
        )


def check_structure(records: list[SpanRecord], findings: list[Finding]) -> Structure:
    """Deduplicate span ids, find the root, report orphans, clock skew and dropped fields;
    order by start."""
    by_id: dict[str, SpanRecord] = {}
    for span in records:
        first = by_id.get(span.span_id)
        if first is None:
            by_id[span.span_id] = span
            continue
        findings.append(
            Finding(
                FindingKind.DUPLICATE_SPAN_ID,
                f"span id {span.span_id} appears more than once (first at "
                f"{_loc(first) or 'unknown location'}); the later copy is ignored",
                span.span_id,
                _loc(span),
            )
        )
    spans = sorted(by_id.values(), key=_ORDER)
    for span in spans:
        if span.bad_fields:
            _bad_fields(span, findings)
    roots: list[SpanRecord] = []
    for span in spans:
        parent_id = span.parent_span_id
        if not parent_id:
            roots.append(span)
        elif parent_id not in by_id:
            findings.append(
                Finding(
                    FindingKind.ORPHAN_SPAN,
                    f"span {span.span_id} ({span.name!r}) has parent {parent_id}, "
                    "which is not in the trace",
                    span.span_id,
                    _loc(span),
                )
            )
    if not roots:
        findings.append(
            Finding(FindingKind.NO_ROOT, "the trace has no root span (every span has a parent)")
        )
    elif len(roots) > 1:
        ids = ", ".join(r.span_id for r in roots)
        findings.append(
            Finding(
                FindingKind.MULTIPLE_ROOTS,
                f"the trace has {len(roots)} root spans ({ids}); the earliest is the request",
            )
        )
    for span in spans:
        start, end = span.start_time_unix_nano, span.end_time_unix_nano
        if end < start:
            findings.append(
                Finding(
                    FindingKind.CLOCK_SKEW,
                    f"span {span.span_id} ({span.name!r}) ends before it starts",
                    span.span_id,
                    _loc(span),
                )
            )
            continue
        parent_id = span.parent_span_id
        parent = by_id.get(parent_id) if parent_id else None
        if parent is not None and (
            start < parent.start_time_unix_nano or end > parent.end_time_unix_nano
        ):
            findings.append(
                Finding(
                    FindingKind.CLOCK_SKEW,
                    f"span {span.span_id} ({span.name!r}) lies outside the time window of "
                    f"its parent {parent.span_id}",
                    span.span_id,
                    _loc(span),
                )
            )
    return Structure(spans, roots[0] if roots else None)
