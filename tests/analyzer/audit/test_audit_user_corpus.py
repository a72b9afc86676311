"""The audit on a user's own corpus through the CLI: given answers, answers from traces, the
offline answerer from the questions' cues, and the refusal when nothing can answer."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import groundtrace.analyzer.audit as audit_package
from groundtrace.analyzer.cli._registry import build_app
from tests.support.recycling_corpus import ANSWERS, DISAGREE, EXPECTED, write_corpus

pytestmark = pytest.mark.timeout(300)


def _run(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(build_app(), ["audit", "run", *args])
    return result.exit_code, result.output


def _labels(out: Path) -> dict[tuple[str, str, str], str]:
    run = json.loads((out / "run.json").read_text("utf-8"))
    return {(p["question_id"], p["source_a"], p["source_b"]): p["label"] for p in run["pairs"]}


def test_answers_made_elsewhere_are_labelled_pair_by_pair(tmp_path: Path) -> None:
    paths = write_corpus(tmp_path)
    out = tmp_path / "run"
    code, output = _run(["--sources", str(paths.sources), "--questions", str(paths.questions),
                         "--answers", str(paths.answers), "--out", str(out)])  # fmt: skip
    assert code == 0, output
    labels = _labels(out)
    assert {k: labels[k] for k in EXPECTED} == EXPECTED
    assert all(labels[k] in ("divergent", "contradictory") for k in DISAGREE)
    run = json.loads((out / "run.json").read_text("utf-8"))
    assert run["settings"]["answerer"] == "answers:answers.jsonl"
    assert {s["id"]: s["group"] for s in run["sources"]}["stonebridge"] == "drop-off"  # sidecar
    by_id = {s["id"]: s for s in run["sources"]}
    assert by_id["oakridge"]["metadata"] == {"author": "Oakridge Public Works", "version": "2025"}
    # the curbside question is asked of the three curbside guides only
    asked = {a["source_id"] for a in run["answers"] if a["question_id"] == "collection"}
    assert asked == {"oakridge", "pinehill", "rivertown"}
    # gold answers of the questions file are validated against
    assert run["validation"] is not None
    assert "disagreement prevalence" in output


def test_the_offline_answerer_answers_from_the_questions_cues(tmp_path: Path) -> None:
    paths = write_corpus(tmp_path)
    out = tmp_path / "run"
    code, output = _run(["--sources", str(paths.sources_jsonl), "--questions",
                         str(paths.questions), "--out", str(out)])  # fmt: skip
    assert code == 0, output
    run = json.loads((out / "run.json").read_text("utf-8"))
    stance = {(a["question_id"], a["source_id"]): a["stance"] for a in run["answers"]}
    assert stance[("pizza-boxes", "oakridge")] == "yes"
    assert stance[("pizza-boxes", "pinehill")] == "no"
    assert stance[("glass", "rivertown")] == "no"
    assert stance[("plastic-bags", "stonebridge")] == "yes"
    assert stance[("collection", "oakridge")] == "absent"  # no cues: the offline answerer
    labels = _labels(out)
    assert labels[("pizza-boxes", "oakridge", "pinehill")] == "contradictory"
    assert labels[("batteries", "lakeview", "rivertown")] == "divergent"
    assert labels[("batteries", "lakeview", "stonebridge")] == "consistent"
    # one trace per answer, the source id on its REQUEST span
    spans = [json.loads(line) for f in (out / "traces").glob("*.jsonl") for line in
             f.read_text("utf-8").splitlines()]  # fmt: skip
    text = json.dumps(spans)
    assert len(set(re.findall(r'"traceId": "([0-9a-f]{32})"', text))) == len(run["answers"])
    assert '"groundtrace.source.id"' in text and "license" not in text.lower()


def test_without_an_answerer_for_the_corpus_the_run_stops_with_exit_6(tmp_path: Path) -> None:
    paths = write_corpus(tmp_path, cues=False)
    out = tmp_path / "run"
    code, output = _run(["--sources", str(paths.sources), "--questions", str(paths.questions),
                         "--out", str(out)])  # fmt: skip
    assert code == 6, output
    assert "nothing can answer this corpus offline" in " ".join(output.split())
    assert not (out / "run.json").exists()


def test_answers_that_all_say_nothing_measure_nothing(tmp_path: Path) -> None:
    paths = write_corpus(tmp_path)
    answers = tmp_path / "silent.jsonl"
    answers.write_text(json.dumps({"question_id": "glass", "source_id": "oakridge",
                                   "answer": "Not addressed."}) + "\n", "utf-8")  # fmt: skip
    out = tmp_path / "run"
    code, output = _run(["--sources", str(paths.sources), "--questions", str(paths.questions),
                         "--answers", str(answers), "--out", str(out)])  # fmt: skip
    assert code == 6, output
    assert "no source answered any question" in " ".join(output.split())
    assert (out / "run.json").exists()  # the files written so far are kept


@pytest.mark.parametrize(
    ("file", "line", "expect"),
    [
        ("questions", '{"id": "q", "text": "Q?", "scope": "kerbside"}', ":1 [scope]"),
        ("questions", '{"id": "q", "txt": "Q?"}', ":1 [txt]"),
        (
            "answers",
            '{"question_id": "glass", "source_id": "nowhere", "answer": "Yes."}',
            ":1 [source_id]",
        ),
        (
            "answers",
            '{"question_id": "collection", "source_id": "lakeview", "answer": "x"}',
            ":1 [source_id]",
        ),
    ],
)
def test_bad_input_names_file_line_and_field(
    tmp_path: Path, file: str, line: str, expect: str
) -> None:
    paths = write_corpus(tmp_path)
    target = paths.questions if file == "questions" else paths.answers
    target.write_text(line + "\n", "utf-8")
    args = ["--sources", str(paths.sources), "--questions", str(paths.questions)]
    code, output = _run([*args, "--answers", str(paths.answers), "--out", str(tmp_path / "run")])
    flat = " ".join(output.split())
    assert code == 2, output
    assert f"{target.name}{expect}" in flat.replace(str(target.parent) + "/", ""), flat


def test_answers_are_read_from_the_traces_of_an_instrumented_app(tmp_path: Path) -> None:
    import groundtrace.sdk as gt

    paths = write_corpus(tmp_path)
    traces = tmp_path / "app-traces"

    @gt.answer(query_param="question")
    def respond(question: str) -> dict[str, str]:
        return {"answer": answers[(question_id, source)]}

    @gt.request(app_name="city-recycling-bot", app_version="3.1")
    def handle(question: str, case_id: str, source_id: str) -> str:
        return respond(question)["answer"]

    answers = {(str(a["question_id"]), str(a["source_id"])): str(a["answer"]) for a in ANSWERS}
    questions = {
        q["id"]: q["text"] for q in map(json.loads, paths.questions.read_text().splitlines())
    }
    gt.configure(service_name="city-recycling-bot", exporter="file", file_path=traces,
                 capture_content=True)  # fmt: skip
    try:
        for question_id, source in answers:
            handle(questions[question_id], case_id=f"{question_id}/{source}", source_id=source)
        handle("Unrelated?", case_id="smalltalk", source_id="oakridge")  # not an audit trace
    finally:
        gt.shutdown()
    out = tmp_path / "run"
    code, output = _run(["--sources", str(paths.sources), "--questions", str(paths.questions),
                         "--traces", str(traces), "--out", str(out)])  # fmt: skip
    assert code == 0, output
    assert {k: v for k, v in _labels(out).items() if k in EXPECTED} == EXPECTED
    run = json.loads((out / "run.json").read_text("utf-8"))
    assert run["settings"]["answerer"] == "traces"
    assert all(a["trace_id"] for a in run["answers"] if a["stance"] != "absent")
    assert "1 trace(s) not used" in " ".join(output.split())


def test_the_package_docstring_example_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = write_corpus(tmp_path)
    (tmp_path / "sources.jsonl").write_bytes(paths.sources_jsonl.read_bytes())
    monkeypatch.chdir(tmp_path)
    doc = audit_package.__doc__ or ""
    code = "\n".join(
        line[4:] for line in doc.split("Usage::", 1)[1].splitlines() if line.startswith("    ")
    )
    import groundtrace.sdk as gt

    try:
        exec(compile(code, "groundtrace.analyzer.audit docstring", "exec"), {})
    finally:
        gt.shutdown()
    assert list((tmp_path / "runs" / "offline" / "traces").glob("*.jsonl"))
    assert (tmp_path / "runs" / "given" / "run.json").is_file()
