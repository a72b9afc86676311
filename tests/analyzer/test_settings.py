"""The settings several analyses share are declared once (``groundtrace.analyzer._settings``),
checked once, and mean one thing in ``groundtrace NAME`` and ``groundtrace analyze NAME``."""

from __future__ import annotations

import dataclasses
import json
import typing
from pathlib import Path
from typing import Any

import msgspec
import pytest

from groundtrace.analyzer._settings import ModelCalls, Pacing, Replay, ReplayKwargs
from groundtrace.analyzer.errors import ConfigError

#: The model-call fields: a record's only when inherited from the shared records.
CALL_FIELDS = {f.name for f in msgspec.structs.fields(ModelCalls)}


def _records() -> dict[str, type[msgspec.Struct]]:
    from groundtrace.analyzer import analyses, get_analysis

    builtin = ("attribution", "audit", "gate", "interventions", "judge", "paths")
    assert set(builtin) <= set(analyses())
    return {name: get_analysis(name).config for name in builtin}


def _own(record: type[Any]) -> set[str]:
    """The fields ``record``'s own class body declares."""
    import inspect

    return set(inspect.get_annotations(record))


def test_each_configs_call_fields_come_from_the_one_record() -> None:
    records = _records()
    for name, record in records.items():
        declared_here = _own(record) & CALL_FIELDS
        assert not declared_here, f"{name} declares {declared_here} again"
    for name in ("judge", "interventions", "audit"):
        assert issubclass(records[name], ModelCalls), name
        found = {f.name: f for f in msgspec.structs.fields(records[name])}
        for shared in msgspec.structs.fields(ModelCalls):  # same type and default
            assert found[shared.name] == shared, (name, shared.name)
    assert issubclass(records["attribution"], Pacing)
    assert not issubclass(records["attribution"], ModelCalls)  # one model: no concurrency
    for name in ("attribution", "interventions"):  # the replay's fields: one type each
        hints = typing.get_type_hints(records[name], include_extras=True)
        assert hints["replay_kwargs"] == ReplayKwargs, name
        assert hints["replay"] == Replay, name


def test_the_replay_fields_help_comes_from_their_type_unless_the_record_says_more() -> None:
    from groundtrace.analyzer.cli._fields import field_help

    records = _records()
    said = "Keyword arguments replacing recorded ones in function replay (e.g. a new base_url)."
    replay = "Function replay: recorded (the trace's own entry point) or a module:qualname."
    for name in ("attribution", "interventions"):
        assert field_help(records[name])["replay_kwargs"] == said, name
        assert "replay_kwargs:" not in (records[name].__doc__ or ""), name  # named, not described
    assert field_help(records["interventions"])["replay"] == replay
    assert field_help(records["attribution"])["replay"].startswith("The behavioural tier")


def test_the_call_options_are_the_records_call_fields() -> None:
    from groundtrace.analyzer.cli._budget import CALL_FIELDS as OPTIONS
    from groundtrace.analyzer.cli._budget import CallOptions

    offered = {f.name for f in dataclasses.fields(CallOptions)} - {"estimate"}
    assert offered == set(OPTIONS) <= CALL_FIELDS


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("concurrency", 0, "concurrency must be >= 1, got 0"),
        ("rate_limit", 0.0, "rate_limit must be > 0 calls per second, got 0.0"),
        ("timeout", -1.0, "timeout must be > 0 seconds, got -1.0"),
    ],
)
def test_a_call_value_is_checked_in_one_place_for_every_analysis(
    tmp_path: Path, field: str, value: Any, said: str
) -> None:
    from groundtrace.analyzer import get_analysis, load_config

    given = {
        "judge": {},
        "interventions": {"out": "o", "traces": ["t"]},
        "audit": {"out": "o", "sources": "s", "questions": "q"},
        "attribution": {"traces": ["t"]},
    }
    for name, required in given.items():
        record = get_analysis(name).config
        if field not in {f.name for f in msgspec.structs.fields(record)}:
            continue
        with pytest.raises(ConfigError, match=said) as made:
            record(**required, **{field: value})
        assert made.value.field == field
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({**required, field: value}))
        with pytest.raises(ConfigError, match=said) as read:  # from a file: the file named
            load_config(get_analysis(name), path)
        assert read.value.path == str(path) and read.value.field == field


def test_in_flight_is_the_field_else_the_call_profile_else_the_analysiss_default(
    tmp_path: Path,
) -> None:
    from groundtrace.analyzer import audit, interventions, judge

    url = "http://127.0.0.1:9/v1"
    profile = tmp_path / "calls.toml"
    profile.write_text(f'[endpoints."{url}"]\nconcurrency = 6\nrate_limit = 3.0\n')
    assert judge.Config().in_flight() == 2
    assert interventions.Config(out="o", traces=("t",)).in_flight() == 4
    assert audit.Config(out="o", sources="s", questions="q").in_flight() == 8
    endpoint = judge.Config(judge=url, model="m", call_profile=str(profile))
    assert endpoint.in_flight() == 6 and endpoint.calls().rate_limit(url) == 3.0
    assert msgspec.structs.replace(endpoint, concurrency=3).in_flight() == 3
    replay = interventions.Config(out="o", traces=("t",), endpoint=url, call_profile=str(profile))
    assert replay.in_flight() == 6


# -- one meaning of --concurrency (and of the call options) in both commands -----------------


def _invoke(*args: str) -> Any:
    from typer.testing import CliRunner

    from groundtrace.analyzer.cli import build_app

    return CliRunner().invoke(build_app(), list(args))


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """What the model clients and the executors were made with."""
    from groundtrace.analyzer.executor import LocalExecutor
    from groundtrace.analyzer.llm import ModelClient

    found: dict[str, list[Any]] = {"client": [], "executor": []}
    client_init, executor_init = ModelClient.__init__, LocalExecutor.__init__

    def client(self: Any, *args: Any, **kwargs: Any) -> None:
        found["client"].append((kwargs.get("concurrency"), kwargs.get("rate_limit")))
        client_init(self, *args, **kwargs)

    def executor(self: Any, concurrency: int, *args: Any, **kwargs: Any) -> None:
        found["executor"].append(concurrency)
        executor_init(self, concurrency, *args, **kwargs)

    monkeypatch.setattr(ModelClient, "__init__", client)
    monkeypatch.setattr(LocalExecutor, "__init__", executor)
    return found


@pytest.mark.timeout(300)
def test_concurrency_means_calls_in_flight_in_judge_run_and_analyze_judge(
    tmp_path: Path, seen: dict[str, list[Any]]
) -> None:
    from tests.support.harbour_rag import write_run
    from tests.support.openai_server import OpenAICompatServer, Reply

    run = write_run(tmp_path / "harbour")
    scores = {"context_relevance": 0.9, "adherence": 0.8, "answer_relevance": 1, "rationale": "ok"}
    reply = Reply(content=json.dumps(scores), prompt_tokens=50)
    with OpenAICompatServer(handler=lambda _request: reply) as server:
        same = ("--judge", server.base_url, "--model", "m", "--concurrency", "3",
                "--rate-limit", "500")  # fmt: skip
        friendly = _invoke("judge", "run", str(run / "traces"), *same, "--out", str(tmp_path / "a"))
        made = {k: list(v) for k, v in seen.items()}
        seen["client"].clear()
        seen["executor"].clear()
        generic = _invoke("analyze", "judge", "--traces", str(run / "traces"), *same,
                          "--out", str(tmp_path / "b"))  # fmt: skip
    assert (friendly.exit_code, generic.exit_code) == (0, 0), friendly.output + generic.output
    # both: 3 judgments in flight, 3 calls in flight to the endpoint, paced at 500/s
    assert made == {"client": [(3, 500.0)], "executor": [3]}
    assert seen == {"client": [(3, 500.0)], "executor": [3]}
    assert (tmp_path / "a" / "judgments.jsonl").read_bytes() == (
        tmp_path / "b" / "judgments.jsonl"
    ).read_bytes()


@pytest.mark.timeout(300)
def test_a_config_files_call_ceiling_is_honoured_by_analyze(tmp_path: Path) -> None:
    from tests.support.harbour_rag import write_run
    from tests.support.openai_server import OpenAICompatServer, Reply

    run = write_run(tmp_path / "harbour")
    scores = {"context_relevance": 0.9, "adherence": 0.8, "answer_relevance": 1, "rationale": "ok"}
    reply = Reply(content=json.dumps(scores), prompt_tokens=50)
    with OpenAICompatServer(handler=lambda _request: reply) as server:
        config = tmp_path / "judge.toml"
        config.write_text(f'judge = "{server.base_url}"\nmodel = "m"\n'
                          f'traces = ["{run / "traces"}"]\nmax_calls = 1\n')  # fmt: skip
        a, b = str(tmp_path / "a"), str(tmp_path / "b")
        from_file = _invoke("analyze", "judge", "--config", str(config), "--out", a)
        friendly = _invoke("judge", "run", str(run / "traces"), "--judge", server.base_url,
                           "--model", "m", "--max-calls", "1", "--out", b)  # fmt: skip
    assert (from_file.exit_code, friendly.exit_code) == (5, 5), from_file.output + friendly.output


@pytest.mark.timeout(300)
def test_concurrency_means_replays_in_flight_in_interventions_and_analyze(
    tmp_path: Path, seen: dict[str, list[Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from groundtrace.analyzer.replay import FunctionReplayer
    from tests.support.harbour_rag import write_run

    replayers: list[int] = []
    init = FunctionReplayer.__init__

    def replayer(self: Any, *args: Any, **kwargs: Any) -> None:
        replayers.append(kwargs["concurrency"])
        init(self, *args, **kwargs)

    monkeypatch.setattr(FunctionReplayer, "__init__", replayer)
    run = write_run(tmp_path / "harbour")
    traces, cases = str(run / "traces"), str(run / "cases.jsonl")
    same = ("--cases", cases, "--replay", "recorded", "--operators", "REMOVE",
            "--concurrency", "2")  # fmt: skip
    a, b = tmp_path / "a", tmp_path / "b"
    friendly = _invoke("interventions", traces, *same, "--out", str(a))
    generic = _invoke("analyze", "interventions", "--traces", traces, *same, "--out", str(b))
    assert (friendly.exit_code, generic.exit_code) == (0, 0), friendly.output + generic.output
    assert replayers == [2, 2] and seen["executor"] == [2, 2]
    for name in ("summary.json", "summary.md"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
