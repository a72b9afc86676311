"""Case and run decisions of the gate (SPEC 4.5), with the reasons behind every non-promote.

Case decision, in this order:

1. no check, rule or metric produced a result -> ``not_evaluable`` (what is missing is listed);
2. any failure in the critical set C, a failed blocking rule/metric, or any failed check of
   a critical case (``critical: true`` or the ``critical`` stratum: "a failure always
   blocks") -> ``block``; C is a floor no profile can lower;
3. any other failure, timeout, protocol error or missing evidence -> ``manual_review``;
4. otherwise ``promote``. Missing evidence can never produce ``promote``.

Run decision (conservative): ``block`` if any case blocks; ``not_evaluable`` if nothing could be
evaluated or the evaluable share is below the profile minimum; ``manual_review`` if any case is
``manual_review`` or ``not_evaluable`` (the gaps are listed); otherwise ``promote``.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from groundtrace.analyzer._wording import some

from ._bayes import Decision
from ._cases import CheckResult, CheckStatus

__all__ = ["CaseDecision", "RunDecision", "decide_case", "decide_run"]

_PRODUCED = {CheckStatus.PASS, CheckStatus.FAIL, CheckStatus.NOTED}


class CaseDecision(msgspec.Struct, frozen=True):
    """A case's decision with its reasons and every result behind it."""

    case_id: str
    stratum: str
    decision: Decision
    reasons: tuple[str, ...]
    results: tuple[CheckResult, ...]

    @property
    def passed(self) -> bool:
        """Whether the case counts as a pass in the statistical comparison."""
        return self.decision is Decision.PROMOTE


def _reason(result: CheckResult) -> str:
    evidence = f" ({some(result.evidence, 3, '; ')})" if result.evidence else ""
    detail = f": {result.detail}" if result.detail else ""
    return f"{result.layer}.{result.name} {result.status.value}{detail}{evidence}"


def decide_case(
    case_id: str, stratum: str, results: Sequence[CheckResult], *, critical: bool = False
) -> CaseDecision:
    """Apply the case rules to the results of all three layers.

    ``critical``: the case is critical (flag or stratum), so any failed check blocks.
    """

    def decided(decision: Decision, reasons: tuple[str, ...] = ()) -> CaseDecision:
        return CaseDecision(case_id, stratum, decision, reasons, tuple(results))

    produced = [r for r in results if r.status in _PRODUCED]
    if not produced:
        missing = tuple(_reason(r) for r in results) or ("no check applied to this case",)
        return decided(Decision.NOT_EVALUABLE, missing)
    # A critical check that could not run is missing evidence (review), not a block.
    blocking = [
        r
        for r in results
        if r.status is CheckStatus.FAIL and (r.critical or r.blocking or critical)
    ]
    if blocking:
        reasons = tuple(
            _reason(r) + ("" if r.critical or r.blocking else " [critical case]") for r in blocking
        )
        return decided(Decision.BLOCK, reasons)
    review = [r for r in results if r.status not in {CheckStatus.PASS, CheckStatus.NOTED}]
    if review:
        return decided(Decision.MANUAL_REVIEW, tuple(_reason(r) for r in review))
    return decided(Decision.PROMOTE)


class RunDecision(msgspec.Struct, frozen=True):
    """The conservative aggregate of case decisions."""

    decision: Decision
    reasons: tuple[str, ...]
    counts: dict[str, int] = msgspec.field(default_factory=dict)
    evaluable_share: float = 0.0


def decide_run(cases: Sequence[CaseDecision], min_evaluable: float) -> RunDecision:
    """Aggregate case decisions; never less severe than any case except as documented."""
    counts = {d.value: 0 for d in Decision}
    for c in cases:
        counts[c.decision.value] += 1
    total = len(cases)
    evaluable = total - counts[Decision.NOT_EVALUABLE.value]
    share = evaluable / total if total else 0.0
    blocked = [c.case_id for c in cases if c.decision is Decision.BLOCK]
    gaps = [
        c.case_id for c in cases if c.decision in {Decision.MANUAL_REVIEW, Decision.NOT_EVALUABLE}
    ]
    if blocked:
        decision, why = Decision.BLOCK, f"{len(blocked)} case(s) block: {some(blocked)}"
    elif evaluable == 0 or share < min_evaluable:
        why = f"evaluable coverage {share:.0%} below minimum {min_evaluable:.0%}"
        decision = Decision.NOT_EVALUABLE
    elif gaps:
        why = f"{len(gaps)} case(s) need review or could not be evaluated: {some(gaps)}"
        decision = Decision.MANUAL_REVIEW
    else:
        decision, why = Decision.PROMOTE, ""
    return RunDecision(decision, (why,) if why else (), counts, share)
