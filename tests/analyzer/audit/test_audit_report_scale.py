"""The audit's report at real size and what it says about its labels.

At many sources the heat map shows only the most contested sources (and says so), the pair
links under a figure are capped with a count, and the Markdown tables are capped; the page
shows the labeller's validation (kappa, confusion matrix), marks the headline figures
review-only where that validation did not pass, and says what its intervals cover.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest

from groundtrace.analyzer import run_analysis
from groundtrace.analyzer._results import read
from groundtrace.analyzer.audit import ANALYSIS, AuditResult
from groundtrace.analyzer.audit._report import render_html, render_markdown

ROOT = Path(__file__).resolve().parents[3]


def _scale_run(n_sources: int, group_size: int) -> Any:
    spec = importlib.util.spec_from_file_location("audit_scale", ROOT / "benchmarks" /
                                                  "audit_scale.py")  # fmt: skip
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build_run(n_sources, group_size)


@pytest.fixture(scope="module")
def big() -> AuditResult:
    run: AuditResult = _scale_run(300, 100)
    return run


@pytest.fixture(scope="module")
def licences(tmp_path_factory: pytest.TempPathFactory) -> AuditResult:
    from groundtrace.examples.license_audit.audit import licence_config

    out = tmp_path_factory.mktemp("audit") / "run"
    run_analysis(ANALYSIS, licence_config(out, max_sources=12), out=out)
    return read(out / "run.json", AuditResult)


@pytest.mark.timeout(120)
def test_the_heat_map_shows_the_most_contested_sources(big: AuditResult) -> None:
    page = render_html(big)
    heat = page.split("<h2>Source x source disagreement</h2>", 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr><th>([^<]+)</th>", heat)
    assert len(rows) == 40 < len(big.sources)
    assert "It shows the 40 most contested of the 300 sources" in heat
    disagree = {f.key: f.n_disagree for f in big.summary.by_source}
    assert min(disagree[r] for r in rows) >= max(
        n for key, n in disagree.items() if key not in rows
    )
    # the pairs behind a figure: capped with a count, the rest in run.json
    assert "more (run.json)</details>" in page
    assert len(page) < 2_000_000
    markdown = render_markdown(big)
    assert "more source rows not shown: run.json holds every one (summary.by_source)." in markdown
    assert markdown.count("\n| ") < 400


@pytest.mark.timeout(120)
def test_the_page_shows_the_labellers_validation(licences: AuditResult) -> None:
    validation = licences.validation
    assert validation is not None
    failed = msgspec.structs.replace(validation, validated=False, reasons=("kappa too low",))
    passed = msgspec.structs.replace(validation, validated=True, reasons=())
    for v in (failed, passed):
        run = msgspec.structs.replace(licences, validation=v)
        page = render_html(run)
        section = page.split("<h2>Labeller validation</h2>", 1)[1]
        assert "five-label Cohen&#x27;s kappa" in section or "five-label Cohen's kappa" in section
        assert "Confusion (rows gold, columns predicted)" in section
        for gold in ("absent", "consistent", "contradictory"):
            assert f"<tr><th>{gold}</th>" in section
        assert str(v.confusion["absent"]["absent"]) in section
        review = "[review-only]" in page and "Review-only:" in page
        assert review == (not v.validated)
        assert ("review-only: kappa too low" in render_markdown(run)) == (not v.validated)
    unchecked = render_html(msgspec.structs.replace(licences, validation=None))
    assert "not validated (no gold pair labels)" in unchecked


def test_intervals_say_what_they_cover(licences: AuditResult) -> None:
    for text in (render_html(licences), render_markdown(licences)):
        assert "the sampling of questions" in text
        assert "not answerer or labeller error" in text
