"""Fact correctness: a sentence that differs in the fact that matters fails, a paraphrase passes.

Soft correctness (EM or token F1 >= 0.8, CUE-R's axis) is kept as it was beside it.
"""

from __future__ import annotations

import pytest

from groundtrace.analyzer.metrics import score_answer
from groundtrace.analyzer.metrics._facts import Fact, distinguishing_facts


@pytest.mark.parametrize(
    ("answer", "reference"),
    [
        # the case: F1 0.800 passes soft correctness
        ("The pet's name is Pickles.", "The pet's name is Pepper."),
        # a booking sentence with a fabricated time
        (
            "Booked Pepper for a vaccination on Tuesday 14 May at 11:30 with Dr Lee.",
            "Booked Pepper for a vaccination on Tuesday 14 May at 10:00 with Dr Lee.",
        ),
        ("The vaccine for Pepper costs 45 euros.", "The vaccine for Pepper costs 40 euros."),
        ("Pepper is booked on Wednesday at 10:00.", "Pepper is booked on Tuesday at 10:00."),
        ("Pepper is booked for March 6 at 10:00.", "Pepper is booked for March 5 at 10:00."),
        ("The fee is 40 or 50 euros.", "The fee is 40 euros."),
        ("Pepper's appointment is at 3 pm today.", "Pepper's appointment is at 2 pm today."),
        ("Dr Kim will see Pepper on Tuesday.", "Dr Lee will see Pepper on Tuesday."),
        ("The Royals play at Arrowhead Stadium.", "The Royals play at Kauffman Stadium."),
        ("The trophy went to the Tampa Bay Rays.", "The trophy went to the Tampa Bay Lightning."),
    ],
)  # fmt: skip
def test_a_different_fact_fails(answer: str, reference: str) -> None:
    score = score_answer(answer, reference)
    assert score.f1 >= 0.8 and score.correct  # soft correctness passes it, unchanged
    assert not score.fact_correct
    assert score.missing_facts or score.conflicting_facts


@pytest.mark.parametrize(
    ("answer", "reference"),
    [
        ("Pepper is the pet's name.", "The pet's name is Pepper."),
        ("pepper is the name of the pet", "The pet's name is Pepper."),
        ("Pepper is booked on Tuesday at 10 am.", "Pepper is booked on Tuesday at 10:00."),
        (
            "Pepper is booked with Dr Lee on Tuesday at 3:30 pm.",
            "Pepper is booked with Dr Lee on Tuesday at 15:30.",
        ),
        ("The visit costs forty euros.", "The visit costs 40 euros."),
        (
            "Pepper's visit on 2026-03-05 is confirmed for Thursday at 10:00 with Dr Lee.",
            "Pepper's visit on March 5th, 2026 is confirmed for Thursday at 10:00 with Dr Lee.",
        ),
        ("Steven Spielberg Jr", "Steven Spielberg"),
        ("Max Bemis", 'Maxim "Max" Bemis'),  # HotpotQA: a name given in part
        ("Christopher Guest", "Christopher Haden-Guest"),
        ("Pepper is booked for Tuesday.", "Booked Pepper for Tuesday."),
        ("Yes, both are American.", "yes"),
        ("The Beatles.", "Beatles"),
        ("Your booking for Pepper is on Tuesday.", "The booking for Pepper is on Tuesday."),
    ],
)
def test_a_paraphrase_of_the_same_fact_passes(answer: str, reference: str) -> None:
    score = score_answer(answer, reference)
    assert score.correct and score.fact_correct, score


def test_fact_correctness_never_passes_what_soft_correctness_fails() -> None:
    score = score_answer("Pepper", "The pet's name is Pepper.")
    assert not score.correct and not score.fact_correct
    assert score.missing_facts == ()  # facts are compared only when they can change the verdict


def test_the_differences_are_named() -> None:
    score = score_answer(
        "Pepper is booked with Dr Lee at 11:30 on Tuesday.",
        "Pepper is booked with Dr Lee at 10:00 on Tuesday.",
    )
    assert score.missing_facts == (Fact("time", "10:00"),)
    assert score.conflicting_facts == (Fact("time", "11:30"),)
    assert "reference's time 10:00 absent" in score.describe()
    assert "time 11:30 not in the reference" in score.describe()


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        ("Dr Lee sees Pepper at noon.", {("name", "lee"), ("name", "pepper"), ("time", "12:00")}),
        ("The Beatles released it in 1969.", {("name", "beatles"), ("number", "1969")}),
        ("It opens at 9:05 a.m. on 2026-12-24", {("time", "09:05"), ("date", "december"),
                                                  ("number", "2026"), ("number", "24")}),
        ("three cats and 1,000 dogs", {("number", "3"), ("number", "1000")}),
        ("O'Brien's 5th visit", {("name", "o brien"), ("number", "5")}),
        ('He met Maxim "Max" Bemis', {("name", "maxim max bemis")}),
        ("Booked Pepper for Tuesday.", {("name", "booked pepper"), ("date", "tuesday")}),
    ],
)  # fmt: skip
def test_distinguishing_facts(text: str, facts: set[tuple[str, str]]) -> None:
    assert {(f.kind, f.value) for f in distinguishing_facts(text)} == facts


def test_soft_correctness_is_kept_as_cue_r_defines_it() -> None:
    """EM or token F1 >= the threshold, with a settable threshold (the interventions' axis)."""
    assert score_answer("Steven Allan Spielberg Jr", "Steven Spielberg").correct is False
    loose = score_answer("Steven Allan Spielberg Jr", "Steven Spielberg", f1_threshold=0.6)
    assert loose.correct and loose.fact_correct
    assert score_answer("The pet's name is Pickles.", "The pet's name is Pepper.").correct


def test_the_interventions_report_fact_correctness_beside_cue_r_correctness() -> None:
    """CUE-R's correctness axis stays EM or F1 >= 0.8; fact correctness is a reported axis."""
    from groundtrace.analyzer.interventions._axes import (
        REPORTED_AXES,
        Gold,
        Outcome,
        compare,
        score_outcome,
    )

    gold = Gold("The pet's name is Pepper.")
    wrong = score_outcome(Outcome("The pet's name is Pickles."), gold)
    assert wrong.correct is True and wrong.fact_correct is False
    assert (wrong.value("correctness"), wrong.value("fact_correctness")) == (1.0, 0.0)
    assert "fact_correctness" in REPORTED_AXES
    pair = compare(
        Outcome("Pepper is the pet's name."), Outcome("The pet's name is Pickles."), gold
    )
    assert pair.deltas["correctness"] == 0.0 and pair.deltas["fact_correctness"] == 1.0
