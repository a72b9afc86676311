"""The audit in the one analysis shape: its record, its config file, plan -> run ->
write_report -> reading -> nothing_measured giving what the existing entry point gives.

The data is a domain the repository does not contain: three museums' visitor rules, two
questions whose gold answers name the museums by id.
"""

from __future__ import annotations

import asyncio
import json
import warnings
from pathlib import Path
from typing import Any

import msgspec
import pytest
from typer.testing import CliRunner

import groundtrace.analyzer.audit as audit
from groundtrace.analyzer import get_analysis, load_config, run_analysis
from groundtrace.analyzer.audit import (
    ANALYSIS,
    AuditResult,
    AuditSettings,
    Config,
    extractive_answer,
    nothing_measured,
    plan,
    reading,
    run,
    write_report,
)
from groundtrace.analyzer.audit._app import TracedAnswering
from groundtrace.analyzer.audit._folder import GivenAnswers, run_audit_folder
from groundtrace.analyzer.audit._inputs import load_answers, load_inputs
from groundtrace.analyzer.audit._plan import AnswerUnit
from groundtrace.analyzer.cli._registry import build_app
from groundtrace.analyzer.errors import ConfigError, InputError, NothingMeasuredError

pytestmark = pytest.mark.timeout(300)

#: museum id -> (group, its visitor rules)
MUSEUMS = {
    "harbour-gallery": ("city", "Photography without flash is allowed in every room. Strollers "
                        "are welcome on all floors."),
    "quarry-museum": ("city", "Photography is not allowed in the galleries. Strollers are "
                      "welcome on all floors."),
    "salt-works": ("county", "Photography without flash is allowed. Strollers must be left at "
                   "the cloakroom; strollers are not allowed in the galleries."),
}  # fmt: skip
QUESTIONS = [
    {"id": "photos", "text": "May visitors take photographs?", "topics": ["photography"],
     "cues": {"no": ["photography is not allowed"], "yes": ["photography .*allowed"]},
     "gold": {"harbour-gallery": "yes", "quarry-museum": "no", "salt-works": "yes"}},
    {"id": "strollers", "text": "Are strollers allowed in the galleries?", "topics": ["strollers"],
     "cues": {"no": ["strollers .*not allowed"], "yes": ["strollers are welcome"]},
     "gold": {"harbour-gallery": "yes", "quarry-museum": "yes", "salt-works": "no"}},
]  # fmt: skip
ANSWERS = [
    {"question_id": "photos", "source_id": "harbour-gallery", "answer": "Yes, without flash."},
    {"question_id": "photos", "source_id": "quarry-museum", "answer": "No."},
    {"question_id": "photos", "source_id": "salt-works", "answer": "Yes, without flash."},
    {"question_id": "strollers", "source_id": "harbour-gallery", "answer": "Yes."},
    {"question_id": "strollers", "source_id": "quarry-museum", "answer": "Yes."},
    {"question_id": "strollers", "source_id": "salt-works", "answer": "No."},
]  # fmt: skip


def _lines(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


@pytest.fixture
def museums(tmp_path: Path) -> Path:
    """The sources, questions and answers files in ``tmp_path``."""
    _lines(tmp_path / "museums.jsonl", [
        {"id": k, "group": group, "text": text} for k, (group, text) in MUSEUMS.items()
    ])  # fmt: skip
    _lines(tmp_path / "questions.jsonl", QUESTIONS)
    _lines(tmp_path / "answers.jsonl", ANSWERS)
    return tmp_path


def _config(root: Path, **fields: Any) -> Config:
    return Config(
        out=str(root / "run"), sources=str(root / "museums.jsonl"),
        questions=str(root / "questions.jsonl"), **fields,
    )  # fmt: skip


def _run(units: Any, config: Config) -> AuditResult:
    """The audit through the driver (its reports in the run folder)."""
    done = run_analysis(audit.ANALYSIS, config, out=config.out, concurrency=2, units=units)
    assert done.result is not None
    return done.result


def _same(a: AuditResult, b: AuditResult) -> None:
    """The two runs found the same (their wall times differ)."""
    assert msgspec.structs.replace(a, wall_seconds=0.0) == msgspec.structs.replace(
        b, wall_seconds=0.0
    )


def test_the_record_is_what_get_analysis_returns() -> None:
    found = get_analysis("audit")
    assert found is ANALYSIS and found.name == "audit" and found.config is Config
    assert (found.plan, found.run, found.write_report) == (plan, run, write_report)
    assert (found.reading, found.nothing_measured) == (reading, nothing_measured)
    assert found.verdicts is None  # pair labels, not per-span results


def test_a_toml_config_file_gives_the_config(tmp_path: Path) -> None:
    path = tmp_path / "audit.toml"
    path.write_text(
        'out = "runs/a"\nsources = "museums.jsonl"\nquestions = "questions.jsonl"\n'
        'traces = ["app/traces", "more.jsonl"]\njudge = "http://127.0.0.1:9/v1"\n'
        'judge_model = "m"\nconcurrency = 3\n',
        "utf-8",
    )
    assert load_config(ANALYSIS, path) == Config(
        out="runs/a", sources="museums.jsonl", questions="questions.jsonl",
        traces=("app/traces", "more.jsonl"), judge="http://127.0.0.1:9/v1", judge_model="m",
        concurrency=3,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('out = "r"\nsources = 3\nquestions = "q.jsonl"\n', "sources"),
        ('out = "r"\nsources = "s"\nquestions = "q.jsonl"\nconcurrency = "two"\n', "concurrency"),
        ('out = "r"\nsources = "s"\n', None),  # questions missing: named in the message
    ],
)
def test_a_bad_config_file_names_the_file_and_the_field(
    tmp_path: Path, text: str, field: str | None
) -> None:
    path = tmp_path / "audit.toml"
    path.write_text(text, "utf-8")
    with pytest.raises(InputError) as caught:
        load_config(ANALYSIS, path)
    assert caught.value.path == str(path) and caught.value.field == field
    assert "questions" in str(caught.value) if field is None else field in str(caught.value)


def test_an_unknown_config_field_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "audit.toml"
    path.write_text('out = "r"\nsources = "s"\nquestions = "q"\nanswerr = "x"\n', "utf-8")
    with pytest.raises(InputError, match="answerr") as caught:
        load_config(ANALYSIS, path)
    assert caught.value.path == str(path)


def test_bad_inputs_name_the_file_and_the_field(museums: Path) -> None:
    with pytest.raises(InputError) as caught:
        plan(_config(museums, answers=str(museums / "missing.jsonl")))
    assert (caught.value.path, caught.value.field) == (str(museums / "missing.jsonl"), "answers")
    with pytest.raises(InputError) as caught:
        plan(Config(out="r", sources=str(museums / "nowhere"), questions="q.jsonl"))
    assert caught.value.field == "sources"
    with pytest.raises(ConfigError) as caught:
        plan(_config(museums, answerer="gpt", model="m"))
    assert caught.value.field == "answerer"
    with pytest.raises(ConfigError) as caught:
        plan(_config(museums, judge="http://127.0.0.1:9/v1"))  # no judge_model
    assert caught.value.field == "judge"
    with pytest.raises(ConfigError) as caught:
        plan(_config(museums, answers=str(museums / "answers.jsonl"), traces=("t",)))
    assert caught.value.field == "answers"
    bad = _lines(museums / "bad.jsonl", [{"question_id": "photos", "source_id": "louvre",
                                          "answer": "Yes."}])  # fmt: skip
    with pytest.raises(InputError) as caught:
        plan(_config(museums, answers=str(bad)))
    assert (caught.value.path, caught.value.line, caught.value.field) == (str(bad), 1, "source_id")


def test_the_plan_is_every_question_from_each_in_scope_source(museums: Path) -> None:
    units = plan(_config(museums))
    assert [(u.question.id, u.source.id) for u in units] == [
        (q["id"], m) for q in QUESTIONS for m in MUSEUMS
    ]
    assert units.given is None and units.notes == ()
    assert all(isinstance(u, AnswerUnit) for u in units[:2])


def test_given_answers_give_what_the_folder_entry_point_gives(museums: Path) -> None:
    config = _config(museums, answers=str(museums / "answers.jsonl"))
    result = _run(
        plan(config),
        config,
    )
    report = write_report(result, museums / "report")
    assert report == museums / "report" / "report.html" and report.is_file()
    assert (museums / "report" / "run.json").is_file()
    assert nothing_measured(result) is None
    inputs = load_inputs(museums / "museums.jsonl", museums / "questions.jsonl")
    given = GivenAnswers(tuple(load_answers(museums / "answers.jsonl", inputs.corpus)))
    settings = AuditSettings(retrieval="given", answerer="answers:answers.jsonl", concurrency=8)
    before = asyncio.run(run_audit_folder(museums / "old", inputs.corpus, given, settings))
    _same(result, before)
    labels = {(p.question_id, p.source_a, p.source_b): p.label for p in result.pairs}
    assert labels[("photos", "harbour-gallery", "quarry-museum")] == "contradictory"
    assert labels[("strollers", "harbour-gallery", "quarry-museum")] == "consistent"
    assert result.validation is not None  # the gold answers name the museums
    assert reading(result) == reading(before)
    assert "3 source(s) (6 answers) and labelled 6 source pair(s)" in reading(result)


def test_the_offline_answerer_gives_what_the_folder_entry_point_gives(museums: Path) -> None:
    import groundtrace.sdk as gt

    config = _config(museums)
    try:
        result = _run(plan(config), config)
        inputs = load_inputs(museums / "museums.jsonl", museums / "questions.jsonl")
        one = TracedAnswering(museums / "old" / "traces", extractive_answer, inputs.cues)
        before = asyncio.run(run_audit_folder(
            museums / "old", inputs.corpus, one, AuditSettings(retrieval="whole"),
            traces=one.traces, before=one.trace_here, closers=(one.aclose,),
        ))  # fmt: skip
    finally:
        gt.shutdown()
    stances = {(a.question_id, a.source_id): a.stance for a in result.answers}
    assert stances == {(a.question_id, a.source_id): a.stance for a in before.answers}
    assert stances[("photos", "quarry-museum")] == "no"
    assert stances[("strollers", "salt-works")] == "no"
    assert [(p.key, p.label) for p in result.pairs] == [(p.key, p.label) for p in before.pairs]
    assert result.summary == before.summary and result.settings == before.settings
    assert all(a.trace_id for a in result.answers)  # one trace per answer in the run folder
    assert list((museums / "run" / "traces").glob("*.jsonl"))


def test_a_run_of_some_units_answers_those_only(museums: Path) -> None:
    config = _config(museums, answers=str(museums / "answers.jsonl"))
    units = [u for u in plan(config) if u.question.id == "photos"]
    result = _run(units, config)
    assert {a.question_id for a in result.answers} == {"photos"} and len(result.pairs) == 3
    stranger = msgspec.structs.replace(units[0], source=msgspec.structs.replace(
        units[0].source, id="louvre"))  # fmt: skip
    with pytest.raises(InputError, match="louvre"):
        _run([stranger], config)


def test_a_rerun_into_the_run_folder_resumes_from_its_journal(museums: Path) -> None:
    config = _config(museums, answers=str(museums / "answers.jsonl"))
    first = _run(plan(config), config)
    changed = [{**a, "answer": "Yes."} for a in ANSWERS]  # what a fresh run would read now
    _lines(museums / "answers.jsonl", changed)
    again = _run(plan(config), config)
    assert again.answers == first.answers and again.pairs == first.pairs  # the journal's


def test_nothing_measured_says_why_after_the_run(museums: Path) -> None:
    silent = _lines(museums / "silent.jsonl", [
        {"question_id": "photos", "source_id": "salt-works", "answer": "Not addressed."}
    ])  # fmt: skip
    config = _config(museums, answers=str(silent))
    result = _run(plan(config), config)  # the run itself raises nothing
    write_report(result, museums / "run")
    why = nothing_measured(result)
    assert why is not None and "no source answered any question: 6 answer(s)" in why
    assert (museums / "run" / "run.json").is_file()
    assert "disagreement is not measured" in reading(result)


def test_without_cues_or_answers_nothing_can_answer(museums: Path) -> None:
    _lines(museums / "questions.jsonl", [{k: v for k, v in q.items() if k != "cues"}
                                         for q in QUESTIONS])  # fmt: skip
    with pytest.raises(NothingMeasuredError, match="nothing can answer this corpus offline"):
        plan(_config(museums))


def test_the_command_names_a_bad_option_as_given(museums: Path) -> None:
    result = CliRunner().invoke(build_app(), [
        "audit", "run", "--sources", str(museums / "museums.jsonl"), "--questions",
        str(museums / "questions.jsonl"), "--endpoint", "museum-model", "--model", "m",
        "--out", str(museums / "run"),
    ])  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "[--endpoint]: endpoint must be built-in or an http(s) URL" in result.output


def test_the_old_write_reports_name_warns_and_is_write_report() -> None:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        old = audit.write_reports
    assert old is write_report
    assert [w.category for w in seen] == [DeprecationWarning]
    assert "write_report" in str(seen[0].message) and "0.2.0" in str(seen[0].message)
    assert "write_reports" not in audit.__all__


def test_analyze_audit_runs_the_config_file(museums: Path) -> None:
    path = museums / "audit.toml"
    path.write_text(
        f'out = "{museums / "run"}"\nsources = "{museums / "museums.jsonl"}"\n'
        f'questions = "{museums / "questions.jsonl"}"\nanswers = "{museums / "answers.jsonl"}"\n',
        "utf-8",
    )
    result = CliRunner().invoke(build_app(), [
        "analyze", "audit", "--config", str(path), "--out", str(museums / "run"),
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "6 unit(s) planned" in result.output and "labelled 6 source pair(s)" in result.output
    written = msgspec.json.decode((museums / "run" / "run.json").read_bytes())
    assert written["settings"]["answerer"] == "answers:answers.jsonl"


def test_the_estimate_of_a_model_answerer_sends_and_writes_nothing(museums: Path) -> None:
    out = museums / "run"
    result = CliRunner().invoke(build_app(), [
        "audit", "run", "--sources", str(museums / "museums.jsonl"), "--questions",
        str(museums / "questions.jsonl"), "--endpoint", "http://127.0.0.1:9/v1", "--model", "m",
        "--judge", "http://127.0.0.1:9/v1", "--judge-model", "m", "--out", str(out),
        "--estimate", "--json",
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    # every answer is a call to make; each pair of them may need a label call once answered
    assert (found["requests"], found["cached"], found["calls"], found["dependent"]) == (6, 0, 6, 6)
    assert not out.exists()
