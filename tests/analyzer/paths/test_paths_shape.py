"""The ``paths`` analysis in the one analysis shape gives what ``validate_traces`` gives.

The data is a beekeeping agent (a domain the repository has no other data of): it reads hive
notes with a ``read_note`` tool and cites the notes it read; the case ids are the gold the
traces are joined by. One case passes, one answers right over a note it never read and cites
(a masked failure), one has no trace, and one trace belongs to no case.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundtrace.analyzer import get_analysis, load_config, read, run_analysis
from groundtrace.analyzer.cases import read_cases
from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.errors import ConfigError, InputError, TraceReadError
from groundtrace.analyzer.paths import (
    ANALYSIS,
    Config,
    PathReport,
    PathsResult,
    load_tools_config,
    nothing_measured,
    plan,
    reading,
    run,
    validate_traces_async,
    verdicts,
    write_report,
)
from groundtrace.analyzer.stats import StatsSettings
from groundtrace.collectors import read_traces
from groundtrace.collectors.model import Request, Step, ToolCall, Trace

#: (case id, question, the note that answers it, the answer)
HIVES = (
    ("swarm", "What did hive 3 show before it swarmed?", "notes/hive-3.md", "queen cells"),
    ("harvest", "When was the spring honey taken off?", "notes/harvest.md", "on 12 May"),
    ("mites", "How many mites fell in the sugar roll?", "notes/mites.md", "four mites"),
)
TOOLS = '[tools.read_note]\nreads = ["path"]\n\n[tools.list_hives]\nreads = []\n'


def _trace(n: int, case_id: str, read_path: str, cited: str, answer: str) -> Trace:
    """A trace of the agent: a root span, one ``read_note`` call, an answer citing ``cited``."""
    root, tool = f"{n:016x}", f"{n + 100:016x}"
    ask = Step(span_id=root, parent_span_id=None, action="REQUEST", name="ask", start_ns=1,
               end_ns=9)  # fmt: skip
    note = Step(span_id=tool, parent_span_id=root, action="TOOL", name="read_note", start_ns=2,
                end_ns=3)  # fmt: skip
    call = ToolCall(span_id=tool, name="read_note", arguments={"path": read_path}, status="ok",
                    result_content=f"The notes say: {answer}.")  # fmt: skip
    return Trace(
        request=Request(trace_id=f"{n:032x}", case_id=case_id, query=case_id),
        steps=(ask, note),
        answer=answer,
        cited_ids=(cited,),
        tool_calls=(call,),
    )


def _traces() -> list[Trace]:
    swarm, harvest, _ = HIVES
    return [
        _trace(1, swarm[0], swarm[2], swarm[2], swarm[3]),  # read and cited: pass
        _trace(2, harvest[0], "notes/hive-3.md", harvest[2], harvest[3]),  # cites an unread note
        _trace(3, "queen-rearing", "notes/q.md", "notes/q.md", "graft larvae"),  # no such case
    ]


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    """The case file, the tools config and the traces (model JSON lines) in ``tmp_path``."""
    rows = [
        {"id": c, "question": q, "reference_answer": a, "required_reads": [note],
         "required_values": [a]}
        for c, q, note, a in HIVES
    ]  # fmt: skip
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "tools.toml").write_text(TOOLS)
    (tmp_path / "traces.jsonl").write_text("".join(t.to_json() + "\n" for t in _traces()))
    return tmp_path


def _config(folder: Path, **fields: object) -> Config:
    base: dict[str, object] = {
        "traces": (str(folder / "traces.jsonl"),),
        "cases": str(folder / "cases.jsonl"),
        "tools_config": str(folder / "tools.toml"),
        "resamples": 300,
        "seed": 11,
    }
    return Config(**(base | fields))  # type: ignore[arg-type]


def _run(config: Config) -> PathsResult:
    """``config`` run by the driver, into a run folder beside the case file."""
    done = run_analysis(ANALYSIS, config, out=Path(config.cases).parent / "run", concurrency=1)
    assert isinstance(done.result, PathsResult)
    return done.result


def test_the_record_is_what_get_analysis_returns() -> None:
    assert get_analysis("paths") is ANALYSIS
    assert ANALYSIS.name == "paths" and ANALYSIS.config is Config
    assert (ANALYSIS.plan, ANALYSIS.run, ANALYSIS.write_report) == (plan, run, write_report)
    assert (ANALYSIS.reading, ANALYSIS.nothing_measured) == (reading, nothing_measured)
    assert ANALYSIS.verdicts is verdicts


def test_a_toml_config_file_is_the_config(inputs: Path) -> None:
    path = inputs / "paths.toml"
    path.write_text(
        f'traces = ["{inputs / "traces.jsonl"}"]\ncases = "{inputs / "cases.jsonl"}"\n'
        f'tools_config = "{inputs / "tools.toml"}"\nresamples = 300\nseed = 11\n'
    )
    assert load_config(ANALYSIS, path) == _config(inputs)
    defaults = Config(traces=("t",), cases="c")
    assert (defaults.trace_format, defaults.cases_format) == ("otlp", "groundtrace")
    assert (defaults.quote_threshold, defaults.resamples, defaults.seed) == (0.9, 5000, 42)


def test_the_shape_gives_what_validate_traces_gives(inputs: Path) -> None:
    config = _config(inputs)
    units = plan(config)
    assert [case.case_id for case in units] == ["swarm", "harvest", "mites"]
    result = _run(config)
    expected = asyncio.run(
        validate_traces_async(
            read_traces([str(inputs / "traces.jsonl")]),
            list(read_cases(inputs / "cases.jsonl")),
            load_tools_config(inputs / "tools.toml"),
            settings=StatsSettings(n_resamples=300, seed=11),
        )
    )
    assert result.report == expected and result.read_errors == ()
    report = result.report
    assert [(v.case_id, v.status.value) for v in report.verdicts] == [
        ("swarm", "pass"), ("harvest", "both_failed"),
    ]  # fmt: skip
    assert report.metrics.masked_failures == ("harvest",)
    assert report.missing_traces == ("mites",) and report.unmatched_count == 1
    assert nothing_measured(result) is None
    text = reading(result)
    assert text == reading(report)
    assert text.startswith("Command paths were checked on 2 case(s). The path passes in 1 of 2")
    assert "1 case(s) have a correct text answer over a failed path" in text
    main = write_report(result, inputs / "out")
    assert main == inputs / "out" / "report.json"
    assert read(main, PathReport) == report
    assert text in (inputs / "out" / "summary.md").read_text(encoding="utf-8")
    write_report(expected, inputs / "direct")  # a bare report writes the same files
    for name in ("report.json", "summary.md", "report.html"):
        assert (inputs / "direct" / name).read_bytes() == (inputs / "out" / name).read_bytes()


def test_verdicts_link_each_case_run_to_its_root_span(inputs: Path) -> None:
    config = _config(inputs)
    result = _run(config)
    # only the traces with a verdict keep their root (not the unmatched one)
    assert dict(result.roots) == {f"{1:032x}": f"{1:016x}", f"{2:032x}": f"{2:016x}"}
    linked = verdicts(result, config)
    assert [(v.trace_id, v.span_id, v.case_id, v.label) for v in linked.verdicts] == [
        (f"{1:032x}", f"{1:016x}", "swarm", "pass"),
        (f"{2:032x}", f"{2:016x}", "harvest", "both_failed"),
    ]


def test_no_trace_of_any_case_is_nothing_measured(inputs: Path) -> None:
    (inputs / "other.jsonl").write_text(_traces()[2].to_json() + "\n")
    result = _run(_config(inputs, traces=(str(inputs / "other.jsonl"),)))
    reason = nothing_measured(result)
    assert reason is not None and reason.startswith("no trace carries a case id")
    assert reason == result.report.nothing_measured


def test_unreadable_lines_are_kept_and_noted(inputs: Path) -> None:
    path = inputs / "traces.jsonl"
    path.write_text(path.read_text() + '{"request": \n')
    result = _run(_config(inputs))
    (error,) = result.read_errors
    assert error.path == str(path) and error.line == 4
    assert result.report.notes == (f"1 unreadable trace line(s) skipped: {error}",)
    assert str(error) == str(error.error()) and error.error().path == str(path)
    assert [v.case_id for v in result.report.verdicts] == ["swarm", "harvest"]
    with pytest.raises(TraceReadError) as err:  # strict: refused, nothing returned
        run_analysis(ANALYSIS, _config(inputs, strict=True), out=inputs / "strict")
    assert err.value.path == str(path) and f"(--strict); first: {path}:4" in str(err.value)
    assert {f.name for f in (inputs / "strict").iterdir()} <= {".groundtrace.lock"}  # no report


def test_analyze_paths_runs_the_config_file(inputs: Path) -> None:
    config = inputs / "paths.toml"
    config.write_text(
        f'traces = ["{inputs / "traces.jsonl"}"]\ncases = "{inputs / "cases.jsonl"}"\n'
        f'tools_config = "{inputs / "tools.toml"}"\nresamples = 300\nseed = 11\n'
    )
    path = inputs / "traces.jsonl"
    path.write_text(path.read_text() + "not json\n")
    app = build_app()
    res = CliRunner().invoke(app, ["analyze", "paths", "--config", str(config), "--out",
                                   str(inputs / "a"), "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert [c["id"] for c in data["report"]["cases"]] == ["swarm", "harvest"]
    assert data["read_errors"][0]["line"] == 4
    assert data["roots"] == dict(_run(_config(inputs)).roots)
    direct = CliRunner().invoke(app, [
        "paths", str(path), "--cases", str(inputs / "cases.jsonl"), "--tools-config",
        str(inputs / "tools.toml"), "--resamples", "300", "--seed", "11",
        "--out", str(inputs / "p"),
    ])  # fmt: skip
    assert direct.exit_code == 0, direct.output
    report = "report.json"
    assert (inputs / "a" / report).read_bytes() == (inputs / "p" / report).read_bytes()


def test_bad_config_input_names_the_file_and_the_field(inputs: Path) -> None:
    path = inputs / "paths.toml"
    for body, field in [
        ('traces = ["t"]\ncases = "c"\nquote_threshold = 1.5\n', "quote_threshold"),
        ('traces = ["t"]\ncases = "c"\nresamples = "many"\n', "resamples"),
        ('traces = []\ncases = "c"\n', "traces"),
        ('traces = ["t"]\ncases = "c"\ntrace_format = "har"\n', "trace_format"),
    ]:
        path.write_text(body)
        with pytest.raises(InputError) as err:
            load_config(ANALYSIS, path)
        assert (err.value.path, err.value.field) == (str(path), field), body
    # a missing or unknown field is named in the message
    for body, field in [('traces = ["t"]\n', "cases"),
                        ('traces = ["t"]\ncases = "c"\nshuffle = true\n', "shuffle")]:  # fmt: skip
        path.write_text(body)
        with pytest.raises(InputError) as err:
            load_config(ANALYSIS, path)
        assert err.value.path == str(path) and f"`{field}`" in str(err.value), body
    # built in code: plan names the field, a bad case file or tools config names the file
    for fields, field in [({"quote_threshold": 0.0}, "quote_threshold"),
                          ({"resamples": 0}, "resamples"), ({"traces": ()}, "traces")]:  # fmt: skip
        with pytest.raises(ConfigError) as cerr:
            plan(_config(inputs, **fields))
        assert cerr.value.field == field
    (inputs / "bad.jsonl").write_text('{"id": "swarm"}\n{"id": "swarm"}\n')  # a repeated id
    with pytest.raises(InputError) as ierr:
        plan(_config(inputs, cases=str(inputs / "bad.jsonl")))
    assert (ierr.value.path, ierr.value.line) == (str(inputs / "bad.jsonl"), 2)
    (inputs / "bad.toml").write_text("[tools.read_note]\nreads = 3\n")
    with pytest.raises(ConfigError) as terr:
        plan(_config(inputs, tools_config=str(inputs / "bad.toml")))
    assert terr.value.path == str(inputs / "bad.toml")


def test_the_command_names_a_bad_option_by_its_flag(inputs: Path) -> None:
    app = build_app()
    base = ["paths", str(inputs / "traces.jsonl"), "--cases", str(inputs / "cases.jsonl"),
            "--out", str(inputs / "o")]  # fmt: skip
    res = CliRunner().invoke(app, [*base, "--resamples", "0"])
    assert res.exit_code == 2 and "[--resamples]: must be >= 1" in res.stderr
    res = CliRunner().invoke(app, [*base, "--quote-threshold", "0"])
    assert res.exit_code == 2 and "[--quote-threshold]: must lie in (0, 1]" in res.stderr
    assert not (inputs / "o" / "report.json").exists()  # refused before any report
