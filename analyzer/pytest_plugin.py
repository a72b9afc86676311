"""pytest plugin: assert on a gate decision or a path report inside a test suite.

Installed with groundtrace (entry point ``pytest11``), so the fixtures below are available in
any test suite of an environment that has groundtrace and pytest. The assertions fail with
a readable message: the decision, the failing cases (new ones first) and their reasons.

Usage::

    def test_release_may_ship(gate_report):
        report = gate_report("gate-out/report.json")
        assert_gate(report)                              # promote only
        assert_gate(report, "promote", "manual_review")  # tolerate review
        assert_gate(report, new_failures_only=True)      # known failures tolerated

    def test_answers_come_from_what_was_read(path_report):
        assert_paths(path_report("paths-out/report.json"), cases=["refund", "express"])

``assert_gate`` and ``assert_paths`` are importable from this module
(``from groundtrace.analyzer.pytest_plugin import assert_gate``) and are also the fixtures
``assert_gate`` / ``assert_paths``.

They fail closed: a gate that could evaluate nothing never passes ``new_failures_only``, a
path assertion over cases none of which has a path check fails, and a report that cannot be
read, or a missing extra, fails the test with one clear line (no traceback).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from groundtrace.analyzer._deprecation import renamed

if TYPE_CHECKING:
    from groundtrace.analyzer.gate import CaseDecision, GateReport
    from groundtrace.analyzer.paths import PathReport

__all__ = ["assert_gate", "assert_paths"]

#: The report loaders behind the ``gate_report`` / ``path_report`` fixtures, no longer public
#: (0.2.0): importable from here for one release, with a warning.
__getattr__ = renamed(
    __name__,
    {"load_gate_report": "_load_gate_report", "load_path_report": "_load_path_report"},
    since="0.2.0",
    remove_in="0.3.0",
)

#: Failing cases spelled out in a failure message (the rest are counted).
SHOWN = 20


@contextmanager
def _clear_errors(what: str) -> Iterator[None]:
    """Turn a missing extra or an unreadable report into a one-line test failure."""
    __tracebackhide__ = True
    from groundtrace.analyzer._extras import missing_extra
    from groundtrace.collectors.errors import GroundtraceError

    try:
        yield
    except ModuleNotFoundError as exc:
        error = missing_extra(exc)
        if error is None:
            raise
        message = f"the groundtrace pytest plugin needs an extra to read {what}: {error}"
        raise pytest.fail.Exception(message, pytrace=False) from None
    except GroundtraceError as exc:
        raise pytest.fail.Exception(f"cannot read {what}: {exc}", pytrace=False) from None


def _load_gate_report(path: str | Path) -> GateReport:
    """Read a gate ``report.json`` (``groundtrace gate run --out``).

    A missing or invalid file, or a missing extra, fails the calling test with its reason.
    """
    __tracebackhide__ = True
    with _clear_errors(f"the gate report {path}"):
        from groundtrace.analyzer import read
        from groundtrace.analyzer.gate import GateReport

        return read(Path(path), GateReport)


def _load_path_report(path: str | Path) -> PathReport:
    """Read a path ``report.json`` (``groundtrace paths --out``).

    A missing or invalid file, or a missing extra, fails the calling test with its reason.
    """
    __tracebackhide__ = True
    with _clear_errors(f"the path report {path}"):
        from groundtrace.analyzer import read
        from groundtrace.analyzer.paths import PathReport

        return read(Path(path), PathReport)


def _lines(title: str, cases: Sequence[CaseDecision]) -> list[str]:
    if not cases:
        return []
    out = [f"{title} ({len(cases)}):"]
    out += [
        f"  - {c.case_id} ({c.stratum}) {c.decision.value}: {'; '.join(c.reasons)}"
        for c in cases[:SHOWN]
    ]
    if len(cases) > SHOWN:
        out.append(f"  ... {len(cases) - SHOWN} more")
    return out


def gate_message(report: GateReport, allowed: Iterable[str]) -> str:
    """Why a gate report does not pass: decision, reasons, the failing cases by kind and the
    gate's plain-language reading."""
    failing = {c.case_id: c for c in report.cases if not c.passed}
    changes = report.changes
    known = set() if changes is None else {c.case_id for c in changes.known}
    lines = [
        f"gate decision is {report.decision.value} (exit code {report.exit_code}), "
        f"expected {' or '.join(sorted(allowed))}"
    ]
    lines += [f"reason: {r}" for r in report.case_level.reasons]
    if report.statistics_note:
        lines.append(f"statistics: {report.statistics_note}")
    elif report.statistics is not None:
        s = report.statistics
        lines.append(f"statistics: {s.decision.value}, regression risk rho = {s.rho:.3f}")
    if changes is None or report.decision.value == "not_evaluable":
        # nothing was compared: which failures are new is unknown, not "none"
        title = "failing cases (new or known: unknown, nothing was compared)"
        lines += _lines(title, list(failing.values()))
    else:
        new = [c for k, c in failing.items() if k not in known]
        lines += _lines("new failures", new)
        lines += _lines("failing in the baseline too", [failing[k] for k in failing if k in known])
    from groundtrace.analyzer.gate import reading

    lines.append(f"reading: {reading(report)}")
    return "\n".join(lines)


def assert_gate(
    report: GateReport | str | Path, *allowed: str, new_failures_only: bool = False
) -> None:
    """Fail unless the gate's decision is one of ``allowed`` (default: ``promote``).

    With ``new_failures_only``, the run passes when every failing case failed in the baseline
    too, as the baseline evaluated it (those failures are tolerated), whatever the decision --
    a case the baseline has no trace for is a new failure, and a ``not_evaluable`` gate (one
    that could evaluate nothing shows no new failure because it compared nothing) fails.

    Raises:
        AssertionError: with the decision, the reasons and every failing case.
    """
    __tracebackhide__ = True  # pytest shows the message, not this function's source
    if isinstance(report, (str, Path)):
        report = _load_gate_report(report)
    accepted = set(allowed or ("promote",))
    if new_failures_only:
        if report.changes is None:
            raise AssertionError(
                "the gate report has no baseline comparison (format 1.1): rerun the gate"
            )
        if report.changes.new or report.decision.value == "not_evaluable":
            raise AssertionError(gate_message(report, ["no new failures"]))
        return
    if report.decision.value not in accepted:
        raise AssertionError(gate_message(report, accepted))


def assert_paths(report: PathReport | str | Path, *, cases: Iterable[str] | None = None) -> None:
    """Fail unless every strict case (or every case in ``cases``) passes the path check.

    Raises:
        AssertionError: listing each failing case with its status and issues.
    """
    __tracebackhide__ = True
    if isinstance(report, (str, Path)):
        report = _load_path_report(report)
    wanted = None if cases is None else set(cases)
    verdicts = [v for v in report.verdicts if wanted is None or v.case_id in wanted]
    if wanted is not None:
        unknown = sorted(wanted - {v.case_id for v in verdicts})
        if unknown:
            raise AssertionError(f"cases not in the path report: {', '.join(unknown)}")
    if all(v.path_pass is None for v in verdicts):  # nothing checked: nothing may pass
        raise AssertionError(
            f"none of the {len(verdicts)} case(s) asserted has a path check "
            "(no strict case): nothing was checked"
        )
    failing = [v for v in verdicts if v.path_pass is False]
    if not failing:
        return
    lines = [f"{len(failing)} of {len(verdicts)} case(s) fail the path check:"]
    for v in failing[:SHOWN]:
        issues = "; ".join(str(i.get("message", "")) for i in v.issues)
        lines.append(f"  - {v.case_id} {v.status.value}: {issues}")
    if len(failing) > SHOWN:
        lines.append(f"  ... {len(failing) - SHOWN} more")
    raise AssertionError("\n".join(lines))


@pytest.fixture
def gate_report() -> Callable[[str | Path], GateReport]:
    """Read a gate ``report.json``: ``gate_report(path)``."""
    return _load_gate_report


@pytest.fixture
def path_report() -> Callable[[str | Path], PathReport]:
    """Read a ``groundtrace paths`` ``report.json``: ``path_report(path)``."""
    return _load_path_report


@pytest.fixture(name="assert_gate")
def assert_gate_fixture() -> Callable[..., None]:
    """:func:`assert_gate` as a fixture."""
    return assert_gate


@pytest.fixture(name="assert_paths")
def assert_paths_fixture() -> Callable[..., None]:
    """:func:`assert_paths` as a fixture."""
    return assert_paths
