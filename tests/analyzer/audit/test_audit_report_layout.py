"""The audit page stays readable: long tables capped with a note saying where the rest is,
the disagreeing pairs grouped per question in collapsed <details>."""

from __future__ import annotations

import re

import pytest

from groundtrace.analyzer import run_analysis
from groundtrace.analyzer._results import read
from groundtrace.analyzer.audit import ANALYSIS, _report
from groundtrace.analyzer.audit._records import AuditResult
from groundtrace.examples.license_audit.audit import licence_config


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> AuditResult:
    out = tmp_path_factory.mktemp("audit") / "run"
    run_analysis(ANALYSIS, licence_config(out, max_sources=12), out=out)
    return read(out / "run.json", AuditResult)


def _rows(page: str, heading: str) -> int:
    table = page.split(f"<h2>{heading}</h2>", 1)[1].split("</table>", 1)[0]
    return table.count("<tr>") - 1


def test_long_tables_are_capped_with_where_the_rest_is(
    run: AuditResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    sources = len(run.summary.by_source)
    assert sources == 12
    monkeypatch.setattr(_report, "MAX_ROWS", 3)
    page = _report.render_html(run)
    assert _rows(page, "Disagreement prevalence by source") == 3
    assert (
        f"{sources - 3} more source rows (fewer disagreeing pairs) not shown: run.json holds "
        "every one (summary.by_source)."
    ) in page
    assert _rows(page, "Absence by source") == 3
    assert "run.json holds every one (summary.absence_by_source)." in page
    # the rows shown are the most contested ones
    shown = sorted(run.summary.by_source, key=lambda f: -f.n_disagree)[:3]
    assert min(f.n_disagree for f in shown) >= max(
        f.n_disagree for f in run.summary.by_source if f not in shown
    )


def test_disagreeing_pairs_are_collapsed_per_question(
    run: AuditResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    by_question = {f.key: f for f in run.summary.by_question if f.disagreeing}
    assert by_question, "the run has no disagreeing pair to show"
    monkeypatch.setattr(_report, "MAX_PAIRS", 1)
    page = _report.render_html(run)
    section = page.split("<h2>Disagreeing pairs, by question</h2>", 1)[1]
    groups = re.findall(r"<details><summary>([^<]*)</summary>", section)
    assert [g.split(":")[0] for g in groups] == list(by_question)
    assert all("<details open" not in section for _ in groups)  # collapsed
    # one pair listed per question; the links of the figures point only at listed pairs
    listed = re.findall(r'<tr id="p-([^"]+)">', page)
    assert len(listed) == len(by_question)
    links = set(re.findall(r'<a href="#p-([^"]+)">', page))
    assert links == set(listed)
    many = [q for q, f in by_question.items() if len(f.disagreeing) > 1]
    if many:
        assert "more disagreeing pairs of this question not shown" in section
    # pairs that agree are counted, not listed
    assert "are not listed: run.json holds every pair (pairs) and answer (answers)." in section
