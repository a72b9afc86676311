"""The licence audit with the real local model as answerer AND pair judge, on a small subset.

Two questions x four licences (one short licence goes in whole, three long ones through the
hierarchical retrieval) through ``groundtrace audit run``: every answer is an ordinary trace, a
reply the model botches is a visible protocol error (never a stance or label made up for it),
the judge's validation against the gold pair labels is computed and reported (its labels are
review-only unless it passes), and a rerun into the same folder makes no model call (the
unit journal and the call cache answer it): it runs after the server has stopped, so any call
would fail.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from typer.testing import CliRunner

from groundtrace.analyzer._results import read
from groundtrace.analyzer.audit import Answer, AuditResult, PairLabel, Question
from groundtrace.analyzer.audit._judge import PairJudge
from groundtrace.analyzer.audit._model import in_scope
from groundtrace.analyzer.audit._records import PairError
from groundtrace.analyzer.backends import LlamaServer
from groundtrace.analyzer.cli._registry import build_app
from groundtrace.analyzer.judge import ProtocolErrorKind
from groundtrace.analyzer.llm import ModelClient
from groundtrace.collectors import ReadReport, read_traces
from groundtrace.examples.license_audit.audit import subset_corpus
from groundtrace.examples.license_audit.corpus import load_corpus
from groundtrace.sdk import semconv as sc

pytestmark = [pytest.mark.integration, pytest.mark.llm, pytest.mark.timeout(1500)]

QUESTIONS = ("patent-grant", "keep-notice")
N_SOURCES = 4


@pytest.fixture(scope="module")
def model() -> Iterator[LlamaServer]:
    with LlamaServer() as server:  # the backend's default model, whatever it is
        yield server


def _run(out: Path, url: str, name: str) -> None:
    args = [
        "audit", "run", "--out", str(out), "--answerer", url, "--model", name,
        "--judge", url, "--judge-model", name, "--questions", ",".join(QUESTIONS),
        "--sources", str(N_SOURCES), "--concurrency", "1", "--timeout", "300",
    ]  # fmt: skip
    result = CliRunner().invoke(build_app(), args)
    assert result.exit_code == 0, result.output


async def _judge_once(
    url: str, name: str, question: Question, a: Answer, b: Answer
) -> PairLabel | PairError:
    client = ModelClient(url, concurrency=1, timeout=300)
    try:
        return await PairJudge(client, name).label(question, a, b)
    finally:
        await client.aclose()


def _untraced(answer: Answer) -> Answer:
    return msgspec.structs.replace(answer, trace_id=None)  # a rerun makes new traces


def _protocol_kinds() -> set[str]:
    return {k.value for k in ProtocolErrorKind} | {"answer_protocol_error"}


def test_the_local_model_answers_and_judges_a_small_audit(
    model: LlamaServer, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    url, name = model.base_url, model.model
    _run(out, url, name)
    run = read(out / "run.json", AuditResult)
    corpus = subset_corpus(load_corpus(), questions=QUESTIONS, max_sources=N_SOURCES)
    n_answers = sum(len(in_scope(q, corpus.sources)) for q in corpus.questions)
    assert run.summary.n_answers == len(run.answers) == n_answers == 8
    assert run.settings.answerer == f"{name}@{url}" and run.settings.labeller.startswith("judge:")

    # every answer is an ordinary trace of the app, whatever the model replied
    report = ReadReport()
    traces = list(read_traces([str(out / "traces")], report=report))
    assert not report.errors and len(traces) == n_answers
    assert {a.trace_id for a in run.answers} == {t.request.trace_id for t in traces}
    assert {(t.request.case_id, t.request.source_id) for t in traces} == {
        (f"{a.question_id}/{a.source_id}", a.source_id) for a in run.answers
    }
    retrieved = {
        step.attributes.get(sc.GT_RETRIEVAL_MODE)
        for t in traces
        for step in t.steps
        if step.action == sc.Action.RETRIEVE
    }
    assert retrieved == {"whole", "hierarchical"}

    # protocol errors are visible and never imputed: a broken answer has no pair label
    broken = {(a.question_id, a.source_id) for a in run.answers if a.error}
    assert all(a.stance == "absent" for a in run.answers if a.error)
    n_pairs = sum(len(list(itertools.combinations(range(N_SOURCES), 2))) for _ in QUESTIONS)
    assert len(run.pairs) + len(run.pair_errors) == n_pairs
    assert {e.kind for e in run.pair_errors} <= _protocol_kinds()
    for pair in run.pairs:
        assert (pair.question_id, pair.source_a) not in broken
        assert (pair.question_id, pair.source_b) not in broken

    # the judge's validation is computed, reported, and decides whether its labels count
    validation = run.validation
    assert validation is not None and validation.labeller == run.settings.labeller
    assert validation.n_gold == n_pairs and validation.n_questions == len(QUESTIONS)
    assert validation.validated == (not validation.reasons)
    markdown = (out / "report.md").read_text("utf-8")
    assert "Verdict: **validated**" in markdown or "Verdict: **review-only" in markdown
    judged = [p for p in run.pairs if p.decided_by == "judge"]
    if not validation.validated:  # review-only: the counted labels are the baseline's
        assert judged == [] and all(p.review_only for p in run.review)
    checked = CliRunner().invoke(build_app(), ["audit", "validate", str(out)])
    assert checked.exit_code == (0 if validation.validated else 1), checked.output
    assert "five-label Cohen's kappa" in checked.output

    # whatever the pre-filters left open went to the judge; one open pair is judged directly
    judge_calls = [p for p in run.review if p.decided_by == "judge"] + judged
    judge_errors = [e for e in run.pair_errors if e.kind != "answer_protocol_error"]
    calls = run.model_calls or {}
    assert calls[url].requests == n_answers + len(judge_calls) + len(judge_errors)
    question = corpus.questions[0]
    a, b = (Answer(question_id=question.id, source_id=s, stance="conditional", text=t,
                   quote=t) for s, t in (("x", "Only for the files you changed."),
                                         ("y", "For the whole combined work.")))  # fmt: skip
    direct = asyncio.run(_judge_once(url, name, question, a, b))
    assert isinstance(direct, PairLabel) or direct.kind in _protocol_kinds()

    assert calls[url].api_calls >= n_answers
    served = calls[url].requests

    # the rerun makes no model call (the server is gone, so a call would fail): the unit
    # journal answers every unit kept, the call cache the ones retried (protocol errors)
    model.stop()
    _run(out, url, name)
    again = read(out / "run.json", AuditResult)
    rerun_calls = (again.model_calls or {})[url]
    assert rerun_calls.api_calls == 0 and rerun_calls.cache_hits == rerun_calls.requests
    assert rerun_calls.requests <= served
    assert [_untraced(a) for a in again.answers] == [_untraced(a) for a in run.answers]
    assert again.pair_errors == run.pair_errors
    labels: list[PairLabel] = [*again.pairs, *again.review]
    assert labels == [*run.pairs, *run.review]
    rate = len(run.pair_errors) / n_pairs
    print(f"\nlocal model {name}: {len(broken)}/{n_answers} answers and "
          f"{len(run.pair_errors)}/{n_pairs} pairs with protocol errors ({rate:.1%}); "
          f"validation: {'validated' if validation.validated else 'review-only'} "
          f"({'; '.join(validation.reasons)})")  # fmt: skip
