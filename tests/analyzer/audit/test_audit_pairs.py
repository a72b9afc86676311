"""Pair labels: pre-filters, the baseline labeller, validation and the judge-counts rule."""

from __future__ import annotations

import numpy as np
import pytest

from groundtrace.analyzer._agreement import bootstrap_statistic, cohen_kappa_batch
from groundtrace.analyzer.audit import Answer, PairLabel
from groundtrace.analyzer.audit._pairs import baseline_label, gold_pair_labels, normalise, prefilter
from groundtrace.analyzer.audit._run import BASELINE_FINGERPRINT, BaselineLabeller, judge_counts
from groundtrace.analyzer.audit._validate import AuditAcceptance, validate_labels


def _a(source: str, stance: str, text: str = "", points: tuple[str, ...] = ()) -> Answer:
    return Answer(question_id="q", source_id=source, stance=stance, points=points,  # type: ignore[arg-type]
                  text=text or f"{stance} {' '.join(points)}")  # fmt: skip


def test_prefilters_decide_the_certain_pairs() -> None:
    cases = [
        (_a("a", "absent"), _a("b", "absent"), "absent", "prefilter:both-absent"),
        (_a("a", "yes"), _a("b", "absent"), "absent", "prefilter:one-absent"),
        (_a("a", "yes", "Yes, you may."), _a("b", "yes", "yes -- you MAY"), "consistent",
         "prefilter:identical"),
        (_a("a", "yes"), _a("b", "no"), "contradictory", "prefilter:opposite-stances"),
    ]  # fmt: skip
    for a, b, label, rule in cases:
        decided = prefilter(a, b, "topic")
        assert decided is not None and (decided.label, decided.decided_by) == (label, rule)
    # conflicting numbers fell below the minimum precision on real text: a labeller decides
    days = _a("a", "conditional", "within 30 days"), _a("b", "conditional", "within 60 days")
    assert prefilter(*days, "topic") is None
    assert prefilter(_a("a", "yes"), _a("b", "conditional", points=("x",)), "t") is None


def test_the_baseline_labels_what_the_prefilters_leave_open() -> None:
    wide = _a("a", "yes", "notice and changes", ("notice", "changes"))
    narrow = _a("b", "yes", "notice only", ("notice",))
    other = _a("c", "yes", "patents", ("patents",))
    complementary = baseline_label(wide, narrow, "obligations")
    assert (complementary.label, complementary.significance) == ("complementary", "low")
    assert complementary.topic == "obligations"
    divergent = baseline_label(narrow, other, "obligations")
    assert (divergent.label, divergent.significance, divergent.decided_by) == (
        "divergent", "medium", "baseline",
    )  # fmt: skip
    same = baseline_label(_a("a", "yes", "x", ("p",)), _a("b", "yes", "y", ("p",)), "t")
    assert (same.label, same.topic, same.significance) == ("consistent", None, None)


def test_normalise_folds_case_accents_and_punctuation() -> None:
    assert normalise("  Oui, c'est PERMIS! ") == normalise("oui c est permis")
    assert normalise("Libération") == "liberation"


def test_gold_pair_labels_cover_every_pair_once() -> None:
    gold = [_a("a", "yes", "Yes."), _a("b", "no", "No."), _a("c", "absent")]
    labels = gold_pair_labels(gold, {"q": "t"})
    assert [(p.source_a, p.source_b, p.label) for p in labels] == [
        ("a", "b", "contradictory"), ("a", "c", "absent"), ("b", "c", "absent"),
    ]  # fmt: skip
    assert {p.decided_by for p in labels} == {"gold"}


def _label(source_b: str, label: str, questions: int = 6) -> PairLabel:
    """A pair of question ``q<k>`` (the pairs spread over ``questions`` questions)."""
    question = f"q{int(source_b[1:]) % questions}"
    return PairLabel(question_id=question, source_a="a", source_b=source_b, label=label)  # type: ignore[arg-type]


def test_validation_reports_kappa_mcc_and_the_confusion_matrix() -> None:
    gold = [_label(f"s{i:02d}", lab) for i, lab in enumerate(["consistent", "divergent"] * 30)]
    perfect = validate_labels(gold, gold, labeller="x", fingerprint="f")
    assert perfect.kappa.value == 1.0 and perfect.disagreement_mcc.value == 1.0
    assert perfect.validated and perfect.confusion["divergent"]["divergent"] == 30
    flipped = [_label(p.source_b, "consistent") for p in gold]
    bad = validate_labels(gold, flipped, labeller="x", fingerprint="f")
    assert not bad.validated
    assert bad.disagreement_mcc.value is None  # predictions hold one class: undefined, not 0
    assert bad.disagreement_mcc.undefined_reason == "the predicted labels hold no disagreement"
    assert bad.confusion["divergent"]["consistent"] == 30
    half = validate_labels(gold, gold[:30], labeller="x", fingerprint="f", protocol_errors=30,
                           acceptance=AuditAcceptance(max_protocol_error_rate=0.1))  # fmt: skip
    assert half.n_labelled == 30 and any("protocol-error rate" in r for r in half.reasons)


def test_validation_intervals_resample_questions_not_pairs() -> None:
    # 6 questions of 20 pairs; the labeller is right on every pair of 3 questions and calls
    # every pair of the other 3 consistent: its errors cluster by question
    gold = [_label(f"s{i:03d}", lab) for i, lab in enumerate(["consistent", "divergent"] * 60)]
    pred = [p if int(p.source_b[1:]) % 6 < 3 else _label(p.source_b, "consistent") for p in gold]
    clustered = validate_labels(gold, pred, labeller="x", fingerprint="f")
    assert clustered.n_questions == 6
    ref = np.asarray([g.label == "divergent" for g in gold])
    hat = np.asarray([p.label == "divergent" for p in pred])
    naive = bootstrap_statistic(cohen_kappa_batch, [ref, hat], n_resamples=1000, seed=20260709)
    kappa = clustered.disagreement_kappa
    assert kappa.value == pytest.approx(naive.value)
    width = kappa.ci_high - kappa.ci_low  # type: ignore[operator]
    assert width > 1.5 * (naive.ci_high - naive.ci_low)  # type: ignore[operator]
    # one question: nothing to resample, so no interval (never a zero-width one)
    single = [_label(f"s{i:02d}", lab, 1) for i, lab in enumerate(["consistent", "divergent"] * 30)]
    alone = validate_labels(single, single, labeller="x", fingerprint="f")
    assert alone.kappa.value == 1.0 and alone.kappa.ci_low is None and not alone.validated
    assert "fewer than 2 questions" in alone.reasons[0]
    assert validate_labels(gold, pred, labeller="x", fingerprint="f") == clustered  # seeded


class _Judge(BaselineLabeller):
    name = "judge:m@u"  # type: ignore[misc]
    fingerprint = "judge-digest"  # type: ignore[misc]


def test_a_judge_counts_only_with_a_validation_bound_to_its_fingerprint() -> None:
    gold = [_label(f"s{i:02d}", lab) for i, lab in enumerate(["consistent", "divergent"] * 30)]
    assert judge_counts(BaselineLabeller(), None) == (True, None)
    assert BaselineLabeller().fingerprint == BASELINE_FINGERPRINT
    judge = _Judge()
    assert judge_counts(judge, None)[0] is False
    other = validate_labels(gold, gold, labeller="j", fingerprint="another")
    assert judge_counts(judge, other) == (
        False, "the validation record belongs to another judge fingerprint",
    )  # fmt: skip
    mine = validate_labels(gold, gold, labeller="j", fingerprint="judge-digest")
    assert judge_counts(judge, mine) == (True, None)
