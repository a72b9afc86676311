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
from dataclasses import dataclass, field
from typing import Any

from groundtrace.analyzer.cases import Case
from groundtrace.analyzer.judge import Judge, JudgeCase, Metric, check_record

from ._cases import CaseOutcome, CheckResult, CheckStatus

__all__ = ["JUDGE_MODES", "JudgeLayer", "judge_checks", "judge_verdicts"]

#: Modes a metric can run in.
JUDGE_MODES = ("block", "review", "observe")
_LAYER = "judge"


@dataclass(frozen=True, slots=True)
class JudgeLayer:
    """How judge verdicts turn into check results.

    Attributes:
        threshold: working threshold; a score below it fails the metric.
        modes: configured mode per metric name.
        eligible: per metric, whether a valid validation record makes it gate-eligible, and why.
        judge: the judge's name (recorded).
    """

    threshold: float
    modes: Mapping[str, str]
    eligible: Mapping[str, tuple[bool, str]] = field(default_factory=dict)
    judge: str = ""

    def effective_mode(self, metric: str) -> tuple[str, str]:
        """The mode in force and the reason (block is downgraded without a valid record)."""
        mode = self.modes.get(metric, "observe")
        if mode != "block":
            return mode, f"configured {mode}"
        ok, reason = self.eligible.get(metric, (False, "no validation record"))
        return ("block", reason) if ok else ("review", f"review-only: {reason}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (stored in the dataset snapshot)."""
        return {
            "threshold": self.threshold,
            "modes": dict(self.modes),
            "eligible": {k: list(v) for k, v in self.eligible.items()},
            "judge": self.judge,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JudgeLayer:
        """Inverse of :meth:`to_dict`."""
        return cls(
            threshold=float(data["threshold"]),
            modes=dict(data["modes"]),
            eligible={k: (bool(v[0]), str(v[1])) for k, v in data.get("eligible", {}).items()},
            judge=str(data.get("judge", "")),
        )


def eligibility(
    records: Sequence[Mapping[str, Any]], judge: Judge, threshold: float
) -> dict[str, tuple[bool, str]]:
    """Check each validation record against the judge's current fingerprint."""
    fingerprint = judge.fingerprint(threshold)
    out: dict[str, tuple[bool, str]] = {}
    for record in records:
        check = check_record(record, fingerprint)
        out[check.metric] = (check.valid and check.mode == "gate_eligible", check.reason)
    return out


def judge_verdicts(
    judge: Judge, cases: Sequence[Case], outcomes: Mapping[str, CaseOutcome]
) -> dict[str, dict[str, Any]]:
    """Run ``judge`` on every case whose trace has an answer and retrieved content."""
    import asyncio

    from groundtrace.analyzer.judge import judge_all

    todo: list[JudgeCase] = []
    verdicts: dict[str, dict[str, Any]] = {}
    for case in cases:
        outcome = outcomes.get(case.case_id)
        if outcome is None or outcome.answer is None:
            continue
        context = tuple(i.content for i in outcome.retrieved or () if i.content)
        if not context:
            verdicts[case.case_id] = {"missing": "no retrieved content captured"}
            continue
        todo.append(JudgeCase(case.case_id, case.question or "", context, outcome.answer))
    for result in asyncio.run(judge_all(judge, todo)):
        verdicts[result.case_id] = {
            "scores": {m.value: s for m, s in result.scores.items()},
            "errors": [{"metric": e.metric.value, "kind": e.kind.value} for e in result.errors],
        }
    return verdicts


def judge_checks(verdict: Mapping[str, Any] | None, layer: JudgeLayer) -> list[CheckResult]:
    """Check results of one case's judge verdict under ``layer``."""
    metrics = [m for m in layer.modes if m in {x.value for x in Metric}]
    if verdict is None:
        return []
    if "missing" in verdict:
        return [
            CheckResult(_LAYER, m, CheckStatus.MISSING, detail=str(verdict["missing"]))
            for m in metrics
            if layer.modes[m] != "observe"
        ]
    errors = {e["metric"]: e["kind"] for e in verdict.get("errors", [])}
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
        score = verdict.get("scores", {}).get(metric)
        if score is None:
            continue
        passed = score >= layer.threshold
        if passed:
            status = CheckStatus.PASS
        elif mode == "observe":
            status = CheckStatus.NOTED
        else:
            status = CheckStatus.FAIL
        results.append(
            CheckResult(
                _LAYER,
                metric,
                status,
                blocking=mode == "block",
                detail=f"score {score:.2f} vs threshold {layer.threshold:g}; {why}",
            )
        )
    return results
