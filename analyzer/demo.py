"""The demo job: run the instrumented HotpotQA RAG app, capture its traces, read them back.

Steps: configure the SDK (content capture on, OTLP-JSON file exporter to ``OUT/traces/``),
instrument ``openai``, run the example app (:mod:`groundtrace.examples.hotpot_rag`) on N
questions against the chosen model, shut the SDK down (flush + fsync), write the case file
``OUT/cases.jsonl`` (case_id, question, reference_answer, gold_support_titles, type, level),
then read the traces back with the collectors and score the recorded answers against the
cases (soft EM/F1).

Usage::

    from groundtrace.analyzer.demo import DemoConfig, run_demo

    result = run_demo(DemoConfig(model="lexical", questions=5, out=Path("runs/demo")))
    print(result.summary.as_dict()["accuracy"])
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import openai

from groundtrace.analyzer._results import to_builtins
from groundtrace.analyzer.errors import (
    BackendUnavailableError,
    ConfigError,
    InputError,
)

from ._demo_backend import Backend, open_backend
from ._demo_summary import TraceSummary, summarise_traces

if TYPE_CHECKING:
    from groundtrace.analyzer.interventions import InterventionSummary

__all__ = ["DemoConfig", "DemoResult", "run_demo"]

#: Called after each question with (done, total).
Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class DemoConfig:
    """Settings of one demo run.

    Attributes:
        model: ``gemma`` (local llama.cpp server), ``lexical`` (extractive reader) or a URL.
        dataset: HotpotQA-layout JSON/JSONL file; default the sample shipped with the example.
        questions: how many questions to run (the first N of the dataset).
        out: output directory (``traces/`` and ``cases.jsonl`` go there).
        top_k: BM25 depth of the app (also part of its version label).
        interventions: number of traces to run the evidence interventions on after the app
            run (0: none), replayed through the same model while its server still runs.
    """

    model: str = "gemma"
    dataset: Path | None = None
    questions: int = 20
    out: Path = Path("groundtrace-demo")
    top_k: int = 5
    interventions: int = 0


@dataclass(slots=True)
class DemoResult:
    """Where everything is and what the traces say.

    Attributes:
        config: the settings used.
        backend: the model endpoint used.
        traces_dir: directory of the OTLP-JSON lines trace files.
        cases_path: the case file.
        questions: questions run.
        app_version: version label recorded on the traces.
        seconds: wall time of the app runs.
        seconds_per_question: mean wall time per question (one model call each).
        summary: the traces read back and scored.
        export_stats: the SDK's export counters at shutdown.
        interventions: the interventions summary (``groundtrace interventions --json``), if run.
    """

    config: DemoConfig
    backend: Backend
    traces_dir: Path
    cases_path: Path
    questions: int
    app_version: str
    seconds: float
    seconds_per_question: float
    summary: TraceSummary
    export_stats: dict[str, int] = field(default_factory=dict)
    interventions: InterventionSummary | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary (no per-case rows)."""
        return {
            "model": self.config.model,
            "backend": {"kind": self.backend.kind, "model": self.backend.model,
                        "base_url": self.backend.base_url},
            "app_version": self.app_version,
            "top_k": self.config.top_k,
            "out": str(self.config.out),
            "traces_dir": str(self.traces_dir),
            "cases": str(self.cases_path),
            "questions": self.questions,
            "seconds": round(self.seconds, 3),
            "seconds_per_question": round(self.seconds_per_question, 4),
            "export_stats": self.export_stats,
            **self.summary.as_dict(),
            **({"interventions": to_builtins(self.interventions)} if self.interventions else {}),
        }  # fmt: skip


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


def _export_stats() -> dict[str, int]:
    from groundtrace.sdk._config import export_stats

    stats = export_stats()
    return {
        "exported": stats.exported,
        "failed": stats.failed,
        "dropped": stats.dropped,
        "queued": stats.queued,
    }


def run_demo(config: DemoConfig, *, progress: Progress | None = None) -> DemoResult:
    """Run the demo end to end (see the module docstring).

    Args:
        config: what to run.
        progress: called after each question with (done, total).

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
    from groundtrace.examples.hotpot_rag import app
    from groundtrace.examples.hotpot_rag.cases import DEFAULT_DATASET, case_record, load_cases

    cases = load_cases(config.dataset or DEFAULT_DATASET, limit=config.questions)
    if not cases:
        raise InputError("the dataset holds no questions", path=str(config.dataset))
    traces_dir, cases_path = _prepare_out(config.out)
    version = app.app_version(config.top_k)

    from groundtrace.sdk import _config
    from groundtrace.sdk.instrumentation.openai import OpenAIInstrumentor

    with open_backend(config.model) as backend:
        provider = _config.configure(
            service_name=app.APP_NAME,
            app_version=version,
            exporter="file",
            file_path=traces_dir,
            capture_content=True,
        )
        instrumentor = OpenAIInstrumentor()
        instrumentor.instrument(tracer_provider=provider)
        started = time.perf_counter()
        try:
            for done, case in enumerate(cases, start=1):
                try:
                    app.run_case(case, model=backend.model, base_url=backend.base_url,
                                 top_k=config.top_k)  # fmt: skip
                except openai.OpenAIError as exc:
                    log = f" (server log: {backend.log_path})" if backend.log_path else ""
                    raise BackendUnavailableError(
                        f"the model call for case {case.case_id} failed: {exc}{log}"
                    ) from exc
                if progress is not None:
                    progress(done, len(cases))
        finally:
            elapsed = time.perf_counter() - started
            instrumentor.uninstrument()
            _config.shutdown()
        stats = _export_stats()
        records = {case.case_id: case_record(case) for case in cases}
        with cases_path.open("w", encoding="utf-8") as handle:
            for record in records.values():
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        interventions = None
        if config.interventions > 0:
            # replayed through the recorded entry point, against the server still running
            from groundtrace.analyzer.interventions import run_interventions_for_demo

            interventions = run_interventions_for_demo(
                config.out, dataset=config.dataset, limit=config.interventions
            )

    summary = summarise_traces(traces_dir, records)
    return DemoResult(
        config=config,
        backend=backend,
        traces_dir=traces_dir,
        cases_path=cases_path,
        questions=len(cases),
        app_version=version,
        seconds=elapsed,
        seconds_per_question=elapsed / len(cases),
        summary=summary,
        export_stats=stats,
        interventions=interventions,
    )
