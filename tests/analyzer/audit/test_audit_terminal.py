"""The audit's headline on the terminal says review-only where the report does."""

from __future__ import annotations

import re

import msgspec
import pytest

from groundtrace.analyzer import audit, run_analysis
from groundtrace.analyzer.audit import ANALYSIS, AuditResult
from groundtrace.analyzer.cli._app import console
from groundtrace.analyzer.cli._audit import _print_headline


@pytest.fixture(scope="module")
def licences(tmp_path_factory: pytest.TempPathFactory) -> AuditResult:
    from groundtrace.examples.license_audit.audit import licence_config

    out = tmp_path_factory.mktemp("audit")
    done = run_analysis(ANALYSIS, licence_config(out, max_sources=3), out=out)
    assert done.result is not None
    return done.result


def _screen(run: AuditResult) -> str:
    with console.capture() as captured:
        _print_headline(run)
    return " ".join(captured.get().split())


@pytest.mark.timeout(120)
def test_the_terminal_headline_is_review_only_when_validation_failed(licences: AuditResult) -> None:
    validation = licences.validation
    assert validation is not None
    failed = msgspec.structs.replace(validation, validated=False, reasons=("kappa too low",))
    passed = msgspec.structs.replace(validation, validated=True, reasons=())

    screen = _screen(msgspec.structs.replace(licences, validation=failed))
    assert "multi-source audit [REVIEW-ONLY]" in screen
    assert "disagreement prevalence [95% CI] [review-only]" in screen
    assert "REVIEW-ONLY, validation did not pass: kappa too low" in screen
    reading = audit.reading(msgspec.structs.replace(licences, validation=failed))
    assert reading.startswith("Review-only: the labeller's validation")

    screen = _screen(msgspec.structs.replace(licences, validation=passed))
    assert "review-only" not in screen.lower()
    assert re.search(r"labeller validation │ validated │", screen)
    assert "Review-only" not in audit.reading(msgspec.structs.replace(licences, validation=passed))
