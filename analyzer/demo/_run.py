"""The demo job (:func:`run_demo`): its settings, its report and the run of each phase."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import msgspec
import openai

from groundtrace.analyzer import Result
from groundtrace.analyzer.audit import AuditSummary
from groundtrace.analyzer.backends import DEFAULT_MODEL
from groundtrace.analyzer.cases import Case
from groundtrace.analyzer.errors import BackendUnavailableError, ConfigError, InputError
from groundtrace.analyzer.interventions import InterventionSummary
from groundtrace.sdk import Settings
from groundtrace.sdk.redaction import Redactor

from ._audit import run_shipped_audit
from ._backend import Backend, open_backend
from ._hooks import DemoAnalysis, run_hooked
from ._interventions import CUE_R_OPERATORS, run_interventions_for_demo
from ._phases import DemoGate, DemoPaths, gate_phase, paths_phase
from ._summary import TraceSummary, summarise_traces

__all__ = ["DemoBackend", "DemoConfig", "DemoReport", "DemoResult", "ExportCounts", "run_demo"]

#: Called as work completes with (phase, done, total): questions, interventions, audit phases.
Progress = Callable[[str, int, int | None], None]


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
        interventions: number of traces to run the evidence interventions on after the app
            run and the gate's (0: none), replayed through the same model while its server
            still runs.
        operators: the intervention operators (``--operators`` names; default the CUE-R set).
        gate_top_k: BM25 depth of a second app run on the same questions (the candidate
            version) that the release gate compares with the first (0: no gate).
        paths: run the document-agent example and its command-path report.
        audit_sources: run the multi-source licence audit (offline extractive answerer and
            baseline labeller) over the first N licences into ``OUT/audit`` (0: skip it).
    """

    model: str = DEFAULT_MODEL
    dataset: Path | None = None
    questions: int = 20
    out: Path = Path("groundtrace-demo")
    top_k: int = 5
    interventions: int = 0
    operators: tuple[str, ...] = CUE_R_OPERATORS
    gate_top_k: int = 0
    paths: bool = False
    audit_sources: int = 0


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
    """What ``groundtrace demo --json`` prints: the run and what its traces say.

    Rates are ``None`` when nothing was measured (no answer, no recorded confidence).

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
            candidate run's of the gate as ``gate candidate <case id>: <error>``); each is a
            failure of its case, the run goes on.
        failed: the app run's failed calls: cases without an answer, counted as wrong.
        correct: soft-correct answers (EM or F1 >= 0.8).
        exact_match: exact matches.
        accuracy: ``correct / (answered + failed)``.
        em_rate: ``exact_match / (answered + failed)``.
        mean_f1: mean token F1 over answered traces and failed calls (F1 0).
        mean_confidence: mean recorded confidence over traces that have one.
        interventions: the interventions summary (``groundtrace interventions --json``), if run.
        audit: the multi-source audit's summary (``OUT/audit/run.json`` holds the whole run),
            if run.
        gate: the release gate between the app run and the ``gate_top_k`` run, if run.
        paths: the document agent's command-path report, if run.
        phase_seconds: wall time of each phase run, in run order (``model server``, ``app``,
            ``gate``, ``interventions``, ``paths``, ``audit``, ``analyses``; each includes
            writing its reports).
        analyses: the analyses run through their demo hook (plugins'), by name.
    """

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
    interventions: InterventionSummary | None = None
    audit: AuditSummary | None = None
    gate: DemoGate | None = None
    paths: DemoPaths | None = None
    phase_seconds: dict[str, float] = msgspec.field(default_factory=dict)
    analyses: dict[str, DemoAnalysis] = msgspec.field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DemoResult:
    """Where everything is and what the traces say.

    Attributes:
        config: the settings used.
        backend: the model endpoint used.
        traces_dir: directory of the OTLP-JSON lines trace files.
        cases_path: the case file.
        summary: the traces read back and scored, with one row per joined trace.
        report: the run's :class:`DemoReport`.
    """

    config: DemoConfig
    backend: Backend
    traces_dir: Path
    cases_path: Path
    summary: TraceSummary
    report: DemoReport


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
    interventions: InterventionSummary | None,
    audit: AuditSummary | None,
    gate: DemoGate | None = None,
    paths: DemoPaths | None = None,
    phase_seconds: dict[str, float] | None = None,
    hooked: dict[str, DemoAnalysis] | None = None,
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
        interventions=interventions,
        audit=audit,
        gate=gate,
        paths=paths,
        phase_seconds=dict(phase_seconds or {}),
        analyses=dict(hooked or {}),
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


def _audit(config: DemoConfig, progress: Progress | None) -> AuditSummary:
    """The offline licence audit over the first ``config.audit_sources`` licences."""
    import asyncio

    run = asyncio.run(
        run_shipped_audit(
            out=config.out / "audit", max_sources=config.audit_sources, progress=progress
        )
    )
    return run.summary


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
    from groundtrace.examples.hotpot_rag import app
    from groundtrace.examples.hotpot_rag.cases import DEFAULT_DATASET, case_record, load_cases

    cases = load_cases(config.dataset or DEFAULT_DATASET, limit=config.questions)
    if not cases:
        raise InputError("the dataset holds no questions", path=str(config.dataset))
    traces_dir, cases_path = _prepare_out(config.out)
    version = app.app_version(config.top_k)

    # one redactor, resolved as ``configure()`` resolves it, for the traces and the case file
    redact = Settings.from_env(capture_content=True).redact
    redactor = redact if isinstance(redact, Redactor) else None
    phases = _PhaseClock()
    started = time.perf_counter()
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
        gate = None
        if config.gate_top_k > 0:  # first: its prompts extend the app's, still in the cache
            with phases("gate"):
                candidate = config.out / "candidate" / "traces"
                _prepare_out(config.out / "candidate")
                _, _, lost = _run_app(
                    cases, backend, config.gate_top_k, candidate, progress, redactor,
                    "gate candidate",
                )  # fmt: skip
                failed_calls += [f"gate candidate {line}" for line in lost]
                gate = gate_phase(
                    cases_path, traces_dir, candidate, config.out / "gate",
                    versions=(version, app.app_version(config.gate_top_k)),
                )  # fmt: skip
        interventions = None
        if config.interventions > 0:
            # replayed through the recorded entry point, against the server still running
            def units(done: int, total: int) -> None:
                if progress is not None:
                    progress("interventions", done, total)

            with phases("interventions"):
                interventions = run_interventions_for_demo(
                    config.out, dataset=config.dataset, limit=config.interventions,
                    operators=config.operators, progress=units,
                )  # fmt: skip

    paths = None
    if config.paths:
        with phases("paths"):
            paths = paths_phase(config.out / "agent")
    summary = summarise_traces(traces_dir, records)
    audit = None
    if config.audit_sources > 0:
        with phases("audit"):
            audit = _audit(config, progress)
    with phases("analyses"):
        hooked = run_hooked(traces_dir, cases_path, config.out)
    if not hooked:
        del phases.seconds["analyses"]
    report = _report(
        config, backend, traces_dir=traces_dir, cases_path=cases_path, version=version,
        questions=len(cases), seconds=elapsed, stats=stats, summary=summary,
        interventions=interventions, audit=audit, gate=gate, paths=paths,
        phase_seconds=phases.seconds, hooked=hooked, failed_calls=tuple(failed_calls),
        failed=len(failed),
    )  # fmt: skip
    return DemoResult(config, backend, traces_dir, cases_path, summary, report)
