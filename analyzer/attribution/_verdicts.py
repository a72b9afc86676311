"""The attribution's verdicts for write-back: each evidence item's score on its retrieval span.

One verdict per attributed answer and evidence item, named
``groundtrace.evidence.attribution``, on the retrieval step that returned the item with the
item's position among that step's documents (a Phoenix document annotation; an OTLP
``gen_ai.evaluation.result`` record on that span). Its score is the item's attribution in
nats (the sentences of an item summed, for ``hierarchical``); no label; the explanation names
the tier, the method, the passes, the item's rank and, where it holds, that the answer does
not depend on its context. An item whose id is not among the trace's evidence (an item
recorded without an id) comes back unlinked as ``trace:item``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from groundtrace.analyzer.writeback import Linked, Verdict
from groundtrace.collectors import Trace
from groundtrace.sdk import semconv as sc

from ._report import INDEPENDENT
from ._shape import AttributionResult, TraceAttribution

__all__ = ["attribution_verdicts", "document_scores"]


def document_scores(row: TraceAttribution) -> dict[str, float]:
    """The score of each evidence item of ``row``, in prompt order (a hierarchical row's
    sentence scores, ``item#n``, summed per item)."""
    scores: dict[str, float] = {}
    for source in row.sources:
        item = source.id
        if row.method == "hierarchical":
            item = source.id.rpartition("#")[0] or source.id
        scores[item] = scores.get(item, 0.0) + source.score
    return scores


def attribution_verdicts(result: AttributionResult, traces: Iterable[Trace]) -> Linked:
    """Every attributed item's score, on the retrieval step that returned it."""
    by_id = {t.trace_id: t for t in traces}

    def items() -> Iterator[Verdict | str]:
        for row in result.rows:
            trace = by_id.get(row.trace_id)
            scores = document_scores(row)
            ranked = sorted(scores, key=lambda item: -scores[item])
            gap = row.context_gap  # None: the behavioural tier (no log-probabilities)
            independent = gap is not None and gap < INDEPENDENT
            for item, score in scores.items():
                found = None if trace is None else next(
                    (e for e in trace.evidence if e.id == item), None
                )  # fmt: skip
                if trace is None or found is None:
                    yield f"{row.trace_id}:{item}"
                    continue
                step = found.step_span_id
                documents = [e.id for e in trace.evidence if e.step_span_id == step]
                why = (
                    f"{row.method}, tier {row.tier}, {row.passes} passes; rank "
                    f"{ranked.index(item) + 1} of {len(ranked)}"
                    + ("" if gap is None else f"; context gap {gap:.2f} nats")
                    + (" (the answer does not depend on its context)" if independent else "")
                )
                yield Verdict(
                    row.trace_id,
                    step,
                    sc.GT_EVALUATION_EVIDENCE_ATTRIBUTION,
                    case_id=row.case_id,
                    score=round(score, 6),
                    explanation=why,
                    evidence_id=item,
                    document_position=documents.index(item),
                )

    return Linked.collect(items())
