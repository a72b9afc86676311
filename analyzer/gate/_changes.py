"""New failures, failures the baseline already had, and fixed cases of a gate run.

A case *fails* in a run when its case decision is not ``promote`` (block, manual review or
not evaluable). Comparing the candidate's case decisions with the baseline's:

* **new** -- fails in the candidate, passed in the baseline (or had no baseline decision);
* **known** -- fails in both runs;
* **fixed** -- failed in the baseline, passes in the candidate.

Cases passing in both runs are not listed.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

import msgspec

from ._bayes import Decision
from ._decision import CaseDecision

__all__ = ["CaseChange", "ChangeKind", "FailureChanges", "compare_cases"]


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
        failed_before = old is not None and not old.passed
        if case.passed and not failed_before:
            continue
        if case.passed:
            kind = ChangeKind.FIXED
        else:
            kind = ChangeKind.KNOWN if failed_before else ChangeKind.NEW
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
