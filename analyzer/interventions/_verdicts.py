"""The interventions' verdicts for write-back: the roles of each item's target evidence.

Each verdict sits on the retrieval step that returned the item, with the item's position
among that step's documents. Its label lists the roles asserted (``none`` when the target has
none); its score: 0.0 (failed) when a harmful role (``distracting``,
``confidence-distorting``) is asserted, else 1.0 (passed) when a helpful one
(``constructive``, ``corrective``) is, else 0.5 (``redundant``, or no role); no score when no
role is asserted and some could not be evaluated.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from groundtrace.analyzer.writeback import Linked, Verdict
from groundtrace.sdk import semconv as sc

from ._roles import Role
from ._run import InterventionsResult

__all__ = ["NO_ROLE", "role_score", "role_verdicts"]

#: Evidence roles that hurt the answer, and roles that help it.
HARMFUL: Final = frozenset({Role.DISTRACTING.value, Role.CONFIDENCE_DISTORTING.value})
HELPFUL: Final = frozenset({Role.CONSTRUCTIVE.value, Role.CORRECTIVE.value})
#: The role label of an item with no role asserted.
NO_ROLE: Final = "none"


def role_score(label: str, *, evaluable: bool = True) -> float | None:
    """The score of a role label (roles joined by commas, or ``none``).

    ``evaluable`` is false when some of the item's roles could not be evaluated.
    """
    roles = set() if label == NO_ROLE else set(label.split(","))
    if roles & HARMFUL:
        return Verdict.FAILED
    if roles & HELPFUL:
        return Verdict.PASSED
    return Verdict.BETWEEN if roles or evaluable else None


def role_verdicts(result: InterventionsResult) -> Linked:
    """The roles of each item's target evidence, on the retrieval step that returned it.

    The verdict carries the item's position among that step's documents (the order the step
    recorded them in). The explanation says which roles could not be evaluated and why.
    """

    def items() -> Iterator[Verdict | str]:
        for plan, roles in result.roles:
            trace = plan.trace
            target = None if plan.target is None else plan.target.chunk.id
            step = next((e.step_span_id for e in trace.evidence if e.id == target), None)
            if target is None or step is None:
                yield plan.key
                continue
            documents = [e.id for e in trace.evidence if e.step_span_id == step]
            why = "; ".join(
                f"{r} not evaluable: {m}" for r, m in sorted(roles.not_evaluable.items())
            )
            label = ",".join(sorted(str(r) for r in roles.roles)) or NO_ROLE
            yield Verdict(
                trace.trace_id,
                step,
                sc.GT_EVALUATION_EVIDENCE_ROLE,
                case_id=trace.request.case_id,
                label=label,
                score=role_score(label, evaluable=not roles.not_evaluable),
                explanation=why or None,
                evidence_id=target,
                document_position=documents.index(target),
            )

    return Linked.collect(items())
