"""Both sides of every threshold of the gate's checks, case and run decisions and Bayes risk.

Each test pins an exact result, so a regression that moves a boundary (``<`` for ``<=``), reads
an empty retrieval as missing, lets a whitespace answer through or promotes an empty run fails
here. Measured with a mutation tool (the note of the change lists the score).
"""

from __future__ import annotations

import numpy as np
import pytest

from groundtrace.analyzer.cases import Case
from groundtrace.analyzer.cases._model import ExpectedSource
from groundtrace.analyzer.gate import CheckStatus, Decision
from groundtrace.analyzer.gate._bayes import (
    HISTOGRAM_BINS,
    BayesSettings,
    StratumCounts,
    StratumThresholds,
    compare,
    decide,
    most_severe,
)
from groundtrace.analyzer.gate._cases import CaseOutcome, CheckResult, RetrievedItem
from groundtrace.analyzer.gate._checks import deterministic_checks
from groundtrace.analyzer.gate._decision import decide_case, decide_run
from groundtrace.analyzer.gate._match import SynonymMatcher

L = "deterministic"
DOC = RetrievedItem("d1", title="Refund policy", source="policy.md", version="v3")
OTHER = RetrievedItem("d2", title="Shipping", source="shipping.md", version="v1")


def checks(case: Case, outcome: CaseOutcome, **kw: object) -> dict[str, CheckResult]:
    return {r.name: r for r in deterministic_checks(case, outcome, **kw)}  # type: ignore[arg-type]


# --- layer 1: deterministic checks -------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (None, CheckResult(L, "answer_present", CheckStatus.MISSING, detail="no answer in trace")),
        ("", CheckResult(L, "answer_present", CheckStatus.FAIL, detail="empty answer")),
        (" \n\t ", CheckResult(L, "answer_present", CheckStatus.FAIL, detail="empty answer")),
        ("x", CheckResult(L, "answer_present", CheckStatus.PASS)),
    ],
)
def test_answer_present_missing_empty_whitespace_and_present(
    answer: str | None, expected: CheckResult
) -> None:
    assert deterministic_checks(Case("c"), CaseOutcome("c", answer, (DOC,))) == [expected]


def test_a_whitespace_answer_does_not_promote() -> None:
    results = deterministic_checks(Case("c"), CaseOutcome("c", "   ", (DOC,)))
    assert decide_case("c", "general", results).decision is Decision.MANUAL_REVIEW


def test_an_empty_retrieval_is_a_critical_failure_not_missing() -> None:
    """A broken index (a retrieval that returned nothing) blocks; it is not missing evidence."""
    case = Case("c", support_titles=("d1",), expected_sources=(ExpectedSource("policy.md"),))
    got = checks(case, CaseOutcome("c", "ok", ()))
    assert got["required_context"] == CheckResult(
        L, "required_context", CheckStatus.FAIL, critical=True,
        detail="1 of 1 required items not retrieved", evidence=("d1",),
    )  # fmt: skip
    assert got["source_version"] == CheckResult(
        L, "source_version", CheckStatus.FAIL, critical=True,
        detail="source or document version mismatch", evidence=("policy.md: not retrieved",),
    )  # fmt: skip
    decided = decide_case("c", "general", list(got.values()))
    assert decided.decision is Decision.BLOCK


def test_no_retrieval_step_is_missing_evidence_never_a_pass() -> None:
    case = Case("c", support_titles=("d1",), expected_sources=(ExpectedSource("policy.md"),))
    got = checks(case, CaseOutcome("c", "ok", None))
    for name in ("required_context", "source_version"):
        assert got[name] == CheckResult(
            L, name, CheckStatus.MISSING, critical=True, detail="trace has no retrieval step"
        )
    assert decide_case("c", "general", list(got.values())).decision is Decision.MANUAL_REVIEW


def test_required_context_counts_what_is_missing() -> None:
    case = Case("c", support_titles=("d1", "d2", "d3"))
    got = checks(case, CaseOutcome("c", "ok", (DOC,)))["required_context"]
    assert got.detail == "2 of 3 required items not retrieved"
    assert got.evidence == ("d2", "d3") and got.critical and got.status is CheckStatus.FAIL
    whole = checks(case, CaseOutcome("c", "ok", (DOC, OTHER, RetrievedItem("d3"))))
    assert whole["required_context"] == CheckResult(
        L, "required_context", CheckStatus.PASS, critical=True
    )


def test_a_check_without_its_case_field_does_not_run() -> None:
    got = checks(Case("c"), CaseOutcome("c", "ok", ()))
    assert list(got) == ["answer_present"]


@pytest.mark.parametrize(
    ("expected", "evidence"),
    [
        (ExpectedSource("policy.md", "v3"), None),  # by source, right version
        (ExpectedSource("Refund Policy", "v3"), None),  # by title, folded
        (ExpectedSource("d1"), None),  # by id, any version
        (ExpectedSource("policy.md", "v4"), "policy.md: version v3 != v4"),
        (ExpectedSource("faq.md"), "faq.md: not retrieved"),
    ],
)
def test_source_version_matches_source_title_or_id_and_the_version(
    expected: ExpectedSource, evidence: str | None
) -> None:
    got = checks(Case("c", expected_sources=(expected,)), CaseOutcome("c", "ok", (DOC, OTHER)))
    result = got["source_version"]
    assert result.critical
    if evidence is None:
        assert result == CheckResult(L, "source_version", CheckStatus.PASS, critical=True)
    else:
        assert result.status is CheckStatus.FAIL and result.evidence == (evidence,)


def test_source_version_passes_when_any_copy_has_the_version() -> None:
    old = RetrievedItem("d1-old", source="policy.md", version="v2")
    case = Case("c", expected_sources=(ExpectedSource("policy.md", "v3"),))
    assert checks(case, CaseOutcome("c", "ok", (old, DOC)))["source_version"].status is (
        CheckStatus.PASS
    )
    got = checks(case, CaseOutcome("c", "ok", (old, RetrievedItem("x", source="policy.md"))))
    assert got["source_version"].evidence == ("policy.md: version None, v2 != v3",)


def test_forbidden_phrases_and_expected_terms() -> None:
    case = Case("c", forbidden_phrases=("lifetime warranty", "free"), expected_terms=("30 days",))
    bad = checks(case, CaseOutcome("c", "A lifetime warranty, 30 days.", ()))
    assert bad["forbidden_phrases"] == CheckResult(
        L, "forbidden_phrases", CheckStatus.FAIL, critical=True,
        detail="forbidden phrase in answer", evidence=("lifetime warranty",),
    )  # fmt: skip
    assert bad["expected_terms"] == CheckResult(L, "expected_terms", CheckStatus.PASS)
    good = checks(case, CaseOutcome("c", "Within a month.", ()))
    assert good["forbidden_phrases"] == CheckResult(
        L, "forbidden_phrases", CheckStatus.PASS, critical=True
    )
    assert good["expected_terms"] == CheckResult(
        L, "expected_terms", CheckStatus.FAIL, detail="1 of 1 expected terms absent",
        evidence=("30 days",),
    )  # fmt: skip
    # no answer: neither can be judged (answer_present says missing)
    assert set(checks(case, CaseOutcome("c", None, ()))) == {"answer_present"}


def test_expected_terms_use_the_matchers_synonyms() -> None:
    case = Case("c", expected_terms=("refund",))
    matcher = SynonymMatcher([["refund", "money back"]])
    got = checks(case, CaseOutcome("c", "You get your money back.", ()), matcher=matcher)
    assert got["expected_terms"].status is CheckStatus.PASS


def test_the_reference_check_uses_the_f1_threshold_on_both_sides() -> None:
    case = Case("c", reference_answer="the blue house")
    outcome = CaseOutcome("c", "the blue car", ())  # token F1 0.67 (normalised: blue house/car)
    got = checks(case, outcome, f1_threshold=0.5)["reference_answer"]
    assert got.status is CheckStatus.PASS and not got.critical
    assert got.evidence == ("answer: the blue car", "reference: the blue house")
    assert "threshold 0.5" in got.detail
    assert checks(case, outcome, f1_threshold=0.9)["reference_answer"].status is CheckStatus.FAIL
    assert checks(case, outcome)["reference_answer"].status is CheckStatus.FAIL  # default 0.8
    assert "reference_answer" not in checks(case, CaseOutcome("c", None, ()))
    long = "word " * 100
    cut = checks(Case("c", reference_answer=long), CaseOutcome("c", long, ()))["reference_answer"]
    assert cut.evidence == (f"answer: {long[:200]}", f"reference: {long[:200]}")


def test_checks_come_in_a_fixed_order() -> None:
    case = Case(
        "c", reference_answer="x", support_titles=("d1",),
        expected_sources=(ExpectedSource("policy.md"),), forbidden_phrases=("y",),
        expected_terms=("x",),
    )  # fmt: skip
    names = [r.name for r in deterministic_checks(case, CaseOutcome("c", "x", (DOC,)))]
    assert names == [
        "answer_present", "reference_answer", "required_context", "source_version",
        "forbidden_phrases", "expected_terms",
    ]  # fmt: skip


# --- case decision ------------------------------------------------------------------------


def r(status: CheckStatus, name: str = "n", **kw: object) -> CheckResult:
    return CheckResult("layer", name, status, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("statuses", "decision"),
    [
        ((), Decision.NOT_EVALUABLE),
        ((CheckStatus.MISSING,), Decision.NOT_EVALUABLE),
        ((CheckStatus.TIMEOUT,), Decision.NOT_EVALUABLE),
        ((CheckStatus.PROTOCOL_ERROR,), Decision.NOT_EVALUABLE),
        ((CheckStatus.NOTED,), Decision.PROMOTE),
        ((CheckStatus.PASS,), Decision.PROMOTE),
        ((CheckStatus.PASS, CheckStatus.NOTED), Decision.PROMOTE),
        ((CheckStatus.FAIL,), Decision.MANUAL_REVIEW),
        ((CheckStatus.PASS, CheckStatus.MISSING), Decision.MANUAL_REVIEW),
        ((CheckStatus.PASS, CheckStatus.TIMEOUT), Decision.MANUAL_REVIEW),
        ((CheckStatus.NOTED, CheckStatus.PROTOCOL_ERROR), Decision.MANUAL_REVIEW),
    ],
)
def test_case_decision_per_status(statuses: tuple[CheckStatus, ...], decision: Decision) -> None:
    assert decide_case("c", "s", [r(s) for s in statuses]).decision is decision


def test_case_decision_reasons_are_exact() -> None:
    none = decide_case("c", "s", [])
    assert none.reasons == ("no check applied to this case",) and none.results == ()
    missing = decide_case("c", "s", [r(CheckStatus.MISSING, detail="no answer")])
    assert missing.reasons == ("layer.n missing: no answer",)
    evidence = r(CheckStatus.FAIL, critical=True, detail="d", evidence=("a", "b", "c", "d"))
    blocked = decide_case("c", "s", [r(CheckStatus.PASS), evidence])
    assert blocked.reasons == ("layer.n fail: d (a; b; c and 1 more)",)
    plain = decide_case("c", "s", [r(CheckStatus.FAIL, evidence=("a",))])
    assert plain.reasons == ("layer.n fail (a)",)
    review = decide_case("c", "s", [r(CheckStatus.PASS), r(CheckStatus.TIMEOUT, "t")])
    assert review.reasons == ("layer.t timeout",)
    assert decide_case("c", "s", [r(CheckStatus.PASS)]).reasons == ()
    promoted = decide_case("id", "strat", [r(CheckStatus.PASS)])
    assert (promoted.case_id, promoted.stratum, promoted.passed) == ("id", "strat", True)
    assert not review.passed and not blocked.passed and not none.passed


@pytest.mark.parametrize("flag", ["critical", "blocking"])
def test_a_critical_or_blocking_failure_blocks(flag: str) -> None:
    decided = decide_case("c", "s", [r(CheckStatus.PASS), r(CheckStatus.FAIL, **{flag: True})])
    assert decided.decision is Decision.BLOCK
    assert decided.reasons == ("layer.n fail",)


def test_any_failure_of_a_critical_case_blocks_and_says_why() -> None:
    decided = decide_case("c", "s", [r(CheckStatus.FAIL)], critical=True)
    assert decided.decision is Decision.BLOCK
    assert decided.reasons == ("layer.n fail [critical case]",)
    # a critical check that could not run is missing evidence: review, not block
    missing = decide_case("c", "s", [r(CheckStatus.PASS), r(CheckStatus.MISSING, critical=True)])
    assert missing.decision is Decision.MANUAL_REVIEW
    noted = decide_case("c", "s", [r(CheckStatus.NOTED, critical=True)], critical=True)
    assert noted.decision is Decision.PROMOTE


# --- run decision ---------------------------------------------------------------------------


def cd(case_id: str, decision: Decision) -> object:
    from groundtrace.analyzer.gate import CaseDecision

    return CaseDecision(case_id, "general", decision, (), ())


def run_of(*decisions: Decision) -> list:  # type: ignore[type-arg]
    return [cd(f"c{i}", d) for i, d in enumerate(decisions)]


def test_min_evaluable_zero_never_promotes_an_empty_run() -> None:
    empty = decide_run([], 0.0)
    assert empty.decision is Decision.NOT_EVALUABLE and empty.evaluable_share == 0.0
    assert empty.reasons == ("evaluable coverage 0% below minimum 0%",)
    nothing = decide_run(run_of(Decision.NOT_EVALUABLE, Decision.NOT_EVALUABLE), 0.0)
    assert nothing.decision is Decision.NOT_EVALUABLE


def test_the_evaluable_share_at_the_minimum_is_enough() -> None:
    at = decide_run(run_of(*[Decision.PROMOTE] * 9, Decision.NOT_EVALUABLE), 0.9)
    assert at.decision is Decision.MANUAL_REVIEW and at.evaluable_share == pytest.approx(0.9)
    assert at.reasons == ("1 case(s) need review or could not be evaluated: c9",)
    below = decide_run(run_of(*[Decision.PROMOTE] * 8, *[Decision.NOT_EVALUABLE] * 2), 0.9)
    assert below.decision is Decision.NOT_EVALUABLE
    assert below.reasons == ("evaluable coverage 80% below minimum 90%",)


def test_run_decision_counts_and_order_of_severity() -> None:
    mixed = decide_run(
        run_of(Decision.PROMOTE, Decision.MANUAL_REVIEW, Decision.BLOCK, Decision.NOT_EVALUABLE),
        0.0,
    )
    assert mixed.decision is Decision.BLOCK
    assert mixed.reasons == ("1 case(s) block: c2",)
    assert mixed.counts == {"promote": 1, "manual_review": 1, "not_evaluable": 1, "block": 1}
    assert mixed.evaluable_share == pytest.approx(0.75)
    # a block beats a coverage shortfall
    blocked = decide_run(run_of(Decision.BLOCK, *[Decision.NOT_EVALUABLE] * 3), 0.9)
    assert blocked.decision is Decision.BLOCK
    review = decide_run(run_of(Decision.PROMOTE, Decision.MANUAL_REVIEW), 1.0)
    assert review.decision is Decision.MANUAL_REVIEW
    assert review.reasons == ("1 case(s) need review or could not be evaluated: c1",)
    promote = decide_run(run_of(Decision.PROMOTE, Decision.PROMOTE), 1.0)
    assert (promote.decision, promote.reasons, promote.evaluable_share) == (
        Decision.PROMOTE, (), 1.0
    )  # fmt: skip


def test_run_reasons_list_ten_cases_then_count() -> None:
    many = decide_run(run_of(*[Decision.BLOCK] * 12), 0.0)
    assert many.reasons == ("12 case(s) block: c0, c1, c2, c3, c4, c5, c6, c7, c8, c9 and 2 more",)


# --- Bayes risk ---------------------------------------------------------------------------


def test_decide_on_both_sides_of_each_threshold() -> None:
    assert decide(0.8, 0.8, 0.5) is Decision.BLOCK
    assert decide(np.nextafter(0.8, 0), 0.8, 0.5) is Decision.MANUAL_REVIEW
    assert decide(0.5, 0.8, 0.5) is Decision.MANUAL_REVIEW
    assert decide(np.nextafter(0.5, 0), 0.8, 0.5) is Decision.PROMOTE
    assert decide(1.0, 0.8, 0.5) is Decision.BLOCK and decide(0.0, 0.8, 0.5) is Decision.PROMOTE


def test_most_severe_orders_all_four_in_either_order() -> None:
    order = [Decision.PROMOTE, Decision.MANUAL_REVIEW, Decision.NOT_EVALUABLE, Decision.BLOCK]
    for i, low in enumerate(order):
        for high in order[i:]:
            assert most_severe([low, high]) is high
            assert most_severe([high, low]) is high
    with pytest.raises(ValueError, match="no decisions"):
        most_severe([])
    assert [d.value for d in order] == ["promote", "manual_review", "not_evaluable", "block"]


@pytest.mark.parametrize(("n", "k"), [(0, 0), (1, 0), (1, 1), (5, 5)])
def test_stratum_counts_accept_zero_to_n(n: int, k: int) -> None:
    assert StratumCounts(n, k) == StratumCounts(n=n, k=k)


@pytest.mark.parametrize(("n", "k"), [(-1, 0), (1, -1), (1, 2), (0, 1)])
def test_stratum_counts_reject_outside(n: int, k: int) -> None:
    with pytest.raises(ValueError, match=rf"invalid stratum counts k={k}, n={n}"):
        StratumCounts(n, k)


def test_bayes_defaults_are_the_specs() -> None:
    s = BayesSettings()
    assert (s.prior_alpha, s.prior_beta, s.delta, s.tau_block, s.tau_review) == (
        1.0, 1.0, 0.03, 0.8, 0.5
    )  # fmt: skip
    assert (s.samples, s.seed, dict(s.weights), dict(s.strata)) == (20_000, 20260709, {}, {})


def test_compare_summarises_the_posteriors() -> None:
    base = {"g": StratumCounts(40, 30)}
    cand = {"g": StratumCounts(40, 20)}
    res = compare(base, cand, BayesSettings(samples=20_000))
    (g,) = res.strata
    # Beta(1 + k, 1 + n - k) means
    assert g.posterior_mean_baseline == pytest.approx(31 / 42, abs=0.005)
    assert g.posterior_mean_candidate == pytest.approx(21 / 42, abs=0.005)
    assert res.difference_mean == pytest.approx(21 / 42 - 31 / 42, abs=0.005)
    low, high = res.difference_ci95
    assert low < res.difference_mean < high
    assert (high - low) == pytest.approx(2 * 1.96 * 0.1035, rel=0.05)  # normal approximation
    hist = res.difference_histogram
    assert len(hist.counts) == HISTOGRAM_BINS == 80 and len(hist.edges) == 81
    assert sum(hist.counts) == 20_000
    assert res.rho > 0.95 and res.decision is Decision.BLOCK
    assert (res.delta, res.tau_block, res.tau_review, res.samples, res.seed) == (
        0.03, 0.8, 0.5, 20_000, 20260709
    )  # fmt: skip
    assert g.weight == 1.0 and g.rho is None and g.decision is None
    assert (g.delta, g.tau_block, g.tau_review) == (None, None, None)


def test_rho_is_the_share_of_draws_below_minus_delta() -> None:
    """Identical data: about half the draws fall below 0, fewer below -delta."""
    same = {"g": StratumCounts(200, 100)}
    zero = compare(same, same, BayesSettings(delta=0.0, samples=40_000)).rho
    assert zero == pytest.approx(0.5, abs=0.02)
    tolerant = compare(same, same, BayesSettings(delta=0.05, samples=40_000)).rho
    assert 0.05 < tolerant < 0.4
    assert compare(same, same, BayesSettings(delta=1.0, samples=1000)).rho == 0.0


def test_per_stratum_thresholds_apply_where_both_runs_have_cases() -> None:
    settings = BayesSettings(
        samples=4000,
        strata={"crit": StratumThresholds(0.0, 0.6, 0.3), "new": StratumThresholds(0.0, 0.6, 0.3)},
    )
    base = {"g": StratumCounts(50, 45), "crit": StratumCounts(20, 20), "new": StratumCounts(0, 0)}
    cand = {"g": StratumCounts(50, 45), "crit": StratumCounts(20, 15), "new": StratumCounts(3, 3)}
    res = compare(base, cand, settings)
    by = {s.stratum: s for s in res.strata}
    assert set(by) == {"g", "crit", "new"}
    assert by["crit"].rho is not None and by["crit"].rho > 0.6
    assert by["crit"].decision is Decision.BLOCK
    assert (by["crit"].delta, by["crit"].tau_block, by["crit"].tau_review) == (0.0, 0.6, 0.3)
    assert by["new"].rho is None and by["new"].decision is None  # no baseline cases
    assert by["g"].rho is None
    assert res.decision is Decision.BLOCK
    assert res.pooled_decision is not Decision.BLOCK
    # a stratum with no case in either run is left out
    res2 = compare({**base, "e": StratumCounts(0, 0)}, {**cand, "e": StratumCounts(0, 0)}, settings)
    assert [s.stratum for s in res2.strata] == ["crit", "g", "new"]


def test_weights_default_to_candidate_shares_and_profile_weights_are_normalised() -> None:
    base = {"a": StratumCounts(10, 5), "b": StratumCounts(30, 15)}
    cand = {"a": StratumCounts(30, 15), "b": StratumCounts(10, 5)}
    shares = {s.stratum: s.weight for s in compare(base, cand, BayesSettings(samples=100)).strata}
    assert shares == {"a": 0.75, "b": 0.25}
    given = BayesSettings(samples=100, weights={"a": 1.0, "b": 3.0})
    assert {s.stratum: s.weight for s in compare(base, cand, given).strata} == {
        "a": 0.25, "b": 0.75
    }  # fmt: skip
    with pytest.raises(ValueError, match=r"^profile weights miss strata \['b'\]$"):
        compare(base, cand, BayesSettings(weights={"a": 1.0}))
    with pytest.raises(ValueError, match=r"^stratum weights sum to zero: no cases to compare$"):
        compare(base, cand, BayesSettings(weights={"a": 0.0, "b": 0.0}))


def test_compare_rejects_what_it_cannot_compare() -> None:
    with pytest.raises(ValueError, match=r"^strata differ: baseline \['a'\] vs candidate \['b'\]$"):
        compare({"a": StratumCounts(1, 1)}, {"b": StratumCounts(1, 1)})
    with pytest.raises(ValueError, match=r"^no cases in any stratum$"):
        compare({"a": StratumCounts(0, 0)}, {"a": StratumCounts(0, 0)})
    one_sided = compare({"a": StratumCounts(0, 0)}, {"a": StratumCounts(1, 1)})
    assert [s.stratum for s in one_sided.strata] == ["a"]
    other_side = compare({"a": StratumCounts(1, 1)}, {"a": StratumCounts(0, 0)},
                         BayesSettings(weights={"a": 1.0}))  # fmt: skip
    assert [s.stratum for s in other_side.strata] == ["a"]


def test_the_prior_is_used() -> None:
    counts = {"g": StratumCounts(0, 0)}
    cand = {"g": StratumCounts(2, 2)}
    flat = compare(counts, cand, BayesSettings(samples=20_000))
    (g,) = flat.strata
    assert g.posterior_mean_baseline == pytest.approx(0.5, abs=0.01)
    skewed = compare(counts, cand, BayesSettings(prior_alpha=1.0, prior_beta=3.0, samples=20_000))
    assert skewed.strata[0].posterior_mean_baseline == pytest.approx(0.25, abs=0.01)
    assert skewed.strata[0].posterior_mean_candidate == pytest.approx(3 / 6, abs=0.01)


def test_gold_unmatched_is_a_finding_only_when_no_trace_retrieved_the_gold() -> None:
    from groundtrace.analyzer.gate._checks import gold_unmatched

    case = Case("c", support_titles=("Warranty",))
    assert gold_unmatched(Case("c"), CaseOutcome("c", "ok", (DOC,))) is None
    assert gold_unmatched(case, CaseOutcome("c", "ok", None)) is None
    assert gold_unmatched(case, CaseOutcome("c", "ok", ())) is None
    found = RetrievedItem("w", title="Warranty")
    assert gold_unmatched(case, CaseOutcome("c", "ok", (DOC, found))) is None
    # another trace retrieved it: the gold is well-formed, this trace missed it
    assert gold_unmatched(case, CaseOutcome("c", "ok", (DOC,)), elsewhere=[found]) is None
    note = gold_unmatched(case, CaseOutcome("c", "ok", (DOC, OTHER)), elsewhere=[OTHER])
    assert note is not None and note.startswith("case c: none of its 1 gold support entries")
    assert "any of the 2 evidence item(s)" in note


def test_the_default_f1_threshold_is_0_8_inclusive() -> None:
    case = Case("c", reference_answer="big blue house")
    at = checks(case, CaseOutcome("c", "blue house", ()))["reference_answer"]  # token F1 0.8
    assert at.status is CheckStatus.PASS and "threshold 0.8" in at.detail
    below = checks(case, CaseOutcome("c", "house", ()))["reference_answer"]  # token F1 0.5
    assert below.status is CheckStatus.FAIL


def test_decisions_are_frozen_records_with_their_defaults() -> None:
    from groundtrace.analyzer.gate._decision import RunDecision

    decided = decide_case("c", "s", [r(CheckStatus.PASS)])
    with pytest.raises(AttributeError):
        decided.decision = Decision.BLOCK  # type: ignore[misc]
    bare = RunDecision(Decision.PROMOTE, ())
    assert bare.counts == {} and bare.evaluable_share == 0.0
    with pytest.raises(AttributeError):
        bare.decision = Decision.BLOCK  # type: ignore[misc]


def test_bayes_records_are_frozen_and_messages_exact() -> None:
    counts = StratumCounts(3, 2)
    with pytest.raises(AttributeError):
        counts.k = 3  # type: ignore[misc]
    for record in (StratumThresholds(0.1, 0.8, 0.5), BayesSettings()):
        with pytest.raises(AttributeError):
            record.delta = 0.5  # type: ignore[misc]
    with pytest.raises(ValueError, match=r"^most_severe\(\) of no decisions$"):
        most_severe([])
    with pytest.raises(ValueError, match=r"^invalid stratum counts k=2, n=1$"):
        StratumCounts(1, 2)


def test_a_stratum_with_one_case_in_each_run_gets_its_own_risk() -> None:
    settings = BayesSettings(samples=2000, strata={"one": StratumThresholds(0.0, 0.9, 0.6)})
    res = compare({"one": StratumCounts(1, 1)}, {"one": StratumCounts(1, 0)}, settings)
    (one,) = res.strata
    assert one.rho is not None and one.decision is not None
    assert one.rho == pytest.approx(5 / 6, abs=0.03)  # P(Beta(1,2) < Beta(2,1))


def test_risk_results_are_frozen_and_thresholds_default_to_none() -> None:
    from groundtrace.analyzer.gate._bayes import StratumRisk

    res = compare({"g": StratumCounts(5, 4)}, {"g": StratumCounts(5, 4)}, BayesSettings(samples=50))
    bare = StratumRisk("s", StratumCounts(1, 1), StratumCounts(1, 1), 1.0, None, None, 0.5, 0.5)
    assert (bare.delta, bare.tau_block, bare.tau_review) == (None, None, None)
    records = ((res, "rho"), (res.strata[0], "rho"), (res.difference_histogram, "counts"))
    for record, field in (*records, (bare, "weight")):
        with pytest.raises(AttributeError):
            setattr(record, field, 0)


def test_a_stratum_the_candidate_has_no_case_of_gets_no_risk() -> None:
    settings = BayesSettings(samples=500, strata={"gone": StratumThresholds(0.0, 0.9, 0.6)})
    base = {"g": StratumCounts(5, 5), "gone": StratumCounts(4, 4)}
    cand = {"g": StratumCounts(5, 5), "gone": StratumCounts(0, 0)}
    gone = next(s for s in compare(base, cand, settings).strata if s.stratum == "gone")
    assert gone.rho is None and gone.decision is None and gone.delta == 0.0


def test_a_risk_result_round_trips_through_json() -> None:
    import msgspec

    from groundtrace.analyzer.gate._bayes import RiskResult

    settings = BayesSettings(samples=200, strata={"g": StratumThresholds(0.05, 0.8, 0.5)})
    res = compare({"g": StratumCounts(9, 8), "h": StratumCounts(3, 3)},
                  {"g": StratumCounts(9, 7), "h": StratumCounts(3, 2)}, settings)  # fmt: skip
    assert msgspec.json.decode(msgspec.json.encode(res), type=RiskResult) == res
