"""The judge analysis in the one analysis shape: ``run``, its result, its reports and verdicts.

One result record, :class:`JudgeResult`, holds what a judge run measured: every judgment, the
run summary (per-metric scores and protocol errors, traces not judgeable, the judge's
fingerprint) and, when the config names a gold set, the validation and its record. A run
without gold writes ``summary.json`` and ``judgments.jsonl`` (what ``judge run`` writes); a
validation writes ``validation.json``, ``validation_record_<dimension>.json``,
``judgments.jsonl`` and ``report.md`` (what ``judge validate`` writes).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from groundtrace.analyzer._analysis import Analysis
from groundtrace.analyzer._results import Result, encode, write
from groundtrace.analyzer.errors import InputError

from ._config import Config, acceptance, build_judge, metric_of
from ._demo import demo_config
from ._plan import plan, plan_of
from ._reading import reading
from ._record import ValidationRecord, build_record
from ._records import JudgeRunSummary, JudgeValidation
from ._report import render_validation_markdown
from ._run import judge_all, summarize_results
from ._types import JudgeCase, Judgment
from ._validate import meta_evaluate

if TYPE_CHECKING:
    from groundtrace.analyzer import RunContext
    from groundtrace.analyzer.executor import UnitJournal
    from groundtrace.analyzer.llm import ChatRequest
    from groundtrace.analyzer.writeback import Linked

__all__ = ["ANALYSIS", "JudgeResult", "nothing_measured", "run", "verdicts", "write_report"]


class JudgeResult(Result, frozen=True, kw_only=True):
    """What one judge run measured (the analysis's result): its judgments, its summary and,
    with gold, its validation.

    Attributes:
        judgments: the judge's :class:`Judgment` of every case, in the plan's order.
        summary: per-metric scores and protocol errors, the traces not judgeable, the unreadable
            trace lines, the judge's fingerprint and the model client's counters.
        validation: the agreement with the gold set (None: the config names no gold set).
        record: the validation record of that metric (None without gold).
    """

    judgments: tuple[Judgment, ...]
    summary: JudgeRunSummary
    validation: JudgeValidation | None = None
    record: ValidationRecord | None = None


async def run(units: Sequence[JudgeCase], config: Config, context: RunContext) -> JudgeResult:
    """Judge every unit on the run's executor; with a gold set, meta-evaluate the judge on it.

    Args:
        units: the cases, as :func:`plan` returns them (a plain sequence of cases is judged
            as given, the rest of the plan read again from ``config``).
        config: the configuration.
        context: the run's executor (one unit a case; the run's budget stops it) and
            progress (``judging``, as each judgment arrives).

    Raises:
        ConfigError: bad judge or profile settings.
        BudgetReachedError: the run's budget stopped it.
    """
    judged = plan_of(units, config)
    profile, working = acceptance(config)
    judge, client = build_judge(config)
    total = len(judged.cases)
    done = 0

    def tick(_: Judgment) -> None:
        nonlocal done
        done += 1
        context.progress("judging", done, total)

    try:
        results = await judge_all(judge, judged.cases, on_done=tick, executor=context.executor)
    finally:
        if client is not None:
            await client.aclose()
            if client.cache is not None:
                client.cache.close()
    fingerprint = dict(judge.fingerprint(working))
    counts = None if client is None else client.stats.snapshot()
    summary = msgspec.structs.replace(
        summarize_results(
            results,
            working,
            not_judgeable=judged.not_judgeable,
            not_applicable=judged.not_applicable,
        ),
        read_errors=judged.read_errors,
        fingerprint=fingerprint,
        client=counts,
    )
    if judged.gold is None:
        return JudgeResult(judgments=tuple(results), summary=summary)
    validation = meta_evaluate(
        judged.gold,
        results,
        metric=metric_of(config),
        threshold=working,
        n_resamples=profile.n_resamples,
        seed=profile.seed,
        smoke_min=profile.smoke_min,
        decision_min=profile.decision_min,
        minority_min=profile.minority_min,
    )
    record = build_record(validation, fingerprint, profile)
    validation = msgspec.structs.replace(
        validation, mode=record.mode, fingerprint=fingerprint, client=counts
    )
    return JudgeResult(
        judgments=tuple(results), summary=summary, validation=validation, record=record
    )


async def estimate(
    units: Sequence[JudgeCase], config: Config, journal: UnitJournal | None
) -> tuple[list[ChatRequest], int]:
    """The model requests judging ``units`` makes (none for the lexical judge); nothing is
    sent. The judge keeps no journal: no unit is done before the run."""
    from ._llm_judge import LLMJudge

    judge, client = build_judge(config, cache=False)
    try:
        cases = plan_of(units, config).cases
        return ([judge.request(c) for c in cases] if isinstance(judge, LLMJudge) else []), 0
    finally:
        if client is not None:
            await client.aclose()  # nothing was sent


def _write_judgments(path: Path, results: Sequence[Judgment]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as handle:
            for result in results:
                handle.write(encode(result).decode() + "\n")
    except OSError as exc:
        raise InputError(f"cannot write: {exc}", path=str(path)) from exc


def write_report(result: JudgeResult, out: Path, *, command: str | None = None) -> Path:
    """Write the reports of ``result`` into ``out``; returns the main one.

    A run writes ``summary.json`` (returned) and ``judgments.jsonl``; a validation writes
    ``validation.json``, ``validation_record_<dimension>.json``, ``judgments.jsonl`` and
    ``report.md`` (returned; ``command``, when given, is named at its end).

    Raises:
        InputError: a file cannot be written.
    """
    validation, record = result.validation, result.record
    if validation is None or record is None:
        write(out / "summary.json", result.summary)
        _write_judgments(out / "judgments.jsonl", result.judgments)
        return out / "summary.json"
    write(out / "validation.json", validation)
    write(out / f"validation_record_{validation.dimension}.json", record)
    _write_judgments(out / "judgments.jsonl", result.judgments)
    main = out / "report.md"
    markdown = render_validation_markdown(validation, record, command=command)
    try:
        main.write_text(markdown, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write: {exc}", path=str(main)) from exc
    return main


def nothing_measured(result: JudgeResult) -> str | None:
    """Why nothing was measured (no case to judge, every judgment a protocol error), else None."""
    validation = result.validation
    if validation is not None:
        if validation.n:
            return None
        errors = validation.protocol_errors
        kinds = ", ".join(f"{k} {n}" for k, n in errors.by_kind.items()) or "none scored"
        return (
            f"every judgment of the {validation.n_items} gold item(s) was a protocol error "
            f"({kinds})"
        )
    summary = result.summary
    if summary.nothing_measured is None:
        return None
    skipped, inapplicable = summary.not_judgeable, summary.not_applicable
    why = "; ".join(f"{u.name}: {', '.join(u.missing)}" for u in skipped[:3])
    more = f"; and {len(skipped) - 3} more in summary.json" if len(skipped) > 3 else ""
    names = ", ".join(u.name for u in inapplicable[:3])
    rest = f", and {len(inapplicable) - 3} more in summary.json" if len(inapplicable) > 3 else ""
    return (
        summary.nothing_measured
        + (f" ({len(skipped)} trace(s) not judgeable: {why}{more})" if skipped else "")
        + (f" ({len(inapplicable)} not applicable: {names}{rest})" if inapplicable else "")
    )


def verdicts(result: JudgeResult, config: Config) -> Linked:
    """The scores and protocol errors of the traced cases, linked to their answering spans.

    The traces are read again from ``config.traces`` (unreadable lines skipped, as the plan
    skipped them); cases of a case file or a gold set have no trace and come back unlinked.
    """
    from groundtrace.analyzer.writeback import answer_spans
    from groundtrace.collectors.readers import ReadReport, read_traces

    from ._verdicts import judge_verdicts

    traces = list(read_traces(config.traces, report=ReadReport())) if config.traces else []
    trace_ids = {t.request.case_id or t.trace_id: t.trace_id for t in traces}
    return judge_verdicts(
        result.judgments, trace_ids, answer_spans(traces), result.summary.threshold
    )


#: The judge analysis (``get_analysis("judge")``).
ANALYSIS: Analysis[Config, JudgeCase, JudgeResult] = Analysis(
    name="judge",
    title="LLM-judge scores of the RAG triad, and the judge's agreement with a gold set",
    config=Config,
    plan=plan,
    run=run,
    write_report=write_report,
    reading=reading,
    nothing_measured=nothing_measured,
    verdicts=verdicts,
    demo=demo_config,
    estimate=estimate,
)
