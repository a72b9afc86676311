"""``groundtrace audit ...``: the multi-source audit (run, compare two runs, validate labels).

``audit run`` makes the audit's config from its options and runs it through the one driver
(:func:`~groundtrace.analyzer.cli._analyze.drive`), as ``analyze audit --config`` does; without
``--sources`` the config is the licence example's: its shipped sources and questions files
with its retriever (the audit's demo config).
"""

from __future__ import annotations

import sys
from contextlib import ExitStack
from enum import StrEnum
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from groundtrace.analyzer.audit import Config

from ._app import console, err_console, handle_errors, print_reading
from ._budget import CALL_FIELDS, CallOptions
from ._executor import ExecutorOptions
from ._fields import record_options
from ._options import fields_as_options, uses

if TYPE_CHECKING:
    from groundtrace.analyzer import AnalysisRun
    from groundtrace.analyzer.audit import AuditResult

__all__ = ["register"]


audit_app = typer.Typer(
    help="Multi-source audit: same question, different sources, different answers.",
    no_args_is_help=True,
)


class Retrieval(StrEnum):
    """Per-source retrieval mode."""

    AUTO = "auto"
    FLAT = "flat"


def _run_file(path: Path) -> Path:
    return path / "run.json" if path.is_dir() else path


def _load_run(path: Path) -> AuditResult:
    from groundtrace.analyzer._results import read
    from groundtrace.analyzer.audit import AuditResult

    return read(_run_file(path), AuditResult)


def _share(value: float | None, low: float | None, high: float | None) -> str:
    if value is None:
        return "n/a"
    ci = "" if low is None or high is None else f" [{100 * low:.1f}%, {100 * high:.1f}%]"
    return f"{100 * value:.1f}%{ci}"


def _print_headline(run: AuditResult) -> None:
    from rich.markup import escape
    from rich.table import Table

    s = run.summary
    validation = run.validation
    review = validation is not None and not validation.validated
    title = "multi-source audit" + (" [REVIEW-ONLY]" if review else "")
    table = Table(title=title, show_header=False)
    share = "n/a" if s.prefilter_share is None else f"{100 * s.prefilter_share:.1f}%"
    prevalence = s.overall.prevalence
    rows = [
        ("answers (questions x sources)", f"{s.n_answers} ({len(run.questions)} questions)"),
        ("pairs labelled", str(s.n_pairs)),
        ("decided by pre-filters", f"{s.n_prefiltered} ({share})"),
        ("pair protocol errors", str(len(run.pair_errors))),
        ("labels", ", ".join(f"{k} {v}" for k, v in s.labels.items())),
        ("absence rate [95% CI]", _share(s.absence.rate, s.absence.ci_low, s.absence.ci_high)
         if s.absence else "n/a"),
        ("disagreement prevalence [95% CI]" + (" [review-only]" if review else ""),
         f"{_share(prevalence, s.overall.ci_low, s.overall.ci_high)} of {s.overall.n_present}"),
        ("wall time", f"{run.wall_seconds:.1f} s"),
    ]  # fmt: skip
    if validation is not None:
        kappa = validation.kappa
        ci = "" if kappa.ci_low is None else f" [{kappa.ci_low:.3f}, {kappa.ci_high:.3f}]"
        value = "n/a" if kappa.value is None else f"{kappa.value:.3f}{ci}"
        rows.append(("kappa vs gold [95% CI]", value))
        verdict = "validated" if validation.validated else "REVIEW-ONLY, validation did not pass: "
        rows.append(("labeller validation", verdict + "; ".join(validation.reasons)))
    for key, value in rows:
        table.add_row(escape(key), escape(value))
    console.print(table)


#: ``audit run``: ``audit.Config``'s fields; without --sources the shipped licence corpus (a
#: count N of its licences, --questions its question ids); the call options make the rest.
RUN_OPTIONS = record_options(
    Config,
    declared={
        "sources": (Annotated[str | None, typer.Option(
            help="Your sources: a JSON lines file or a folder of .txt/.md files (docs/audit.md). "
            "Without it the shipped licence corpus is audited; a number N keeps its first N "
            "licences.")], lambda v: v or "", None),
        "questions": (Annotated[str, typer.Option(
            help="With --sources: the questions file (JSON lines, docs/audit.md). Without: "
            "comma-separated ids of the shipped questions (default: every question).")],
            str, ""),
    },
    left_out=CALL_FIELDS,
)  # fmt: skip


@audit_app.command("run")
@handle_errors
@uses(RUN_OPTIONS, ExecutorOptions, CallOptions)
def run_command(
    *,
    config: Config,
    retrieval: Annotated[
        Retrieval | None,
        typer.Option(
            help="Shipped corpus only: auto (whole short sources, hierarchical long ones) or "
            "flat (the licence example's retrievers)."
        ),
    ] = None,
    executor: ExecutorOptions,
    calls: CallOptions,
    as_json: Annotated[
        bool, typer.Option("--json", help="With --estimate: print one JSON object.")
    ] = False,
) -> None:
    """Answer every question once per in-scope source, label every pair, write the reports.

    Your corpus: --sources and --questions (formats in docs/audit.md), answered by the offline
    extractive answerer (the questions' cues), by a model (--endpoint URL --model NAME), or
    taken from --answers or --traces made by your own app. When nothing can answer (no answer
    says anything) the run stops with exit 6 naming why, its files kept.

    Answers and labels are journaled in OUT/units.sqlite as they arrive and model calls are
    cached in OUT/llm_cache.sqlite: run again into the same folder and a killed run resumes
    without repeating a completed unit or call; a second run into OUT while one runs is refused
    (exit 2, naming the run that holds it). SIGTERM/SIGINT stop gracefully: calls in
    flight finish and are kept (exit 130), so a stopped run repeats no call; --max-calls /
    --max-cost stop the same way at a ceiling (exit 5). With --estimate nothing is called or
    written: the answers and pair labels are worked out from the cache in OUT, and the calls
    the run would make, those the cache answers and their cost are printed (pair labels of
    answers not made yet are counted as "up to" calls).
    """
    from groundtrace.analyzer.errors import ConfigError

    config = calls.over(config)
    sources, questions, out = config.sources or None, config.questions, Path(config.out)
    shipped = _user_corpus(sources) is None
    if shipped and (config.answers is not None or config.traces):
        raise ConfigError("--answers and --traces need --sources and --questions",
                          field="--sources")  # fmt: skip
    if not shipped and retrieval is not None:
        raise ConfigError("--retrieval applies to the shipped licence corpus; name your own "
                          "retriever with --retriever", field="--retrieval")  # fmt: skip
    with ExitStack() as stack:
        if shipped:  # an estimate creates nothing: a subset's files go to a temporary folder
            corpus = Path(stack.enter_context(TemporaryDirectory())) if calls.estimate else out
            mode = (retrieval or Retrieval.AUTO).value
            config = _shipped(config, mode, sources, questions, corpus / "corpus")
        _audit_user(config, calls, executor, as_json=as_json)


def _shipped(config: Config, retrieval: str, count: str | None, ids: str, folder: Path) -> Config:
    """``config`` on the licence example's corpus: its sources and questions files and
    ``retrieval``'s retriever (unless ``--retriever`` names one); a count N of ``--sources``
    and question ids of ``--questions`` keep a subset, written as the same files into
    ``folder``."""
    import msgspec

    from groundtrace.analyzer.demo import licence_config

    kept = [q.strip() for q in ids.split(",") if q.strip()]
    mode: Literal["auto", "flat"] = "flat" if retrieval == "flat" else "auto"
    shipped = licence_config(
        config.out, retrieval=mode, questions=kept,
        max_sources=int(count) if count else None, subset=folder,
    )  # fmt: skip
    return msgspec.structs.replace(
        config, sources=shipped.sources, questions=shipped.questions,
        retriever=config.retriever or shipped.retriever,
    )  # fmt: skip


def _user_corpus(sources: str | None) -> Path | None:
    """The path of --sources, or None for the shipped corpus (absent, or a count N)."""
    from groundtrace.analyzer.errors import InputError

    if sources is None or (sources.isdigit() and not Path(sources).exists()):
        return None
    path = Path(sources)
    if not path.exists():
        raise InputError("no such file or folder", path=sources, field="--sources")
    return path


def _audit_user(config: Config, calls: CallOptions, executor: ExecutorOptions, *,
                as_json: bool) -> None:  # fmt: skip
    """``audit run``: the audit's config run by the one driver (``--estimate``: printed)."""
    from groundtrace.analyzer import audit
    from groundtrace.analyzer.errors import NothingMeasuredError

    from ._analyze import drive

    with fields_as_options(RUN_OPTIONS.option_names, config):
        planned = audit.plan(config)
    for note in planned.notes:
        err_console.print(note, highlight=False, markup=False)
    out = Path(config.out)

    def show(result: AuditResult, done: AnalysisRun[AuditResult]) -> None:
        if done.reason is not None:
            raise NothingMeasuredError(f"{done.reason}; the run's files are in {out}")
        _print_headline(result)
        print_reading(done.reading)
        console.print(f"report: {done.reports[0]}", highlight=False)

    drive(
        audit.ANALYSIS, config, out, calls=calls, in_flight=config.in_flight(), as_json=as_json,
        show=show, executor=executor, naming=fields_as_options(RUN_OPTIONS.option_names, config),
        units=planned,
    )  # fmt: skip


@audit_app.command("compare")
@handle_errors
def compare_command(
    run_a: Annotated[Path, typer.Argument(help="Run A (folder or run.json).")],
    run_b: Annotated[Path, typer.Argument(help="Run B (folder or run.json).")],
    out: Annotated[Path | None, typer.Option(help="Folder for comparison.json/.md.")] = None,
    resamples: Annotated[int, typer.Option(help="Bootstrap resamples.")] = 2000,
    seed: Annotated[int, typer.Option(help="Bootstrap seed (recorded).")] = 20260709,
) -> None:
    """B against A, paired by question: absence and disagreement changes, flipped pairs."""
    from groundtrace.analyzer._results import write
    from groundtrace.analyzer.audit import compare_runs, render_comparison_markdown

    comparison = compare_runs(_load_run(run_a), _load_run(run_b), n_resamples=resamples, seed=seed)
    text = render_comparison_markdown(comparison)
    if out is not None:
        write(out / "comparison.json", comparison)
        (out / "comparison.md").write_text(text, "utf-8")
    sys.stdout.write(text.split("\n## Flipped pairs")[0] + "\n")


@audit_app.command("validate")
@handle_errors
def validate_command(
    run: Annotated[Path, typer.Argument(help="A run of the licence corpus (folder or run.json).")],
    out: Annotated[Path | None, typer.Option(help="Write the validation record here.")] = None,
) -> None:
    """The run's labeller against the gold pair labels: kappa, MCC with CIs, confusion.

    Exit codes: 0 validated, 1 not validated (its labels are review-only), 2 on bad input.
    """
    from groundtrace.analyzer._results import write
    from groundtrace.analyzer.audit import render_validation_markdown
    from groundtrace.analyzer.errors import InputError

    record = _load_run(run)
    if record.validation is None:
        raise InputError("the run has no gold pair labels to validate against", path=str(run))
    if out is not None:
        write(out, record.validation)
    sys.stdout.write(render_validation_markdown(record.validation))
    if not record.validation.validated:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``audit`` to ``app``."""
    app.add_typer(audit_app, name="audit")
