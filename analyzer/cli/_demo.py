"""``groundtrace demo``: run the instrumented HotpotQA RAG app and summarise its traces."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final

import typer
from rich.markup import escape
from rich.table import Table

from ._app import console, err_console, handle_errors, print_reading
from ._progress import ProgressReporter

#: Questions (and traces replayed) of the default run: the most that finish within 10 minutes
#: on a quiet 2-core machine with the default model (measured: docs/models.md).
DEFAULT_ITEMS: Final = 16
#: Traces the default run attributes (k + 1 replays each, k = --top-k evidence items).
DEMO_ATTRIBUTIONS: Final = 2

if TYPE_CHECKING:
    from groundtrace.analyzer.demo import DemoResult
    from groundtrace.analyzer.gate import GateReport

__all__ = ["register"]


def _print_summary(result: DemoResult) -> None:
    report = result.report
    console.print(f"traces:     {result.traces_dir}")
    console.print(f"case file:  {result.cases_path}")
    console.print(
        f"model:      {result.backend.kind} ({result.backend.model}) at {result.backend.base_url}"
    )
    console.print(f"app:        hotpot-rag {report.app_version}")
    table = Table(title="demo summary", show_header=True)
    table.add_column("what")
    table.add_column("value", justify="right")
    table.add_row("questions", str(report.questions))
    table.add_row("traces read back", str(report.traces))
    table.add_row("spans", str(report.spans))
    for action, count in report.spans_by_action.items():
        table.add_row(f"  spans {action}", str(count))
    answered = report.answered + report.failed
    if report.failed:
        table.add_row("model calls failed (counted wrong)", str(report.failed))
    if report.mean_f1 is not None:
        table.add_row("answers correct (EM or F1>=0.8)", f"{report.correct}/{answered}")
        table.add_row("exact match", f"{report.exact_match}/{answered}")
        table.add_row("mean token F1", f"{report.mean_f1:.3f}")
    else:
        table.add_row("answers correct", "no answers recorded")
    if report.mean_confidence is not None:
        table.add_row("mean confidence", f"{report.mean_confidence:.3f}")
    table.add_row("seconds per question", f"{report.seconds_per_question:.3f}")
    findings = report.findings_by_kind
    table.add_row("findings", str(sum(findings.values())))
    for kind, count in findings.items():
        table.add_row(f"  {kind}", str(count))
    table.add_row("read errors", str(len(report.read_errors)))
    lost = report.export_stats.dropped + report.export_stats.failed
    table.add_row("spans lost in export", str(lost))
    console.print(table)
    _print_failed_calls(report.failed_calls)


#: Failed model calls listed on screen (the report's ``failed_calls`` holds every one).
_SHOWN_FAILURES: Final = 10


def _print_failed_calls(failed: tuple[str, ...]) -> None:
    if not failed:
        return
    console.print(f"\n[bold]{len(failed)} model call(s) failed[/] (each its case's failure):")
    for line in failed[:_SHOWN_FAILURES]:
        console.print(f"  - {line}", markup=False, highlight=False)
    if len(failed) > _SHOWN_FAILURES:
        console.print(f"  and {len(failed) - _SHOWN_FAILURES} more (--json: failed_calls)")


def _print_interventions(result: DemoResult, found: Any, report: str) -> None:
    from ._demo_tables import interventions_table, roles_and_joint_lines

    folder = result.config.out / "interventions"
    console.print(
        f"\n[bold]Evidence interventions[/] on {result.config.interventions} traces ({folder}):"
    )
    console.print(interventions_table(found.summary))
    for line in roles_and_joint_lines(found.summary):
        console.print(line, markup=False, highlight=False)


def _print_gate(result: DemoResult, found: Any, report: str) -> None:
    """The gate's decision between the demo's two app versions, why, and what changed."""
    from groundtrace.analyzer import gate

    decided: GateReport = found.report
    note = (decided.statistics_note,) if decided.statistics_note else ()
    console.print(
        f"\n[bold]Release gate[/] {result.report.app_version} -> "
        f"{result.report.candidate_version}: [bold]{decided.decision.value}[/] (exit code "
        f"{decided.exit_code}; {report})"
    )
    for reason in (*decided.case_level.reasons, *note):
        console.print(f"  - {reason}", markup=False)
    for line in gate.change_lines(decided):
        console.print(f"  {line}", markup=False, highlight=False)


def _print_paths(result: DemoResult, found: Any, report: str) -> None:
    metrics = found.report.metrics
    masked = ", ".join(metrics.masked_failures) or "none"
    rate = metrics.path_pass_rate
    shown = (
        "not measured"
        if rate.value is None
        else f"{rate.value:.2f} ({int(rate.numerator)} of {int(rate.denominator)} checked)"
    )
    console.print(
        f"\n[bold]Command paths[/] of the document agent ({report}): path pass rate "
        f"{shown} over {len(found.report.verdicts)} cases; masked failures "
        f"(right text, failed path): {masked}",
        highlight=False,
    )


def _print_judge(result: DemoResult, found: Any, report: str) -> None:
    from ._judge import _print_run

    console.print(f"\n[bold]Judge[/] of the app's answers ({report}):")
    _print_run(found.summary)


def _print_attribution(result: DemoResult, found: Any, report: str) -> None:
    from ._demo_tables import attribution_lines

    console.print(f"\n[bold]Attribution[/] of the app's answers ({report}):")
    for line in attribution_lines(found):
        console.print(line, markup=False, highlight=False)


def _print_audit(result: DemoResult, found: Any, report: str) -> None:
    from ._audit import _print_headline

    console.print(f"\n[bold]Multi-source audit[/] ({report}):")
    _print_headline(found)


#: What the screen shows of a built-in analysis's result (the demo, its result, its main
#: report) before its reading.
_DETAILS: Final[dict[str, Callable[[DemoResult, Any, str], None]]] = {
    "interventions": _print_interventions,
    "gate": _print_gate,
    "paths": _print_paths,
    "judge": _print_judge,
    "audit": _print_audit,
    "attribution": _print_attribution,
}


def _print_analyses(result: DemoResult) -> None:
    """Each analysis's run: what it found (a built-in's own lines), its reading, and why it
    measured nothing."""
    for name, shown in result.report.analyses.items():
        done = result.runs.get(name)
        detail = _DETAILS.get(name)
        if detail is not None and done is not None and done.result is not None:
            detail(result, done.result, shown.report)
        else:
            console.print(f"\n[bold]{escape(name)}[/] ({escape(shown.report)}):")
        print_reading(shown.reading)
        if shown.nothing_measured is not None:
            console.print(f"nothing measured: {shown.nothing_measured}", markup=False)


def _print_phases(result: DemoResult) -> None:
    phases = result.report.phase_seconds
    shown = ", ".join(f"{name} {seconds:.0f} s" for name, seconds in phases.items())
    console.print(f"\nwall time: {sum(phases.values()):.0f} s ({shown})", highlight=False)


def _check_complete(result: DemoResult) -> None:
    from groundtrace.analyzer.errors import DemoError

    summary = result.summary
    if summary.missing_cases or summary.read_errors:
        details = []
        if summary.missing_cases:
            details.append(f"{len(summary.missing_cases)} case(s) have no trace")
        if summary.read_errors:
            details.append(f"{len(summary.read_errors)} read error(s): {summary.read_errors[0]}")
        raise DemoError(f"traces in {result.traces_dir} are incomplete: " + "; ".join(details))


def register(app: typer.Typer) -> None:
    """Add ``groundtrace demo`` to ``app``."""

    @app.command("demo")
    @handle_errors
    def demo(
        model: Annotated[
            str | None,
            typer.Option(
                help="An embedded model served locally by llama.cpp (gemma3-270m, "
                "qwen2.5-coder-0.5b, qwen2.5-coder-1.5b; default: the best measured, see "
                "docs/models.md), lexical (built-in extractive reader, fast) or the "
                "http(s)://.../v1 URL of an OpenAI-compatible server.",
                show_default=False,
            ),
        ] = None,
        dataset: Annotated[
            Path | None,
            typer.Option(help="HotpotQA-layout JSON or JSONL file (default: the shipped sample)."),
        ] = None,
        questions: Annotated[int, typer.Option(help="Number of questions to run.")] = DEFAULT_ITEMS,
        out: Annotated[
            Path, typer.Option(help="Output directory (traces/ and cases.jsonl).")
        ] = Path("groundtrace-demo"),
        top_k: Annotated[
            int, typer.Option("--top-k", help="BM25 depth; also changes the app version label.")
        ] = 5,
        interventions: Annotated[
            int,
            typer.Option(
                help="Run the evidence interventions on the first N traces (0: skip them)."
            ),
        ] = DEFAULT_ITEMS,
        operators: Annotated[
            list[str] | None,
            typer.Option(
                help="Intervention operators: REMOVE, REPLACE, DUPLICATE, ZERO, RANDOM (the "
                "random-target controls), JOINT (default: the CUE-R set REMOVE,REPLACE,DUPLICATE).",
                show_default=False,
            ),
        ] = None,
        gate_top_k: Annotated[
            int,
            typer.Option(
                "--gate-top-k",
                help="Run the app again with this BM25 depth and gate it against the first "
                "run (0: skip the gate).",
            ),
        ] = 2,
        paths: Annotated[
            bool,
            typer.Option(
                "--paths/--no-paths",
                help="Run the document-agent example and its command-path report.",
            ),
        ] = True,
        audit_sources: Annotated[
            int,
            typer.Option(
                "--audit-sources",
                help="Run the offline multi-source licence audit over the first N licences "
                "(0: skip it).",
            ),
        ] = 12,
        judge: Annotated[
            bool,
            typer.Option(
                "--judge/--no-judge",
                help="Score the app's answers with the offline lexical judge.",
            ),
        ] = True,
        attribution: Annotated[
            int,
            typer.Option(
                help="Attribute the answers of the first N traces: the app replayed without "
                "each evidence item (0: skip it).",
            ),
        ] = DEMO_ATTRIBUTIONS,
        as_json: Annotated[
            bool, typer.Option("--json", help="Print one JSON summary object.")
        ] = False,
    ) -> None:
        """Run the instrumented HotpotQA RAG example, capture its traces and summarise them.

        Traces go to OUT/traces/ (OTLP-JSON lines), the case file to OUT/cases.jsonl; both are
        the inputs of the analyses, which then run on them, each into OUT/NAME/ with the config
        `groundtrace analyze NAME --config` takes (the options above skip or size them). Exits
        1 when the traces read back do not cover every question, 2 on bad input, 3 when the
        model backend is unavailable; an analysis's own verdict (a blocked gate) is shown, not
        exited with.
        """
        from groundtrace.analyzer.backends import DEFAULT_MODEL
        from groundtrace.analyzer.demo import DemoConfig, run_demo

        config = DemoConfig(model=model or DEFAULT_MODEL, dataset=dataset,
                            questions=questions, out=out, top_k=top_k,
                            interventions=interventions, gate_top_k=gate_top_k,
                            paths=paths, audit_sources=audit_sources, judge=judge,
                            attribution=attribution)  # fmt: skip
        if operators:
            config = dataclasses.replace(config, operators=tuple(operators))
        with ProgressReporter(err_console) as progress:
            result = run_demo(config, progress=progress)
        if as_json:
            from groundtrace.analyzer._results import encode

            typer.echo(encode(result.report).decode())
        else:
            _print_summary(result)
            _print_analyses(result)
            _print_phases(result)
        _check_complete(result)
