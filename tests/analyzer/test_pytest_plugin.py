"""The pytest plugin, loaded through its ``pytest11`` entry point in a pytester run."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.pytest_plugin import assert_gate
from groundtrace.examples.agent_docs.app import EXAMPLE_DIR
from groundtrace.examples.agent_docs.app import run as run_agent
from tests.analyzer.gate.test_gate_changes import gate_args, make_partial_baseline, make_runs

pytest_plugins = ["pytester"]

INI = "[pytest]\nasyncio_default_fixture_loop_scope = function\n"

app = build_app()


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A blocking gate between two demo runs, a review one, one that evaluated nothing, and a
    path report."""
    root = make_runs(tmp_path_factory.mktemp("plugin"))
    CliRunner().invoke(app, gate_args(root, "block"))
    unmatched = root / "unmatched.jsonl"
    text = (root / "cases.jsonl").read_text(encoding="utf-8")
    unmatched.write_text(text.replace('"case_id": "q', '"case_id": "zz'), encoding="utf-8")
    nothing = [*gate_args(root, "nothing")]
    nothing[nothing.index("--cases") + 1] = str(unmatched)
    CliRunner().invoke(app, nothing)
    same = [*gate_args(root, "same")]
    same[same.index("--candidate") + 1] = str(root / "baseline")
    CliRunner().invoke(app, same)
    run_agent(root / "agent")
    CliRunner().invoke(
        app,
        ["paths", str(root / "agent" / "traces"), "--cases", str(EXAMPLE_DIR / "cases.jsonl"),
         "--tools-config", str(EXAMPLE_DIR / "tools.toml"), "--out", str(root / "paths"),
         "--resamples", "200"],
    )  # fmt: skip
    found = {
        "block": root / "block" / "report.json",
        "same": root / "same" / "report.json",
        "nothing": root / "nothing" / "report.json",
        "paths": root / "paths" / "report.json",
    }
    assert all(p.is_file() for p in found.values())
    return found


def test_fixtures_assert_on_a_gate_with_readable_failures(
    pytester: pytest.Pytester, reports: dict[str, Path]
) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(
        f"""
        from groundtrace.analyzer.pytest_plugin import assert_gate

        BLOCK, SAME = {str(reports["block"])!r}, {str(reports["same"])!r}

        def test_blocked_release(gate_report):
            assert_gate(gate_report(BLOCK))

        def test_no_new_failures(assert_gate):
            assert_gate(BLOCK, new_failures_only=True)

        def test_review_tolerated(assert_gate):
            assert_gate(SAME, "promote", "manual_review")
        """
    )
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*AssertionError: gate decision is block (exit code 20), expected promote",
            "*reason: 2 case(s) block: q2, q3",
            "*new failures (1):",
            "*  - q2 (general) block: deterministic.required_context fail*",
            "*failing in the baseline too (1):",
            "*  - q3 (general) block: *",
            "*gate decision is block (exit code 20), expected no new failures",
        ]
    )


def test_path_assertion_lists_failing_cases(
    pytester: pytest.Pytester, reports: dict[str, Path]
) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(
        f"""
        PATHS = {str(reports["paths"])!r}

        def test_all(path_report, assert_paths):
            assert_paths(path_report(PATHS))

        def test_some(assert_paths):
            assert_paths(PATHS, cases=["scale_max"])

        def test_unknown(assert_paths):
            assert_paths(PATHS, cases=["no-such-case"])

        def test_nothing_checked(assert_paths):
            assert_paths(PATHS, cases=["hello"])  # require_path false: no path check
        """
    )
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=4)
    result.stdout.fnmatch_lines(
        [
            "*AssertionError: * of * case(s) fail the path check:",
            "*  - express both_failed: *",
            "*AssertionError: 1 of 1 case(s) fail the path check:",
            "*  - scale_max fabricated_quote: *",
            "*AssertionError: cases not in the path report: no-such-case",
            "*AssertionError: none of the 1 case(s) asserted has a path check (no strict case): "
            "nothing was checked",
        ]
    )


def test_a_gate_that_evaluated_nothing_never_passes_new_failures_only(
    pytester: pytest.Pytester, reports: dict[str, Path]
) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(
        f"""
        def test_nothing(assert_gate):
            assert_gate({str(reports["nothing"])!r}, new_failures_only=True)
        """
    )
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*AssertionError: gate decision is not_evaluable (exit code 30), "
            "expected no new failures",
            "*reason: evaluable coverage 0% below minimum 90%",
        ]
    )


def test_new_failures_only_fails_on_cases_the_baseline_has_no_trace_for(
    reports: dict[str, Path],
) -> None:
    root = reports["block"].parent.parent
    partial = make_partial_baseline(root, {"q1"})
    args = gate_args(root, "partial-gate")
    args[args.index("--baseline") + 1] = str(partial)
    assert CliRunner().invoke(app, args).exit_code == 20
    with pytest.raises(AssertionError) as failed:
        assert_gate(root / "partial-gate" / "report.json", new_failures_only=True)
    message = str(failed.value)
    assert "expected no new failures" in message
    assert "new failures (2):\n  - q2 (general) block" in message
    assert "failing in the baseline too" not in message


def test_a_gate_that_evaluated_nothing_says_its_counts_are_unknown(
    reports: dict[str, Path],
) -> None:
    with pytest.raises(AssertionError) as failed:
        assert_gate(reports["nothing"], new_failures_only=True)
    message = str(failed.value)
    assert "failing cases (new or known: unknown, nothing was compared) (3):" in message
    assert "new failures (" not in message and "failing in the baseline too" not in message


def test_an_unreadable_report_fails_with_one_clear_line(
    pytester: pytest.Pytester, reports: dict[str, Path]
) -> None:
    pytester.makeini(INI)
    (pytester.path / "bad.json").write_text('{"decision": "promote"}', encoding="utf-8")
    pytester.makepyfile(
        """
        def test_missing_gate(assert_gate):
            assert_gate("gate-out/report.json")

        def test_missing_paths(path_report):
            path_report("paths-out/report.json")

        def test_invalid_gate(gate_report):
            gate_report("bad.json")
        """
    )
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines(
        [
            "*cannot read the gate report gate-out/report.json: gate-out/report.json: "
            "cannot read: No such file or directory",
            "*cannot read the path report paths-out/report.json: *No such file or directory",
            "*cannot read the gate report bad.json: bad.json*",
        ]
    )
    shown = result.stdout.str()
    assert "During handling" not in shown
    # the message only: no frames of the plugin or the reader
    assert "Traceback" not in shown and "_results.py" not in shown
    assert "def load_gate_report" not in shown and "InputError" not in shown


def test_a_missing_extra_names_the_one_to_install(
    pytester: pytest.Pytester, reports: dict[str, Path]
) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(
        f"""
        import sys

        sys.modules["numpy"] = None  # as on an SDK-only install: no analyzer extra

        def test_gate(assert_gate):
            assert_gate({str(reports["block"])!r})
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    shown = result.stdout.str()
    assert (
        f"\nthe groundtrace pytest plugin needs an extra to read the gate report "
        f"{reports['block']}: this command needs the 'analyzer' extra (numpy is not "
        "installed): pip install 'groundtrace[analyzer]'\n"
    ) in shown
    assert "Traceback" not in shown and "halted" not in shown
