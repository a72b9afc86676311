"""Answer normalisation, EM/F1 and soft correctness (SPEC 4.2.1)."""

from __future__ import annotations

import pytest

from groundtrace.analyzer.metrics._text import (
    exact_match,
    normalise_answer,
    score_answer,
    soft_correct,
    token_f1,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("The Beatles.", "beatles"),
        ("  An   apple, a day ", "apple day"),
        ("Yes, both are American.", "yes"),
        ("no", "no"),
        ("1,000,000 people", "1000000 people"),
        ("three", "3"),
        ("3.5 million", "3.5 1000000"),
        ("Nobody knows", "nobody knows"),
        ("“Quoted” – text!", "quoted text"),
    ],
)
def test_normalise_answer(raw: str, expected: str) -> None:
    assert normalise_answer(raw) == expected


def test_exact_match_ignores_case_articles_punctuation() -> None:
    assert exact_match("the Eiffel Tower!", "Eiffel tower")
    assert not exact_match("Eiffel", "Eiffel Tower")


def test_numbers_digits_vs_words_and_separators() -> None:
    assert exact_match("two", "2")
    assert exact_match("12,500", "12500")
    assert not exact_match("12,500", "125")


def test_token_f1_partial_overlap() -> None:
    # pred tokens: steven spielberg jr ; ref: steven spielberg -> P=2/3 R=1 F1=0.8
    assert token_f1("Steven Spielberg Jr", "Steven Spielberg") == pytest.approx(0.8)
    assert token_f1("", "Steven") == 0.0
    assert token_f1("Paris", "London") == 0.0


def test_yes_no_mismatch_scores_zero_even_with_overlap() -> None:
    assert token_f1("yes", "no") == 0.0
    assert token_f1("Yes, they are", "yes") == 1.0
    assert not soft_correct("no", "yes")


def test_soft_correct_threshold() -> None:
    assert soft_correct("Steven Spielberg Jr", "Steven Spielberg")  # F1 0.8
    assert not soft_correct("Steven Allan Spielberg Jr", "Steven Spielberg")  # F1 0.667
    s = score_answer("Steven Allan Spielberg Jr", "Steven Spielberg", f1_threshold=0.6)
    assert s.correct and not s.em
