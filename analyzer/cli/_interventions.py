"""``groundtrace interventions``: counterfactual evidence interventions on captured traces."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from groundtrace.analyzer.interventions import Config

from ._app import console, handle_errors, print_reading
from ._budget import CALL_FIELDS, CallOptions
from ._executor import ExecutorOptions
from ._fields import record_options
from ._options import uses
from ._unreadable import StrictOpt, check_unreadable
from ._writeback import WriteBackOptions

if TYPE_CHECKING:
    from groundtrace.analyzer import AnalysisRun
    from groundtrace.analyzer.interventions import InterventionsResult

__all__ = ["register"]


#: ``groundtrace interventions``: ``interventions.Config``'s fields (TRACES the argument); the
#: call options (:class:`CallOptions`) set its call fields.
INTERVENTIONS_OPTIONS = record_options(
    Config,
    argument="traces",
    declared={"strict": (StrictOpt, bool)},
    left_out=CALL_FIELDS,
)


def register(app: typer.Typer) -> None:
    """Add ``groundtrace interventions`` to ``app``."""

    @app.command("interventions")
    @handle_errors
    @uses(INTERVENTIONS_OPTIONS, WriteBackOptions, ExecutorOptions, CallOptions)
    def interventions(
        *,
        config: Config,
        as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
        write_back: WriteBackOptions,
        executor: ExecutorOptions,
        calls: CallOptions,
    ) -> None:
        """Replay each trace with evidence removed, replaced, duplicated or zeroed.

        Scores correctness, grounding, calibration and trace divergence with paired bootstrap
        CIs, assigns evidence roles and runs joint ablation. Writes results.jsonl,
        summary.json, summary.md and report.html into OUT; a killed run resumes there (with one
        counterfactual trace per unit), and a second run into OUT while one runs is refused
        (exit 2, naming the run that holds it).
        With --write-back, each target's evidence roles go onto its retrieval span (exit 4
        if that fails). With --endpoint, --rate-limit paces the calls and --max-calls /
        --max-cost stop the run at a ceiling (exit 5; a re-run resumes). With --estimate
        (endpoint replay) nothing is called or written: the calls the units still to run
        would make, those the cache in OUT answers and their cost are printed.
        Unreadable trace lines are skipped and named (--strict refuses them, exit 2). When
        nothing was measured (no usable item, every replay unit failed) the reports are
        written and the command exits 6, naming why.
        """
        from groundtrace.analyzer._results import encode, to_builtins
        from groundtrace.analyzer.interventions import ANALYSIS, operator_table_md

        from ._analyze import drive

        config, out = calls.over(config), Path(config.out)

        def show(result: InterventionsResult, done: AnalysisRun[InterventionsResult]) -> None:
            s = result.summary
            check_unreadable(s.input.read_errors, strict=False)
            left_out = {**s.input.traces_not_usable, **s.input.not_replayable}
            if as_json:
                typer.echo(encode(result.summary).decode())
                return
            console.print(operator_table_md(s))
            print_reading(done.reading)
            console.print(f"calls: {to_builtins(s.calls)}", markup=False)
            console.print(f"failed units: {s.failed_units or 'none'}", markup=False)
            for trace_id, why in list(left_out.items())[:10]:
                console.print(f"  trace {trace_id} left out: {why}", highlight=False, markup=False)
            if len(left_out) > 10:
                console.print(f"  ... {len(left_out) - 10} more in summary.json", highlight=False)
            for op, why in s.not_run.items():
                console.print(f"{op} {why}", markup=False, highlight=False)
            for finding in s.findings[:10]:
                console.print(f"finding: {finding}", markup=False, highlight=False)
            if len(s.findings) > 10:
                console.print(f"... and {len(s.findings) - 10} more findings (summary.json)")
            console.print(f"reports: {out / 'summary.md'}  {out / 'report.html'}")

        drive(  # one endpoint: its bound on calls in flight is the units' too
            ANALYSIS, config, out, calls=calls, in_flight=config.in_flight(), as_json=as_json,
            show=show, executor=executor, write_back=write_back,
        )  # fmt: skip
