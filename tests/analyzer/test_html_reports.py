"""The HTML pages: real markup from the records, escaped, self-contained, data-driven."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec

from groundtrace.analyzer import _html as h
from groundtrace.analyzer._results import read
from groundtrace.analyzer.gate._decision import CaseDecision
from groundtrace.analyzer.gate._report_html import render_html
from groundtrace.analyzer.gate._run import GateReport

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "results"


def _gate() -> GateReport:
    return read(FIXTURES / "gate_report.json", GateReport)


def test_gate_page_has_banner_strata_posterior_and_grouped_reasons() -> None:
    report = _gate()
    page = render_html(report)
    assert "class='banner bad'" in page and "Decision: BLOCK · exit code 20" in page
    assert "<th>stratum</th>" in page and "<th>ρ_c</th>" in page
    assert "src='data:image/png;base64," in page  # the ρ posterior, inline
    flagged = [c for c in report.cases if c.decision.value != "promote"]
    groups = re.findall(r"<details[^>]*><summary>([^<]*) — (\d+) case\(s\)</summary>", page)
    assert sum(int(n) for _, n in groups) == sum(len(c.reasons) for c in flagged)
    assert "class='reading'" in page and "ρ = 0.955" in page
    assert not re.search(r"(src|href)=['\"]https?:", page) and "<script" not in page
    assert "|---" not in page and "**" not in page


def test_gate_page_escapes_what_it_is_given() -> None:
    report = _gate()
    evil = msgspec.structs.replace(report.cases[0], case_id="<script>x()</script>")
    page = render_html(msgspec.structs.replace(report, cases=(evil, *report.cases[1:])))
    assert "<script>" not in page and "&lt;script&gt;x()&lt;/script&gt;" in page


class _SplitCase(CaseDecision, frozen=True, kw_only=True):
    change: str = "new"


class _SplitReport(GateReport, frozen=True, kw_only=True):
    failure_split: dict[str, tuple[str, ...]] = msgspec.field(default_factory=dict)


def test_fields_added_to_the_records_appear_without_new_rendering_code() -> None:
    report = _gate()
    cases = tuple(
        _SplitCase(**msgspec.structs.asdict(c), change="already_failing") for c in report.cases
    )
    extended = _SplitReport(
        **{**msgspec.structs.asdict(report), "cases": cases},
        failure_split={"new": ("q3",), "fixed": ()},
    )
    page = render_html(extended)
    assert "<h2>More fields</h2><h3>failure_split</h3>" in page
    assert "<td>new</td><td><ul><li>q3</li></ul></td>" in page
    assert "<th>change</th>" in page and "<td>already_failing</td>" in page


def test_html_pieces_escape_plain_text_and_keep_markup() -> None:
    cell = h.table(["a<b"], [["<i>x</i>", h.Html("<i>y</i>"), 1.23456, None]])
    assert "<th>a&lt;b</th>" in cell and "&lt;i&gt;x&lt;/i&gt;" in cell and "<i>y</i>" in cell
    assert "<td class='num'>1.235</td>" in cell and "<td>–</td>" in cell
    page = h.page("t & u", h.section("S", "1 < 2"))
    assert "<title>t &amp; u</title>" in page and "<h2>S</h2>1 &lt; 2" in page
    assert page.startswith("<!doctype html>") and "<meta name='viewport'" in page


def test_gate_page_separates_new_known_and_fixed_failures() -> None:
    report = _gate()
    assert report.changes is not None
    page = render_html(report)
    section = page.split("<h2>Against the baseline</h2>", 1)[1].split("<h2>", 1)[0]
    for title, items in (
        ("New failures (passed in the baseline)", report.changes.new),
        ("Failing in the baseline too", report.changes.known),
        ("Fixed (failed in the baseline)", report.changes.fixed),
    ):
        assert (f"{title}: {len(items)}</summary>" in section) == bool(items)
    assert "<details open><summary>New failures" in section or not report.changes.new
    old = msgspec.structs.replace(report, changes=None)  # format 1.1: no comparison recorded
    assert "Against the baseline" not in render_html(old)
