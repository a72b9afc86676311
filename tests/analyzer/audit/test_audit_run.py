"""The licence audit end to end: traces of the app, the run record, reports, compare, CLI."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from typer.testing import CliRunner

import groundtrace.sdk as gt
from groundtrace.analyzer import run_analysis
from groundtrace.analyzer._results import read
from groundtrace.analyzer.audit import (
    ANALYSIS,
    Answer,
    AuditResult,
    AuditSettings,
    Question,
    Source,
    compare_runs,
)
from groundtrace.analyzer.audit._compare import AuditComparison
from groundtrace.analyzer.audit._run import run_audit
from groundtrace.analyzer.cli._registry import build_app
from groundtrace.collectors import ReadReport, read_traces
from groundtrace.examples.license_audit.app import answer_one, extractive_answer
from groundtrace.examples.license_audit.audit import licence_config, subset_corpus
from groundtrace.examples.license_audit.corpus import load_corpus, load_questions
from groundtrace.sdk import semconv as sc


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    gt.configure(tracer_provider=provider, capture_content=True)
    try:
        yield exporter
    finally:
        gt.shutdown()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("audit")
    out = {"auto": root / "auto", "flat": root / "flat"}
    for mode, folder in out.items():
        config = licence_config(folder, retrieval="flat" if mode == "flat" else "auto")
        assert run_analysis(ANALYSIS, config, out=folder).exit_code == 0
    return out


def _answer(question_id: str, source_id: str, mode: str = "auto") -> object:
    corpus = load_corpus()
    question = next(q for q in corpus.questions if q.id == question_id)
    source = next(s for s in corpus.sources if s.id == source_id)
    cues = next(q.cues for q in load_questions() if q.id == question_id)
    return asyncio.run(answer_one(question, source, cues, extractive_answer, mode))  # type: ignore[arg-type]


def test_each_answer_is_a_trace_with_the_source_and_the_retrieval_on_its_spans(
    spans: InMemorySpanExporter,
) -> None:
    answer = _answer("patent-grant", "gpl-3.0")
    finished = {s.attributes[sc.GT_ACTION]: s for s in spans.get_finished_spans() if s.attributes}
    request, retrieve = finished[sc.Action.REQUEST], finished[sc.Action.RETRIEVE]
    assert request.attributes is not None and retrieve.attributes is not None
    assert request.attributes[sc.GT_SOURCE_ID] == "gpl-3.0"
    assert request.attributes[sc.GT_REQUEST_CASE_ID] == "patent-grant/gpl-3.0"
    assert retrieve.attributes[sc.GT_RETRIEVAL_MODE] == "hierarchical"
    assert retrieve.attributes[sc.GT_RETRIEVAL_SOURCE_WORDS] == 5644
    sections = retrieve.attributes[sc.GT_RETRIEVAL_SECTIONS]
    chunks = retrieve.attributes[sc.GT_RETRIEVAL_CHUNKS]
    assert len(sections) >= 3 and len(chunks) == 4  # type: ignore[arg-type]
    assert answer.trace_id == format(request.context.trace_id, "032x")  # type: ignore[attr-defined]
    assert answer.stance == "yes" and "patent" in answer.quote.lower()  # type: ignore[attr-defined]


def test_a_short_source_goes_in_whole_and_flat_mode_stays_available(
    spans: InMemorySpanExporter,
) -> None:
    _answer("warranty", "mit")
    _answer("warranty", "mit", "flat")
    modes = [
        s.attributes[sc.GT_RETRIEVAL_MODE]
        for s in spans.get_finished_spans()
        if s.attributes and s.attributes.get(sc.GT_ACTION) == sc.Action.RETRIEVE
    ]
    assert modes == ["whole", "flat"]


def test_the_offline_audit_answers_labels_and_reports_every_pair(runs: dict[str, Path]) -> None:
    run = read(runs["auto"] / "run.json", AuditResult)
    corpus = load_corpus()
    assert run.summary.n_answers == len(corpus.gold) == 392
    n_pairs = sum(n * (n - 1) // 2 for n in (47,) * 7 + (21, 21, 21))  # 7 general, 3 scoped
    assert run.summary.n_pairs == len(run.pairs) == n_pairs
    assert run.summary.prefilter_share is not None and run.summary.prefilter_share > 0.9
    assert sum(run.summary.labels.values()) == n_pairs
    assert run.validation is not None and run.validation.kappa.value is not None
    assert run.validation.n_questions == 10
    # every interval resamples questions: the run's figures carry cluster intervals
    overall, absence = run.summary.overall, run.summary.absence
    assert overall.n_questions == 10 and absence is not None and absence.n_questions == 10
    assert overall.ci_low is not None and overall.ci_high is not None
    assert overall.ci_low <= overall.prevalence <= overall.ci_high  # type: ignore[operator]
    assert absence.ci_low is not None and absence.ci_low <= absence.rate <= absence.ci_high  # type: ignore[operator]
    one_question = run.summary.by_question[0]
    assert one_question.n_questions == 1 and one_question.ci_low is None
    report = ReadReport()
    assert len(list(read_traces([str(runs["auto"] / "traces")], report=report))) == 392
    assert not report.errors
    html = (runs["auto"] / "report.html").read_text("utf-8")
    assert "<svg" in html or 'class="hm"' in html
    assert 'src="http' not in html and 'href="http' not in html
    first = next(f for f in run.summary.by_question if f.disagreeing)
    assert f'id="p-{first.disagreeing[0]}"' in html  # every figure's pairs one click away
    assert "## Validation of `baseline`" in (runs["auto"] / "report.md").read_text("utf-8")


def test_compare_pairs_runs_by_question_and_lists_flipped_pairs(runs: dict[str, Path]) -> None:
    flat = read(runs["flat"] / "run.json", AuditResult)
    auto = read(runs["auto"] / "run.json", AuditResult)
    comparison = compare_runs(flat, auto, n_resamples=500)
    assert len(comparison.questions) == 10 and comparison.absence.n_questions == 10
    assert comparison.absence.ci_low is not None and comparison.absence.ci_high is not None
    assert comparison.absence.ci_low <= comparison.absence.delta <= comparison.absence.ci_high  # type: ignore[operator]
    # the pooled figures of the comparison are the runs' own overall figures
    assert comparison.absence.value_a == pytest.approx(flat.summary.absence.rate)  # type: ignore[union-attr]
    assert comparison.prevalence.value_b == pytest.approx(auto.summary.overall.prevalence)
    assert comparison.flipped and comparison.n_common_pairs == len(auto.pairs)
    same = compare_runs(auto, auto, n_resamples=200)
    assert same.flipped == () and same.absence.delta == 0.0
    assert (same.absence.ci_low, same.absence.ci_high) == (0.0, 0.0)


def test_the_cli_compares_and_validates_runs(runs: dict[str, Path], tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(
        build_app(), ["audit", "compare", str(runs["flat"]), str(runs["auto"]),
                      "--out", str(tmp_path), "--resamples", "300"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "absence rate change" in result.output
    assert read(tmp_path / "comparison.json", AuditComparison).n_common_pairs > 0
    result = runner.invoke(
        build_app(), ["audit", "validate", str(runs["auto"]), "--out", str(tmp_path / "v.json")]
    )
    assert result.exit_code in (0, 1), result.output
    assert "five-label Cohen's kappa" in result.output
    missing = runner.invoke(build_app(), ["audit", "compare", str(tmp_path / "nope"), "x"])
    assert missing.exit_code == 2 and "cannot read" in missing.output


def test_unreadable_answers_do_not_count_against_the_labeller(tmp_path: Path) -> None:
    """An answer the answerer botched is an answer protocol error of its pairs; the
    labeller's validation counts only the labeller's own failures (here: none)."""

    async def flaky(question: str, evidence: Any, cues: Any) -> dict[str, Any]:
        reply = await extractive_answer(question, evidence, cues)
        if str(evidence[0]["id"]).startswith("apache-2.0"):
            return {**reply, "stance": "absent", "error": "malformed_json: not JSON"}
        return reply

    cues = {q.id: q.cues for q in load_questions()}

    async def one(question: Question, source: Source) -> Answer:
        return await answer_one(question, source, cues[question.id], flaky)

    corpus = subset_corpus(load_corpus(), max_sources=12)
    run = asyncio.run(run_audit(corpus, one, AuditSettings()))
    broken = [e for e in run.pair_errors if e.kind == "answer_protocol_error"]
    assert broken and len(broken) == len(run.pair_errors)  # the baseline itself never fails
    assert run.validation is not None and run.validation.protocol_errors == 0
