"""The checks that decide pass/fail against a reference answer use fact correctness.

The gate's ``reference_answer`` check and the text channel of ``paths`` fail a sentence whose
name, time, date or number differs from the reference's (token F1 >= 0.8 passed it), and
still pass a paraphrase of the same fact.
"""

from __future__ import annotations

from groundtrace.analyzer.cases import parse_case
from groundtrace.analyzer.gate import CheckStatus
from groundtrace.analyzer.gate._cases import CaseOutcome
from groundtrace.analyzer.gate._checks import deterministic_checks
from groundtrace.analyzer.paths._validate import validate_case
from groundtrace.collectors.model import Request, ToolCall, Trace

REFERENCE = "Pepper is booked with Dr Lee on Tuesday at 10:00."
WRONG_TIME = "Pepper is booked with Dr Lee on Tuesday at 11:30."
WRONG_PET = "Pickles is booked with Dr Lee on Tuesday at 10:00."
PARAPHRASE = "Pepper is booked on Tuesday at 10 am with Dr Lee."


def _gate(answer: str) -> tuple[CheckStatus, str | None]:
    case = parse_case({"id": "c1", "question": "When is Pepper booked?", "answer": REFERENCE})
    checks = deterministic_checks(case, CaseOutcome("c1", answer, ()))
    (check,) = [c for c in checks if c.name == "reference_answer"]
    return check.status, check.detail


def test_the_gates_reference_answer_check_fails_a_different_fact() -> None:
    status, detail = _gate(WRONG_TIME)
    assert status is CheckStatus.FAIL
    assert detail is not None and "token F1 0.82" in detail
    assert "reference's time 10:00 absent" in detail and "time 11:30 not in the reference" in detail
    status, detail = _gate(WRONG_PET)
    assert status is CheckStatus.FAIL and "reference's name pepper absent" in str(detail)


def test_the_gates_reference_answer_check_passes_a_paraphrase() -> None:
    assert _gate(PARAPHRASE)[0] is CheckStatus.PASS


def _paths(answer: str) -> tuple[bool | None, float | None]:
    case = parse_case(
        {"id": "c1", "reference_answer": REFERENCE, "required_calls": [{"name": "book"}]}
    )
    call = ToolCall(span_id="s1", name="book", status="ok", result_content="booked")
    trace = Trace(
        request=Request(trace_id="t" * 32, case_id="c1"), answer=answer, tool_calls=(call,)
    )
    verdict = validate_case(case, trace)
    return verdict.text_correct, verdict.text_f1


def test_the_paths_text_channel_fails_a_different_fact() -> None:
    correct, f1 = _paths(WRONG_PET)
    assert f1 is not None and f1 >= 0.8 and correct is False
    assert _paths(WRONG_TIME)[0] is False
    assert _paths(PARAPHRASE)[0] is True
