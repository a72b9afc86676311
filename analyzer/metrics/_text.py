"""Exact match, token F1 and the two correctness rules (SPEC section 4.2.1).

Answers are compared after normalisation (:mod:`._normalise`: lower case, no punctuation or
articles, numbers as digits, a yes/no answer reduced to that word).

Two rules decide whether a prediction is correct against a reference answer:

- **soft correctness** (``AnswerScore.correct``, CUE-R's correctness axis): an exact match
  after normalisation (EM) or token-level F1 at least 0.8. As in the HotpotQA evaluation, a
  yes/no/noanswer pair that differs scores F1 = 0. It passes a sentence that differs in the
  one word that matters ("The pet's name is Pickles." against "...Pepper." scores F1 0.8).
- **fact correctness** (``AnswerScore.fact_correct``, the rule of the gate's
  ``reference_answer`` check and of paths' text channel): an exact match, or F1 at least the
  threshold *and* the distinguishing facts of the two agree -- every time, date, number and
  name of the reference is stated in the prediction, and the prediction states no time,
  date or number the reference does not, of a kind the reference states
  (:mod:`._facts`). A paraphrase of the same fact still passes.

Usage::

    from groundtrace.analyzer.metrics import score_answer

    s = score_answer("The Beatles.", "Beatles")  # em=True, f1=1.0, correct=True, fact_correct=True
    s = score_answer("The pet's name is Pickles.", "The pet's name is Pepper.")
    s.correct, s.fact_correct  # (True, False): f1 0.8, the name pepper is missing
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Final

from ._facts import Fact, fact_differences
from ._normalise import SPECIAL_ANSWERS, normalise_answer

__all__ = [
    "DEFAULT_F1_THRESHOLD",
    "AnswerScore",
    "exact_match",
    "normalise_answer",
    "score_answer",
    "soft_correct",
    "token_f1",
]

#: Token-F1 at or above which an answer counts as correct (a profile setting).
DEFAULT_F1_THRESHOLD: Final = 0.8


def exact_match(prediction: str, reference: str) -> bool:
    """Whether the two answers are equal after normalisation."""
    return normalise_answer(prediction) == normalise_answer(reference)


def token_f1(prediction: str, reference: str) -> float:
    """Token-level F1 between the normalised answers (HotpotQA convention).

    Returns 0.0 when either side normalises to nothing, or when one side is yes/no/noanswer
    and the two differ.
    """
    pred = normalise_answer(prediction)
    ref = normalise_answer(reference)
    if (pred in SPECIAL_ANSWERS or ref in SPECIAL_ANSWERS) and pred != ref:
        return 0.0
    pred_tokens = pred.split()
    ref_tokens = ref.split()
    common = Counter(pred_tokens) & Counter(ref_tokens)
    overlap = sum(common.values())
    if overlap == 0:
        return 0.0
    precision = overlap / len(pred_tokens)
    recall = overlap / len(ref_tokens)
    return 2 * precision * recall / (precision + recall)


@dataclass(frozen=True, slots=True)
class AnswerScore:
    """Exact match, token F1 and the two correctness rules of one answer.

    Attributes:
        em: exact match after normalisation.
        f1: token F1 in [0, 1].
        correct: soft correctness, ``em or f1 >= threshold`` (CUE-R's correctness axis).
        fact_correct: fact correctness, ``em or (f1 >= threshold and the distinguishing
            facts agree)`` (the gate's and paths' rule).
        missing_facts: distinguishing facts of the reference the answer does not state.
        conflicting_facts: times, dates and numbers the answer adds of a kind the reference
            states.
    """

    em: bool
    f1: float
    correct: bool
    fact_correct: bool
    missing_facts: tuple[Fact, ...] = ()
    conflicting_facts: tuple[Fact, ...] = ()

    def describe(self, f1_threshold: float = DEFAULT_F1_THRESHOLD) -> str:
        """The score in words: "EM 0, token F1 0.80 (threshold 0.8); reference's name
        pepper absent"."""
        words = f"EM {int(self.em)}, token F1 {self.f1:.2f} (threshold {f1_threshold:g})"
        differences = [f"reference's {f} absent" for f in self.missing_facts]
        differences += [f"{f} not in the reference" for f in self.conflicting_facts]
        return "; ".join([words, *differences])


def score_answer(
    prediction: str, reference: str, *, f1_threshold: float = DEFAULT_F1_THRESHOLD
) -> AnswerScore:
    """Score one prediction against one reference answer.

    The facts are compared only when they can change the verdict (no exact match, F1 at
    least the threshold, a reference that is not yes/no); otherwise none are listed.

    Args:
        prediction: the answer given.
        reference: the gold answer.
        f1_threshold: token F1 at or above which the answer counts as correct.

    Returns:
        The :class:`AnswerScore`.
    """
    em = exact_match(prediction, reference)
    f1 = token_f1(prediction, reference)
    correct = em or f1 >= f1_threshold
    if em or not correct or normalise_answer(reference) in SPECIAL_ANSWERS:
        return AnswerScore(em=em, f1=f1, correct=correct, fact_correct=correct)
    differences = fact_differences(prediction, reference)
    return AnswerScore(
        em=em,
        f1=f1,
        correct=correct,
        fact_correct=not differences,
        missing_facts=differences.missing,
        conflicting_facts=differences.conflicting,
    )


def soft_correct(
    prediction: str, reference: str, *, f1_threshold: float = DEFAULT_F1_THRESHOLD
) -> bool:
    """Soft correctness: exact match or token F1 >= ``f1_threshold`` (SPEC 4.2.1)."""
    return score_answer(prediction, reference, f1_threshold=f1_threshold).correct
