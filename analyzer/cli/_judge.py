"""``groundtrace judge ...``: validate a judge on a gold set, check its record, run it."""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final, TypeVar

import msgspec
import typer

from . import _writeback as wb
from ._app import console, err_console, handle_errors
from ._budget import (
    CallProfileOpt,
    CallSettings,
    EstimateOpt,
    MaxCallsOpt,
    MaxCostOpt,
    PricesOpt,
    RateLimitOpt,
    call_settings,
    existing_cache,
    print_estimate,
)
from ._executor import ExecutorName, ExecutorOpt, RayAddressOpt, RayWorkersOpt, open_executor
from ._progress import ProgressReporter
from ._reading import StrictOpt, check_unreadable
from ._runfolder import holds_out_folder

if TYPE_CHECKING:
    from groundtrace.analyzer.executor import Executor
    from groundtrace.analyzer.judge import (
        AcceptanceProfile,
        Judge,
        JudgeCase,
        JudgeResult,
        JudgeRunSummary,
        Metric,
        NotJudgeable,
    )
    from groundtrace.analyzer.llm import ModelClient
    from groundtrace.collectors import Trace

__all__ = ["API_KEY_ENV", "register"]

#: The run folder's model-call cache.
CACHE_FILE: Final = "llm_cache.sqlite"
#: Environment variable read for the judge endpoint's API key (optional).
API_KEY_ENV: Final = "GROUNDTRACE_JUDGE_API_KEY"

judge_app = typer.Typer(
    help="LLM-judge checks and judge meta-evaluation (validate before a judge may gate).",
    no_args_is_help=True,
)

T = TypeVar("T")

JudgeOpt = Annotated[
    str,
    typer.Option(
        "--judge",
        help="'lexical' (built-in baseline) or the base URL of an OpenAI-compatible "
        "endpoint, e.g. http://127.0.0.1:8080/v1.",
    ),
]
ModelOpt = Annotated[
    str | None, typer.Option("--model", help="Model id at the endpoint (required with a URL).")
]
ConcurrencyOpt = Annotated[
    int | None,
    typer.Option(help="Model calls in flight (default: the --call-profile's, else 2)."),
]
#: Model calls in flight when neither --concurrency nor the call profile says.
DEFAULT_CONCURRENCY: Final = 2
TimeoutOpt = Annotated[float, typer.Option(help="Seconds per model call attempt.")]
SeedOpt = Annotated[int, typer.Option("--judge-seed", help="Sampling seed sent to the model.")]
MaxTokensOpt = Annotated[int, typer.Option(help="Reply token budget of the judge.")]
RubricOpt = Annotated[
    str | None,
    typer.Option(
        "--rubric",
        help="Rubric of an endpoint judge: a shipped version (rag_triad_v1, the default) or "
        "a FILE. Its text and version are part of the judge fingerprint.",
    ),
]
ThresholdOpt = Annotated[
    float | None,
    typer.Option(
        "--threshold",
        help="Working threshold, a score >= it passes (default: the --profile's, else 0.8). "
        "Part of the judge fingerprint.",
    ),
]
ProfileOpt = Annotated[
    Path | None, typer.Option("--profile", help="Acceptance profile (TOML or JSON).")
]


def _run(coro: Coroutine[Any, Any, T]) -> T:
    import asyncio

    return asyncio.run(coro)


def _settings(
    profile_file: Path | None, threshold: float | None
) -> tuple[AcceptanceProfile, float]:
    """The acceptance profile and the working threshold, resolved alike by every command."""
    from groundtrace.analyzer.errors import ConfigError
    from groundtrace.analyzer.judge import AcceptanceProfile

    profile = AcceptanceProfile.from_file(profile_file) if profile_file else AcceptanceProfile()
    working = profile.threshold if threshold is None else threshold
    if not 0.0 <= working <= 1.0:
        raise ConfigError("--threshold must be within [0, 1]", field="--threshold")
    return profile, working


def _make_judge(
    spec: str,
    model: str | None,
    out: Path | None,
    *,
    rubric: str | None,
    calls: CallSettings,
    timeout: float,
    seed: int,
    max_tokens: int,
) -> tuple[Judge, ModelClient | None]:
    """The judge as the options describe it (``out``: where the call cache lives, if any)."""
    from groundtrace.analyzer.errors import ConfigError
    from groundtrace.analyzer.judge import DEFAULT_RUBRIC, LexicalJudge, LLMJudge, load_rubric
    from groundtrace.analyzer.llm import CallCache, ModelClient, RetryPolicy

    if spec == "lexical":
        if rubric is not None:
            raise ConfigError(
                "--rubric applies to an endpoint judge; the lexical judge has no rubric",
                field="--rubric",
            )
        return LexicalJudge(), None
    if not spec.startswith(("http://", "https://")):
        raise ConfigError("--judge must be 'lexical' or an http(s) URL", field="--judge")
    if not model:
        raise ConfigError("--model is required with an endpoint judge", field="--model")
    client = ModelClient(
        spec,
        api_key=os.environ.get(API_KEY_ENV),
        cache=None if out is None else CallCache(out / CACHE_FILE),
        concurrency=calls.concurrency(spec, DEFAULT_CONCURRENCY),
        timeout=timeout,
        retry=RetryPolicy(seed=seed),
        rate_limit=calls.rate_limit(spec),
    )
    chosen = DEFAULT_RUBRIC if rubric is None else load_rubric(rubric)
    return LLMJudge(client, model, rubric=chosen, seed=seed, max_tokens=max_tokens), client


async def _judge_with_progress(
    judge: Judge,
    cases: Sequence[JudgeCase],
    client: ModelClient | None,
    executor: Executor | None = None,
) -> list[JudgeResult]:
    from groundtrace.analyzer.judge import judge_all

    done = 0

    def tick(_: JudgeResult) -> None:
        nonlocal done
        done += 1
        progress("judging", done, len(cases))

    try:
        with ProgressReporter(err_console) as progress:
            return await judge_all(judge, cases, on_done=tick, executor=executor)
    finally:
        if client is not None:
            await client.aclose()


def _estimate(
    judge: Judge, cases: Sequence[JudgeCase], out: Path, calls: CallSettings, *, as_json: bool
) -> None:
    """``--estimate``: the judge's requests for ``cases`` against the cache in ``out``."""
    from groundtrace.analyzer.judge import LLMJudge

    requests = [judge.request(c) for c in cases] if isinstance(judge, LLMJudge) else []
    with existing_cache(out / CACHE_FILE) as cache:
        print_estimate(requests, cache, calls.prices, as_json=as_json)


def _write_judgments(path: Path, results: Sequence[JudgeResult]) -> None:
    from groundtrace.analyzer._results import encode
    from groundtrace.analyzer.errors import InputError

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as handle:
            for result in results:
                handle.write(encode(result).decode() + "\n")
    except OSError as exc:
        raise InputError(f"cannot write: {exc}", path=str(path)) from exc


def _metric(name: str) -> Metric:
    from groundtrace.analyzer.errors import ConfigError
    from groundtrace.analyzer.judge import Metric

    try:
        return Metric(name)
    except ValueError:
        choices = ", ".join(m.value for m in Metric)
        raise ConfigError(
            f"unknown dimension {name!r} (one of {choices})", field="--dimension"
        ) from None


@judge_app.command("validate")
@handle_errors
@holds_out_folder
def validate_command(
    gold: Annotated[Path, typer.Option("--gold", help="Gold set JSONL.")],
    out: Annotated[Path, typer.Option("--out", help="Output folder.")],
    judge: JudgeOpt = "lexical",
    model: ModelOpt = None,
    rubric: RubricOpt = None,
    threshold: ThresholdOpt = None,
    dimension: Annotated[str, typer.Option(help="Metric the gold labels grade.")] = "adherence",
    label_field: Annotated[
        str | None,
        typer.Option(help="Single-label column (e.g. 'supported'); default detects the layout."),
    ] = None,
    filters: Annotated[
        list[str] | None,
        typer.Option("--filter", help="Row filter FIELD~TEXT, FIELD!~TEXT, FIELD=V, FIELD!=V."),
    ] = None,
    sample: Annotated[int | None, typer.Option(help="Seeded random sample of N rows.")] = None,
    stratify: Annotated[bool, typer.Option(help="Sample N/2 rows from each class.")] = False,
    sample_seed: Annotated[int, typer.Option(help="Seed of the sample.")] = 20260709,
    profile_file: ProfileOpt = None,
    concurrency: ConcurrencyOpt = None,
    timeout: TimeoutOpt = 120.0,
    judge_seed: SeedOpt = 0,
    max_tokens: MaxTokensOpt = 256,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    call_profile: CallProfileOpt = None,
    rate_limit: RateLimitOpt = None,
    prices: PricesOpt = None,
    estimate: EstimateOpt = False,
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
    from groundtrace.analyzer._results import encode, write
    from groundtrace.analyzer.errors import InputError
    from groundtrace.analyzer.judge import (
        RowFilter,
        build_record,
        load_gold,
        meta_evaluate,
        render_validation_markdown,
    )

    metric = _metric(dimension)
    profile, working = _settings(profile_file, threshold)
    gold_set = load_gold(
        gold,
        dimension=metric.value,
        label_field=label_field,
        filters=tuple(RowFilter.parse(f) for f in filters or ()),
        sample=sample,
        stratify=stratify,
        seed=sample_seed,
    )
    if not gold_set.items:
        raise InputError("no gold items left after filtering", path=str(gold))
    calls = call_settings(call_profile, prices, rate_limit=rate_limit, concurrency=concurrency,
                          max_calls=None, max_cost=None)  # fmt: skip
    the_judge, client = _make_judge(
        judge,
        model,
        None if estimate else out,
        rubric=rubric,
        calls=calls,
        timeout=timeout,
        seed=judge_seed,
        max_tokens=max_tokens,
    )
    cases = [item.case for item in gold_set.items]
    if estimate:
        _estimate(the_judge, cases, out, calls, as_json=as_json)
        return
    results = _run(_judge_with_progress(the_judge, cases, client))
    validation = meta_evaluate(
        gold_set,
        results,
        metric=metric,
        threshold=working,
        n_resamples=profile.n_resamples,
        seed=profile.seed,
        smoke_min=profile.smoke_min,
        decision_min=profile.decision_min,
        minority_min=profile.minority_min,
    )
    fingerprint = dict(the_judge.fingerprint(working))
    record = build_record(validation, fingerprint, profile)
    validation = msgspec.structs.replace(
        validation, mode=record.mode, fingerprint=fingerprint,
        client=None if client is None else client.stats.snapshot(),
    )  # fmt: skip
    command = shlex.join(["groundtrace", *sys.argv[1:]])
    write(out / "validation.json", validation)
    write(out / f"validation_record_{metric.value}.json", record)
    _write_judgments(out / "judgments.jsonl", results)
    markdown = render_validation_markdown(validation, record, command=command)
    try:
        (out / "report.md").write_text(markdown, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write: {exc}", path=str(out / "report.md")) from exc
    if as_json:
        typer.echo(encode(validation).decode())
    else:
        typer.echo(markdown, nl=False)
    if validation.n == 0:
        from groundtrace.analyzer.errors import NothingMeasuredError

        errors = validation.protocol_errors
        kinds = ", ".join(f"{k} {n}" for k, n in errors.by_kind.items()) or "none scored"
        raise NothingMeasuredError(
            f"nothing measured: every judgment of the {validation.n_items} gold item(s) was a "
            f"protocol error ({kinds}); files in {out}"
        )


@judge_app.command("check")
@handle_errors
def check_command(
    record_path: Annotated[Path, typer.Option("--record", help="validation_record_*.json")],
    judge: JudgeOpt = "lexical",
    model: ModelOpt = None,
    rubric: RubricOpt = None,
    threshold: ThresholdOpt = None,
    profile_file: ProfileOpt = None,
    judge_seed: SeedOpt = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Check a validation record against the judge as configured now.

    The judge, rubric, threshold and profile options mean what they mean for ``judge
    validate``: the same options give the same fingerprint. Exit 0 when the record applies
    and the metric is gate-eligible, 1 when the metric must run review-only (criteria not
    met, or the fingerprint changed).
    """
    from groundtrace.analyzer._results import encode
    from groundtrace.analyzer.judge import check_record, load_record

    _NO_CALLS = CallSettings(None, None, None, None, 1)  # only the fingerprint is needed

    record = load_record(record_path)
    _, working = _settings(profile_file, threshold)
    the_judge, client = _make_judge(
        judge,
        model,
        None,
        rubric=rubric,
        calls=_NO_CALLS,
        timeout=1.0,
        seed=judge_seed,
        max_tokens=1,
    )
    if client is not None:
        _run(client.aclose())  # only the fingerprint is needed: no model call is made
    result = check_record(record, the_judge.fingerprint(working))
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
@holds_out_folder
def run_command(
    out: Annotated[Path, typer.Option("--out", help="Output folder.")],
    traces: Annotated[
        list[Path] | None, typer.Argument(help="Trace files or folders (OTLP).")
    ] = None,
    cases_file: Annotated[
        Path | None,
        typer.Option("--cases", help="JSONL of cases to judge (question, context, answer)."),
    ] = None,
    judge: JudgeOpt = "lexical",
    model: ModelOpt = None,
    rubric: RubricOpt = None,
    threshold: ThresholdOpt = None,
    profile_file: ProfileOpt = None,
    concurrency: ConcurrencyOpt = None,
    timeout: TimeoutOpt = 120.0,
    judge_seed: SeedOpt = 0,
    max_tokens: MaxTokensOpt = 256,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    write_back_to: wb.WriteBackOpt = None,
    otlp_endpoint: wb.OtlpEndpointOpt = wb.DEFAULT_OTLP_ENDPOINT,
    phoenix_url: wb.PhoenixUrlOpt = wb.DEFAULT_PHOENIX_URL,
    executor: ExecutorOpt = ExecutorName.LOCAL,
    ray_address: RayAddressOpt = None,
    ray_workers: RayWorkersOpt = 2,
    call_profile: CallProfileOpt = None,
    rate_limit: RateLimitOpt = None,
    max_calls: MaxCallsOpt = None,
    max_cost: MaxCostOpt = None,
    prices: PricesOpt = None,
    estimate: EstimateOpt = False,
    strict: StrictOpt = False,
) -> None:
    """Score traces (and/or a case file) on the RAG triad, with protocol errors by kind.

    Writes judgments.jsonl and summary.json in OUT. Traces without a query, an answer or
    evidence content are listed as not judgeable, never scored. With --write-back, the
    scores and protocol errors of traced cases go to the backend too (exit 4 if that fails).
    With --estimate nothing is called or written: the calls the run would make, those the
    cache in OUT answers and their estimated cost are printed. --max-calls / --max-cost stop
    the run at a ceiling (exit 5). Unreadable trace lines are skipped and named (--strict
    refuses them, exit 2). When nothing was measured (no case to judge, every judgment a
    protocol error) the files are written and the command exits 6, naming why.
    """
    from groundtrace.analyzer._results import encode, write
    from groundtrace.analyzer.errors import ConfigError
    from groundtrace.analyzer.judge import (
        NotJudgeable,
        cases_from_traces,
        load_cases,
        summarize_results,
    )
    from groundtrace.collectors.readers import ReadReport, read_traces

    if not traces and cases_file is None:
        raise ConfigError("give trace paths and/or --cases", field="TRACES")
    _, working = _settings(profile_file, threshold)
    cases: list[JudgeCase] = []
    skipped: list[NotJudgeable] = []
    read_errors: list[str] = []
    trace_list: list[Trace] = []
    if traces:
        report = ReadReport()
        trace_list = list(read_traces(traces, report=report))
        found, unjudgeable = cases_from_traces(trace_list)
        cases.extend(found)
        skipped = [NotJudgeable(u.case_id, tuple(u.missing)) for u in unjudgeable]
        read_errors = [str(e) for e in report.errors]
        check_unreadable(report.errors, strict)
    if cases_file is not None:
        cases.extend(load_cases(cases_file))
    calls = call_settings(call_profile, prices, rate_limit=rate_limit, concurrency=concurrency,
                          max_calls=max_calls, max_cost=max_cost)  # fmt: skip
    the_judge, client = _make_judge(
        judge,
        model,
        None if estimate else out,
        rubric=rubric,
        calls=calls,
        timeout=timeout,
        seed=judge_seed,
        max_tokens=max_tokens,
    )
    if estimate:
        _estimate(the_judge, cases, out, calls, as_json=as_json)
        return
    units = calls.concurrency(judge if client is not None else None, DEFAULT_CONCURRENCY)
    with open_executor(executor, ray_address, ray_workers, units, calls.budget) as runner:
        results = _run(_judge_with_progress(the_judge, cases, client, runner))
    summary = msgspec.structs.replace(
        summarize_results(results, working),
        not_judgeable=tuple(skipped),
        read_errors=tuple(read_errors),
        fingerprint=dict(the_judge.fingerprint(working)),
        client=None if client is None else client.stats.snapshot(),
    )
    write(out / "summary.json", summary)
    _write_judgments(out / "judgments.jsonl", results)
    if write_back_to is not None:
        from groundtrace.analyzer.writeback import answer_spans, judge_verdicts

        trace_ids = {t.request.case_id or t.trace_id: t.trace_id for t in trace_list}
        linked = judge_verdicts(results, trace_ids, answer_spans(trace_list), working)
        wb.write_back(write_back_to, linked, otlp_endpoint=otlp_endpoint, phoenix_url=phoenix_url)
    if as_json:
        typer.echo(encode(summary).decode())
    else:
        _print_run(summary, skipped, working)
    if summary.nothing_measured is not None:
        from groundtrace.analyzer.errors import NothingMeasuredError

        why = "; ".join(f"{u.case_id}: {', '.join(u.missing)}" for u in skipped[:3])
        raise NothingMeasuredError(
            f"nothing measured: {summary.nothing_measured}"
            + (f" ({len(skipped)} trace(s) not judgeable: {why})" if skipped else "")
            + f"; files in {out}"
        )


def _print_run(summary: JudgeRunSummary, skipped: list[NotJudgeable], working: float) -> None:
    console.print(
        f"{summary.cases} cases judged, {summary.needs_review} need review "
        f"(protocol errors), {len(skipped)} traces not judgeable",
        highlight=False,
    )
    for item in skipped[:10]:
        console.print(f"  {item.case_id}: {'; '.join(item.missing)}", highlight=False, markup=False)
    if len(skipped) > 10:
        console.print(f"  ... {len(skipped) - 10} more in summary.json", highlight=False)
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
