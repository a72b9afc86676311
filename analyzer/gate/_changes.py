"""New failures, failures the baseline already had, and fixed cases of a gate run.

A case *fails* in a run when its case decision is not ``promote`` (block, manual review or
not evaluable). Comparing the candidate's case decisions with the baseline's:

* **new** -- fails in the candidate, and the baseline did not evaluate it as failing: it
  passed there, had no decision, or was ``not_evaluable`` (no trace, nothing checked -- a
  pull request that adds cases, a partial baseline artifact). It fails closed: a failure
  counts as known only when the baseline *evaluated* the case and it failed there;
* **known** -- fails in the candidate and the baseline evaluated it as failing
  (``block`` or ``manual_review``);
* **fixed** -- failed in the baseline (any decision but ``promote``), passes in the candidate.

Cases passing in both runs are not listed.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

import msgspec

from ._bayes import Decision
from ._decision import CaseDecision

__all__ = ["CaseChange", "ChangeKind", "FailureChanges", "compare_cases"]

#: Baseline decisions that make a candidate failure *known*: the baseline evaluated the case.
_EVALUATED_FAILURE = frozenset({Decision.BLOCK, Decision.MANUAL_REVIEW})


class ChangeKind(StrEnum):
    """How a case's failure status changed from the baseline to the candidate."""

    NEW = "new"
    KNOWN = "known"
    FIXED = "fixed"


class CaseChange(msgspec.Struct, frozen=True):
    """One case whose failure status is worth listing.

    Attributes:
        case_id: the case.
        stratum: its stratum.
        kind: new failure, known failure or fixed.
        baseline: the baseline's case decision (``None``: the case had none there).
        candidate: the candidate's case decision.
        baseline_reasons: why the baseline did not promote it (empty when it did).
    """

    case_id: str
    stratum: str
    kind: ChangeKind
    baseline: Decision | None
    candidate: Decision
    baseline_reasons: tuple[str, ...] = ()


class FailureChanges(msgspec.Struct, frozen=True):
    """The candidate's failures split by what the baseline showed, in case order."""

    new: tuple[CaseChange, ...] = ()
    known: tuple[CaseChange, ...] = ()
    fixed: tuple[CaseChange, ...] = ()

    def by_case(self) -> dict[str, CaseChange]:
        """Case id -> its change (cases passing in both runs are absent)."""
        return {c.case_id: c for c in (*self.new, *self.known, *self.fixed)}


def compare_cases(
    baseline: Sequence[CaseDecision], candidate: Sequence[CaseDecision]
) -> FailureChanges:
    """Split the candidate's failures into new and known ones, and list the fixed cases."""
    before = {c.case_id: c for c in baseline}
    found: dict[ChangeKind, list[CaseChange]] = {kind: [] for kind in ChangeKind}
    for case in candidate:
        old = before.get(case.case_id)
        if case.passed:
            if old is None or old.passed:
                continue
            kind = ChangeKind.FIXED
        elif old is not None and old.decision in _EVALUATED_FAILURE:
            kind = ChangeKind.KNOWN
        else:
            kind = ChangeKind.NEW
        found[kind].append(
            CaseChange(
                case.case_id,
                case.stratum,
                kind,
                None if old is None else old.decision,
                case.decision,
                () if old is None else old.reasons,
            )
        )
    return FailureChanges(
        tuple(found[ChangeKind.NEW]), tuple(found[ChangeKind.KNOWN]), tuple(found[ChangeKind.FIXED])
    )
