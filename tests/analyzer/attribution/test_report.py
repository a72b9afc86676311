"""The report a person reads: the concentration numbers as docs/attribution.md defines them,
the answers that do not depend on their context, and the same content in markdown and HTML."""

from __future__ import annotations

import html
import math
from pathlib import Path

import pytest

from groundtrace.analyzer.attribution._report import (
    effective_sources,
    reading,
    top_share,
    write_report,
)
from groundtrace.analyzer.attribution._shape import AttributionResult, SourceScore
from groundtrace.analyzer.attribution._shape import TraceAttribution as Row


def _row(trace_id: str, scores: dict[str, float], gap: float) -> Row:
    return Row(
        trace_id=trace_id, case_id=None, answer="an answer", tier="in-process",
        method="leave-one-out", passes=len(scores) + 1, full=-2.0, context_gap=gap,
        sources=tuple(SourceScore(i, s, f"text of {i} | piped") for i, s in scores.items()),
    )  # fmt: skip


def test_concentration_is_the_top_share_and_the_effective_number_of_sources() -> None:
    one = _row("t1", {"a": 3.0, "b": -1.0, "c": 0.0}, 5.0)
    assert top_share(one) == 1.0 and effective_sources(one) == 1.0
    even = _row("t2", {"a": 2.0, "b": 2.0}, 5.0)
    assert top_share(even) == 0.5 and effective_sources(even) == pytest.approx(2.0)
    skew = _row("t3", {"a": 3.0, "b": 1.0}, 5.0)
    h = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))
    assert top_share(skew) == 0.75 and effective_sources(skew) == pytest.approx(math.exp(h))
    none = _row("t4", {"a": -1.0, "b": 0.0}, 5.0)
    assert top_share(none) == 0.0 and effective_sources(none) == 0.0


def test_the_report_names_the_top_evidence_and_the_answers_without_context(
    tmp_path: Path,
) -> None:
    result = AttributionResult(
        rows=(_row("t1", {"a": 3.0, "b": 1.0}, 4.0), _row("t2", {"a": 0.1, "b": 0.2}, 0.3)),
        not_usable={"t9": "no answer"},
    )
    main = write_report(result, tmp_path)
    text = main.read_text()
    assert main.name == "attribution.md"
    assert "| t1 | `a` | +3.000 | 0.75 | 1.75 | 4.00 | in-process | leave-one-out | 3 |" in text
    assert "Answers that do not depend on their context (gap < 1 nat" in text
    assert "- t2: 'an answer' (gap 0.30)" in text and "- t1:" not in text
    assert "Top evidence: `a` (+3.00 nats): text of a | piped" in text
    assert "| `a` | +3.000 | text of a / piped |" in text  # a pipe never breaks the table
    assert "- not attributed: t9: no answer" in text
    said = reading(result)
    assert said.startswith("2 answer(s) attributed (in-process tier); 1 depend")
    assert "6 passes by the method (3.0 per answer)" in said
    assert "1 trace(s) not attributed" in said and "no source's removal alone" not in said
    page = (tmp_path / "attribution.html").read_text()
    assert html.escape(said) in page and "text of a | piped" in page
    assert "do not depend on their context" in page


def test_an_answer_that_several_sources_carry_is_named() -> None:
    redundant = _row("t1", {"a": -0.5, "b": -0.1}, 22.0)  # both carry it: neither alone
    said = reading(AttributionResult(rows=(redundant, _row("t2", {"a": 2.0}, 3.0))))
    assert "In 1 of them no source's removal alone lowers the answer: several carry it" in said
