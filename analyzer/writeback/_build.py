"""Verdicts of each analysis: gate case decisions, path statuses, judge scores, evidence roles.

A label-only verdict (gate decision, path status, evidence roles) also carries a score, so a
backend charts it and a failed path does not look like a passed one. One rule for all:
1.0 for an outcome that passes, 0.0 for one that fails, 0.5 for one in between; no score where
there is no verdict (a case the gate could not evaluate, a path check that does not apply, an
item none of whose roles could be evaluated), so a mean is over the decided cases only:

* gate: ``promote`` 1.0, ``manual_review`` 0.5, ``block`` 0.0, ``not_evaluable`` none;
* paths: ``pass`` 1.0, every failed status 0.0, ``not_required`` / ``not_applicable`` none;
* evidence role: 0.0 when a harmful role (``distracting``, ``confidence-distorting``) is
  asserted, else 1.0 when a helpful one (``constructive``, ``corrective``) is, else 0.5
  (``redundant``, or no role); none when no role is asserted and some were not evaluable.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Final

from groundtrace.sdk import semconv as sc

from ._verdict import Linked, Target, Verdict, link

if TYPE_CHECKING:
    from groundtrace.analyzer.gate import GateReport
    from groundtrace.analyzer.interventions import RunResult
    from groundtrace.analyzer.judge import JudgeResult
    from groundtrace.analyzer.paths import PathReport

__all__ = ["gate_verdicts", "judge_verdicts", "label_score", "path_verdicts", "role_verdicts"]

PASSED: Final = 1.0
FAILED: Final = 0.0
BETWEEN: Final = 0.5
#: Score of each gate decision (``not_evaluable`` has none).
GATE_SCORES: Final = {"promote": PASSED, "manual_review": BETWEEN, "block": FAILED}
#: Path statuses that are no verdict (no score); ``pass`` passes, every other status fails.
PATHS_UNSCORED: Final = frozenset({"not_required", "not_applicable"})
#: Evidence roles that hurt the answer, and roles that help it.
HARMFUL_ROLES: Final = frozenset({"distracting", "confidence-distorting"})
HELPFUL_ROLES: Final = frozenset({"constructive", "corrective"})
#: The role label of an item with no role asserted.
NO_ROLE: Final = "none"


def label_score(name: str, label: str, *, evaluable: bool = True) -> float | None:
    """The score of a label-only verdict by the rule of the module docstring.

    ``name`` is the evaluation name (``groundtrace.gate.case``...), ``label`` the verdict's
    label; ``evaluable`` is false for an evidence item some of whose roles could not be
    evaluated. ``None`` for no verdict, and for a name that is not label-only.
    """
    if name == sc.GT_EVALUATION_GATE_CASE:
        return GATE_SCORES.get(label)
    if name == sc.GT_EVALUATION_PATH_STATUS:
        if label in PATHS_UNSCORED:
            return None
        return PASSED if label == "pass" else FAILED
    if name == sc.GT_EVALUATION_EVIDENCE_ROLE:
        roles = set() if label == NO_ROLE else set(label.split(","))
        if roles & HARMFUL_ROLES:
            return FAILED
        if roles & HELPFUL_ROLES:
            return PASSED
        return BETWEEN if roles or evaluable else None
    return None


def gate_verdicts(
    report: GateReport, trace_ids: Mapping[str, str | None], roots: Mapping[str, str]
) -> Linked:
    """The candidate's case decisions, with their reasons and whether a failure is new.

    ``trace_ids`` maps a case id to the candidate trace it was decided on.
    """
    changes = {} if report.changes is None else report.changes.by_case()

    def items() -> Iterator[Verdict | str]:
        for case in report.cases:
            trace_id = trace_ids.get(case.case_id)
            span = link(trace_id, roots)
            if trace_id is None or span is None:
                yield case.case_id
                continue
            change = changes.get(case.case_id)
            prefix = "" if change is None else f"{change.kind.value}: "
            yield Verdict(
                trace_id,
                span,
                sc.GT_EVALUATION_GATE_CASE,
                case_id=case.case_id,
                label=case.decision.value,
                score=label_score(sc.GT_EVALUATION_GATE_CASE, case.decision.value),
                explanation=prefix + ("; ".join(case.reasons) or "all checks passed"),
            )

    return Linked.collect(items())


def path_verdicts(report: PathReport, roots: Mapping[str, str]) -> Linked:
    """The path status of every case with its issues and call errors."""

    def items() -> Iterator[Verdict | str]:
        for v in report.verdicts:
            span = link(v.trace_id, roots)
            if v.trace_id is None or span is None:
                yield v.case_id
                continue
            why = [str(i.get("message", i.get("status", ""))) for i in v.issues]
            why += [e.message for e in v.call_errors]
            yield Verdict(
                v.trace_id,
                span,
                sc.GT_EVALUATION_PATH_STATUS,
                case_id=v.case_id,
                label=v.status.value,
                score=label_score(sc.GT_EVALUATION_PATH_STATUS, v.status.value),
                explanation="; ".join(w for w in why if w) or None,
            )

    return Linked.collect(items())


def judge_verdicts(
    results: Sequence[JudgeResult],
    trace_ids: Mapping[str, str],
    targets: Mapping[str, Target],
    threshold: float,
) -> Linked:
    """One verdict per judge metric and case: its score and pass/fail, or its protocol error.

    ``trace_ids`` maps a judge case id to its trace; cases read from a case file have none.
    ``targets`` (:func:`answer_spans`) names the span each trace's answer came from: the
    verdicts go there, with the completion's ``gen_ai.response.id``.
    """

    def items() -> Iterator[Verdict | str]:
        for result in results:
            trace_id = trace_ids.get(result.case_id)
            target = None if trace_id is None else targets.get(trace_id)
            if trace_id is None or target is None:
                yield result.case_id
                continue
            for metric, score in sorted(result.scores.items()):
                yield Verdict(
                    trace_id,
                    target.span_id,
                    f"{sc.GT_EVALUATION_JUDGE}.{metric.value}",
                    case_id=result.case_id,
                    label="pass" if score >= threshold else "fail",
                    score=score,
                    explanation=result.rationale,
                    response_id=target.response_id,
                )
            for error in result.errors:
                yield Verdict(
                    trace_id,
                    target.span_id,
                    f"{sc.GT_EVALUATION_JUDGE}.{error.metric.value}",
                    case_id=result.case_id,
                    label="protocol_error",
                    explanation=error.message,
                    error_type=error.kind.value,
                    response_id=target.response_id,
                )

    return Linked.collect(items())


def role_verdicts(result: RunResult) -> Linked:
    """The roles of each item's target evidence, on the retrieval step that returned it.

    The verdict carries the item's position among that step's documents (the order the step
    recorded them in). The label lists the roles asserted (``none`` when the target has
    none); the explanation says which roles could not be evaluated and why.
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
                score=label_score(
                    sc.GT_EVALUATION_EVIDENCE_ROLE, label, evaluable=not roles.not_evaluable
                ),
                explanation=why or None,
                evidence_id=target,
                document_position=documents.index(target),
            )

    return Linked.collect(items())
