"""``groundtrace judge ...``: validate a judge on a gold set, check its record, run it.

``judge run`` and ``judge validate`` are front-ends over the judge analysis
(``groundtrace.analyzer.judge``): their options make its :class:`Config`, which the one driver
runs (:func:`~groundtrace.analyzer.run_analysis`: lock, budget, ``--estimate``, progress,
reports, write-back, exit code); the printing is theirs.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final

import msgspec
import typer

from groundtrace.analyzer.judge import Config

from ._analyze import drive
from ._app import console, handle_errors, print_reading
from ._budget import CALL_FIELDS, CallOptions
from ._executor import ExecutorOptions
from ._fields import record_options
from ._options import fields_as_options, uses, without
from ._unreadable import StrictOpt, check_unreadable
from ._writeback import WriteBackOptions

if TYPE_CHECKING:
    from groundtrace.analyzer import Analysis, AnalysisRun
    from groundtrace.analyzer.judge import JudgeResult, JudgeRunSummary

__all__ = ["register"]

judge_app = typer.Typer(
    help="LLM-judge checks and judge meta-evaluation (validate before a judge may gate).",
    no_args_is_help=True,
)

#: The judge's own settings: the same options (and fingerprint) in every judge command.
_JUDGE: Final = ("judge", "model", "rubric", "threshold", "profile", "judge_seed")
#: The model-call settings of the commands that call the judge.
_CALLS: Final = ("concurrency", "timeout", "max_tokens")

#: ``judge validate``: the judge and the gold set it is validated on.
VALIDATE_OPTIONS = record_options(
    Config,
    only=(*_JUDGE, "gold", "dimension", "label_field", "filters", "sample", "stratify",
          "sample_seed", *_CALLS),
    required=("gold",),
)  # fmt: skip
#: ``judge check``: the judge as configured now.
CHECK_OPTIONS = record_options(Config, only=_JUDGE)
#: ``judge run``: the judge and the traces (TRACES) and/or case file it scores.
RUN_OPTIONS = record_options(
    Config,
    only=(*_JUDGE, "traces", "cases", "strict", *_CALLS),
    argument="traces",
    declared={"strict": (StrictOpt, bool)},
)

#: The option each field of ``judge.Config`` comes from, in any judge command.
_OPTIONS: Final = {
    **RUN_OPTIONS.option_names,
    **VALIDATE_OPTIONS.option_names,
    **{name: "--" + name.replace("_", "-") for name in CALL_FIELDS},
}


def _with_calls(config: Config, calls: CallOptions, out: Path) -> Config:
    """``config`` with the call options over its call fields, and the run folder's model-call
    cache."""
    return msgspec.structs.replace(calls.over(config), cache=_cache(out, calls.estimate))


def _cache(out: Path, estimate: bool) -> str | None:
    """The run folder's model-call cache, where the driver's estimate reads it (none for an
    estimate: it creates nothing)."""
    from groundtrace.analyzer._driver import CACHE_NAME

    return None if estimate else str(out / CACHE_NAME)


def _validation(command: str) -> Analysis[Config, Any, JudgeResult]:
    """The judge analysis naming ``command`` at the end of a validation's report."""
    import dataclasses
    import functools

    from groundtrace.analyzer.judge import ANALYSIS, write_report

    return dataclasses.replace(
        ANALYSIS, write_report=functools.partial(write_report, command=command)
    )


@judge_app.command("validate")
@handle_errors
@uses(VALIDATE_OPTIONS, without(CallOptions, "max_calls", "max_cost"))
def validate_command(
    *,
    config: Config,
    out: Annotated[Path, typer.Option("--out", help="Output folder.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    calls: CallOptions,
) -> None:
    """Measure a judge's agreement with a gold set and write its validation record.

    Reports the grade (smoke >= 30 items, decision >= 100, minority class >= 30%), raw
    agreement, inter-annotator kappa, judge-vs-gold Cohen's kappa, MCC at the working
    threshold, AUROC and an MCC sweep 0.1-0.9, each with a 95% bootstrap CI (B and seed from
    the profile). Writes report.md, validation.json, validation_record_<dimension>.json and
    judgments.jsonl in OUT. The groundedness layout is read with e.g.
    --label-field supported --filter 'label_origin~human'. With --estimate nothing is called
    or written: the calls it would make, those the cache in OUT answers and their cost are
    printed.
    """
    from groundtrace.analyzer._results import encode

    def show(report: JudgeResult, done: AnalysisRun[JudgeResult]) -> None:
        assert report.validation is not None  # a validation
        if as_json:
            typer.echo(encode(report.validation).decode())
        else:
            typer.echo(done.reports[0].read_text(encoding="utf-8"), nl=False)

    # every item at once (on this process): the model client bounds the calls
    drive(
        _validation(shlex.join(["groundtrace", *sys.argv[1:]])), _with_calls(config, calls, out),
        out, calls=calls, in_flight=None, as_json=as_json, show=show,
        naming=fields_as_options(_OPTIONS),
    )  # fmt: skip


@judge_app.command("check")
@handle_errors
@uses(CHECK_OPTIONS)
def check_command(
    *,
    record_path: Annotated[Path, typer.Option("--record", help="validation_record_*.json")],
    config: Config,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Check a validation record against the judge as configured now.

    The judge, rubric, threshold and profile options mean what they mean for ``judge
    validate``: the same options give the same fingerprint. Exit 0 when the record applies
    and the metric is gate-eligible, 1 when the metric must run review-only (criteria not
    met, or the fingerprint changed).
    """
    from groundtrace.analyzer._results import encode
    from groundtrace.analyzer.judge import ValidationRecord

    record = ValidationRecord.from_file(record_path)
    with fields_as_options(_OPTIONS):
        fingerprint = config.fingerprint()  # no model client is opened
    result = record.check(fingerprint)
    if as_json:
        typer.echo(encode(result).decode())
    else:
        status = "valid" if result.valid else "INVALID"
        console.print(
            f"{result.metric}: record {status}, mode {result.mode}: {result.reason}",
            highlight=False,
            markup=False,
        )
    if result.mode != "gate_eligible":
        raise typer.Exit(1)


@judge_app.command("run")
@handle_errors
@uses(RUN_OPTIONS, WriteBackOptions, ExecutorOptions, CallOptions)
def run_command(
    *,
    out: Annotated[Path, typer.Option("--out", help="Output folder.")],
    config: Config,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    write_back: WriteBackOptions,
    executor: ExecutorOptions,
    calls: CallOptions,
) -> None:
    """Score traces (and/or a case file) on the RAG triad, with protocol errors by kind.

    Writes judgments.jsonl and summary.json in OUT. Each answer is judged against what grounds
    it: the retrieved documents and/or the results of the tool calls (an agent); each judgment
    says which. Traces without a query, an answer or evidence content are listed as not
    judgeable; traces that retrieved nothing and called no tool as not applicable (each by
    case id, trace id beside); neither is scored. With --write-back, the
    scores and protocol errors of traced cases go to the backend too (exit 4 if that fails).
    With --estimate nothing is called or written: the calls the run would make, those the
    cache in OUT answers and their estimated cost are printed. --max-calls / --max-cost stop
    the run at a ceiling (exit 5). Unreadable trace lines are skipped and named (--strict
    refuses them, exit 2). When nothing was measured (no case to judge, every judgment a
    protocol error) the files are written and the command exits 6, naming why.
    """
    from groundtrace.analyzer._results import encode
    from groundtrace.analyzer.judge import ANALYSIS

    def show(report: JudgeResult, done: AnalysisRun[JudgeResult]) -> None:
        check_unreadable(report.summary.read_errors, False)
        if as_json:
            typer.echo(encode(report.summary).decode())
        else:
            _print_run(report.summary)
            print_reading(done.reading)

    config = _with_calls(config, calls, out)
    drive(  # planning, --strict refuses unreadable trace lines
        ANALYSIS, config, out, calls=calls, in_flight=config.in_flight(), as_json=as_json,
        show=show, executor=executor, write_back=write_back,
        naming=fields_as_options(_OPTIONS),
    )  # fmt: skip


def _print_run(summary: JudgeRunSummary) -> None:
    skipped, inapplicable = summary.not_judgeable, summary.not_applicable
    working = summary.threshold
    against = ", ".join(f"{n} against {source}" for source, n in summary.contexts.items())
    console.print(
        f"{summary.cases} cases judged"
        + (f" ({against})" if against else "")
        + f", {summary.needs_review} need review (protocol errors), {len(skipped)} not "
        f"judgeable, {len(inapplicable)} not applicable",
        highlight=False,
        markup=False,
    )
    for label, items in (("not judgeable", skipped), ("not applicable", inapplicable)):
        for item in items[:10]:
            console.print(
                f"  {label}: {item.name}: {'; '.join(item.missing)}", highlight=False, markup=False
            )
        if len(items) > 10:
            console.print(
                f"  ... and {len(items) - 10} more {label} in summary.json", highlight=False
            )
    for name, m in summary.metrics.items():
        console.print(
            f"  {name}: scored {m.scored}, mean {m.mean}, pass {m.passed} / fail "
            f"{m.failed} @ {working}, protocol errors {m.errors_by_kind or 0}",
            highlight=False,
            markup=False,
        )


def register(app: typer.Typer) -> None:
    """Add the ``judge`` command group to the root app."""
    app.add_typer(judge_app, name="judge")
