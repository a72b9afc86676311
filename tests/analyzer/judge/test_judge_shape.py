"""The ``judge`` analysis in the one analysis shape gives what its entry points give.

The data is a glassblowing studio's assistant (a domain the repository has no other data of):
traces of questions about annealing, gathers and colour rods, a case file, and a gold set
whose item ids are the gold the judgments are matched by. A run is checked against
``judge_all`` + ``summarize_results``, a validation against ``load_gold`` + ``meta_evaluate`` +
``build_record``, both on the lexical judge; an endpoint that never gives a score is a
protocol error on every judgment (nothing measured).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest
from typer.testing import CliRunner

from groundtrace.analyzer import get_analysis, load_config, read, run_analysis
from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.errors import ConfigError, InputError
from groundtrace.analyzer.judge import (
    ANALYSIS,
    Config,
    JudgeResult,
    JudgeRunSummary,
    JudgeValidation,
    Judgment,
    LexicalJudge,
    Metric,
    ProtocolError,
    ProtocolErrorKind,
    ValidationRecord,
    judge_all,
    nothing_measured,
    plan,
    reading,
    run,
    verdicts,
    write_report,
)
from groundtrace.analyzer.judge._gold import load_gold
from groundtrace.analyzer.judge._plan import JudgePlan
from groundtrace.analyzer.judge._record import AcceptanceProfile, build_record
from groundtrace.analyzer.judge._records import NotJudgeable
from groundtrace.analyzer.judge._run import summarize_results
from groundtrace.analyzer.judge._validate import meta_evaluate
from groundtrace.collectors.model import Evidence, Request, Step, Trace
from tests.support.openai_server import OpenAICompatServer, Reply

#: (case id, question, the studio note that answers it, a grounded answer)
STUDIO = (
    ("anneal", "How long does a 2 kg vase anneal?",
     "A two kilogram vase anneals for six hours at 482 degrees before the kiln ramps down.",
     "It anneals for six hours at 482 degrees."),
    ("gather", "How many gathers does a goblet bowl need?",
     "A goblet bowl takes three gathers of clear glass from the furnace.",
     "Three gathers of clear glass."),
    ("rods", "Which colour rods strike red?",
     "Gold ruby rods strike red when reheated in the glory hole.",
     "Gold ruby rods strike red on reheating."),
)  # fmt: skip
#: a grounded and an ungrounded answer, alternating in the gold set
OFF_TOPIC = "The studio cat sleeps on the marver every afternoon."


def _trace(n: int, case_id: str, question: str, note: str, answer: str | None) -> Trace:
    """A trace of the assistant: a root span, a retrieval of one note, an answering LLM call."""
    root, retrieve, llm = f"{n:016x}", f"{n + 100:016x}", f"{n + 200:016x}"
    steps = (
        Step(span_id=root, parent_span_id=None, action="REQUEST", name="ask", start_ns=1,
             end_ns=9),
        Step(span_id=retrieve, parent_span_id=root, action="RETRIEVE", name="notes",
             start_ns=2, end_ns=3),
        Step(span_id=llm, parent_span_id=root, action="LLM", name="chat", start_ns=4, end_ns=8),
    )  # fmt: skip
    note_item = Evidence(id=f"note-{case_id}", step_span_id=retrieve, stage="RETRIEVE", rank=1,
                         content=note)  # fmt: skip
    return Trace(
        request=Request(trace_id=f"{n:032x}", case_id=case_id, query=question),
        steps=steps,
        evidence=(note_item,),
        answer=answer,
    )


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    """Traces (two judgeable, one without an answer), a case file and a 40-item gold set."""
    (anneal, gather, rods) = STUDIO
    traces = [
        _trace(1, *anneal),
        _trace(2, gather[0], gather[1], gather[2], OFF_TOPIC),
        _trace(3, rods[0], rods[1], rods[2], None),  # not judgeable: no answer
    ]
    (tmp_path / "traces.jsonl").write_text("".join(t.to_json() + "\n" for t in traces))
    case = {"id": "cullet", "question": "What is cullet?",
            "context": "Cullet is broken glass remelted with the batch.",
            "answer": "Broken glass remelted with the batch."}  # fmt: skip
    (tmp_path / "cases.jsonl").write_text(json.dumps(case) + "\n")
    rows = []
    for i in range(40):
        _, question, note, answer = STUDIO[i % 3]
        grounded = i % 2 == 0
        rows.append({
            "id": f"studio-{i:02d}",
            "item": {"question": question, "context": [note],
                     "answer": answer if grounded else OFF_TOPIC},
            "label": "pass" if grounded else "fail",
        })  # fmt: skip
    (tmp_path / "gold.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "acceptance.toml").write_text(
        "[judge_acceptance]\nn_resamples = 200\nseed = 5\nmin_grade = 'smoke'\n"
    )
    return tmp_path


def _run(units: Sequence[Any], config: Config) -> JudgeResult:
    """The judge through the driver (its reports in a folder of their own)."""
    done = run_analysis(ANALYSIS, config, out=Path(tempfile.mkdtemp()), units=units)
    assert done.result is not None
    return done.result


def test_the_record_is_what_get_analysis_returns() -> None:
    assert get_analysis("judge") is ANALYSIS
    assert ANALYSIS.name == "judge" and ANALYSIS.config is Config
    assert (ANALYSIS.plan, ANALYSIS.run, ANALYSIS.write_report) == (plan, run, write_report)
    assert (ANALYSIS.reading, ANALYSIS.nothing_measured) == (reading, nothing_measured)
    assert ANALYSIS.verdicts is verdicts


def test_a_toml_config_file_is_the_config(inputs: Path) -> None:
    path = inputs / "judge.toml"
    path.write_text(
        f'gold = "{inputs / "gold.jsonl"}"\nprofile = "{inputs / "acceptance.toml"}"\n'
        'dimension = "adherence"\nfilters = ["id~studio"]\nthreshold = 0.6\n'
    )
    expected = Config(
        gold=str(inputs / "gold.jsonl"),
        profile=str(inputs / "acceptance.toml"),
        filters=("id~studio",),
        threshold=0.6,
    )
    assert load_config(ANALYSIS, path) == expected
    defaults = Config()
    assert (defaults.judge, defaults.model, defaults.threshold) == ("lexical", None, None)
    assert (defaults.timeout, defaults.max_tokens, defaults.cache) == (120.0, 256, None)


def test_a_run_is_what_judge_all_and_summarize_results_give(inputs: Path) -> None:
    config = Config(traces=(str(inputs / "traces.jsonl"),), cases=str(inputs / "cases.jsonl"))
    units = plan(config)
    assert isinstance(units, JudgePlan)
    assert [c.case_id for c in units] == ["anneal", "gather", "cullet"]
    assert [u.case_id for u in units.not_judgeable] == ["rods"]
    assert units.not_judgeable[0].trace_id  # the trace is named beside its case
    report = _run(units, config)
    judge = LexicalJudge()
    expected = asyncio.run(judge_all(judge, list(units)))
    assert list(report.judgments) == expected
    summary = msgspec.structs.replace(
        summarize_results(expected, 0.8),
        not_judgeable=(
            NotJudgeable("rods", units.not_judgeable[0].missing, units.not_judgeable[0].trace_id),
        ),
        fingerprint=dict(judge.fingerprint(0.8)),
    )
    assert report.summary == summary and report.validation is None and report.record is None
    assert nothing_measured(report) is None

    main = write_report(report, inputs / "out")
    assert main == inputs / "out" / "summary.json"
    assert read(main, JudgeRunSummary) == summary
    lines = (inputs / "out" / "judgments.jsonl").read_text().splitlines()
    assert [json.loads(line)["case_id"] for line in lines] == ["anneal", "gather", "cullet"]

    text = reading(report)
    adherence = summary.metrics["adherence"]
    assert "scored 3 case(s) at the working threshold 0.8" in text
    assert f"{adherence.passed} pass / {adherence.failed} fail" in text
    assert "1 trace(s) could not be judged" in text

    linked = verdicts(report, config)
    assert {v.trace_id for v in linked.verdicts} == {f"{1:032x}", f"{2:032x}"}
    assert {v.span_id for v in linked.verdicts} == {f"{201:016x}", f"{202:016x}"}  # the LLM call
    assert linked.unlinked == ("cullet",)  # a case-file case has no trace


def test_a_validation_is_what_meta_evaluate_and_build_record_give(inputs: Path) -> None:
    config = Config(gold=str(inputs / "gold.jsonl"), profile=str(inputs / "acceptance.toml"))
    units = plan(config)
    gold = load_gold(inputs / "gold.jsonl", dimension="adherence")
    assert [c.case_id for c in units] == [i.case.case_id for i in gold.items]
    report = _run(units, config)
    judge = LexicalJudge()
    results = asyncio.run(judge_all(judge, [i.case for i in gold.items]))
    profile = AcceptanceProfile.from_file(inputs / "acceptance.toml")
    validation = meta_evaluate(gold, results, metric=Metric.ADHERENCE, threshold=0.8,
                               n_resamples=200, seed=5)  # fmt: skip
    record = build_record(validation, judge.fingerprint(0.8), profile)
    assert report.record is not None and report.validation is not None
    assert msgspec.structs.replace(report.record, created=record.created) == record
    assert report.validation == msgspec.structs.replace(
        validation, mode=record.mode, fingerprint=dict(judge.fingerprint(0.8))
    )
    assert report.summary == msgspec.structs.replace(
        summarize_results(results, 0.8), fingerprint=dict(judge.fingerprint(0.8))
    )
    assert nothing_measured(report) is None

    out = inputs / "out"
    main = write_report(report, out, command="groundtrace judge validate ...")
    assert main == out / "report.md"
    assert read(out / "validation.json", JudgeValidation) == report.validation
    assert read(out / "validation_record_adherence.json", ValidationRecord) == report.record
    assert len((out / "judgments.jsonl").read_text().splitlines()) == 40
    assert not (out / "summary.json").exists()
    text = reading(report)
    assert text.startswith("The judge was validated on 40 of 40 gold item(s) for adherence")
    assert text in main.read_text() and "Command: `groundtrace judge validate ...`" in (
        main.read_text()
    )

    some = list(units)[:30]  # a plain list of units: the gold set is cut to them
    cut = _run(some, config)
    assert cut.validation is not None and cut.validation.n_items == 30


def test_nothing_measured_names_why(inputs: Path) -> None:
    (inputs / "answerless.jsonl").write_text(_trace(9, *STUDIO[2][:3], None).to_json() + "\n")
    config = Config(traces=(str(inputs / "answerless.jsonl"),))
    report = _run(plan(config), config)
    (missing,) = report.summary.not_judgeable[0].missing
    assert missing.startswith("answer: ")
    trace = "0" * 31 + "9"
    assert nothing_measured(report) == (
        f"no case to judge (1 trace(s) not judgeable: case rods (trace {trace}): {missing})"
    )
    assert reading(report).startswith("Nothing was measured: no case to judge.")

    with OpenAICompatServer(handler=lambda _req: Reply(content="no score today")) as srv:
        endpoint = Config(gold=str(inputs / "gold.jsonl"), judge=srv.base_url, model="m",
                          profile=str(inputs / "acceptance.toml"))  # fmt: skip
        failed = _run(plan(endpoint), endpoint)
    assert failed.validation is not None and failed.validation.n == 0
    why = nothing_measured(failed)
    assert why is not None
    assert why.startswith("every judgment of the 40 gold item(s) was a protocol error (")


def test_bad_config_input_names_the_file_and_the_field(inputs: Path) -> None:
    path = inputs / "judge.toml"
    path.write_text('gold = "gold.jsonl"\nthreshold = "high"\n')
    with pytest.raises(InputError) as err:
        load_config(ANALYSIS, path)
    assert err.value.path == str(path) and err.value.field == "threshold"
    path.write_text('judges = "lexical"\n')
    with pytest.raises(InputError) as err:
        load_config(ANALYSIS, path)
    assert err.value.path == str(path) and "judges" in str(err.value)

    gold = str(inputs / "gold.jsonl")
    cases = [
        (Config(), "traces"),
        (Config(judge="http://127.0.0.1:9/v1", cases=gold), "model"),
        (Config(judge="ftp://x", cases=gold), "judge"),
        (Config(gold=gold, cases=gold), "cases"),
        (Config(gold=gold, dimension="tone"), "dimension"),
        (Config(cases=gold, filters=("id~x",)), "filters"),
        (Config(cases=gold, threshold=1.5), "threshold"),
    ]
    for config, field in cases:
        with pytest.raises(ConfigError) as bad:
            plan(config)
        assert bad.value.field == field, (config, bad.value)
    (inputs / "bad_gold.jsonl").write_text('{"id": "x", "question": "q", "answer": "a"}\n')
    with pytest.raises(InputError) as err:
        plan(Config(gold=str(inputs / "bad_gold.jsonl")))
    assert err.value.path == str(inputs / "bad_gold.jsonl") and err.value.line == 1


def test_analyze_judge_gives_what_judge_run_gives(inputs: Path) -> None:
    app = build_app()
    traces = str(inputs / "traces.jsonl")
    ran = CliRunner().invoke(app, ["judge", "run", traces, "--out", str(inputs / "a"), "--json"])
    assert ran.exit_code == 0, ran.output
    (inputs / "judge.toml").write_text(f'traces = ["{traces}"]\n')
    analyzed = CliRunner().invoke(
        app,
        ["analyze", "judge", "--config", str(inputs / "judge.toml"), "--out", str(inputs / "b")],
    )
    assert analyzed.exit_code == 0, analyzed.output
    assert "Reading." in analyzed.stdout and "The judge scored 2 case(s)" in analyzed.stdout
    first = json.loads((inputs / "a" / "summary.json").read_text())
    second = json.loads((inputs / "b" / "summary.json").read_text())
    assert first == second == json.loads(ran.stdout)


def test_the_run_reading_follows_the_numbers() -> None:
    timeout = ProtocolError(Metric.ADHERENCE, ProtocolErrorKind.TIMEOUT, "no reply in 120 s")
    results = [
        Judgment("anneal", dict.fromkeys(Metric, 0.9)),
        Judgment(
            "gather",
            {Metric.CONTEXT_RELEVANCE: 0.4, Metric.ANSWER_RELEVANCE: 0.2},
            errors=(timeout,),
        ),
    ]
    report = JudgeResult(judgments=tuple(results), summary=summarize_results(results, 0.5))
    text = reading(report)
    assert "scored 2 case(s) at the working threshold 0.5" in text
    assert "adherence on 1 (mean 0.900, 1 pass / 0 fail)" in text
    assert "context relevance on 2 (mean 0.650, 1 pass / 1 fail)" in text
    assert "1 case(s) had a protocol error (timeout 1) and go to manual review" in text
    clean = JudgeResult(judgments=tuple(results[:1]), summary=summarize_results(results[:1], 0.95))
    assert "0 pass / 1 fail" in reading(clean) and "No judgment was a protocol error." in (
        reading(clean)
    )
