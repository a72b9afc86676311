"""Layer 1 of the gate: deterministic checks (SPEC 4.5).

Each check returns a :class:`CheckResult`; a check that cannot run because the trace lacks what
it needs returns ``missing`` (never ``pass``). Failures of ``required_context``,
``source_version`` and ``forbidden_phrases`` belong to the critical set C and always block.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from groundtrace.analyzer._evidence_match import GoldSupport, unmatched_note
from groundtrace.analyzer.cases import Case
from groundtrace.analyzer.metrics import score_answer

from ._cases import CaseOutcome, CheckResult, CheckStatus, RetrievedItem
from ._match import SynonymMatcher, fold

__all__ = ["deterministic_checks", "gold_unmatched"]

_LAYER = "deterministic"


def _judged(
    name: str, problems: Sequence[str], detail: str, *, critical: bool = True
) -> CheckResult:
    """``name`` failed with ``problems`` as its evidence, else passed."""
    if problems:
        return CheckResult(_LAYER, name, CheckStatus.FAIL, critical=critical, detail=detail,
                           evidence=tuple(problems))  # fmt: skip
    return CheckResult(_LAYER, name, CheckStatus.PASS, critical=critical)


def _no_retrieval(name: str) -> CheckResult:
    """``name`` cannot run: the trace has no retrieval step (critical: it never passes)."""
    return CheckResult(_LAYER, name, CheckStatus.MISSING, critical=True,
                       detail="trace has no retrieval step")  # fmt: skip


def _answer_present(outcome: CaseOutcome) -> CheckResult:
    if outcome.answer is None:
        return CheckResult(
            _LAYER, "answer_present", CheckStatus.MISSING, detail="no answer in trace"
        )
    if not outcome.answer.strip():
        return CheckResult(_LAYER, "answer_present", CheckStatus.FAIL, detail="empty answer")
    return CheckResult(_LAYER, "answer_present", CheckStatus.PASS)


def _required_context(case: Case, outcome: CaseOutcome) -> CheckResult | None:
    if not case.support_titles:
        return None
    if outcome.retrieved is None:
        return _no_retrieval("required_context")
    gold = GoldSupport(case.support_titles)  # the one evidence-matching rule (+ source)
    missing = list(gold.unmatched((i.id, i.title, i.source) for i in outcome.retrieved))
    detail = f"{len(missing)} of {len(case.support_titles)} required items not retrieved"
    return _judged("required_context", missing, detail)


def gold_unmatched(
    case: Case, outcome: CaseOutcome, elsewhere: Iterable[RetrievedItem] = ()
) -> str | None:
    """The finding of a case whose gold support matches nothing in any trace: a format
    problem of the gold (it names neither the ids, the titles nor the sources the app records).

    ``elsewhere`` are the items every other trace retrieved (both runs, every case): a gold
    that one of them matches is well-formed, so a trace that did not retrieve it is a
    retrieval miss (the ``required_context`` check fails), not a finding.
    """
    gold = GoldSupport(case.support_titles)
    if not gold or not outcome.retrieved:
        return None
    items = [*outcome.retrieved, *elsewhere]
    if gold.matched((i.id, i.title, i.source) for i in items):
        return None
    return unmatched_note(case.case_id, gold, len(outcome.retrieved))


def _source_version(case: Case, outcome: CaseOutcome) -> CheckResult | None:
    if not case.expected_sources:
        return None
    if outcome.retrieved is None:
        return _no_retrieval("source_version")
    problems: list[str] = []
    for expected in case.expected_sources:
        want = fold(expected.source)
        found = [
            i for i in outcome.retrieved if want in {fold(i.source), fold(i.title), fold(i.id)}
        ]
        if not found:
            problems.append(f"{expected.source}: not retrieved")
        elif expected.version is not None and all(i.version != expected.version for i in found):
            seen = sorted({str(i.version) for i in found})
            problems.append(f"{expected.source}: version {', '.join(seen)} != {expected.version}")
    return _judged("source_version", problems, "source or document version mismatch")


def _forbidden(case: Case, outcome: CaseOutcome, matcher: SynonymMatcher) -> CheckResult | None:
    if not case.forbidden_phrases or outcome.answer is None:
        return None
    hits = [p for p in case.forbidden_phrases if matcher.find(p, outcome.answer)]
    return _judged("forbidden_phrases", hits, "forbidden phrase in answer")


def _expected_terms(
    case: Case, outcome: CaseOutcome, matcher: SynonymMatcher
) -> CheckResult | None:
    if not case.expected_terms or outcome.answer is None:
        return None
    absent = [t for t in case.expected_terms if matcher.find(t, outcome.answer) is None]
    detail = f"{len(absent)} of {len(case.expected_terms)} expected terms absent"
    return _judged("expected_terms", absent, detail, critical=False)


def _reference(case: Case, outcome: CaseOutcome, f1_threshold: float) -> CheckResult | None:
    if case.reference_answer is None or outcome.answer is None:
        return None
    score = score_answer(outcome.answer, case.reference_answer, f1_threshold=f1_threshold)
    return CheckResult(
        _LAYER,
        "reference_answer",
        CheckStatus.PASS if score.fact_correct else CheckStatus.FAIL,
        detail=score.describe(f1_threshold),
        evidence=(f"answer: {outcome.answer[:200]}", f"reference: {case.reference_answer[:200]}"),
    )


def deterministic_checks(
    case: Case,
    outcome: CaseOutcome,
    matcher: SynonymMatcher | None = None,
    *,
    f1_threshold: float = 0.8,
) -> list[CheckResult]:
    """Run every applicable layer-1 check of ``case`` on ``outcome``.

    The reference-answer check uses fact correctness (EM, or token F1 >= ``f1_threshold``
    with the distinguishing times, dates, numbers and names of the reference stated and none
    of theirs contradicted; ``AnswerScore.fact_correct``); it is not in the critical set, so
    a wrong answer goes to review.
    """
    matcher = matcher or SynonymMatcher()
    results = [_answer_present(outcome)]
    for result in (
        _reference(case, outcome, f1_threshold),
        _required_context(case, outcome),
        _source_version(case, outcome),
        _forbidden(case, outcome, matcher),
        _expected_terms(case, outcome, matcher),
    ):
        if result is not None:
            results.append(result)
    return results
