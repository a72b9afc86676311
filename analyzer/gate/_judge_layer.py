"""Layer 3 of the gate: judge metrics in block / review / observe mode (SPEC 4.4–4.5).

A metric configured ``block`` may block only when a validation record bound to the current
judge fingerprint says it is gate-eligible; otherwise it runs review-only (its failures route to
manual review, never block or promote). ``observe`` metrics are recorded and have no effect. A
protocol error fails the metric and routes the case to manual review.

Judge verdicts are data: they are stored in the dataset snapshot, so ``gate verify`` re-derives
the decision from the recorded scores without calling a judge again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import get_args

import msgspec

from groundtrace.analyzer.cases import Case
from groundtrace.analyzer.errors import InputError
from groundtrace.analyzer.judge import (
    ContextSource,
    Judge,
    JudgeCase,
    Metric,
    ValidationRecord,
)

from ._cases import CaseOutcome, CheckResult, CheckStatus
from ._profile import JudgeMode, Profile

__all__ = [
    "JUDGE_MODES",
    "JudgeLayer",
    "JudgeSnapshot",
    "JudgeVerdict",
    "VerdictError",
    "eligibility",
    "judge_checks",
    "judge_snapshot",
    "judge_verdicts",
]

#: Modes a metric can run in.
JUDGE_MODES: tuple[str, ...] = get_args(JudgeMode)
_LAYER = "judge"


#: (has retrieved content, has tool results) -> what the answer is judged against.
_SOURCES: dict[tuple[bool, bool], ContextSource | None] = {
    (True, False): ContextSource.DOCUMENTS,
    (False, True): ContextSource.TOOL_RESULTS,
    (True, True): ContextSource.BOTH,
    (False, False): None,
}


class JudgeLayer(msgspec.Struct, frozen=True):
    """How judge verdicts turn into check results.

    Attributes:
        threshold: working threshold; a score below it fails the metric.
        modes: configured mode per metric name.
        eligible: per metric, whether a valid validation record makes it gate-eligible, and why.
        judge: the judge's name (recorded).
    """

    threshold: float
    modes: dict[str, str]
    eligible: dict[str, tuple[bool, str]] = msgspec.field(default_factory=dict)
    judge: str = ""

    def effective_mode(self, metric: str) -> tuple[str, str]:
        """The mode in force and the reason (block is downgraded without a valid record)."""
        mode = self.modes.get(metric, "observe")
        if mode != "block":
            return mode, f"configured {mode}"
        ok, reason = self.eligible.get(metric, (False, "no validation record"))
        return ("block", reason) if ok else ("review", f"review-only: {reason}")


class VerdictError(msgspec.Struct, frozen=True):
    """A metric the judge failed to score on a case."""

    metric: str
    kind: str


class JudgeVerdict(msgspec.Struct, frozen=True, omit_defaults=True):
    """The judge's verdict on one case as the gate stores it (``missing``: not judged, why;
    ``context``: what the answer was judged against, a ``ContextSource`` value, when not the
    retrieved documents)."""

    scores: dict[str, float] = msgspec.field(default_factory=dict)
    errors: tuple[VerdictError, ...] = ()
    missing: str | None = None
    context: str | None = None


class JudgeSnapshot(msgspec.Struct, frozen=True):
    """The judge layer and its verdicts on both runs (stored in the dataset snapshot)."""

    layer: JudgeLayer
    baseline: dict[str, JudgeVerdict]
    candidate: dict[str, JudgeVerdict]


def eligibility(
    records: Sequence[ValidationRecord], judge: Judge, threshold: float
) -> dict[str, tuple[bool, str]]:
    """Check each validation record against the judge's current fingerprint."""
    fingerprint = judge.fingerprint(threshold)
    out: dict[str, tuple[bool, str]] = {}
    for record in records:
        check = record.check(fingerprint)
        out[check.metric] = (check.valid and check.mode == "gate_eligible", check.reason)
    return out


async def judge_verdicts(
    judge: Judge, cases: Sequence[Case], outcomes: Mapping[str, CaseOutcome]
) -> dict[str, JudgeVerdict]:
    """Run ``judge`` on every case whose trace has an answer and content to judge it against:
    the retrieved documents, then the tool results (an agent's answer rests on them)."""
    from groundtrace.analyzer.judge import judge_all

    todo: list[JudgeCase] = []
    verdicts: dict[str, JudgeVerdict] = {}
    for case in cases:
        outcome = outcomes.get(case.case_id)
        if outcome is None or outcome.answer is None:
            continue
        documents = tuple(i.content for i in outcome.retrieved or () if i.content)
        source = _SOURCES[bool(documents), bool(outcome.tool_results)]
        if source is None:
            verdicts[case.case_id] = JudgeVerdict(
                missing="no retrieved content or tool results captured"
            )
            continue
        context = documents + outcome.tool_results
        todo.append(JudgeCase(case.case_id, case.question or "", context, outcome.answer, source))
    sources = {c.case_id: c.source for c in todo}
    for result in await judge_all(judge, todo):
        source = sources[result.case_id]
        verdicts[result.case_id] = JudgeVerdict(
            {m.value: s for m, s in result.scores.items()},
            tuple(VerdictError(e.metric.value, e.kind.value) for e in result.errors),
            context=None if source is ContextSource.DOCUMENTS else source.value,
        )
    return verdicts


def judge_checks(verdict: JudgeVerdict | None, layer: JudgeLayer) -> list[CheckResult]:
    """Check results of one case's judge verdict under ``layer``."""
    metrics = [m for m in layer.modes if m in {x.value for x in Metric}]
    if verdict is None:
        return []
    if verdict.missing is not None:
        return [
            CheckResult(_LAYER, m, CheckStatus.MISSING, detail=verdict.missing)
            for m in metrics
            if layer.modes[m] != "observe"
        ]
    errors = {e.metric: e.kind for e in verdict.errors}
    results: list[CheckResult] = []
    for metric in metrics:
        mode, why = layer.effective_mode(metric)
        if metric in errors:
            status = CheckStatus.NOTED if mode == "observe" else CheckStatus.PROTOCOL_ERROR
            results.append(
                CheckResult(
                    _LAYER, metric, status, detail=f"protocol error {errors[metric]}; {why}"
                )
            )
            continue
        score = verdict.scores.get(metric)
        if score is None:
            continue
        passed = score >= layer.threshold
        if passed:
            status = CheckStatus.PASS
        elif mode == "observe":
            status = CheckStatus.NOTED
        else:
            status = CheckStatus.FAIL
        against = "" if verdict.context is None else f" (judged against {verdict.context})"
        results.append(
            CheckResult(
                _LAYER,
                metric,
                status,
                blocking=mode == "block",
                detail=f"score {score:.2f} vs threshold {layer.threshold:g}{against}; {why}",
            )
        )
    return results


async def judge_snapshot(
    name: str,
    records: Sequence[str | Path],
    profile: Profile,
    cases: Sequence[Case],
    baseline: Mapping[str, CaseOutcome],
    candidate: Mapping[str, CaseOutcome],
) -> JudgeSnapshot:
    """The judge layer of ``profile`` and judge ``name``'s verdicts on both runs.

    ``records`` are the judge's validation records (``groundtrace judge validate``): a
    ``block`` metric blocks only when one of them makes it gate-eligible.

    Raises:
        InputError: ``name`` is not ``lexical`` (the offline judge), or a record cannot be
            read.
    """
    from groundtrace.analyzer.judge import LexicalJudge

    if name != "lexical":
        raise InputError(f"unknown judge {name!r} (the gate runs the offline 'lexical' judge)")
    judge = LexicalJudge()
    settings = profile.settings.judge  # its modes are JUDGE_MODES (checked on loading)
    threshold = settings.threshold
    modes: dict[str, str] = dict(settings.modes)
    layer = JudgeLayer(
        threshold=threshold,
        modes=modes,
        eligible=eligibility([ValidationRecord.from_file(r) for r in records], judge, threshold),
        judge=judge.name,
    )
    return JudgeSnapshot(
        layer,
        await judge_verdicts(judge, cases, baseline),
        await judge_verdicts(judge, cases, candidate),
    )
