"""The demo job (:func:`run_demo`): its settings, its report and the run of each phase."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import httpx
import msgspec
import openai

from groundtrace.analyzer import AnalysisRun, DemoInputs, Result
from groundtrace.analyzer.backends import DEFAULT_MODEL
from groundtrace.analyzer.cases import Case
from groundtrace.analyzer.errors import BackendUnavailableError, ConfigError, InputError
from groundtrace.sdk import Settings
from groundtrace.sdk.redaction import Redactor

from ._audit import licence_config
from ._backend import Backend, open_backend
from ._hooks import DemoAnalysis, demo_configs, entry, run_analyses
from ._hooks import Settings as AnalysisSettings
from ._summary import TraceSummary, summarise_traces

__all__ = [
    "DEMO_FORMAT_VERSION",
    "DemoBackend",
    "DemoConfig",
    "DemoReport",
    "DemoResult",
    "ExportCounts",
    "run_demo",
]

#: Called as work completes with (phase, done, total): questions, then each analysis's phases.
Progress = Callable[[str, int, int | None], None]

#: Format version of the demo's report: 1.6 holds every analysis in ``analyses`` (before:
#: the fields ``interventions``, ``gate``, ``paths`` and ``audit``, which a 1.6 reader skips).
DEMO_FORMAT_VERSION: Final = "1.6"


@dataclass(frozen=True, slots=True)
class DemoConfig:
    """Settings of one demo run.

    Attributes:
        model: an embedded model's name (``groundtrace.analyzer.backends.MODELS``, served by
            a local llama.cpp server), ``lexical`` (extractive reader) or a URL.
        dataset: HotpotQA-layout JSON/JSONL file; default the sample shipped with the example.
        questions: how many questions to run (the first N of the dataset).
        out: output directory (``traces/`` and ``cases.jsonl`` go there).
        top_k: BM25 depth of the app (also part of its version label).
        interventions: number of traces to run the evidence interventions on (0: none),
            replayed through the same model while its server still runs.
        operators: the intervention operators (``--operators`` names; ``None``: the
            interventions' demo choice, the CUE-R set REMOVE, REPLACE, DUPLICATE).
        gate_top_k: BM25 depth of a second app run on the same questions (the candidate
            version) that the release gate compares with the first (0: no gate).
        paths: run the document-agent example and its command-path report.
        audit_sources: run the multi-source licence audit (offline extractive answerer and
            baseline labeller) over the first N licences into ``OUT/audit`` (0: skip it).
        judge: score the app's answers with the offline lexical judge (``OUT/judge``).
        attribution: number of traces whose answers the attribution explains (0: none), by
            its behavioural tier: the app replayed with every evidence item, then without
            each one, through the same model while its server still runs (``OUT/attribution``).
    """

    model: str = DEFAULT_MODEL
    dataset: Path | None = None
    questions: int = 20
    out: Path = Path("groundtrace-demo")
    top_k: int = 5
    interventions: int = 0
    operators: tuple[str, ...] | None = None
    gate_top_k: int = 0
    paths: bool = False
    audit_sources: int = 0
    judge: bool = False
    attribution: int = 0

    def settings(self) -> AnalysisSettings:
        """What these options say of each built-in analysis: ``None`` (not run) or the
        config fields they set over its demo hook's (any other analysis with a demo hook,
        a plugin's, runs with its hook's config)."""
        interventions: dict[str, Any] = {"limit": self.interventions}
        if self.operators is not None:
            if not self.operators:
                raise ConfigError("name at least one operator", field="--operators")
            interventions["operators"] = tuple(self.operators)
        return {
            "interventions": interventions if self.interventions > 0 else None,
            "gate": {} if self.gate_top_k > 0 else None,
            "paths": {} if self.paths else None,
            "audit": {} if self.audit_sources > 0 else None,
            "judge": {} if self.judge else None,
            "attribution": {"limit": self.attribution} if self.attribution > 0 else None,
        }


class DemoBackend(msgspec.Struct, frozen=True):
    """The model endpoint a demo run talked to (``kind``: embedded, lexical or url)."""

    kind: str
    model: str
    base_url: str


class ExportCounts(msgspec.Struct, frozen=True):
    """The SDK's span export counters at shutdown."""

    exported: int
    failed: int
    dropped: int
    queued: int


class DemoReport(Result, frozen=True, kw_only=True):
    """What ``groundtrace demo --json`` prints: the run, what its traces say, and what each
    analysis's run on them produced.

    Rates are ``None`` when nothing was measured (no answer, no recorded confidence). Its
    format version is :data:`DEMO_FORMAT_VERSION`; reports of format 1.3 to 1.5 still read
    (their per-analysis fields, which ``analyses`` replaced, are skipped).

    Attributes:
        model: the ``--model`` asked for.
        backend: the endpoint used.
        app_version: version label recorded on the traces.
        top_k: BM25 depth of the app.
        out: output directory.
        traces_dir: directory of the OTLP-JSON lines trace files.
        cases: the case file.
        questions: questions run.
        seconds: wall time of the app run.
        seconds_per_question: mean wall time per question (one model call each).
        export_stats: the SDK's export counters at shutdown.
        traces: traces read back.
        spans: spans read back (all steps of all traces).
        spans_by_action: span count per action (``"other"`` for none).
        findings_by_kind: collector findings per kind.
        read_errors: read errors (file:line: message).
        answered: traces with an answer that joined to a case.
        unmatched_traces: traces whose case id is missing or not in the case file.
        missing_cases: case ids with no trace.
        failed_calls: the model calls that failed, one ``<case id>: <error>`` each (the
            candidate run's as ``gate candidate <case id>: <error>``); each is a failure
            of its case, the run goes on.
        failed: the app run's failed calls: cases without an answer, counted as wrong.
        correct: soft-correct answers (EM or F1 >= 0.8).
        exact_match: exact matches.
        accuracy: ``correct / (answered + failed)``.
        em_rate: ``exact_match / (answered + failed)``.
        mean_f1: mean token F1 over answered traces and failed calls (F1 0).
        mean_confidence: mean recorded confidence over traces that have one.
        candidate_version: version label of the second app run (the gate's candidate), if
            run.
        phase_seconds: wall time of each phase, in run order: ``model server``, ``app``,
            ``candidate app``, ``agent app``, then each analysis by name (each includes
            writing its reports).
        analyses: what each analysis's run produced, by name (its report, reading, why
            nothing was measured, exit code); its reports are in ``OUT/<name>/``.
    """

    format_version: str = DEMO_FORMAT_VERSION
    model: str
    backend: DemoBackend
    app_version: str
    top_k: int
    out: str
    traces_dir: str
    cases: str
    questions: int
    seconds: float
    seconds_per_question: float
    export_stats: ExportCounts
    traces: int
    spans: int
    spans_by_action: dict[str, int]
    findings_by_kind: dict[str, int]
    read_errors: tuple[str, ...]
    answered: int
    unmatched_traces: int
    missing_cases: tuple[str, ...]
    failed_calls: tuple[str, ...] = ()
    failed: int = 0
    correct: int
    exact_match: int
    accuracy: float | None
    em_rate: float | None
    mean_f1: float | None
    mean_confidence: float | None
    candidate_version: str | None = None
    phase_seconds: dict[str, float] = msgspec.field(default_factory=dict)
    analyses: dict[str, DemoAnalysis] = msgspec.field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DemoResult:
    """Where everything is, what the traces say and what each analysis produced.

    Attributes:
        config: the settings used.
        backend: the model endpoint used.
        traces_dir: directory of the OTLP-JSON lines trace files.
        cases_path: the case file.
        summary: the traces read back and scored, with one row per joined trace.
        report: the run's :class:`DemoReport`.
        runs: each analysis's run (its result record), by name, in run order.
        configs: the config each analysis ran with, by name: the record ``groundtrace
            analyze NAME --config`` reads.
    """

    config: DemoConfig
    backend: Backend
    traces_dir: Path
    cases_path: Path
    summary: TraceSummary
    report: DemoReport
    runs: dict[str, AnalysisRun[Any]] = field(default_factory=dict)
    configs: dict[str, Any] = field(default_factory=dict)


def _prepare_out(out: Path) -> tuple[Path, Path]:
    traces_dir = out / "traces"
    try:
        traces_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create output directory: {exc}", path=str(out)) from exc
    if any(traces_dir.iterdir()):
        raise ConfigError(
            "output directory already holds traces; choose a new --out or remove it",
            path=str(traces_dir),
        )
    return traces_dir, out / "cases.jsonl"


def _export_stats() -> ExportCounts:
    from groundtrace.sdk import export_stats

    stats = export_stats()
    return ExportCounts(stats.exported, stats.failed, stats.dropped, stats.queued)


def _report(
    config: DemoConfig,
    backend: Backend,
    *,
    traces_dir: Path,
    cases_path: Path,
    version: str,
    questions: int,
    seconds: float,
    stats: ExportCounts,
    summary: TraceSummary,
    candidate_version: str | None = None,
    phase_seconds: dict[str, float] | None = None,
    runs: dict[str, AnalysisRun[Any]] | None = None,
    failed_calls: tuple[str, ...] = (),
    failed: int = 0,
) -> DemoReport:
    n, with_confidence = summary.answered + failed, summary.with_confidence
    return DemoReport(
        model=config.model,
        backend=DemoBackend(backend.kind, backend.model, backend.base_url),
        app_version=version,
        top_k=config.top_k,
        out=str(config.out),
        traces_dir=str(traces_dir),
        cases=str(cases_path),
        questions=questions,
        seconds=round(seconds, 3),
        seconds_per_question=round(seconds / questions, 4),
        export_stats=stats,
        traces=summary.traces,
        spans=summary.spans,
        spans_by_action=dict(sorted(summary.spans_by_action.items())),
        findings_by_kind=dict(sorted(summary.findings_by_kind.items())),
        read_errors=tuple(summary.read_errors),
        answered=summary.answered,
        unmatched_traces=summary.unmatched_traces,
        missing_cases=tuple(summary.missing_cases),
        failed_calls=failed_calls,
        failed=failed,
        correct=summary.correct,
        exact_match=summary.exact,
        accuracy=summary.correct / n if n else None,
        em_rate=summary.exact / n if n else None,
        mean_f1=summary.f1_sum / n if n else None,
        mean_confidence=summary.confidence_sum / with_confidence if with_confidence else None,
        candidate_version=candidate_version,
        phase_seconds=dict(phase_seconds or {}),
        analyses={name: entry(done) for name, done in (runs or {}).items()},
    )


class _PhaseClock:
    """Wall time of each phase, in run order."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextlib.contextmanager
    def __call__(self, phase: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[phase] = round(time.perf_counter() - started, 3)


def _run_app(
    cases: list[Case],
    backend: Backend,
    top_k: int,
    traces_dir: Path,
    progress: Progress | None,
    redact: Redactor | None,
    phase: str = "questions",
) -> tuple[float, ExportCounts, list[str]]:
    """Run the instrumented app on every case into ``traces_dir``.

    A model call that fails is that case's failure (its trace records the error): it is
    listed, ``<case id>: <error>``, and the run goes on.

    Returns:
        The wall time, the export counters and the failed calls.

    Raises:
        BackendUnavailableError: every model call failed (nothing was answered).
    """
    from groundtrace.examples.hotpot_rag import app
    from groundtrace.sdk import configure, shutdown
    from groundtrace.sdk.instrumentation.openai import OpenAIInstrumentor

    provider = configure(
        service_name=app.APP_NAME,
        app_version=app.app_version(top_k),
        exporter="file",
        file_path=traces_dir,
        capture_content=True,
        redact=redact,
    )
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    failed: list[str] = []
    started = time.perf_counter()
    try:
        for done, case in enumerate(cases, start=1):
            try:
                app.run_case(
                    case, model=backend.model, base_url=backend.base_url, top_k=top_k,
                    context_tokens=backend.context_tokens,
                )  # fmt: skip
            except (openai.OpenAIError, httpx.HTTPError) as exc:
                failed.append(f"{case.case_id}: {' '.join(str(exc).split())}")
            if progress is not None:
                progress(phase, done, len(cases))
        if len(failed) == len(cases):
            log = f" (server log: {backend.log_path})" if backend.log_path else ""
            raise BackendUnavailableError(
                f"every model call of the run failed ({len(cases)}); the model call for case "
                f"{failed[0]}{log}"
            )
    finally:
        elapsed = time.perf_counter() - started
        instrumentor.uninstrument()
        shutdown()
    return elapsed, _export_stats(), failed


def _licences(out: Path, count: int) -> dict[str, Any]:
    """The audit's input files holding the licence example's first ``count`` sources (written
    into ``out/corpus``), as the fields of its config."""
    shipped = licence_config(out, max_sources=count)
    return {"sources": shipped.sources, "questions": shipped.questions}


def _redacted(record: dict[str, object], redact: Redactor | None) -> dict[str, object]:
    """A case-file row masked as the traces are (every text but the join key, ``case_id``)."""
    if redact is None:
        return record

    def mask(value: object) -> object:
        if isinstance(value, str):
            return redact(value)[0]
        if isinstance(value, list):
            return [mask(v) for v in value]
        return value

    return {k: v if k == "case_id" else mask(v) for k, v in record.items()}


def _agent(out: Path) -> Path:
    """The document agent run into ``out`` (deterministic, no model), with its path cases
    and tools config beside its traces: the run folder ``DemoInputs.agent`` names."""
    from groundtrace.examples.agent_docs.app import EXAMPLE_DIR, run

    run(out)
    for name in ("cases.jsonl", "tools.toml"):
        shutil.copyfile(EXAMPLE_DIR / name, out / name)
    return out


def run_demo(config: DemoConfig, *, progress: Progress | None = None) -> DemoResult:
    """Run the demo end to end (see the module docstring).

    Args:
        config: what to run.
        progress: called as work completes with (phase, done, total).

    Returns:
        The :class:`DemoResult`.

    Raises:
        ConfigError: bad options or output directory.
        InputError: the dataset cannot be read.
        BackendUnavailableError: the model cannot be started or reached.

    The result is returned even when the traces do not cover every question (see
    ``summary.missing_cases``); the CLI turns that into :class:`DemoError`.
    """
    if config.questions < 1:
        raise ConfigError("must be at least 1", field="--questions")
    if config.top_k < 1:
        raise ConfigError("must be at least 1", field="--top-k")
    if config.gate_top_k < 0:
        raise ConfigError("must be 0 (no gate) or at least 1", field="--gate-top-k")
    if config.attribution < 0:
        raise ConfigError("must be 0 (no attribution) or at least 1", field="--attribution")
    settings = config.settings()
    from groundtrace.examples.hotpot_rag import app
    from groundtrace.examples.hotpot_rag.cases import DEFAULT_DATASET, case_record, load_cases

    dataset = config.dataset or DEFAULT_DATASET
    cases = load_cases(dataset, limit=config.questions)
    if not cases:
        raise InputError("the dataset holds no questions", path=str(config.dataset))
    traces_dir, cases_path = _prepare_out(config.out)
    version = app.app_version(config.top_k)

    # one redactor, resolved as ``configure()`` resolves it, for the traces and the case file
    redact = Settings.from_env(capture_content=True).redact
    redactor = redact if isinstance(redact, Redactor) else None
    phases = _PhaseClock()
    started = time.perf_counter()
    inputs = DemoInputs(traces=traces_dir, cases=cases_path, out=config.out, dataset=dataset)
    candidate_version = None
    with open_backend(config.model) as backend:
        phases.seconds["model server"] = round(time.perf_counter() - started, 3)
        with phases("app"):
            elapsed, stats, failed = _run_app(
                cases, backend, config.top_k, traces_dir, progress, redactor
            )
            records = {case.case_id: _redacted(case_record(case), redactor) for case in cases}
            with cases_path.open("w", encoding="utf-8") as handle:
                for record in records.values():
                    handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        failed_calls = list(failed)
        if config.gate_top_k > 0:  # first: its prompts extend the app's, still in the cache
            with phases("candidate app"):
                candidate, _ = _prepare_out(config.out / "candidate")
                _, _, lost = _run_app(
                    cases, backend, config.gate_top_k, candidate, progress, redactor,
                    "gate candidate",
                )  # fmt: skip
                failed_calls += [f"gate candidate {line}" for line in lost]
            candidate_version = app.app_version(config.gate_top_k)
            inputs = dataclasses.replace(inputs, candidate=candidate)
        if config.paths:
            with phases("agent app"):
                inputs = dataclasses.replace(inputs, agent=_agent(config.out / "agent"))
        if config.audit_sources > 0:
            settings = {**settings, "audit": _licences(config.out / "audit", config.audit_sources)}
        configs = demo_configs(inputs, settings)
        # while the model still serves: the interventions replay through it
        runs = run_analyses(configs, config.out, progress=progress, clock=phases)
    summary = summarise_traces(traces_dir, records)
    report = _report(
        config, backend, traces_dir=traces_dir, cases_path=cases_path, version=version,
        questions=len(cases), seconds=elapsed, stats=stats, summary=summary,
        candidate_version=candidate_version, phase_seconds=phases.seconds, runs=runs,
        failed_calls=tuple(failed_calls), failed=len(failed),
    )  # fmt: skip
    return DemoResult(
        config, backend, traces_dir, cases_path, summary, report, runs=runs, configs=configs
    )
