"""``--estimate`` on every model-calling command, and the call profile, against a real server.

The server counts every request it receives: an estimate must send none and create nothing,
and what it predicts is checked against what the run then really sends.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from groundtrace.analyzer.cli import build_app
from groundtrace.analyzer.errors import ConfigError
from groundtrace.analyzer.llm import CallProfile
from groundtrace.analyzer.llm._profile import EndpointLimits
from tests.analyzer.audit.test_audit_models import _reply, _schema_keys
from tests.analyzer.interventions.test_interventions_run import _answering, demo_dir
from tests.support.data import HOTPOT
from tests.support.openai_server import OpenAICompatServer

__all__ = ["demo_dir"]  # the module fixture, imported to be shared

app = build_app()

PROFILE = """
[models.m]
input_per_million = 2.0
output_per_million = 10.0

[endpoints."*"]
concurrency = 1

[budget]
max_calls = 2
"""


def _invoke(args: list[str]) -> Any:
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout) if "--json" in args else res.stdout


def _posts(srv: OpenAICompatServer) -> list[str]:
    return [json.dumps(r.body, sort_keys=True) for r in srv.requests if r.method == "POST"]


def test_audit_estimate_sends_nothing_and_predicts_the_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with OpenAICompatServer(handler=_reply) as srv:
        args = ["audit", "run", "--out", str(out), "--answerer", srv.base_url, "--model", "m",
                "--judge", srv.base_url, "--judge-model", "m", "--questions",
                "patent-grant,same-licence", "--sources", "4", "--concurrency", "2"]  # fmt: skip
        before = _invoke([*args, "--estimate", "--json"])
        assert srv.request_count == 0 and not out.exists()
        _invoke(args)
        sent = _posts(srv)
        answers = [r for r in srv.requests if "label" not in _schema_keys(r)]
        after = _invoke([*args, "--estimate", "--json"])
        assert len(_posts(srv)) == len(sent)  # the second estimate sent nothing either
    # before: every answer is a call to make; each pair of them may need a label call later
    n = len(answers)
    assert (before["requests"], before["cached"], before["calls"]) == (n, 0, n)
    assert before["dependent"] > 0
    # after: the answers are cached, so the pair requests are known exactly: those the run
    # made; identical ones (two pairs of the same two answers) are sent once
    made = json.loads((out / "run.json").read_text())["model_calls"]
    assert after["requests"] == sum(c["requests"] for c in made.values())
    assert after["distinct"] == after["cached"] == len(sent) == len(set(sent)) > len(answers)
    assert after["calls"] == after["dependent"] == 0


def test_interventions_estimate_counts_the_units_still_to_run(
    demo_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    with OpenAICompatServer(handler=_answering) as srv:
        args = ["interventions", str(demo_dir / "traces"), "--out", str(out), "--endpoint",
                srv.base_url, "--model", "m", "--cases", str(demo_dir / "cases.jsonl"),
                "--pool-dataset", str(HOTPOT), "--concurrency", "2"]  # fmt: skip
        before = _invoke([*args, "--estimate", "--json"])
        assert srv.request_count == 0 and not out.exists()
        _invoke([*args, "--json"])
        sent = _posts(srv)
        after = _invoke([*args, "--estimate", "--json"])
        assert len(_posts(srv)) == len(sent)
    assert before["units_done"] == 0 and before["cached"] == 0
    assert before["calls"] == before["distinct"] == len(set(sent)) > 0
    assert after["units_done"] == before["requests"]  # every unit is journaled now
    assert after["requests"] == after["calls"] == 0


def test_interventions_estimate_needs_endpoint_replay(demo_dir: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["interventions", str(demo_dir / "traces"), "--out",
                                   str(tmp_path / "r"), "--estimate"])  # fmt: skip
    assert res.exit_code == 2 and "--estimate needs endpoint replay" in res.output


def _cases(path: Path, n: int) -> Path:
    rows = [{"id": f"c{i}", "question": f"q {i}?", "context": f"c {i}.", "answer": "a"}
            for i in range(n)]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_the_call_profile_sets_prices_limits_and_budget_and_options_override_it(
    tmp_path: Path,
) -> None:
    profile = tmp_path / "calls.toml"
    profile.write_text(PROFILE)
    cases = _cases(tmp_path / "cases.jsonl", 6)
    with OpenAICompatServer() as srv:
        base = ["judge", "run", "--cases", str(cases), "--judge", srv.base_url, "--model", "m",
                "--call-profile", str(profile)]  # fmt: skip
        priced = _invoke([*base, "--out", str(tmp_path / "a"), "--estimate", "--json"])
        assert priced["prices"] == str(profile) and priced["cost_usd"] > 0
        stopped = CliRunner().invoke(app, [*base, "--out", str(tmp_path / "a")])
        assert stopped.exit_code == 5 and "--max-calls 2 reached" in stopped.output
        assert srv.request_count == 2  # the profile's concurrency 1: none past the ceiling
        over = CliRunner().invoke(app, [*base, "--out", str(tmp_path / "b"), "--max-calls", "3"])
        assert over.exit_code == 5 and "--max-calls 3 reached" in over.output
        assert srv.request_count == 2 + 3


@pytest.mark.parametrize(
    ("text", "field", "line"),
    [
        ("[endpoints.x]\nrate_limt = 2\n", "endpoints.x.rate_limt", None),
        ("[endpoints.x]\nrate_limit = 0\n", "endpoints.x.rate_limit", None),
        ("[endpoints.x]\nconcurrency = 1.5\n", "endpoints.x.concurrency", None),
        ("[budget]\nmax_cost = 1.0\n", "budget.max_cost", None),
        ("[models.m]\ninput_per_million = 1\n", "models.m.output_per_million", None),
        ("[cache]\n", "cache", None),
        ("[budget]\nmax_calls = 3\n\nmax_calls = 4\n", None, 4),  # a TOML error
    ],
)
def test_a_bad_call_profile_names_the_file_field_and_line(
    tmp_path: Path, text: str, field: str | None, line: int | None
) -> None:
    path = tmp_path / "calls.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        CallProfile.from_file(path)
    assert (info.value.path, info.value.field, info.value.line) == (str(path), field, line)


def test_endpoint_limits_are_found_by_url_else_the_wildcard(tmp_path: Path) -> None:
    path = tmp_path / "calls.toml"
    path.write_text(
        '[endpoints."http://h:1/v1/"]\nrate_limit = 4\n[endpoints."*"]\nconcurrency = 3\n'
    )
    profile = CallProfile.from_file(path)
    assert profile.endpoint("http://h:1/v1") == EndpointLimits(rate_limit=4.0)
    assert profile.endpoint("http://other/v1") == EndpointLimits(concurrency=3)
    assert profile.prices is None and profile.max_calls is None


def test_judge_validate_estimate_counts_one_call_per_gold_item(tmp_path: Path) -> None:
    from tests.analyzer.judge.test_judge_validate import _write_gold

    gold = _write_gold(tmp_path / "gold.jsonl", 12)
    out = tmp_path / "out"
    with OpenAICompatServer() as srv:
        found = _invoke(["judge", "validate", "--gold", str(gold), "--out", str(out), "--judge",
                         srv.base_url, "--model", "m", "--estimate", "--json"])  # fmt: skip
        assert srv.request_count == 0 and not out.exists()
    assert (found["requests"], found["calls"], found["cost_usd"]) == (12, 12, None)
